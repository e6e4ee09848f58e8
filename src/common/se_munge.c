/*
 * se_munge.c - messages in MUNGE credentials, one a line (se_munge.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "se_munge.h"

void *se_munge_new(const char *socket, char *err, size_t err_len)
{
	munge_ctx_t ctx = munge_ctx_create();

	if (!ctx) {
		snprintf(err, err_len, "munge_ctx_create: out of memory");
		return NULL;
	}
	if (socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) !=
	    EMUNGE_SUCCESS) {
		snprintf(err, err_len, "munge socket %s: %s", socket,
			 munge_ctx_strerror(ctx));
		munge_ctx_destroy(ctx);
		return NULL;
	}
	return ctx;
}

void se_munge_free(void *ctx)
{
	if (ctx)
		munge_ctx_destroy(ctx);
}

int se_write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= w;
	}
	return 0;
}

static int _seal(void *ctx, const uint8_t *buf, size_t len, char **text,
		 char *err, size_t err_len)
{
	char *cred = NULL;
	munge_err_t e = munge_encode(&cred, ctx, buf, (int)len);

	*text = NULL;
	if (e != EMUNGE_SUCCESS) {
		snprintf(err, err_len, "munge_encode: %s",
			 munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) :
			 munge_strerror(e));
		free(cred);
		return -EACCES;
	}
	*text = cred;
	return 0;
}

int se_munge_send(void *ctx, int fd, const uint8_t *buf, size_t len,
		  char *err, size_t err_len)
{
	char *cred = NULL;
	size_t n;
	int rv;

	if ((rv = _seal(ctx, buf, len, &cred, err, err_len)))
		return rv;
	n = strlen(cred);
	cred[n] = '\n';	/* over its NUL: n + 1 bytes go out */
	rv = se_write_all(fd, cred, n + 1);
	if (rv)
		snprintf(err, err_len, "write: %s", strerror(-rv));
	free(cred);
	return rv;
}

int se_munge_open(void *ctx, const char *cred, uint8_t *buf, size_t *len,
		  uid_t *uid, char *err, size_t err_len)
{
	void *payload = NULL;
	int plen = 0;
	gid_t gid;
	munge_err_t e = munge_decode(cred, ctx, &payload, &plen, uid, &gid);

	if (e != EMUNGE_SUCCESS) {
		snprintf(err, err_len, "munge_decode: %s", munge_strerror(e));
		free(payload);
		return -EACCES;
	}
	if ((size_t)plen > *len) {
		snprintf(err, err_len, "a payload of %d bytes (at most %zu)",
			 plen, *len);
		free(payload);
		return -EMSGSIZE;
	}
	memcpy(buf, payload, plen);
	*len = plen;
	free(payload);
	return 0;
}

se_sealer_t se_munge_sealer(void *ctx)
{
	return (se_sealer_t){ .seal = _seal, .open = se_munge_open,
			      .ctx = ctx };
}
