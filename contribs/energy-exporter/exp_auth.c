/*
 * exp_auth.c - HTTP basic auth against the web configuration's bcrypt
 * hashes, checked by crypt(3) (libxcrypt: $2a$, $2b$, $2y$).
 *
 * bcrypt is slow on purpose (cost 10: tens of ms), and Prometheus sends
 * the same pair at every scrape: a pair that passed is remembered as the
 * SHA-256 of user, password and hash (never the password), so that a
 * scrape every second pays one bcrypt per pair, as the exporter toolkit
 * does.  A wrong pair is never remembered: each try costs its bcrypt.
 */
#define _GNU_SOURCE	/* crypt_rn, strncasecmp */
#include <crypt.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"

#define AUTH_CACHE	16
#define AUTH_DIGEST	32	/* SHA-256 */
#define AUTH_MAX	1024	/* longest "user:password" taken */

struct exp_auth {
	const exp_webconf_t *w;
	unsigned char good[AUTH_CACHE][AUTH_DIGEST];
	unsigned n_good, next;
};

exp_auth_t *exp_auth_new(const exp_webconf_t *w)
{
	exp_auth_t *a = calloc(1, sizeof(*a));

	if (a)
		a->w = w;
	return a;
}

void exp_auth_free(exp_auth_t *a)
{
	free(a);
}

static int _b64(char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+')
		return 62;
	if (c == '/')
		return 63;
	return -1;
}

/* Base64 in -> out (NUL-ended, at most cap - 1 bytes); -1 if not base64. */
static int _b64_decode(const char *in, char *out, size_t cap)
{
	size_t n = 0;
	unsigned acc = 0;
	int bits = 0, v;

	for (; *in && *in != '='; in++) {
		if ((v = _b64(*in)) < 0)
			return -1;
		acc = (acc << 6) | (unsigned) v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n + 1 >= cap)
				return -1;
			out[n++] = (char) ((acc >> bits) & 0xff);
		}
	}
	out[n] = '\0';
	return memchr(out, '\0', n) ? -1 : (int) n;
}

static bool _same(const void *x, const void *y, size_t n)
{
	const unsigned char *a = x, *b = y;
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static bool _digest(const char *user, const char *pass, const char *hash,
		    unsigned char out[AUTH_DIGEST])
{
	size_t lu = strlen(user), lp = strlen(pass), lh = strlen(hash);
	size_t len = lu + lp + lh + 2;
	char *buf = malloc(len);
	int rc;

	if (!buf)
		return false;
	memcpy(buf, user, lu + 1);
	memcpy(buf + lu + 1, pass, lp + 1);
	memcpy(buf + lu + lp + 2, hash, lh);
	rc = gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, len, out);
	memset(buf, 0, len);
	free(buf);
	return rc == 0;
}

static bool _cached(const exp_auth_t *a, const unsigned char d[AUTH_DIGEST])
{
	for (unsigned i = 0; i < a->n_good; i++)
		if (_same(a->good[i], d, AUTH_DIGEST))
			return true;
	return false;
}

static void _remember(exp_auth_t *a, const unsigned char d[AUTH_DIGEST])
{
	memcpy(a->good[a->next], d, AUTH_DIGEST);
	a->next = (a->next + 1) % AUTH_CACHE;
	if (a->n_good < AUTH_CACHE)
		a->n_good++;
}

static bool _bcrypt_ok(const char *pass, const char *hash)
{
	struct crypt_data *cd = calloc(1, sizeof(*cd));
	const char *out;
	bool ok;

	if (!cd)
		return false;
	out = crypt_rn(pass, hash, cd, sizeof(*cd));
	ok = out && strlen(out) == strlen(hash) &&
	     _same(out, hash, strlen(hash));
	memset(cd, 0, sizeof(*cd));
	free(cd);
	return ok;
}

bool exp_auth_check(exp_auth_t *a, const char *authorization)
{
	char pair[AUTH_MAX];
	unsigned char d[AUTH_DIGEST];
	const char *hash = NULL;
	char *pass;
	bool ok = false, have_d;

	if (!a->w->n_users)
		return true;
	if (!authorization || strncasecmp(authorization, "Basic ", 6))
		return false;
	authorization += 6;
	while (*authorization == ' ')
		authorization++;
	if (_b64_decode(authorization, pair, sizeof(pair)) < 0 ||
	    !(pass = strchr(pair, ':')))
		goto out;
	*pass++ = '\0';
	for (size_t i = 0; i < a->w->n_users; i++)
		if (!strcmp(a->w->users[i], pair))
			hash = a->w->hashes[i];
	if (!hash)
		goto out;
	have_d = _digest(pair, pass, hash, d);
	if (have_d && _cached(a, d)) {
		ok = true;
	} else if (_bcrypt_ok(pass, hash)) {
		ok = true;
		if (have_d)
			_remember(a, d);
	}
out:
	memset(pair, 0, sizeof(pair));
	return ok;
}
