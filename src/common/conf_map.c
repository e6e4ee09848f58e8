/*
 * conf_map.c - the map files' reader (see conf_map.h).
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
#include "conf_map.h"

typedef struct {
	const se_conf_map_t *m;
	void *arg;
	void *entry;
	unsigned entries;	/* lines kept */
	bool line_failed;	/* a line was refused: err names it */
} map_read_t;

/* "MAP:LINE: KEY=VALUE: unknown key (known: A, B)", from the rows. */
static int _unknown(const se_conf_map_t *m, const conf_where_t *w,
		    const char *value, char *err, size_t err_len)
{
	char known[256] = "";
	size_t n = 0;

	for (size_t i = 0; i < m->n_keys && n < sizeof(known); i++)
		n += (size_t) snprintf(known + n, sizeof(known) - n, "%s%s",
				       i ? ", " : "", m->keys[i].name);
	return conf_fail(w, value, err, err_len, -EINVAL,
			 "unknown key (known: %s)", known);
}

static long _row(const se_conf_map_t *m, const char *key)
{
	for (size_t i = 0; i < m->n_keys; i++)
		if (!strcasecmp(m->keys[i].name, key))
			return (long) i;
	return -1;
}

/* The pairs of one line into r->entry. */
static int _pairs(map_read_t *r, const char *path, unsigned line,
		  const conf_pair_t *pairs, size_t n, char *err,
		  size_t err_len)
{
	const se_conf_map_t *m = r->m;
	unsigned long long seen = 0;
	int rc;

	for (size_t i = 0; i < n; i++) {
		conf_where_t w = { path, pairs[i].key, line };
		long k = _row(m, pairs[i].key);

		if (k < 0)
			return _unknown(m, &w, pairs[i].value, err, err_len);
		if (m->once && (seen & (1ULL << k)))
			return conf_fail(&w, pairs[i].value, err, err_len,
					 -EINVAL, "given twice");
		seen |= 1ULL << k;
		if ((rc = se_conf_key_parse(&m->keys[k], r->entry, &w,
					    pairs[i].value, err, err_len)))
			return rc;
		if (m->given)
			m->given(r->entry, (size_t) k);
	}
	return 0;
}

/* conf_line_fn: one entry. */
static int _line(void *arg, const char *path, unsigned line,
		 const conf_pair_t *pairs, size_t n, char *err,
		 size_t err_len)
{
	map_read_t *r = arg;
	const se_conf_map_t *m = r->m;
	int rc;

	memset(r->entry, 0, m->entry_size);
	if (m->init)
		m->init(r->entry);
	rc = _pairs(r, path, line, pairs, n, err, err_len);
	if (!rc)
		rc = m->line(r->arg, r->entry, path, line, err, err_len);
	se_conf_keys_free(m->keys, m->n_keys, r->entry);
	if (rc)
		r->line_failed = true;
	else
		r->entries++;
	return rc;
}

int se_conf_map_read(const se_conf_map_t *m, const char *path, void *arg,
		     char *err, size_t err_len)
{
	map_read_t r = { .m = m, .arg = arg };
	int rc;

	if (!(r.entry = malloc(m->entry_size)))
		return -ENOMEM;
	rc = conf_read_pairs_file(path, _line, &r, err, err_len);
	free(r.entry);
	/* Cannot be read (open, read): said as the configuration's key.  A
	 * line's own refusal keeps its message ("MAP:LINE: KEY=VALUE: why"),
	 * whatever its errno (-ENAMETOOLONG: a Device= that expands too
	 * long was reported as the map's file name being too long). */
	if (rc && !r.line_failed && rc != -EINVAL && rc != -ENOMEM)
		snprintf(err, err_len, "%s: %s=%s: %s", m->conf_file,
			 m->conf_key, path, strerror(-rc));
	if (!rc && !r.entries) {
		snprintf(err, err_len, "%s: no entries", path);
		rc = -EINVAL;
	}
	return rc;
}
