/*
 * conf_desc.h - a configuration described once, as a table of keys, so that
 * every caller (the Slurm glue of each plugin family, se-conf-check, tests)
 * handles any back-end's keys the same way.
 *
 * A back-end (modbus_conf.c, bmc_conf.c, rrd_conf.c, es_conf.c) exports one
 * const se_conf_desc_t: its keys in the man page's order, each with a parser
 * (conf.h's helpers, so errors name file, key and value) and a printer, and
 * the init / free / check of its configuration struct, handed around as
 * void *.  Nothing here knows Slurm: src/common/se_slurm_conf.h turns a
 * descriptor into Slurm's s_p_options_t and back.
 */
#ifndef SE_CONF_DESC_H
#define SE_CONF_DESC_H

#include <stddef.h>
#include <stdio.h>

#include "conf.h"

/* Parse value into conf; 0 or a negative errno, message in err naming
 * w->file, w->key (the table's spelling) and value. */
typedef int (*se_conf_parse_fn)(void *conf, const conf_where_t *w,
				const char *value, char *err, size_t err_len);

/* The key's effective value as the file would spell it (scontrol show
 * config); buf is "" on entry. */
typedef void (*se_conf_show_fn)(const void *conf, char *buf, size_t len);

typedef struct {
	const char *name;		/* "EnergyRRDFile" */
	se_conf_parse_fn parse;
	se_conf_show_fn show;
} se_conf_key_t;

typedef struct {
	const char *name;		/* "rrd": for tools and messages */
	const char *file;		/* "acct_gather.conf": in messages when
					 * the caller names no file */
	const se_conf_key_t *keys;
	size_t n_keys;
	size_t size;			/* of the configuration struct */
	void (*init)(void *conf);	/* defaults (conf need not be set) */
	void (*free)(void *conf);	/* what conf holds; conf is then empty */
	/* The keys together, once all are set: 0 or -EINVAL, message in err. */
	int (*check)(void *conf, const char *file, char *err, size_t err_len);
	/* Optional: called after key i was set (a back-end whose defaults
	 * depend on which keys were given). */
	void (*given)(void *conf, size_t i);
	/* Optional: what slurmd checks only when it builds the node's meter
	 * (files the keys name: Modbus's map), for offline checkers. */
	int (*check_files)(void *conf, char *err, size_t err_len);
} se_conf_desc_t;

/* Name of the i-th key, NULL past the last. */
const char *se_conf_key(const se_conf_desc_t *d, size_t i);

/* Index of key (case-insensitive, as Slurm's parser), or -1. */
long se_conf_key_index(const se_conf_desc_t *d, const char *key);

/*
 * Set key i from value (NULL: "") as read from file (NULL: d->file).
 * Returns 0, -EINVAL for an index past the last key, or the parser's
 * negative errno with its message in err.
 */
int se_conf_set_index(const se_conf_desc_t *d, void *conf, const char *file,
		      size_t i, const char *value, char *err, size_t err_len);

/* The same by name: -ENOENT and "FILE: KEY=VALUE: unknown key" for a key
 * not in the table. */
int se_conf_set(const se_conf_desc_t *d, void *conf, const char *file,
		const char *key, const char *value, char *err,
		size_t err_len);

/* Key i's value into buf ("" for an index past the last); returns buf. */
const char *se_conf_show(const se_conf_desc_t *d, const void *conf, size_t i,
			 char *buf, size_t len);

/* The same by name ("" for a key not in the table). */
const char *se_conf_value(const se_conf_desc_t *d, const void *conf,
			  const char *key, char *buf, size_t len);

/*
 * A printer (se_conf_show_fn) named fn for a key shown by one printf format
 * and one expression of c, the configuration as const type *:
 *   SE_CONF_SHOW(_show_unit, modbus_conf_t, "%u", c->unit)
 */
#define SE_CONF_SHOW(fn, type, fmt, expr)				\
static void fn(const void *conf, char *buf, size_t len)		\
{									\
	const type *c = conf;						\
									\
	snprintf(buf, len, fmt, expr);					\
}

/*
 * Define the descriptor VAR of a back-end whose typed functions are
 * PREFIX_init(T *), PREFIX_free(T *) and PREFIX_check(T *, file, err,
 * err_len), over its key table KEYS (an array): the void * hooks are
 * written here once, so the typed API stays for typed callers.  Optional
 * fields (.given, .check_files) follow as designated initializers.
 */
#define SE_CONF_DESC_DEFINE(var, prefix, type, name_, file_, keys_, ...) \
static void prefix##_desc_init(void *conf)				\
{									\
	prefix##_init((type *) conf);					\
}									\
static void prefix##_desc_free(void *conf)				\
{									\
	prefix##_free((type *) conf);					\
}									\
static int prefix##_desc_check(void *conf, const char *file, char *err,\
			       size_t err_len)				\
{									\
	return prefix##_check((type *) conf, file, err, err_len);	\
}									\
const se_conf_desc_t var = {						\
	.name = name_,							\
	.file = file_,							\
	.keys = keys_,							\
	.n_keys = sizeof(keys_) / sizeof((keys_)[0]),			\
	.size = sizeof(type),						\
	.init = prefix##_desc_init,					\
	.free = prefix##_desc_free,					\
	.check = prefix##_desc_check,					\
	__VA_ARGS__							\
}

#endif
