/*
 * exp_http.h - the exporter's listener and one scrape (exp_http.c).
 */
#ifndef SE_EXP_HTTP_H
#define SE_EXP_HTTP_H

#include "exporter.h"

/* slurmd's snapshot now: 0 with *out filled, or -errno (slurmd did not
 * answer: the scrape says slurmd_up 0 and nothing else of it). */
typedef int (*exp_snapshot_fn)(void *arg, energy_snapshot_t *out);

typedef struct exp_http exp_http_t;

/* A bound, listening TCP socket for host:port: 0, or -errno with the
 * address and the reason in err. */
int exp_listen(const char *host, unsigned port, int *fd, char *err,
	       size_t err_len);

/* Whether the web configuration's TLS files load together (GnuTLS): 0,
 * or -EINVAL with both paths and the reason in err. */
int exp_tls_check(const exp_webconf_t *w, char *err, size_t err_len);

/* A listener of conf's (kept by the caller) asking fn for each scrape,
 * with job labels from jobs (NULL: no job series). */
exp_http_t *exp_http_new(const exp_conf_t *conf, exp_snapshot_fn fn,
			 void *arg, exp_jobs_t *jobs);
/* Serve on listen_fd (taken over) in libmicrohttpd's own thread. */
int exp_http_start(exp_http_t *h, int listen_fd, char *err, size_t err_len);
void exp_http_free(exp_http_t *h);

/* One scrape into t, as GET /metrics answers it; the snapshot's result. */
int exp_scrape(exp_http_t *h, exp_format_t format, exp_text_t *t);

#endif
