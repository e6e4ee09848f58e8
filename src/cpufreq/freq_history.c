/*
 * freq_history.c - the run-history file (format in freq_history.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "freq_history.h"
#include "se_array.h"

/* ------------------------------------------------------ public functions */

void freq_history_init(freq_history_t *h)
{
	memset(h, 0, sizeof(*h));
}

static void _clear(freq_history_t *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->e[i].key);
	free(h->e);
	free(h->path);
	freq_history_init(h);
}

void freq_history_free(freq_history_t *h)
{
	_clear(h);
}

int freq_history_add(freq_history_t *h, const char *key,
		     const freq_run_t *run)
{
	if (se_array_room(&h->e, h->n, &h->cap, sizeof(h->e[0]), 64))
		return -ENOMEM;
	if (!(h->e[h->n].key = strdup(key)))
		return -ENOMEM;
	h->e[h->n].run = *run;
	h->n++;
	return 0;
}

/* Parse one line; 1 = a run, 0 = blank/comment, -1 = malformed. */
static int _parse(char *line, char **key, freq_run_t *run)
{
	char *save = NULL, *f[5], *end;
	unsigned long khz;
	int n = 0;

	for (char *t = strtok_r(line, " \t\r\n", &save); t && n < 5;
	     t = strtok_r(NULL, " \t\r\n", &save))
		f[n++] = t;
	if (!n || f[0][0] == '#')
		return 0;
	if (n < 4)
		return -1;
	errno = 0;
	khz = strtoul(f[1], &end, 10);
	if (errno || *end || !khz || khz > UINT32_MAX || f[1][0] == '-')
		return -1;
	run->khz = (uint32_t) khz;
	run->elapsed_s = strtod(f[2], &end);
	if (*end || !isfinite(run->elapsed_s) || run->elapsed_s <= 0)
		return -1;
	run->energy_j = strtod(f[3], &end);
	if (*end || !isfinite(run->energy_j) || run->energy_j < 0)
		return -1;
	*key = f[0];
	return 1;
}

int freq_history_load(freq_history_t *h, const char *path, char *err,
		      size_t err_len)
{
	freq_history_t nh;
	struct stat st;
	char *line = NULL, *key;
	size_t cap = 0;
	freq_run_t run;
	FILE *f;
	int rc = 0, r;

	freq_history_init(&nh);
	if (!(f = fopen(path, "r"))) {
		rc = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fileno(f), &st) == 0) {
		nh.mtime = st.st_mtime;
		nh.size = st.st_size;
	}
	while (getline(&line, &cap, f) >= 0) {
		r = _parse(line, &key, &run);
		if (r < 0)
			nh.bad_lines++;
		else if (r > 0 && (rc = freq_history_add(&nh, key, &run)))
			break;
	}
	free(line);
	fclose(f);
	if (!rc && !(nh.path = strdup(path)))
		rc = -ENOMEM;
	if (rc) {
		snprintf(err, err_len, "%s: %s", path, strerror(-rc));
		_clear(&nh);
		return rc;
	}
	_clear(h);
	*h = nh;
	return 0;
}

int freq_history_check_file(const char *path, char *err, size_t err_len)
{
	freq_history_t h;
	int rc;

	freq_history_init(&h);
	rc = freq_history_load(&h, path, err, err_len);
	freq_history_free(&h);
	return rc;
}

int freq_history_refresh(freq_history_t *h, const char *path, char *err,
			 size_t err_len)
{
	struct stat st;
	int rc;

	if (stat(path, &st)) {
		rc = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (h->path && !strcmp(h->path, path) && st.st_mtime == h->mtime &&
	    st.st_size == h->size)
		return 0;
	rc = freq_history_load(h, path, err, err_len);
	return rc ? rc : 1;
}

size_t freq_history_runs(const freq_history_t *h, const char *key,
			 freq_run_t *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < h->n && n < max; i++)
		if (!strcmp(h->e[i].key, key))
			out[n++] = h->e[i].run;
	return n;
}

void freq_history_key(const char *user, const char *tag, const char *job_name,
		      char *out, size_t out_len)
{
	const char *app = (tag && *tag) ? tag : (job_name && *job_name ?
						   job_name : "-");
	size_t o;

	if (!out_len)
		return;
	snprintf(out, out_len, "%s/", user && *user ? user : "-");
	o = strlen(out);
	for (const char *s = app; *s && o + 1 < out_len; s++)
		out[o++] = (*s == ' ' || *s == '\t' || *s == '/' ||
			    *s == '\n' || *s == '#') ? '_' : *s;
	out[o] = '\0';
}
