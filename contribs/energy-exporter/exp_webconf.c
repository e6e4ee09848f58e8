/*
 * exp_webconf.c - Prometheus' web configuration file (the exporter
 * toolkit's format, https://prometheus.io/docs/prometheus/latest/configuration/https/),
 * the part an exporter of node energy needs:
 *
 *   tls_server_config:
 *     cert_file: /etc/slurm-energy-exporter/node.crt
 *     key_file: /etc/slurm-energy-exporter/node.key
 *     client_auth_type: RequireAndVerifyClientCert   # optional
 *     client_ca_file: /etc/slurm-energy-exporter/ca.crt
 *   basic_auth_users:
 *     prometheus: $2y$10$...                          # bcrypt
 *
 * Paths are relative to the file's directory, as the toolkit has them.  A
 * key of the toolkit this exporter does not implement is an error naming
 * it, never ignored: a site that asks for a TLS setting must not get less
 * without knowing.  The TLS files are read here, at load, so that an
 * unreadable key is said at start with its path, not at the first scrape.
 */
#define _GNU_SOURCE	/* strcasestr, asprintf */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "exporter.h"

/* The most a web config or a PEM file may hold (a chain of a few
 * certificates is a few KB). */
#define WEBCONF_FILE_MAX	(1024 * 1024)

typedef struct {
	const char *name;	/* the file, for messages */
	yaml_document_t *doc;
	char *err;
	size_t err_len;
} wc_ctx_t;

static int _fail(wc_ctx_t *x, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int _fail(wc_ctx_t *x, const yaml_node_t *n, const char *fmt, ...)
{
	char what[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->err_len, "%s:%lu: %s", x->name,
		 n ? (unsigned long) n->start_mark.line + 1 : 0UL, what);
	return -EINVAL;
}

static const char *_scalar(const yaml_node_t *n)
{
	return n && n->type == YAML_SCALAR_NODE ?
	       (const char *) n->data.scalar.value : NULL;
}

/* Read a whole file (at most WEBCONF_FILE_MAX) into *out, NUL-ended. */
static int _read_file(const char *path, char **out, size_t *len)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;
	int rc;

	if (!f)
		return -errno;
	buf = malloc(WEBCONF_FILE_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, WEBCONF_FILE_MAX + 1, f);
	rc = ferror(f) ? -EIO : (n > WEBCONF_FILE_MAX ? -EFBIG : 0);
	fclose(f);
	if (rc) {
		free(buf);
		return rc;
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

/* path as the toolkit resolves it: relative to the config file's dir. */
static char *_resolve(const char *conf_name, const char *path)
{
	const char *slash = strrchr(conf_name, '/');
	char *out;

	if (path[0] == '/' || !slash)
		return strdup(path);
	if (asprintf(&out, "%.*s/%s", (int) (slash - conf_name), conf_name,
		     path) < 0)
		return NULL;
	return out;
}

/* A file the configuration names, read now: its path and contents. */
static int _take_file(wc_ctx_t *x, const yaml_node_t *v, const char *key,
		      char **path, char **pem)
{
	const char *s = _scalar(v);
	int rc;

	if (!s || !*s)
		return _fail(x, v, "tls_server_config.%s: not a file name",
			     key);
	free(*path);
	if (!(*path = _resolve(x->name, s)))
		return -ENOMEM;
	free(*pem);
	*pem = NULL;
	rc = _read_file(*path, pem, NULL);
	if (rc) {
		snprintf(x->err, x->err_len, "%s:%lu: tls_server_config.%s: cannot read %s: %s",
			 x->name, (unsigned long) v->start_mark.line + 1, key,
			 *path, strerror(-rc));
		return rc;
	}
	return 0;
}

static int _tls_key(wc_ctx_t *x, exp_webconf_t *w, const char *k,
		    const yaml_node_t *v)
{
	const char *s;

	if (!strcmp(k, "cert_file"))
		return _take_file(x, v, k, &w->cert_file, &w->cert_pem);
	if (!strcmp(k, "key_file"))
		return _take_file(x, v, k, &w->key_file, &w->key_pem);
	if (!strcmp(k, "client_ca_file"))
		return _take_file(x, v, k, &w->client_ca_file,
				  &w->client_ca_pem);
	if (!strcmp(k, "client_auth_type")) {
		s = _scalar(v);
		if (s && !strcmp(s, "RequireAndVerifyClientCert")) {
			w->require_client_cert = true;
			return 0;
		}
		if (s && !strcmp(s, "NoClientCert")) {
			w->require_client_cert = false;
			return 0;
		}
		return _fail(x, v, "tls_server_config.client_auth_type: %s: supported are NoClientCert and RequireAndVerifyClientCert",
			     s ? s : "(not a string)");
	}
	return _fail(x, v, "tls_server_config.%s: not supported by slurm-energy-exporter (cert_file, key_file, client_auth_type, client_ca_file are)",
		     k);
}

static int _tls(wc_ctx_t *x, exp_webconf_t *w, const yaml_node_t *m)
{
	int rc;

	if (m->type != YAML_MAPPING_NODE)
		return _fail(x, m, "tls_server_config: not a mapping");
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     p < m->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(x->doc, p->value);

		if (!_scalar(k))
			return _fail(x, k, "tls_server_config: a key that is not a string");
		if ((rc = _tls_key(x, w, _scalar(k), v)))
			return rc;
	}
	if (!w->cert_file != !w->key_file)
		return _fail(x, m, "tls_server_config: cert_file and key_file go together (%s given alone)",
			     w->cert_file ? "cert_file" : "key_file");
	if (w->require_client_cert && !w->client_ca_file)
		return _fail(x, m, "tls_server_config: client_auth_type RequireAndVerifyClientCert needs client_ca_file");
	return 0;
}

/* A bcrypt hash as crypt(3) checks it: $2a$, $2b$ or $2y$, cost, 53. */
static bool _is_bcrypt(const char *h)
{
	return strlen(h) == 60 && h[0] == '$' && h[1] == '2' &&
	       (h[2] == 'a' || h[2] == 'b' || h[2] == 'y') && h[3] == '$' &&
	       h[6] == '$';
}

static int _users(wc_ctx_t *x, exp_webconf_t *w, const yaml_node_t *m)
{
	size_t n;

	if (m->type == YAML_SCALAR_NODE && !*_scalar(m))
		return 0;	/* "basic_auth_users:" with nothing: none */
	if (m->type != YAML_MAPPING_NODE)
		return _fail(x, m, "basic_auth_users: not a mapping of user: bcrypt hash");
	n = m->data.mapping.pairs.top - m->data.mapping.pairs.start;
	w->users = calloc(n + 1, sizeof(char *));
	w->hashes = calloc(n + 1, sizeof(char *));
	if (!w->users || !w->hashes)
		return -ENOMEM;
	for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
	     p < m->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
		const char *user = _scalar(k), *hash = _scalar(v);

		if (!user || !*user || strchr(user, ':'))
			return _fail(x, k, "basic_auth_users: %s: not a user name (a string without ':')",
				     user ? user : "(not a string)");
		/* the hash itself is never printed: it is a secret's proxy */
		if (!hash || !_is_bcrypt(hash))
			return _fail(x, v, "basic_auth_users.%s: not a bcrypt hash ($2a$, $2b$ or $2y$, 60 characters, as htpasswd -nB makes)",
				     user);
		w->users[w->n_users] = strdup(user);
		w->hashes[w->n_users] = strdup(hash);
		if (!w->users[w->n_users] || !w->hashes[w->n_users])
			return -ENOMEM;
		w->n_users++;
	}
	return 0;
}

static int _top(wc_ctx_t *x, exp_webconf_t *w, const yaml_node_t *root)
{
	int rc;

	if (!root)
		return 0;	/* an empty file: nothing configured */
	if (root->type != YAML_MAPPING_NODE)
		return _fail(x, root, "not a mapping of tls_server_config, basic_auth_users");
	for (yaml_node_pair_t *p = root->data.mapping.pairs.start;
	     p < root->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = yaml_document_get_node(x->doc, p->key);
		const yaml_node_t *v = yaml_document_get_node(x->doc, p->value);
		const char *key = _scalar(k);

		if (key && !strcmp(key, "tls_server_config"))
			rc = _tls(x, w, v);
		else if (key && !strcmp(key, "basic_auth_users"))
			rc = _users(x, w, v);
		else
			rc = _fail(x, k, "%s: not supported by slurm-energy-exporter (tls_server_config and basic_auth_users are)",
				   key ? key : "(a key that is not a string)");
		if (rc)
			return rc;
	}
	return 0;
}

int exp_webconf_parse(const char *name, const char *text, size_t len,
		      exp_webconf_t *w, char *err, size_t err_len)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	wc_ctx_t x = { .name = name, .doc = &doc, .err = err,
		       .err_len = err_len };
	int rc;

	memset(w, 0, sizeof(*w));
	if (!yaml_parser_initialize(&parser))
		return -ENOMEM;
	yaml_parser_set_input_string(&parser, (const unsigned char *) text,
				     len);
	if (!yaml_parser_load(&parser, &doc)) {
		snprintf(err, err_len, "%s:%lu: not YAML: %s", name,
			 (unsigned long) parser.problem_mark.line + 1,
			 parser.problem ? parser.problem : "parse error");
		yaml_parser_delete(&parser);
		return -EINVAL;
	}
	rc = _top(&x, w, yaml_document_get_root_node(&doc));
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	if (rc)
		exp_webconf_free(w);
	return rc;
}

int exp_webconf_load(const char *path, exp_webconf_t *w, char *err,
		     size_t err_len)
{
	char *text;
	size_t len;
	int rc = _read_file(path, &text, &len);

	memset(w, 0, sizeof(*w));
	if (rc) {
		snprintf(err, err_len, "--web.config.file=%s: cannot read it: %s",
			 path, strerror(-rc));
		return rc;
	}
	rc = exp_webconf_parse(path, text, len, w, err, err_len);
	free(text);
	return rc;
}

void exp_webconf_free(exp_webconf_t *w)
{
	free(w->cert_file);
	free(w->key_file);
	free(w->client_ca_file);
	free(w->cert_pem);
	if (w->key_pem) {
		/* a private key: not left in freed memory */
		memset(w->key_pem, 0, strlen(w->key_pem));
		free(w->key_pem);
	}
	free(w->client_ca_pem);
	for (size_t i = 0; w->users && i < w->n_users; i++)
		free(w->users[i]);
	for (size_t i = 0; w->hashes && i < w->n_users; i++)
		free(w->hashes[i]);
	free(w->users);
	free(w->hashes);
	memset(w, 0, sizeof(*w));
}
