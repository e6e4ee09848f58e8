/*
 * conf_desc.c - keys of a configuration by its table (see conf_desc.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <strings.h>

#include "conf_desc.h"

const char *se_conf_key(const se_conf_desc_t *d, size_t i)
{
	return i < d->n_keys ? d->keys[i].name : NULL;
}

long se_conf_key_index(const se_conf_desc_t *d, const char *key)
{
	for (size_t i = 0; i < d->n_keys; i++)
		if (!strcasecmp(d->keys[i].name, key))
			return (long) i;
	return -1;
}

int se_conf_set_index(const se_conf_desc_t *d, void *conf, const char *file,
		      size_t i, const char *value, char *err, size_t err_len)
{
	conf_where_t w = { file ? file : d->file, NULL, 0 };
	int rc;

	if (i >= d->n_keys)
		return -EINVAL;
	w.key = d->keys[i].name;
	rc = d->keys[i].parse(conf, &w, value ? value : "", err, err_len);
	if (!rc && d->given)
		d->given(conf, i);
	return rc;
}

int se_conf_set(const se_conf_desc_t *d, void *conf, const char *file,
		const char *key, const char *value, char *err,
		size_t err_len)
{
	long i = se_conf_key_index(d, key);

	if (i < 0) {
		snprintf(err, err_len, "%s: %s=%s: unknown key",
			 file ? file : d->file, key, value ? value : "");
		return -ENOENT;
	}
	return se_conf_set_index(d, conf, file, (size_t) i, value, err,
				 err_len);
}

const char *se_conf_show(const se_conf_desc_t *d, const void *conf, size_t i,
			 char *buf, size_t len)
{
	if (!len)
		return buf;
	buf[0] = '\0';
	if (i < d->n_keys)
		d->keys[i].show(conf, buf, len);
	return buf;
}

const char *se_conf_value(const se_conf_desc_t *d, const void *conf,
			  const char *key, char *buf, size_t len)
{
	long i = se_conf_key_index(d, key);

	return se_conf_show(d, conf, i < 0 ? d->n_keys : (size_t) i, buf, len);
}
