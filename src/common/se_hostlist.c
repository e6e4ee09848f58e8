/*
 * se_hostlist.c - Slurm's hostlist expressions expanded (se_hostlist.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_hostlist.h"

#define HL_NUM_MAX	1000000000ul	/* a range's bounds, as Slurm's */

typedef struct {
	char *buf;		/* the comma list so far */
	size_t len, cap;
	size_t n, max_names;
	char *err;
	size_t err_len;
} hl_out_t;

/* "WHAT: why" into err (what: n bytes at at); -EINVAL. */
static int _fail(hl_out_t *o, const char *at, int n, const char *why)
{
	snprintf(o->err, o->err_len, "%.*s: %s", n, at, why);
	return -EINVAL;
}

static int _append(hl_out_t *o, const char *name, size_t len)
{
	size_t need = o->len + len + 2;

	if (o->n == o->max_names) {
		snprintf(o->err, o->err_len, "more than %zu names",
			 o->max_names);
		return -EINVAL;
	}
	if (need > o->cap) {
		size_t cap = need > 2 * o->cap ? need : 2 * o->cap;
		char *p = realloc(o->buf, cap);

		if (!p)
			return -ENOMEM;
		o->buf = p;
		o->cap = cap;
	}
	if (o->len)
		o->buf[o->len++] = ',';
	memcpy(o->buf + o->len, name, len);
	o->len += len;
	o->buf[o->len] = '\0';
	o->n++;
	return 0;
}

/* A number of a bracket group at *p: its value and written width. */
static int _number(hl_out_t *o, const char **p, unsigned long *v, int *width)
{
	const char *s = *p;
	char *end;

	if (!isdigit((unsigned char)*s))
		return _fail(o, s, (int)strcspn(s, ",]"),
			     "not a number in a range");
	errno = 0;
	*v = strtoul(s, &end, 10);
	if (errno || *v > HL_NUM_MAX)
		return _fail(o, s, (int)(end - s), "too large");
	*width = (int)(end - s);
	if (*width > 18)	/* the stem's room, and no host is named so */
		return _fail(o, s, *width, "too wide");
	*p = end;
	return 0;
}

static int _expand(hl_out_t *o, const char *name, size_t len);

/*
 * name[0..len) has its first bracket group at open: every value of the
 * group, with the rest of the name after it expanded in turn.  prefix is
 * written into stem, which has room for len + 20 bytes.
 */
static int _group(hl_out_t *o, const char *name, size_t len,
		  const char *open, const char *close, char *stem)
{
	size_t plen = (size_t)(open - name);
	const char *p = open + 1, *rest = close + 1;
	size_t rlen = len - (size_t)(rest - name);
	int rv = 0;

	memcpy(stem, name, plen);
	while (p < close && !rv) {
		unsigned long lo, hi;
		int w, hw;

		if ((rv = _number(o, &p, &lo, &w)))
			break;
		hi = lo;
		if (*p == '-') {
			p++;
			if ((rv = _number(o, &p, &hi, &hw)))
				break;
			if (hi < lo) {
				snprintf(o->err, o->err_len, "range %lu-%lu "
					 "goes down", lo, hi);
				return -EINVAL;
			}
		}
		if (*p != ',' && p != close)
			return _fail(o, p, (int)strcspn(p, ",]"),
				     "not a number or range");
		p += *p == ',';
		for (unsigned long v = lo; v <= hi && !rv; v++) {
			int n = snprintf(stem + plen, 24, "%0*lu", w, v);

			memcpy(stem + plen + n, rest, rlen);
			rv = _expand(o, stem, plen + (size_t)n + rlen);
		}
	}
	return rv;
}

/* One name of the list (name[0..len), no top-level comma). */
static int _expand(hl_out_t *o, const char *name, size_t len)
{
	const char *open = memchr(name, '[', len), *close;
	char *stem;
	int rv;

	if (!open) {
		if (memchr(name, ']', len))
			return _fail(o, name, (int)len, "unbalanced bracket");
		return len ? _append(o, name, len) : 0;
	}
	close = memchr(open, ']', len - (size_t)(open - name));
	if (!close || memchr(open + 1, '[', (size_t)(close - open - 1)) ||
	    memchr(name, ']', (size_t)(open - name)))
		return _fail(o, name, (int)len, "unbalanced bracket");
	if (close == open + 1)
		return _fail(o, name, (int)len, "empty brackets");
	if (!(stem = malloc(len + 24)))
		return -ENOMEM;
	rv = _group(o, name, len, open, close, stem);
	free(stem);
	return rv;
}

int se_hostlist_expand(const char *expr, size_t max_names, char **out,
		       char *err, size_t err_len)
{
	hl_out_t o = { .max_names = max_names, .err = err,
		       .err_len = err_len };
	const char *p = expr;
	int rv = 0;

	*out = NULL;
	while (*p && !rv) {
		size_t len = 0;
		int depth = 0;

		/* a comma ends a name only outside brackets */
		for (; p[len] && (depth || p[len] != ','); len++)
			depth += (p[len] == '[') - (p[len] == ']');
		if (!len) {
			snprintf(err, err_len, "an empty name");
			rv = -EINVAL;
			break;
		}
		rv = _expand(&o, p, len);
		p += len + (p[len] == ',');
	}
	if (!rv && !o.n) {
		snprintf(err, err_len, "no name");
		rv = -EINVAL;
	}
	if (rv) {
		free(o.buf);
		return rv;
	}
	*out = o.buf;
	return 0;
}
