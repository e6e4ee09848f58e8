/*
 * rf_http.c - libcurl transport to a Redfish service (rf_http.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* strcasestr */
#endif

#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <curl/curl.h>

#include "rf_http.h"
#include "rf_json.h"
#include "se_time.h"

#define RF_SESSIONS	"/redfish/v1/SessionService/Sessions"
#define RF_TOKEN_MAX	512
#define RF_CLOSE_MS	500
#define RF_MIN_MS	10

/* acct_gather_energy/bmc's settings, the names when the caller gives none */
static const rf_http_names_t bmc_names = {
	.credentials = "EnergyBMCUser, EnergyBMCPasswordFile",
	.ca_file = "EnergyBMCCAFile",
	.basic = "EnergyBMCAuth=basic",
};

struct rf_http {
	char *base, *user, *password, *ca_file;
	bool tls_verify;
	rf_auth_t auth;
	uint64_t timeout_ns;
	size_t max_bytes;
	rf_http_names_t names;		/* string constants, not copied */

	CURL *curl;			/* kept: its connection is reused */
	char token[RF_TOKEN_MAX];	/* X-Auth-Token, "" none */
	char session[RF_URI_MAX];	/* the session's URI, to delete */

	/* the answer being read */
	char *body;
	size_t len, cap;
	bool too_big;
	char hdr_token[RF_TOKEN_MAX];
	char hdr_location[RF_URI_MAX * 2];
	char errbuf[CURL_ERROR_SIZE];

	unsigned long requests, logins;
};

int rf_http_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) ? -EIO : 0;
}

static char *_dup(const char *s)
{
	return s ? strdup(s) : NULL;
}

rf_http_t *rf_http_create(const rf_http_conf_t *conf)
{
	rf_http_t *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->base = _dup(conf->base);
	h->user = _dup(conf->user);
	h->password = _dup(conf->password ? conf->password : "");
	h->ca_file = _dup(conf->ca_file);
	h->tls_verify = conf->tls_verify;
	h->auth = conf->auth;
	h->timeout_ns = conf->timeout_ns;
	h->max_bytes = conf->max_bytes ? conf->max_bytes : RF_JSON_MAX_BYTES;
	h->names = conf->names ? *conf->names : bmc_names;
	if (!h->base || !h->password || (conf->user && !h->user) ||
	    (conf->ca_file && !h->ca_file)) {
		rf_http_destroy(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

/* ------------------------------------------------------------ callbacks */

/* The body, up to max_bytes: one byte more stops the transfer. */
static size_t _on_body(char *data, size_t size, size_t n, void *arg)
{
	rf_http_t *h = arg;
	size_t add = size * n;

	if (h->len + add > h->max_bytes) {
		h->too_big = true;
		return 0;	/* CURLE_WRITE_ERROR */
	}
	if (h->len + add + 1 > h->cap) {
		size_t cap = h->cap ? h->cap : 16384;
		char *b;

		while (cap < h->len + add + 1)
			cap *= 2;
		if (!(b = realloc(h->body, cap)))
			return 0;
		h->body = b;
		h->cap = cap;
	}
	memcpy(h->body + h->len, data, add);
	h->len += add;
	h->body[h->len] = '\0';
	return add;
}

/* "Name: value\r\n" into out when the header is name. */
static void _header_value(const char *line, size_t len, const char *name,
			  char *out, size_t out_len)
{
	size_t nl = strlen(name), end;

	if (len <= nl + 1 || strncasecmp(line, name, nl) || line[nl] != ':')
		return;
	line += nl + 1;
	len -= nl + 1;
	while (len && (*line == ' ' || *line == '\t'))
		line++, len--;
	for (end = len; end && (line[end - 1] == '\r' ||
				line[end - 1] == '\n' ||
				line[end - 1] == ' '); end--)
		;
	if (end < out_len) {
		memcpy(out, line, end);
		out[end] = '\0';
	}
}

static size_t _on_header(char *data, size_t size, size_t n, void *arg)
{
	rf_http_t *h = arg;
	size_t len = size * n;

	_header_value(data, len, "X-Auth-Token", h->hdr_token,
		      sizeof(h->hdr_token));
	_header_value(data, len, "Location", h->hdr_location,
		      sizeof(h->hdr_location));
	return len;
}

/* ------------------------------------------------------------ requests */

static long _ms_left(const rf_http_t *h, uint64_t deadline_ns)
{
	uint64_t now = se_mono_ns();
	uint64_t left = deadline_ns > now ? deadline_ns - now : 0;

	if (left > h->timeout_ns)
		left = h->timeout_ns;
	left /= SE_NS_PER_MS;
	return left < RF_MIN_MS ? RF_MIN_MS : (long) left;
}

static int _ensure_handle(rf_http_t *h)
{
	if (h->curl)
		return 0;
	if (!(h->curl = curl_easy_init()))
		return -ENOMEM;
	return 0;
}

/* What a failed transfer means, for the sampler and the admin. */
static int _curl_error(rf_http_t *h, CURLcode cc, const char *method,
		       const char *uri, char *msg, size_t msg_len)
{
	const char *why = h->errbuf[0] ? h->errbuf : curl_easy_strerror(cc);

	if (h->too_big) {
		snprintf(msg, msg_len,
			 "%s%s: answer longer than %zu bytes: not read",
			 h->base, uri, h->max_bytes);
		return -EAGAIN;
	}
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(msg, msg_len, "%s %s%s: no answer in time (%s)",
			 method, h->base, uri, why);
		return -ETIMEDOUT;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CONNECT_ERROR:
		snprintf(msg, msg_len,
			 "%s %s%s: TLS: %s (%s=%s)", method, h->base, uri,
			 why, h->names.ca_file,
			 h->ca_file ? h->ca_file : "(the system's CAs)");
		return -EPROTO;
	case CURLE_COULDNT_CONNECT:
	case CURLE_COULDNT_RESOLVE_HOST:
		snprintf(msg, msg_len, "%s %s%s: %s", method, h->base, uri,
			 why);
		return -ECONNREFUSED;
	default:
		snprintf(msg, msg_len, "%s %s%s: %s", method, h->base, uri,
			 why);
		return -EIO;
	}
}

/* How method goes to libcurl: POST and GET are its own, others named. */
static void _set_method(CURL *curl, const char *method, const char *body)
{
	bool own = !strcmp(method, body ? "POST" : "GET");

	if (body) {
		curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE,
				 (long) strlen(body));
	} else {
		curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
	}
	curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, own ? NULL : method);
}

/*
 * One request on the kept handle; *status the HTTP status.  body: sent as
 * JSON (POST, PATCH), else none (GET, DELETE).  A login goes without the
 * token or basic credentials (its body carries them).
 */
static int _perform(rf_http_t *h, const char *method, const char *uri,
		    const char *body, bool login, long timeout_ms,
		    long *status, char *msg, size_t msg_len)
{
	struct curl_slist *hdrs = NULL, *l;
	char url[1024], tok[RF_TOKEN_MAX + 16];
	CURLcode cc;
	int rc = 0;

	if ((rc = _ensure_handle(h)))
		return rc;
	snprintf(url, sizeof(url), "%s%s", h->base, uri);
	h->len = 0;
	h->too_big = false;
	h->errbuf[0] = h->hdr_token[0] = h->hdr_location[0] = '\0';
	*status = 0;

	hdrs = curl_slist_append(hdrs, "Accept: application/json");
	if (hdrs && (l = curl_slist_append(hdrs, "OData-Version: 4.0")))
		hdrs = l;
	if (hdrs && body &&
	    (l = curl_slist_append(hdrs, "Content-Type: application/json")))
		hdrs = l;
	if (hdrs && h->token[0] && !login) {
		snprintf(tok, sizeof(tok), "X-Auth-Token: %s", h->token);
		if ((l = curl_slist_append(hdrs, tok)))
			hdrs = l;
		explicit_bzero(tok, sizeof(tok));
	}
	if (!hdrs)
		return -ENOMEM;

	curl_easy_setopt(h->curl, CURLOPT_URL, url);
	curl_easy_setopt(h->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h->curl, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h->curl, CURLOPT_WRITEFUNCTION, _on_body);
	curl_easy_setopt(h->curl, CURLOPT_WRITEDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_HEADERFUNCTION, _on_header);
	curl_easy_setopt(h->curl, CURLOPT_HEADERDATA, h);
	curl_easy_setopt(h->curl, CURLOPT_ERRORBUFFER, h->errbuf);
	curl_easy_setopt(h->curl, CURLOPT_MAXFILESIZE_LARGE,
			 (curl_off_t) h->max_bytes);
	curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYPEER,
			 h->tls_verify ? 1L : 0L);
	curl_easy_setopt(h->curl, CURLOPT_SSL_VERIFYHOST,
			 h->tls_verify ? 2L : 0L);
	if (h->ca_file)
		curl_easy_setopt(h->curl, CURLOPT_CAINFO, h->ca_file);
	if (h->auth == RF_AUTH_BASIC && h->user && !login) {
		curl_easy_setopt(h->curl, CURLOPT_HTTPAUTH,
				 (long) CURLAUTH_BASIC);
		curl_easy_setopt(h->curl, CURLOPT_USERNAME, h->user);
		curl_easy_setopt(h->curl, CURLOPT_PASSWORD, h->password);
	} else {
		curl_easy_setopt(h->curl, CURLOPT_HTTPAUTH,
				 (long) CURLAUTH_NONE);
		curl_easy_setopt(h->curl, CURLOPT_USERNAME, NULL);
		curl_easy_setopt(h->curl, CURLOPT_PASSWORD, NULL);
	}
	_set_method(h->curl, method, body);

	h->requests++;
	cc = curl_easy_perform(h->curl);
	/* the handle keeps no pointer to what is freed below */
	curl_easy_setopt(h->curl, CURLOPT_HTTPHEADER, NULL);
	curl_easy_setopt(h->curl, CURLOPT_POSTFIELDS, NULL);
	curl_easy_setopt(h->curl, CURLOPT_PASSWORD, NULL);
	curl_slist_free_all(hdrs);
	if (cc != CURLE_OK)
		return _curl_error(h, cc, method, uri, msg, msg_len);
	curl_easy_getinfo(h->curl, CURLINFO_RESPONSE_CODE, status);
	return 0;
}

/* The session URI from Location (absolute URL or path). */
static void _keep_session_uri(rf_http_t *h)
{
	const char *loc = h->hdr_location, *p;

	if (!loc[0]) {
		h->session[0] = '\0';
		return;
	}
	p = strstr(loc, "://") ? strchr(strstr(loc, "://") + 3, '/') : loc;
	if (p && *p == '/' && strlen(p) < sizeof(h->session))
		memcpy(h->session, p, strlen(p) + 1);
	else
		h->session[0] = '\0';
}

/* The login body, written by json-c (a password may hold any character);
 * json-c's copies of the secret are wiped before they are freed. */
static char *_login_body(const rf_http_t *h)
{
	json_object *o = json_object_new_object(), *p;
	char *body = NULL;
	const char *s;

	if (!o)
		return NULL;
	json_object_object_add(o, "UserName",
			       json_object_new_string(h->user ? h->user : ""));
	json_object_object_add(o, "Password",
			       json_object_new_string(h->password));
	if ((s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN))) {
		body = strdup(s);
		explicit_bzero((char *) s, strlen(s));
	}
	if ((p = json_object_object_get(o, "Password")) &&
	    json_object_get_string(p))
		explicit_bzero((char *) json_object_get_string(p),
			       strlen(json_object_get_string(p)));
	json_object_put(o);
	return body;
}

static int _login(rf_http_t *h, uint64_t deadline_ns, char *msg,
		  size_t msg_len)
{
	char *body = _login_body(h);
	long status;
	int rc;

	if (!body)
		return -ENOMEM;
	h->token[0] = '\0';
	h->logins++;
	rc = _perform(h, "POST", RF_SESSIONS, body, true,
		      _ms_left(h, deadline_ns), &status, msg, msg_len);
	explicit_bzero(body, strlen(body));
	free(body);
	if (rc)
		return rc;
	if (status == 401 || status == 403) {
		snprintf(msg, msg_len,
			 "login as %s at %s: HTTP %ld: the user or its password (%s) refused",
			 h->user, h->base, status, h->names.credentials);
		return -EACCES;
	}
	if ((status != 200 && status != 201) || !h->hdr_token[0]) {
		snprintf(msg, msg_len,
			 "login as %s at %s: HTTP %ld%s: no session (%s for a service without sessions)",
			 h->user, h->base, status,
			 h->hdr_token[0] ? "" : ", no X-Auth-Token",
			 h->names.basic);
		return status >= 500 ? -EAGAIN : -EACCES;
	}
	snprintf(h->token, sizeof(h->token), "%s", h->hdr_token);
	explicit_bzero(h->hdr_token, sizeof(h->hdr_token));
	_keep_session_uri(h);
	return 0;
}

static bool _sessions(const rf_http_t *h)
{
	return h->auth == RF_AUTH_SESSION && h->user;
}

/* A request, logging in first (sessions) and once more on a 401. */
static int _request(rf_http_t *h, const char *method, const char *uri,
		    const char *body, uint64_t deadline_ns, long *status,
		    char *msg, size_t msg_len)
{
	int rc, attempt;

	for (attempt = 0; attempt < 2; attempt++) {
		if (_sessions(h) && !h->token[0] &&
		    (rc = _login(h, deadline_ns, msg, msg_len)))
			return rc;
		rc = _perform(h, method, uri, body, false,
			      _ms_left(h, deadline_ns), status, msg, msg_len);
		if (rc || *status != 401 || !_sessions(h))
			return rc;
		h->token[0] = '\0';	/* expired, or the BMC rebooted */
		h->session[0] = '\0';
	}
	return 0;
}

/* ": " and the message of the Redfish error in the answer, or "". */
static void _service_words(const rf_http_t *h, char *out, size_t out_len)
{
	json_object *doc = NULL;
	const char *words = NULL;
	char ignored[64];

	if (h->body && h->len && !rf_json_parse(h->body, h->len, "", 0, &doc,
						ignored, sizeof(ignored)))
		words = rf_json_string(doc, "error/message");
	snprintf(out, out_len, "%s%s", words && *words ? ": " : "",
		 words ? words : "");
	json_object_put(doc);
}

/* An HTTP status that is not the answer wanted: the code and msg. */
static int _status_error(const rf_http_t *h, const char *method,
			 const char *uri, long status, char *msg,
			 size_t msg_len)
{
	char words[256];

	_service_words(h, words, sizeof(words));
	if (status == 401 || status == 403) {
		snprintf(msg, msg_len,
			 "%s %s%s: HTTP %ld%s: user '%s' or its password (%s) refused",
			 method, h->base, uri, status, words,
			 h->user ? h->user : "", h->names.credentials);
		return -EACCES;
	}
	snprintf(msg, msg_len, "%s %s%s: HTTP %ld%s", method, h->base, uri,
		 status, words);
	return status == 404 ? -ENOENT : -EAGAIN;
}

int rf_http_get(rf_http_t *h, const char *uri, uint64_t deadline_ns,
		json_object **doc, char *msg, size_t msg_len)
{
	long status;
	int rc;

	*doc = NULL;
	if ((rc = _request(h, "GET", uri, NULL, deadline_ns, &status, msg,
			   msg_len)))
		return rc;
	if (status != 200)
		return _status_error(h, "GET", uri, status, msg, msg_len);
	rc = rf_json_parse(h->body ? h->body : "", h->len, uri, 0, doc, msg,
			   msg_len);
	return rc ? -EAGAIN : 0;
}

int rf_http_patch(rf_http_t *h, const char *uri, const char *json,
		  uint64_t deadline_ns, char *msg, size_t msg_len)
{
	long status;
	int rc;

	if ((rc = _request(h, "PATCH", uri, json, deadline_ns, &status, msg,
			   msg_len)))
		return rc;
	if (status < 200 || status > 299)
		return _status_error(h, "PATCH", uri, status, msg, msg_len);
	return 0;
}

void rf_http_close(rf_http_t *h)
{
	char msg[256];
	long status;

	if (!h)
		return;
	if (h->curl && h->token[0] && h->session[0])
		_perform(h, "DELETE", h->session, NULL, false, RF_CLOSE_MS,
			 &status, msg, sizeof(msg));
	explicit_bzero(h->token, sizeof(h->token));
	h->session[0] = '\0';
	if (h->curl)
		curl_easy_cleanup(h->curl);
	h->curl = NULL;
}

void rf_http_destroy(rf_http_t *h)
{
	if (!h)
		return;
	rf_http_close(h);
	free(h->base);
	free(h->user);
	if (h->password)
		explicit_bzero(h->password, strlen(h->password));
	free(h->password);
	free(h->ca_file);
	free(h->body);
	free(h);
}

unsigned long rf_http_requests(const rf_http_t *h)
{
	return h->requests;
}

unsigned long rf_http_logins(const rf_http_t *h)
{
	return h->logins;
}
