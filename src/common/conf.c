/*
 * conf.c - configuration value checkers with messages an admin can act on.
 *
 * Every message reads "FILE[:LINE]: KEY=VALUE: what is wrong", so that an
 * admin reading slurmd's log knows which file and line to fix.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "conf.h"

#define NS_PER_SEC	1000000000ULL
#define NS_PER_MS	1000000ULL

/* ------------------------------------------------------------ messages */

/* Write "file[:line]: key=value: " into err; returns its length. */
static size_t _prefix(const conf_where_t *w, const char *value, char *err,
		      size_t err_len)
{
	const char *file = w && w->file ? w->file : "config";
	int n;

	if (w && w->line)
		n = snprintf(err, err_len, "%s:%u: ", file, w->line);
	else
		n = snprintf(err, err_len, "%s: ", file);
	if (n >= 0 && (size_t) n < err_len && w && w->key)
		n += snprintf(err + n, err_len - n, "%s=%s: ", w->key,
			      value ? value : "");
	else if (n >= 0 && (size_t) n < err_len && value)
		n += snprintf(err + n, err_len - n, "%s: ", value);
	if (n < 0)
		return 0;
	return (size_t) n < err_len ? (size_t) n : err_len;
}

int conf_fail(const conf_where_t *w, const char *value, char *err,
	      size_t err_len, int rc, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!err || !err_len)
		return rc;
	n = _prefix(w, value, err, err_len);
	if (n < err_len) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_len - n, fmt, ap);
		va_end(ap);
	}
	return rc;
}

/* ns as the shortest exact decimal number of seconds: "0.5", "3600" */
static void _fmt_seconds(uint64_t ns, char *buf, size_t len)
{
	unsigned long long sec = ns / NS_PER_SEC;
	unsigned long long frac = ns % NS_PER_SEC;
	int digits = 9;

	if (!frac) {
		snprintf(buf, len, "%llu", sec);
		return;
	}
	while (frac % 10 == 0) {
		frac /= 10;
		digits--;
	}
	snprintf(buf, len, "%llu.%0*llu", sec, digits, frac);
}

/* ------------------------------------------------------------- numbers */

/* Decimal digits only, the whole string; -ERANGE on overflow. */
static int _parse_dec(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return -EINVAL;
		if (v > (UINT64_MAX - (*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (*s - '0');
	}
	*out = v;
	return 0;
}

/* Hex digits only, the whole string; -ERANGE on overflow. */
static int _parse_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		int d;

		if (!isxdigit((unsigned char) *s))
			return -EINVAL;
		d = isdigit((unsigned char) *s) ? *s - '0' :
			tolower((unsigned char) *s) - 'a' + 10;
		if (v > (UINT64_MAX >> 4))
			return -ERANGE;
		v = (v << 4) | (uint64_t) d;
	}
	*out = v;
	return 0;
}

/*
 * "S", "S.F" or ".F" seconds into ns, exactly (no binary rounding: 0.1 s
 * is 100000000 ns).  -EINVAL malformed or finer than 1 ns, -ERANGE too big.
 */
static int _parse_seconds(const char *s, uint64_t *out)
{
	const char *dot = strchr(s, '.');
	char whole[32], frac[10] = "000000000";
	size_t wlen = dot ? (size_t) (dot - s) : strlen(s);
	size_t flen = dot ? strlen(dot + 1) : 0;
	uint64_t sec = 0, ns = 0;
	int rc;

	if ((!wlen && !flen) || (dot && !flen) || flen > 9)
		return -EINVAL;
	if (wlen >= sizeof(whole))
		return strspn(s, "0123456789") == wlen ? -ERANGE : -EINVAL;
	memcpy(whole, s, wlen);
	whole[wlen] = '\0';
	memcpy(frac, dot ? dot + 1 : "", flen);
	if (wlen && (rc = _parse_dec(whole, &sec)))
		return rc;
	if ((rc = _parse_dec(frac, &ns)))
		return rc;
	if (sec > (UINT64_MAX - ns) / NS_PER_SEC)
		return -ERANGE;
	*out = sec * NS_PER_SEC + ns;
	return 0;
}

/* A kind of whole-number value: what a bad one is not, the unit its
 * range is said in, and what one of it is in the stored unit. */
typedef struct {
	const char *not_what;
	const char *unit;
	uint64_t scale;
} whole_kind_t;

static const whole_kind_t _millis = {
	"not a whole number of milliseconds", " milliseconds", NS_PER_MS
};
static const whole_kind_t _unsigned = {
	"not an unsigned integer (decimal, or hex with 0x)", "", 1
};

/*
 * The verdict on a parsed whole number: rc -EINVAL from the parser is
 * "not ..."; another error (too large for its type), v outside min..max
 * or v * scale past 64 bits is "must be between MIN and MAX" and the
 * unit; else 0 with *out = v * scale.
 */
static int _whole_in_range(const conf_where_t *w, const char *value, int rc,
			   uint64_t v, uint64_t min, uint64_t max,
			   const whole_kind_t *kind, uint64_t *out, char *err,
			   size_t err_len)
{
	if (rc == -EINVAL)
		return conf_fail(w, value, err, err_len, -EINVAL, "%s",
				 kind->not_what);
	if (rc || v < min || v > max || v > UINT64_MAX / kind->scale)
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "must be between %llu and %llu%s",
				 (unsigned long long) min,
				 (unsigned long long) max, kind->unit);
	*out = v * kind->scale;
	return 0;
}

/* ---------------------------------------------------------- public API */

int conf_seconds_ns(const conf_where_t *w, const char *value,
		    uint64_t min_ns, uint64_t max_ns, uint64_t *out,
		    char *err, size_t err_len)
{
	char lo[32], hi[32];
	uint64_t ns = 0;
	int rc;

	rc = value ? _parse_seconds(value, &ns) : -EINVAL;
	if (rc == -EINVAL)
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "not a number of seconds");
	if (rc || ns < min_ns || ns > max_ns) {
		_fmt_seconds(min_ns, lo, sizeof(lo));
		_fmt_seconds(max_ns, hi, sizeof(hi));
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "must be between %s and %s seconds", lo, hi);
	}
	*out = ns;
	return 0;
}

int conf_millis_ns(const conf_where_t *w, const char *value,
		   uint64_t min_ms, uint64_t max_ms, uint64_t *out,
		   char *err, size_t err_len)
{
	uint64_t ms = 0;
	int rc;

	rc = value ? _parse_dec(value, &ms) : -EINVAL;
	return _whole_in_range(w, value, rc, ms, min_ms, max_ms, &_millis, out,
			       err, err_len);
}

int conf_uint(const conf_where_t *w, const char *value, uint64_t min,
	      uint64_t max, uint64_t *out, char *err, size_t err_len)
{
	uint64_t v = 0;
	int rc;

	if (!value)
		rc = -EINVAL;
	else if (value[0] == '0' && (value[1] == 'x' || value[1] == 'X'))
		rc = _parse_hex(value + 2, &v);
	else
		rc = _parse_dec(value, &v);	/* "010" is ten, not octal */
	return _whole_in_range(w, value, rc, v, min, max, &_unsigned, out, err,
			       err_len);
}

int conf_double(const conf_where_t *w, const char *value, double min,
		double max, double *out, char *err, size_t err_len)
{
	char *end;
	double v;

	if (!value || !*value || isspace((unsigned char) *value))
		return conf_fail(w, value, err, err_len, -EINVAL, "not a number");
	v = strtod(value, &end);
	if (*end)
		return conf_fail(w, value, err, err_len, -EINVAL, "not a number");
	if (!isfinite(v))
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "not a finite number");
	if (v < min || v > max)
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "must be between %g and %g", min, max);
	*out = v;
	return 0;
}

int conf_bool(const conf_where_t *w, const char *value, bool *out,
	      char *err, size_t err_len)
{
	static const char *const yes[] = { "yes", "true", "1", NULL };
	static const char *const no[] = { "no", "false", "0", NULL };
	int i;

	for (i = 0; value && yes[i]; i++) {
		if (!strcasecmp(value, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(value, no[i])) {
			*out = false;
			return 0;
		}
	}
	return conf_fail(w, value, err, err_len, -EINVAL,
			 "not a boolean (yes/no, true/false, 1/0)");
}

int conf_enum(const conf_where_t *w, const char *value,
	      const char *const *names, int *out, char *err, size_t err_len)
{
	char list[512] = "";
	size_t n = 0;
	int i;

	for (i = 0; value && names[i]; i++) {
		if (!strcasecmp(value, names[i])) {
			*out = i;
			return 0;
		}
	}
	for (i = 0; names[i] && n < sizeof(list); i++)
		n += snprintf(list + n, sizeof(list) - n, "%s%s",
			      i ? ", " : "", names[i]);
	return conf_fail(w, value, err, err_len, -EINVAL, "must be one of: %s",
			 list);
}

int conf_word(const conf_where_t *w, const char *value, char *err,
	      size_t err_len)
{
	if (!value || !*value)
		return conf_fail(w, value, err, err_len, -EINVAL, "empty");
	for (const char *p = value; *p; p++)
		if (isspace((unsigned char) *p) || iscntrl((unsigned char) *p))
			return conf_fail(w, value, err, err_len, -EINVAL,
					 "contains a blank or a control character");
	return 0;
}

int conf_poller_addr(const conf_where_t *w, const char *value, char *err,
		     size_t err_len)
{
	const char *colon = strrchr(value, ':');
	char *end = NULL;
	unsigned long port;

	if (!colon || colon == value || strchr(value, ' ') ||
	    strchr(value, '\t'))
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "not HOST:PORT (the PDU poller's address)");
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (!colon[1] || *end || errno || port < 1 || port > 65535)
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "bad port (1-65535)");
	return 0;
}

bool conf_in_list(const char *list, const char *name)
{
	size_t len = strlen(name);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, name, len))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

int conf_set_str(char **dst, const char *value)
{
	char *s = strdup(value);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

int conf_abs_path(const conf_where_t *w, const char *value, char *err,
		  size_t err_len)
{
	if (!value || value[0] != '/')
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "must be an absolute path");
	return 0;
}

int conf_nonempty(const conf_where_t *w, const char *value, char *err,
		  size_t err_len)
{
	if (!value || !*value)
		return conf_fail(w, value, err, err_len, -EINVAL, "empty");
	return 0;
}

int conf_template(const conf_where_t *w, const char *value, char *err,
		  size_t err_len)
{
	char probe[4096];

	return conf_expand(w, value, "node", probe, sizeof(probe), err,
			   err_len);
}

int conf_expand(const conf_where_t *w, const char *tmpl, const char *node,
		char *out, size_t out_len, char *err, size_t err_len)
{
	size_t n = 0;
	const char *p;

	if (out_len)
		out[0] = '\0';
	for (p = tmpl; *p; p++) {
		const char *add = p;
		size_t len = 1;

		if (*p == '%') {
			p++;
			if (*p == '%') {
				add = "%";
			} else if (*p == 'n' && node) {
				add = node;
				len = strlen(node);
			} else if (*p == 'n') {
				return conf_fail(w, tmpl, err, err_len, -EINVAL,
						 "%%n used but no node name is known");
			} else if (!*p) {
				return conf_fail(w, tmpl, err, err_len, -EINVAL,
						 "'%%' at the end (write %%%% for a percent sign)");
			} else {
				return conf_fail(w, tmpl, err, err_len, -EINVAL,
						 "unknown escape '%%%c' (known: %%n for the node name, %%%% for a percent sign)",
						 *p);
			}
		}
		if (n + len >= out_len)
			return conf_fail(w, tmpl, err, err_len, -ENAMETOOLONG,
					 "expands to more than %zu characters",
					 out_len ? out_len - 1 : 0);
		memcpy(out + n, add, len);
		n += len;
	}
	if (!out_len)
		return conf_fail(w, tmpl, err, err_len, -ENAMETOOLONG,
				 "expands to more than 0 characters");
	out[n] = '\0';
	return 0;
}

/* ---------------------------------------------------------- pair files */

typedef struct {
	const char *path;
	unsigned line;
	char *err;
	size_t err_len;
} pairs_ctx_t;

static int _pairs_fail(const pairs_ctx_t *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int _pairs_fail(const pairs_ctx_t *c, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!c->err || !c->err_len)
		return -EINVAL;
	n = snprintf(c->err, c->err_len, "%s:%u: ", c->path, c->line);
	if (n >= 0 && (size_t) n < c->err_len) {
		va_start(ap, fmt);
		vsnprintf(c->err + n, c->err_len - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/*
 * A "double quoted" value starting at *pp (on the quote), unescaping \" and
 * \\ in place; *pp moves past the closing quote.
 */
static int _quoted(const pairs_ctx_t *c, const char *key, char **pp)
{
	char *src = *pp + 1, *dst = *pp;

	for (; *src && *src != '"'; src++) {
		if (*src == '\\' && (src[1] == '"' || src[1] == '\\'))
			src++;
		*dst++ = *src;
	}
	if (*src != '"')
		return _pairs_fail(c, "%s: unterminated quote", key);
	*dst = '\0';
	src++;
	if (*src && !isspace((unsigned char) *src))
		return _pairs_fail(c, "%s: text right after the closing quote",
				   key);
	*pp = src;
	return 0;
}

/* Split one key=value token off *pp; pair points into the line buffer. */
static int _next_pair(const pairs_ctx_t *c, char **pp, conf_pair_t *pair)
{
	char *p = *pp, *eq;
	size_t tok = strcspn(p, " \t\r\n=");
	int rc;

	eq = p + tok;
	if (*eq != '=') {
		p[tok] = '\0';
		return _pairs_fail(c, "'%s': expected key=value", p);
	}
	if (!tok)
		return _pairs_fail(c, "'%.*s': empty key",
				   (int) strcspn(p, " \t\r\n"), p);
	*eq = '\0';
	pair->key = p;
	pair->value = eq + 1;
	p = eq + 1;
	if (*p == '"') {
		if ((rc = _quoted(c, pair->key, &p)))
			return rc;
	} else {
		p += strcspn(p, " \t\r\n");
	}
	if (*p)
		*p++ = '\0';
	*pp = p;
	return 0;
}

/* Parse a line in place into pairs (*pairs grown as needed). */
static int _parse_pairs(const pairs_ctx_t *c, char *line, conf_pair_t **pairs,
			size_t *cap, size_t *n)
{
	char *p = line;
	int rc;

	*n = 0;
	for (;;) {
		p += strspn(p, " \t\r\n");
		if (!*p || *p == '#')
			return 0;
		if (*n == *cap) {
			size_t ncap = *cap ? *cap * 2 : 8;
			conf_pair_t *np = realloc(*pairs, ncap * sizeof(*np));

			if (!np)
				return -ENOMEM;
			*pairs = np;
			*cap = ncap;
		}
		if ((rc = _next_pair(c, &p, &(*pairs)[*n])))
			return rc;
		(*n)++;
	}
}

FILE *conf_open_read(const char *path, int *rc, char *err, size_t err_len)
{
	FILE *f;

	if (err && err_len)
		err[0] = '\0';
	if (!(f = fopen(path, "r"))) {
		*rc = -errno;
		if (err && err_len)
			snprintf(err, err_len, "%s: %s", path, strerror(-*rc));
	}
	return f;
}

int conf_read_pairs_file(const char *path, conf_line_fn fn, void *arg,
			 char *err, size_t err_len)
{
	pairs_ctx_t c = { .path = path, .err = err, .err_len = err_len };
	conf_pair_t *pairs = NULL;
	size_t cap = 0, lcap = 0, n;
	char *line = NULL;
	FILE *f;
	int rc = 0;

	if (!(f = conf_open_read(path, &rc, err, err_len)))
		return rc;
	errno = 0;
	while (!rc && getline(&line, &lcap, f) >= 0) {
		c.line++;
		rc = _parse_pairs(&c, line, &pairs, &cap, &n);
		if (!rc && n)
			rc = fn(arg, path, c.line, pairs, n, err, err_len);
		errno = 0;
	}
	if (!rc && ferror(f)) {
		/* e.g. a directory: fopen() takes it, reading says EISDIR */
		rc = errno ? -errno : -EIO;
		if (err && err_len)
			snprintf(err, err_len, "%s: %s", path, strerror(-rc));
	}
	free(line);
	free(pairs);
	fclose(f);
	return rc;
}

int conf_check_secret_file(const conf_where_t *w, const char *path,
			   char *err, size_t err_len)
{
	struct stat st;
	uid_t uid = geteuid();
	int e;

	if (stat(path, &st)) {
		e = errno;
		return conf_fail(w, path, err, err_len, -e, "%s", strerror(e));
	}
	if (!S_ISREG(st.st_mode))
		return conf_fail(w, path, err, err_len, -EINVAL,
				 "not a regular file");
	if (st.st_uid != uid)
		return conf_fail(w, path, err, err_len, -EPERM,
				 "owned by uid %u, must be owned by uid %u (the daemon's user)",
				 (unsigned) st.st_uid, (unsigned) uid);
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		return conf_fail(w, path, err, err_len, -EPERM,
				 "mode %04o lets group or others access it; chmod 600 it",
				 (unsigned) (st.st_mode & 07777));
	return 0;
}
