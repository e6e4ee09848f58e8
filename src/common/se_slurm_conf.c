/*
 * se_slurm_conf.c - a configuration descriptor with Slurm's parser (see
 * se_slurm_conf.h).
 */
#include "config.h"		/* Slurm's, for its headers */

#include <stdio.h>
#include <string.h>

#include "src/common/slurm_xlator.h"
#include "src/common/read_config.h"	/* slurm_conf: AuthInfo */

#include "se_slurm_conf.h"

s_p_options_t *se_slurm_conf_options(const se_conf_desc_t *d)
{
	s_p_options_t *options = xcalloc(d->n_keys + 1, sizeof(*options));

	for (size_t i = 0; i < d->n_keys; i++) {
		options[i].key = (char *) d->keys[i].name;
		options[i].type = S_P_STRING;
	}
	return options;
}

int se_slurm_conf_parse(const se_conf_desc_t *d, void *conf,
			s_p_hashtbl_t *tbl, const char *file, char *err,
			size_t err_len)
{
	char *value;
	int rc = 0;

	d->free(conf);
	d->init(conf);
	for (size_t i = 0; tbl && !rc && i < d->n_keys; i++) {
		if (!s_p_get_string(&value, d->keys[i].name, tbl))
			continue;
		rc = se_conf_set_index(d, conf, file, i, value, err, err_len);
		xfree(value);
	}
	return rc ? rc : se_conf_check(d, conf, file, err, err_len);
}

void se_slurm_conf_values(const se_conf_desc_t *d, const void *conf,
			  se_list_t list)
{
	config_key_pair_t *kp;
	char buf[4096];

	for (size_t i = 0; i < d->n_keys; i++) {
		kp = xmalloc(sizeof(*kp));
		kp->name = xstrdup(d->keys[i].name);
		kp->value = xstrdup(se_conf_show(d, conf, i, buf, sizeof(buf)));
		list_append(list, kp);
	}
}

const char *se_slurm_munge_socket(char *buf, size_t len)
{
	const char *s = slurm_conf.authinfo ?
			strstr(slurm_conf.authinfo, "socket=") : NULL;

	if (!s)
		return NULL;
	s += strlen("socket=");
	snprintf(buf, len, "%.*s", (int) strcspn(s, ","), s);
	return buf;
}
