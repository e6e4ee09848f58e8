/*
 * conf_desc.h - a configuration described once, as a table of keys, so that
 * every caller (the Slurm glue of each plugin family, se-conf-check, tests)
 * handles any back-end's keys the same way.
 *
 * Every configuration of the suite (modbus_conf.c, bmc_conf.c, rrd_conf.c,
 * es_conf.c, attrib_conf.c, settle_conf.c, freq_options.c) exports one
 * const se_conf_desc_t: its keys in the man page's order, each a row that
 * says the key, the type, offset and bounds of its field and an optional
 * check (parsed by conf.h's helpers, so errors name file, key and value),
 * or functions of its own for the few keys no type fits; and the init /
 * free / optional check of its configuration struct, handed around as
 * void *.  The map files' keys are rows too (conf_map.h), and
 * energy_policy.conf's, a table per kind of line (freq_policy.c).  Nothing
 * here knows Slurm: src/common/se_slurm_conf.h turns a descriptor into
 * Slurm's s_p_options_t and back.
 *
 *   static const se_conf_key_t keys[] = {
 *           SE_KEY_PATH("EnergyRRDFile", rrd_conf_t, file_tmpl,
 *                       conf_template, ""),
 *           SE_KEY_SECONDS("EnergyRRDFrequency", rrd_conf_t, period_ns,
 *                          100 * SE_NS_PER_MS, 3600 * SE_NS_PER_SEC),
 *   };
 */
#ifndef SE_CONF_DESC_H
#define SE_CONF_DESC_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "conf.h"

/* Parse value into conf; 0 or a negative errno, message in err naming
 * w->file, w->key (the table's spelling) and value. */
typedef int (*se_conf_parse_fn)(void *conf, const conf_where_t *w,
				const char *value, char *err, size_t err_len);

/* The key's effective value as the file would spell it (scontrol show
 * config); buf is "" on entry. */
typedef void (*se_conf_show_fn)(const void *conf, char *buf, size_t len);

/* Parse value into field (a row's own type: a frequency, a percentage);
 * writes field only when it returns 0, else a negative errno, message in
 * err. */
typedef int (*se_conf_convert_fn)(void *field, const conf_where_t *w,
				  const char *value, char *err,
				  size_t err_len);

/* A check of a value as written, before it is kept (conf.h's
 * conf_nonempty, conf_template, ...): 0 or a negative errno, message in
 * err. */
typedef int (*se_conf_check_fn)(const conf_where_t *w, const char *value,
				char *err, size_t err_len);

/* What a row's field holds, and so how its value is parsed and shown. */
typedef enum {
	SE_CONF_FN = 0,		/* the row's parse and show functions */
	SE_CONF_STR,		/* char *, a copy; shown as is, or .unset */
	SE_CONF_PATH,		/* as STR, an absolute path (conf_abs_path) */
	SE_CONF_UINT,		/* unsigned, [min, max] (conf_uint); "%u" */
	SE_CONF_REAL,		/* double, [rmin, rmax] (conf_double); "%g" */
	SE_CONF_SECONDS,	/* uint64_t ns, [min, max] ns
				 * (conf_seconds_ns); shown in seconds */
	SE_CONF_MILLIS,		/* uint64_t ns, [min, max] ms
				 * (conf_millis_ns); shown in ms */
	SE_CONF_ENUM,		/* an enum (int-sized), index into names
				 * (conf_enum); shown by name */
	SE_CONF_CUSTOM,		/* any field, parsed by the row's convert
				 * (which checks it too: no check); shown
				 * by the row's show, if any */
} se_conf_type_t;

/*
 * One key: its name, the type and offset of its field in the
 * configuration struct, its bounds, an optional check of the value as
 * written, and (SE_CONF_FN) functions of its own.  Rows are written with
 * the SE_KEY_* macros below.  like: a map file's key that is bounded as a
 * configuration key takes that key's row (type, bounds, names, check) and
 * keeps its own name and offset.
 */
typedef struct se_conf_key {
	const char *name;		/* "EnergyRRDFile" */
	se_conf_type_t type;
	size_t offset;			/* of the field (not SE_CONF_FN) */
	uint64_t min, max;		/* UINT, SECONDS (ns), MILLIS (ms) */
	double rmin, rmax;		/* REAL */
	const char *const *names;	/* ENUM: NULL-terminated */
	se_conf_check_fn check;		/* optional: runs after the type's
					 * own parse, before the value is
					 * kept */
	const char *unset;		/* STR, PATH: shown for NULL */
	const struct se_conf_key *like;	/* bounded as that row */
	se_conf_convert_fn convert;	/* SE_CONF_CUSTOM */
	se_conf_parse_fn parse;		/* SE_CONF_FN */
	se_conf_show_fn show;		/* SE_CONF_FN; other types: optional,
					 * instead of the type's printer */
} se_conf_key_t;

/* The offset of field in type, which must be of C type ctype's size (a
 * row of the wrong type does not compile). */
#define SE_CONF_FIELD(type, field, ctype)				\
	(offsetof(type, field) +					\
	 0 * sizeof(char[sizeof(((type *) 0)->field) == sizeof(ctype) ?	\
			 1 : -1]))

#define SE_KEY_FN(name_, parse_, show_)					\
	{ .name = name_, .type = SE_CONF_FN, .parse = parse_,		\
	  .show = show_ }
/* The rows below share these two: a string key (with its check and its
 * unset value), a whole number in min..max. */
#define SE_KEY_STRING_(name_, type_, T, field, check_, unset_)		\
	{ .name = name_, .type = type_,					\
	  .offset = SE_CONF_FIELD(T, field, char *),			\
	  .check = check_, .unset = unset_ }
#define SE_KEY_WHOLE_(name_, type_, T, field, ctype, min_, max_)	\
	{ .name = name_, .type = type_,					\
	  .offset = SE_CONF_FIELD(T, field, ctype),			\
	  .min = min_, .max = max_ }

#define SE_KEY_STR(name_, T, field, check_, unset_)			\
	SE_KEY_STRING_(name_, SE_CONF_STR, T, field, check_, unset_)
#define SE_KEY_PATH(name_, T, field, check_, unset_)			\
	SE_KEY_STRING_(name_, SE_CONF_PATH, T, field, check_, unset_)
#define SE_KEY_UINT(name_, T, field, min_, max_)			\
	SE_KEY_WHOLE_(name_, SE_CONF_UINT, T, field, unsigned, min_, max_)
#define SE_KEY_REAL(name_, T, field, min_, max_)			\
	{ .name = name_, .type = SE_CONF_REAL,				\
	  .offset = SE_CONF_FIELD(T, field, double),			\
	  .rmin = min_, .rmax = max_ }
#define SE_KEY_SECONDS(name_, T, field, min_ns, max_ns)		\
	SE_KEY_WHOLE_(name_, SE_CONF_SECONDS, T, field, uint64_t, min_ns,	\
		      max_ns)
#define SE_KEY_MILLIS(name_, T, field, min_ms, max_ms)		\
	SE_KEY_WHOLE_(name_, SE_CONF_MILLIS, T, field, uint64_t, min_ms,	\
		      max_ms)
#define SE_KEY_ENUM(name_, T, field, names_)				\
	{ .name = name_, .type = SE_CONF_ENUM,				\
	  .offset = SE_CONF_FIELD(T, field, int), .names = names_ }
#define SE_KEY_CUSTOM(name_, T, field, ctype, convert_)			\
	{ .name = name_, .type = SE_CONF_CUSTOM,			\
	  .offset = SE_CONF_FIELD(T, field, ctype), .convert = convert_ }
/* A map file's key bounded as the configuration key row (conf_map.h). */
#define SE_KEY_LIKE(name_, T, field, row)				\
	{ .name = name_, .like = row, .offset = offsetof(T, field) }

/*
 * Parse value into the field of row k in base (the configuration struct,
 * or a map line's), as w names it.  0 or a negative errno, message in err;
 * a refused value leaves the field as it was.
 */
int se_conf_key_parse(const se_conf_key_t *k, void *base,
		      const conf_where_t *w, const char *value, char *err,
		      size_t err_len);

/* Row k's value in base into buf (len > 0): its show, else its type's
 * printer (of the row it is like, over its own field). */
void se_conf_key_show(const se_conf_key_t *k, const void *base, char *buf,
		      size_t len);

/* Free what the string rows (STR, PATH) of keys hold in base. */
void se_conf_keys_free(const se_conf_key_t *keys, size_t n_keys,
		       void *base);

typedef struct {
	const char *name;		/* "rrd": for tools and messages */
	const char *file;		/* "acct_gather.conf": in messages when
					 * the caller names no file */
	const se_conf_key_t *keys;
	size_t n_keys;
	size_t size;			/* of the configuration struct */
	void (*init)(void *conf);	/* defaults (conf need not be set) */
	void (*free)(void *conf);	/* what conf holds; conf is then empty */
	/* Optional: the keys together, once all are set: 0 or -EINVAL,
	 * message in err (callers use se_conf_check()). */
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

/* d->check, if the table has one: 0 or its negative errno. */
int se_conf_check(const se_conf_desc_t *d, void *conf, const char *file,
		  char *err, size_t err_len);

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
 * SE_CONF_DESC_DEFINE_NOCHECK: the same for keys that need no check
 * together (no PREFIX_check).
 */
#define SE_CONF_DESC_HOOKS_(prefix, type)				\
static void prefix##_desc_init(void *conf)				\
{									\
	prefix##_init((type *) conf);					\
}									\
static void prefix##_desc_free(void *conf)				\
{									\
	prefix##_free((type *) conf);					\
}

#define SE_CONF_DESC_(var, prefix, type, name_, file_, keys_, check_, ...) \
const se_conf_desc_t var = {						\
	.name = name_,							\
	.file = file_,							\
	.keys = keys_,							\
	.n_keys = sizeof(keys_) / sizeof((keys_)[0]),			\
	.size = sizeof(type),						\
	.init = prefix##_desc_init,					\
	.free = prefix##_desc_free,					\
	.check = check_,						\
	__VA_ARGS__							\
}

#define SE_CONF_DESC_DEFINE(var, prefix, type, name_, file_, keys_, ...) \
SE_CONF_DESC_HOOKS_(prefix, type)					\
static int prefix##_desc_check(void *conf, const char *file, char *err,\
			       size_t err_len)				\
{									\
	return prefix##_check((type *) conf, file, err, err_len);	\
}									\
SE_CONF_DESC_(var, prefix, type, name_, file_, keys_,			\
	      prefix##_desc_check, __VA_ARGS__)

#define SE_CONF_DESC_DEFINE_NOCHECK(var, prefix, type, name_, file_, keys_, \
				    ...)				\
SE_CONF_DESC_HOOKS_(prefix, type)					\
SE_CONF_DESC_(var, prefix, type, name_, file_, keys_, NULL, __VA_ARGS__)

#endif
