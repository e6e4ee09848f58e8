/*
 * freq_options.c - --energy-policy and --energy-tag (see freq_options.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "conf_desc.h"
#include "freq_options.h"
#include "freq_policy.h"

/* The job_submit plugin reads the tag from the job's SPANK environment
 * and the history file keys on it: no blanks, no separators. */
#define TAG_FORBIDDEN	" \t\r\n/#=;"

static int _set_policy(void *conf, const conf_where_t *w, const char *v,
		       char *err, size_t err_len)
{
	freq_options_t *o = conf;
	freq_policy_kind_t k;

	if (freq_policy_kind_from_name(v, &k)) {
		snprintf(err, err_len,
			 "%s: --%s=%s: must be one of: none, performance, min_energy, min_time",
			 w->file, w->key, v);
		return -EINVAL;
	}
	snprintf(o->policy, sizeof(o->policy), "%s",
		 freq_policy_kind_name(k));
	return 0;
}

static int _set_tag(void *conf, const conf_where_t *w, const char *v,
		    char *err, size_t err_len)
{
	freq_options_t *o = conf;
	size_t n = strlen(v);

	if (!n || n > FREQ_TAG_MAX || strcspn(v, TAG_FORBIDDEN) != n) {
		snprintf(err, err_len,
			 "%s: --%s=%s: give 1 to %d characters, no blanks or any of / # = ;",
			 w->file, w->key, v, FREQ_TAG_MAX);
		return -EINVAL;
	}
	memcpy(o->tag, v, n + 1);
	return 0;
}

SE_CONF_SHOW(_show_policy, freq_options_t, "%s", c->policy)
SE_CONF_SHOW(_show_tag, freq_options_t, "%s", c->tag)

static const se_conf_key_t keys[] = {
	SE_KEY_FN("energy-policy", _set_policy, _show_policy),
	SE_KEY_FN("energy-tag", _set_tag, _show_tag),
};

void freq_options_init(freq_options_t *o)
{
	memset(o, 0, sizeof(*o));
}

void freq_options_free(freq_options_t *o)
{
	freq_options_init(o);
}

SE_CONF_DESC_DEFINE_NOCHECK(freq_options_desc, freq_options,
			    freq_options_t, "energy_policy options",
			    "command line", keys);
