/*
 * conf_desc.c - keys of a configuration by its table (see conf_desc.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf_desc.h"

/* ---------------------------------------------------------- one row */

/* The typed parse of row b into field; 0 or a negative errno. */
static int _parse_typed(const se_conf_key_t *b, void *field,
			const conf_where_t *w, const char *v, char *err,
			size_t len)
{
	uint64_t x;
	int i, rc;

	switch (b->type) {
	case SE_CONF_PATH:
		return conf_abs_path(w, v, err, len);
	case SE_CONF_UINT:
		if (!(rc = conf_uint(w, v, b->min, b->max, &x, err, len)))
			*(unsigned *) field = (unsigned) x;
		return rc;
	case SE_CONF_REAL:
		return conf_double(w, v, b->rmin, b->rmax, field, err, len);
	case SE_CONF_SECONDS:
		return conf_seconds_ns(w, v, b->min, b->max, field, err, len);
	case SE_CONF_MILLIS:
		return conf_millis_ns(w, v, b->min, b->max, field, err, len);
	case SE_CONF_ENUM:
		if (!(rc = conf_enum(w, v, b->names, &i, err, len)))
			*(int *) field = i;
		return rc;
	default:	/* SE_CONF_STR: any string, the check says */
		return 0;
	}
}

int se_conf_key_parse(const se_conf_key_t *k, void *base,
		      const conf_where_t *w, const char *value, char *err,
		      size_t err_len)
{
	const se_conf_key_t *b = k->like ? k->like : k;
	void *field = (char *) base + k->offset;
	unsigned char keep[sizeof(uint64_t)];
	size_t size;
	int rc;

	if (b->type == SE_CONF_FN)
		return b->parse(base, w, value, err, err_len);
	if (b->type == SE_CONF_CUSTOM)
		return b->convert(field, w, value ? value : "", err, err_len);
	if (b->type == SE_CONF_STR || b->type == SE_CONF_PATH) {
		if ((rc = _parse_typed(b, field, w, value, err, err_len)) ||
		    (b->check && (rc = b->check(w, value, err, err_len))))
			return rc;
		return conf_set_str(field, value);
	}
	/* A check refuses after the typed parse: the field is put back. */
	size = b->type == SE_CONF_UINT || b->type == SE_CONF_ENUM ?
		sizeof(int) : sizeof(uint64_t);
	memcpy(keep, field, size);
	rc = _parse_typed(b, field, w, value, err, err_len);
	if (!rc && b->check && (rc = b->check(w, value, err, err_len)))
		memcpy(field, keep, size);
	return rc;
}

void se_conf_key_show(const se_conf_key_t *k, const void *base, char *buf,
		      size_t len)
{
	const se_conf_key_t *b = k->like ? k->like : k;
	const void *field = (const char *) base + k->offset;
	const char *s;

	if (k->show) {
		k->show(base, buf, len);
		return;
	}
	switch (b->type) {
	case SE_CONF_STR:
	case SE_CONF_PATH:
		s = *(char *const *) field;
		snprintf(buf, len, "%s", s ? s : b->unset ? b->unset : "");
		break;
	case SE_CONF_UINT:
		snprintf(buf, len, "%u", *(const unsigned *) field);
		break;
	case SE_CONF_REAL:
		snprintf(buf, len, "%g", *(const double *) field);
		break;
	case SE_CONF_SECONDS:
		snprintf(buf, len, "%g",
			 (double) *(const uint64_t *) field / 1e9);
		break;
	case SE_CONF_MILLIS:
		snprintf(buf, len, "%llu", (unsigned long long)
			 (*(const uint64_t *) field / 1000000ULL));
		break;
	case SE_CONF_ENUM:
		snprintf(buf, len, "%s", b->names[*(const int *) field]);
		break;
	default:	/* SE_CONF_FN taken as a map key's row, and
			 * SE_CONF_CUSTOM without a show: not shown */
		break;
	}
}

void se_conf_keys_free(const se_conf_key_t *keys, size_t n_keys,
		       void *base)
{
	for (size_t i = 0; i < n_keys; i++) {
		const se_conf_key_t *b = keys[i].like ? keys[i].like : &keys[i];
		char **s = (char **) ((char *) base + keys[i].offset);

		if (b->type == SE_CONF_STR || b->type == SE_CONF_PATH) {
			free(*s);
			*s = NULL;
		}
	}
}

/* ------------------------------------------------------------ a table */

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
	rc = se_conf_key_parse(&d->keys[i], conf, &w, value ? value : "",
			       err, err_len);
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
		se_conf_key_show(&d->keys[i], conf, buf, len);
	return buf;
}

const char *se_conf_value(const se_conf_desc_t *d, const void *conf,
			  const char *key, char *buf, size_t len)
{
	long i = se_conf_key_index(d, key);

	return se_conf_show(d, conf, i < 0 ? d->n_keys : (size_t) i, buf, len);
}

int se_conf_check(const se_conf_desc_t *d, void *conf, const char *file,
		  char *err, size_t err_len)
{
	return d->check ? d->check(conf, file, err, err_len) : 0;
}
