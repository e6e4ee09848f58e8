/*
 * exp_http.c - the exporter's listener: libmicrohttpd, one internal thread
 * polling every connection (scrapes are served one at a time, none
 * blocks another's I/O), TLS through GnuTLS when the web configuration
 * has tls_server_config, basic auth when it has basic_auth_users.
 *
 * The socket is bound here, not by libmicrohttpd, so that "address in
 * use" or "cannot assign" is said with the address; the TLS pair is
 * loaded into GnuTLS once before serving, so that a key that does not
 * parse, or does not match its certificate, is said with both paths.
 *
 * GET /metrics is one scrape: one energy query to slurmd (bounded by
 * --query-timeout-ms), job labels from the cache (a bounded budget of
 * lookups), one rendering.  Anything else is 404; any method but GET and
 * HEAD is 405.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <gnutls/gnutls.h>
#include <microhttpd.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "exp_http.h"
#include "se_time.h"

#define HTTP_CONNECTIONS_MAX	32
#define HTTP_CONNECTION_TIMEOUT_S 10

struct exp_http {
	struct MHD_Daemon *d;
	const exp_conf_t *conf;
	exp_snapshot_fn snapshot;
	void *snapshot_arg;
	exp_jobs_t *jobs;
	exp_auth_t *auth;
	energy_snapshot_t snap;		/* the internal thread's only */
	unsigned long scrapes, failed;
};

int exp_listen(const char *host, unsigned port, int *fd_out, char *err,
	       size_t err_len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res;
	char ports[8];
	int fd, one = 1, rc;

	snprintf(ports, sizeof(ports), "%u", port);
	rc = getaddrinfo(host, ports, &hints, &res);
	if (rc) {
		snprintf(err, err_len, "--web.listen-address=%s:%u: cannot resolve %s: %s",
			 host, port, host, gai_strerror(rc));
		return -ENOENT;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC,
		    res->ai_protocol);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 64)) {
		rc = -errno;
		snprintf(err, err_len, "--web.listen-address=%s:%u: cannot listen there: %s%s",
			 host, port, strerror(-rc),
			 rc == -EADDRINUSE ? " (another process has the port: choose another with --web.listen-address)" : "");
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return rc;
	}
	freeaddrinfo(res);
	*fd_out = fd;
	return 0;
}

int exp_tls_check(const exp_webconf_t *w, char *err, size_t err_len)
{
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t cert, key;
	int rc;

	if (!w->cert_pem)
		return 0;
	if (gnutls_certificate_allocate_credentials(&cred) < 0) {
		snprintf(err, err_len, "TLS: out of memory");
		return -ENOMEM;
	}
	cert.data = (unsigned char *) w->cert_pem;
	cert.size = strlen(w->cert_pem);
	key.data = (unsigned char *) w->key_pem;
	key.size = strlen(w->key_pem);
	rc = gnutls_certificate_set_x509_key_mem(cred, &cert, &key,
						 GNUTLS_X509_FMT_PEM);
	if (rc < 0)
		snprintf(err, err_len, "tls_server_config: cert_file %s with key_file %s: %s (a PEM certificate and its unencrypted PEM private key)",
			 w->cert_file, w->key_file, gnutls_strerror(rc));
	if (rc >= 0 && w->client_ca_pem) {
		gnutls_datum_t ca = { (unsigned char *) w->client_ca_pem,
				      strlen(w->client_ca_pem) };

		rc = gnutls_certificate_set_x509_trust_mem(cred, &ca,
							   GNUTLS_X509_FMT_PEM);
		if (rc <= 0) {
			snprintf(err, err_len, "tls_server_config: client_ca_file %s: %s",
				 w->client_ca_file,
				 rc ? gnutls_strerror(rc) : "no certificate in it");
			rc = -1;
		}
	}
	gnutls_certificate_free_credentials(cred);
	return rc < 0 ? -EINVAL : 0;
}

static enum MHD_Result _send(struct MHD_Connection *c, unsigned status,
			     const char *type, char *body, size_t len,
			     bool challenge)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result rc;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (challenge)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE,
					"Basic realm=\"slurm-energy-exporter\"");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result _send_text(struct MHD_Connection *c, unsigned status,
				  const char *text, bool challenge)
{
	char *body = strdup(text);

	if (!body)
		return MHD_NO;
	return _send(c, status, "text/plain; charset=utf-8", body,
		     strlen(body), challenge);
}

/* Labels for every job of the snapshot (lookups within the budget),
 * before the scrape's time is taken: rendering then only reads. */
static void _resolve_labels(exp_http_t *h, const energy_snapshot_t *s)
{
	exp_job_labels_t lab;

	exp_jobs_keep_only(h->jobs, s);
	exp_jobs_begin(h->jobs, se_mono_ns());
	for (uint32_t i = 0; i < s->n_steps && i < ENERGY_SNAPSHOT_STEPS_MAX;
	     i++)
		(void) exp_jobs_labels(h->jobs, s->steps[i].job_id, &lab);
}

int exp_scrape(exp_http_t *h, exp_format_t format, exp_text_t *t)
{
	uint64_t t0 = se_mono_ns();
	exp_scrape_t sc = { .node = h->conf->node, .format = format };
	int rc;

	rc = h->snapshot(h->snapshot_arg, &h->snap);
	if (!rc) {
		sc.snap = &h->snap;
		if (h->conf->max_power_mw) {
			h->snap.max_power_mw = h->conf->max_power_mw;
			h->snap.flags |= ENERGY_SNAPSHOT_MAX;
		}
		if (h->jobs) {
			_resolve_labels(h, &h->snap);
			sc.labels = exp_jobs_labels;
			sc.labels_arg = h->jobs;
		}
	}
	h->scrapes++;
	h->failed += rc != 0;
	sc.scrape_seconds = (double) (se_mono_ns() - t0) / 1e9;
	exp_render(&sc, t);
	return rc;
}

/* RequireAndVerifyClientCert: a certificate the client CA signed.
 * libmicrohttpd asks for one when given a trust list, but leaves the
 * verdict to us. */
static bool _client_cert_ok(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(
		c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	gnutls_session_t s;
	unsigned status = 1;

	if (!ci || !(s = (gnutls_session_t) ci->tls_session))
		return false;
	if (!gnutls_certificate_get_peers(s, &(unsigned) { 0 }))
		return false;
	return gnutls_certificate_verify_peers2(s, &status) == 0 &&
	       status == 0;
}

static enum MHD_Result _handle(void *cls, struct MHD_Connection *c,
			       const char *url, const char *method,
			       const char *version, const char *upload,
			       size_t *upload_len, void **state)
{
	exp_http_t *h = cls;
	exp_text_t t = { 0 };
	exp_format_t f;

	(void) version;
	(void) upload;
	(void) upload_len;
	(void) state;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return _send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED,
				  "only GET\n", false);
	if (!exp_auth_check(h->auth, MHD_lookup_connection_value(
				c, MHD_HEADER_KIND,
				MHD_HTTP_HEADER_AUTHORIZATION)))
		return _send_text(c, MHD_HTTP_UNAUTHORIZED, "unauthorized\n",
				  true);
	if (h->conf->web.require_client_cert && !_client_cert_ok(c))
		return _send_text(c, MHD_HTTP_FORBIDDEN,
				  "client certificate required\n", false);
	if (!strcmp(url, "/"))
		return _send_text(c, MHD_HTTP_OK,
				  "slurm-energy-exporter: see /metrics\n", false);
	if (strcmp(url, "/metrics"))
		return _send_text(c, MHD_HTTP_NOT_FOUND, "not found\n", false);
	f = exp_format_for_accept(MHD_lookup_connection_value(
		c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT));
	(void) exp_scrape(h, f, &t);
	if (t.failed) {
		exp_text_free(&t);
		return _send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR,
				  "out of memory\n", false);
	}
	return _send(c, MHD_HTTP_OK, exp_content_type(f), t.buf, t.len, false);
}

exp_http_t *exp_http_new(const exp_conf_t *conf, exp_snapshot_fn fn,
			 void *arg, exp_jobs_t *jobs)
{
	exp_http_t *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->conf = conf;
	h->snapshot = fn;
	h->snapshot_arg = arg;
	h->jobs = jobs;
	if (!(h->auth = exp_auth_new(&conf->web))) {
		free(h);
		return NULL;
	}
	return h;
}

int exp_http_start(exp_http_t *h, int listen_fd, char *err, size_t err_len)
{
	const exp_webconf_t *w = &h->conf->web;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	struct MHD_OptionItem o[8];
	unsigned n = 0;

	o[n++] = (struct MHD_OptionItem) { MHD_OPTION_LISTEN_SOCKET,
					   listen_fd, NULL };
	o[n++] = (struct MHD_OptionItem) { MHD_OPTION_CONNECTION_LIMIT,
					   HTTP_CONNECTIONS_MAX, NULL };
	o[n++] = (struct MHD_OptionItem) { MHD_OPTION_CONNECTION_TIMEOUT,
					   HTTP_CONNECTION_TIMEOUT_S, NULL };
	if (w->cert_pem) {
		if (!MHD_is_feature_supported(MHD_FEATURE_TLS)) {
			snprintf(err, err_len, "tls_server_config: this libmicrohttpd has no TLS");
			return -ENOTSUP;
		}
		flags |= MHD_USE_TLS;
		o[n++] = (struct MHD_OptionItem) { MHD_OPTION_HTTPS_MEM_CERT,
						   0, w->cert_pem };
		o[n++] = (struct MHD_OptionItem) { MHD_OPTION_HTTPS_MEM_KEY,
						   0, w->key_pem };
		if (w->client_ca_pem)
			o[n++] = (struct MHD_OptionItem) {
				MHD_OPTION_HTTPS_MEM_TRUST, 0,
				w->client_ca_pem };
	}
	o[n++] = (struct MHD_OptionItem) { MHD_OPTION_END, 0, NULL };
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, _handle, h,
				MHD_OPTION_ARRAY, o, MHD_OPTION_END);
	if (!h->d) {
		snprintf(err, err_len, "cannot start the HTTP%s listener on %s:%u",
			 w->cert_pem ? "S" : "", h->conf->listen_host,
			 h->conf->listen_port);
		return -EIO;
	}
	return 0;
}

void exp_http_free(exp_http_t *h)
{
	if (!h)
		return;
	if (h->d)
		MHD_stop_daemon(h->d);
	exp_auth_free(h->auth);
	free(h);
}
