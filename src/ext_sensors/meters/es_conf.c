/*
 * es_conf.c - ext_sensors.conf of ext_sensors/meters (see es_conf.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_desc.h"
#include "es_conf.h"
#include "rrd_conf.h"
#include "se_time.h"

#define ES_THREADS_MAX	256
#define ES_WATT_MAX	1e9
#define ES_TEMP_MAX	1e4

/* A key of the *Data family: which words it takes, and their flags. */
typedef struct {
	const char *word;
	unsigned flag;
} data_word_t;

static const data_word_t job_words[] = { { "energy", ES_JOB_ENERGY }, {0} };
static const data_word_t node_words[] = { { "energy", ES_NODE_ENERGY },
					  { "temp", ES_NODE_TEMP }, {0} };
static const data_word_t switch_words[] = { { "energy", ES_SWITCH_ENERGY },
					    { "temp", ES_SWITCH_TEMP }, {0} };
static const data_word_t door_words[] = { { "temp", ES_DOOR_TEMP }, {0} };

/* ---------------------------------------------------------- helpers */

static int _data_set(es_conf_t *c, const conf_where_t *w, const char *v,
		     const data_word_t *words, char *err, size_t err_len)
{
	unsigned flags = 0, all = 0;
	char *copy = strdup(v), *save = NULL, *tok;
	int rc = 0;

	if (!copy)
		return -ENOMEM;
	for (const data_word_t *d = words; d->word; d++)
		all |= d->flag;
	for (tok = strtok_r(copy, ", ", &save); tok && !rc;
	     tok = strtok_r(NULL, ", ", &save)) {
		const data_word_t *d = words;

		while (d->word && strcasecmp(d->word, tok))
			d++;
		if (d->word) {
			flags |= d->flag;
			continue;
		}
		snprintf(err, err_len, "%s: %s=%s: unknown item \"%s\" "
			 "(allowed: %s%s%s)", w->file, w->key, v, tok,
			 words[0].word, words[1].word ? ", " : "",
			 words[1].word ? words[1].word : "");
		rc = -EINVAL;
	}
	free(copy);
	if (!rc)
		c->data = (c->data & ~all) | flags;
	return rc;
}

static void _data_show(const es_conf_t *c, const data_word_t *words,
		       char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (const data_word_t *d = words; d->word && off < len; d++)
		if (c->data & d->flag)
			off += (size_t) snprintf(buf + off, len - off, "%s%s",
						 off ? "," : "", d->word);
}

static int _str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int _path(char **dst, const conf_where_t *w, const char *v, char *err,
		 size_t err_len)
{
	char probe[4096];
	int rc;

	if (v[0] != '/') {	/* slurmctld's working directory is no base */
		snprintf(err, err_len, "%s: %s=%s: must be an absolute path",
			 w->file, w->key, v);
		return -EINVAL;
	}
	rc = conf_expand(w, v, "x", probe, sizeof(probe), err, err_len);
	return rc ? rc : _str(dst, v);
}

/* ---------------------------------------------------------- the keys */

#define DATA_KEY(fn, words)						\
static int _set_##fn(void *c, const conf_where_t *w, const char *v,	\
		     char *err, size_t err_len)				\
{									\
	return _data_set(c, w, v, words, err, err_len);			\
}									\
static void _show_##fn(const void *c, char *buf, size_t len)		\
{									\
	_data_show(c, words, buf, len);					\
}

DATA_KEY(job, job_words)
DATA_KEY(node, node_words)
DATA_KEY(switch, switch_words)
DATA_KEY(door, door_words)

/* What a string key holds: checked as such before it is kept. */
enum { ES_PATH, ES_DS, ES_WORD };

static int _checked(char **dst, int kind, const conf_where_t *w,
		    const char *v, char *err, size_t err_len)
{
	int rc;

	if (kind == ES_PATH)
		return _path(dst, w, v, err, err_len);
	rc = kind == ES_DS ? rrd_conf_check_ds(w, v, err, err_len) :
			     conf_word(w, v, err, err_len);
	return rc ? rc : _str(dst, v);
}

#define STR_KEY(fn, field, kind)					\
static int _set_##fn(void *conf, const conf_where_t *w, const char *v,	\
		     char *err, size_t err_len)				\
{									\
	es_conf_t *c = conf;						\
									\
	return _checked(&c->field, kind, w, v, err, err_len);		\
}									\
static void _show_##fn(const void *conf, char *buf, size_t len)	\
{									\
	const es_conf_t *c = conf;					\
									\
	snprintf(buf, len, "%s", c->field ? c->field : "");		\
}

STR_KEY(energy_ds, energy_ds, ES_DS)
STR_KEY(temp_ds, temp_ds, ES_DS)
STR_KEY(energy_path, energy_path, ES_PATH)
STR_KEY(temp_path, temp_path, ES_PATH)
STR_KEY(doors, cold_doors, ES_WORD)
STR_KEY(switches, switches, ES_WORD)
STR_KEY(daemon, daemon, ES_WORD)

#define REAL_KEY(fn, field, max)					\
static int _set_##fn(void *conf, const conf_where_t *w, const char *v,	\
		     char *err, size_t err_len)				\
{									\
	es_conf_t *c = conf;						\
									\
	return conf_double(w, v, 0, max, &c->field, err, err_len);	\
}									\
static void _show_##fn(const void *conf, char *buf, size_t len)	\
{									\
	const es_conf_t *c = conf;					\
									\
	snprintf(buf, len, "%g", c->field);				\
}

REAL_KEY(min_w, min_w, ES_WATT_MAX)
REAL_KEY(max_w, max_w, ES_WATT_MAX)
REAL_KEY(min_t, min_temp_c, ES_TEMP_MAX)
REAL_KEY(max_t, max_temp_c, ES_TEMP_MAX)

#define SECONDS_KEY(fn, field, min_s, max_s)				\
static int _set_##fn(void *conf, const conf_where_t *w, const char *v,	\
		     char *err, size_t err_len)				\
{									\
	es_conf_t *c = conf;						\
									\
	return conf_seconds_ns(w, v, (min_s) * SE_NS_PER_SEC,		\
			       (max_s) * SE_NS_PER_SEC, &c->field, err,	\
			       err_len);				\
}									\
static void _show_##fn(const void *conf, char *buf, size_t len)	\
{									\
	const es_conf_t *c = conf;					\
									\
	snprintf(buf, len, "%g", (double) c->field / SE_NS_PER_SEC);	\
}

SECONDS_KEY(max_age, max_age_ns, 1ULL, 86400ULL)
SECONDS_KEY(history, history_ns, 60ULL, 7 * 86400ULL)

static int _set_threads(void *conf, const conf_where_t *w, const char *v,
			char *err, size_t err_len)
{
	es_conf_t *c = conf;
	uint64_t n;
	int rc = conf_uint(w, v, 1, ES_THREADS_MAX, &n, err, err_len);

	if (!rc)
		c->threads = (unsigned) n;
	return rc;
}

static void _show_threads(const void *conf, char *buf, size_t len)
{
	const es_conf_t *c = conf;

	snprintf(buf, len, "%u", c->threads);
}

static const se_conf_key_t keys[] = {
	{ "JobData",		_set_job,		_show_job },
	{ "NodeData",		_set_node,		_show_node },
	{ "SwitchData",		_set_switch,		_show_switch },
	{ "ColdDoorData",	_set_door,		_show_door },
	{ "EnergyRRA",		_set_energy_ds,		_show_energy_ds },
	{ "TempRRA",		_set_temp_ds,		_show_temp_ds },
	{ "EnergyPathRRD",	_set_energy_path,	_show_energy_path },
	{ "TempPathRRD",	_set_temp_path,		_show_temp_path },
	{ "MinWatt",		_set_min_w,		_show_min_w },
	{ "MaxWatt",		_set_max_w,		_show_max_w },
	{ "MinTemp",		_set_min_t,		_show_min_t },
	{ "MaxTemp",		_set_max_t,		_show_max_t },
	{ "ColdDoors",		_set_doors,		_show_doors },
	{ "Switches",		_set_switches,		_show_switches },
	{ "RRDDaemon",		_set_daemon,		_show_daemon },
	{ "ReadThreads",	_set_threads,		_show_threads },
	{ "MaxAge",		_set_max_age,		_show_max_age },
	{ "EnergyHistory",	_set_history,		_show_history },
};

/* ---------------------------------------------------------- public */

void es_conf_init(es_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	/* upstream's defaults (_WATT_MIN/_MAX, _TEMP_MIN/_MAX) */
	c->min_w = 10;
	c->max_w = 500;
	c->min_temp_c = 1;
	c->max_temp_c = 300;
	c->threads = 8;
	c->max_age_ns = 60 * SE_NS_PER_SEC;
	c->history_ns = 3600 * SE_NS_PER_SEC;
}

void es_conf_free(es_conf_t *c)
{
	free(c->energy_ds);
	free(c->temp_ds);
	free(c->energy_path);
	free(c->temp_path);
	free(c->cold_doors);
	free(c->switches);
	free(c->daemon);
	memset(c, 0, sizeof(*c));
}

static int _need(const char *file, const char *key, const char *why,
		 char *err, size_t err_len)
{
	snprintf(err, err_len, "%s: %s= must be set to gather %s", file, key,
		 why);
	return -EINVAL;
}

int es_conf_check(const es_conf_t *c, const char *file, char *err,
		  size_t err_len)
{
	unsigned energy = ES_JOB_ENERGY | ES_NODE_ENERGY | ES_SWITCH_ENERGY;
	unsigned temp = ES_NODE_TEMP | ES_SWITCH_TEMP | ES_DOOR_TEMP;

	if ((c->data & energy) && !c->energy_path)
		return _need(file, "EnergyPathRRD", "energy", err, err_len);
	if ((c->data & temp) && !c->temp_path)
		return _need(file, "TempPathRRD", "temperatures", err,
			     err_len);
	if ((c->data & ES_DOOR_TEMP) && !c->cold_doors)
		return _need(file, "ColdDoors", "ColdDoorData=temp", err,
			     err_len);
	if (c->min_w >= c->max_w) {
		snprintf(err, err_len, "%s: MinWatt=%g is not below MaxWatt=%g",
			 file, c->min_w, c->max_w);
		return -EINVAL;
	}
	if (c->min_temp_c >= c->max_temp_c) {
		snprintf(err, err_len, "%s: MinTemp=%g is not below MaxTemp=%g",
			 file, c->min_temp_c, c->max_temp_c);
		return -EINVAL;
	}
	return 0;
}

SE_CONF_DESC_DEFINE(es_conf_desc, es_conf, es_conf_t, "ext_sensors/meters",
		    "ext_sensors.conf", keys);
