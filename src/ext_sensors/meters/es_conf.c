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

/* The paths are templates (%n): slurmctld's working directory is no base,
 * bad escapes are refused at load time. */
static const se_conf_key_t keys[] = {
	SE_KEY_FN("JobData", _set_job, _show_job),
	SE_KEY_FN("NodeData", _set_node, _show_node),
	SE_KEY_FN("SwitchData", _set_switch, _show_switch),
	SE_KEY_FN("ColdDoorData", _set_door, _show_door),
	SE_KEY_STR("EnergyRRA", es_conf_t, energy_ds, rrd_conf_check_ds, ""),
	SE_KEY_STR("TempRRA", es_conf_t, temp_ds, rrd_conf_check_ds, ""),
	SE_KEY_PATH("EnergyPathRRD", es_conf_t, energy_path, conf_template,
		    ""),
	SE_KEY_PATH("TempPathRRD", es_conf_t, temp_path, conf_template, ""),
	SE_KEY_REAL("MinWatt", es_conf_t, min_w, 0, ES_WATT_MAX),
	SE_KEY_REAL("MaxWatt", es_conf_t, max_w, 0, ES_WATT_MAX),
	SE_KEY_REAL("MinTemp", es_conf_t, min_temp_c, 0, ES_TEMP_MAX),
	SE_KEY_REAL("MaxTemp", es_conf_t, max_temp_c, 0, ES_TEMP_MAX),
	SE_KEY_STR("ColdDoors", es_conf_t, cold_doors, conf_word, ""),
	SE_KEY_STR("Switches", es_conf_t, switches, conf_word, ""),
	SE_KEY_STR("RRDDaemon", es_conf_t, daemon, conf_word, ""),
	SE_KEY_UINT("ReadThreads", es_conf_t, threads, 1, ES_THREADS_MAX),
	SE_KEY_SECONDS("MaxAge", es_conf_t, max_age_ns, SE_NS_PER_SEC,
		       86400 * SE_NS_PER_SEC),
	SE_KEY_SECONDS("EnergyHistory", es_conf_t, history_ns,
		       60 * SE_NS_PER_SEC, 7 * 86400 * SE_NS_PER_SEC),
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
	se_conf_keys_free(keys, sizeof(keys) / sizeof(keys[0]), c);
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
