/*
 * pcap_knob_redfish.c - the "redfish" knob: a BMC's Redfish Control of
 * ControlType Power (DMTF Control.v1_7_0, e.g. /redfish/v1/Chassis/1U/
 * Controls/PowerLimit): apply PATCHes {"SetPoint": W, "ControlMode":
 * "Automatic"} and reads the Control back; restore PATCHes {"ControlMode":
 * "Disabled"} (no limit: the BMC's own default is not known to us); read
 * gives the SetPoint, or the knob's max while the Control is Disabled.  The
 * range is the Control's AllowableMin..AllowableMax (min_w/max_w narrow
 * it, or stand in where the BMC omits them).  libcurl and json-c, one kept
 * handle; session authentication (a token from SessionService, renewed
 * once on a 401) or basic.  Options:
 *   host=H port=P tls=yes|no (yes; port default 443 / 80)
 *   control=URI          the Control's path (required)
 *   user=NAME password_file=PATH auth=session|basic (session)
 *   ca_file=PATH verify=yes|no (yes)  timeout_ms=MS (4000)
 *   min_w=W max_w=W
 * The password is read from its file and never shown in a message.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <json-c/json.h>

#include "pcap_knob_priv.h"

#define RF_BODY_MAX	(1024 * 1024)

typedef struct {
	CURL *curl;
	char base[320];
	char *control;
	char user[128], pw[128], token[512];
	bool basic;
	char *body;
	size_t len;
	bool too_big;
} rf_t;

/* ---------------------------------------------------- private functions */

static size_t _on_body(char *p, size_t size, size_t n, void *arg)
{
	rf_t *r = arg;
	size_t add = size * n;
	char *nb;

	if (r->len + add > RF_BODY_MAX) {
		r->too_big = true;
		return 0;
	}
	if (!(nb = realloc(r->body, r->len + add + 1)))
		return 0;
	r->body = nb;
	memcpy(r->body + r->len, p, add);
	r->len += add;
	r->body[r->len] = '\0';
	return add;
}

static size_t _on_header(char *p, size_t size, size_t n, void *arg)
{
	rf_t *r = arg;
	size_t len = size * n;
	static const char key[] = "x-auth-token:";

	if (len > sizeof(key) && !strncasecmp(p, key, sizeof(key) - 1)) {
		size_t i = sizeof(key) - 1, j = 0;

		while (i < len && (p[i] == ' ' || p[i] == '\t'))
			i++;
		while (i < len && p[i] != '\r' && p[i] != '\n' &&
		       j + 1 < sizeof(r->token))
			r->token[j++] = p[i++];
		r->token[j] = '\0';
	}
	return len;
}

/* One request; the HTTP status in *status, the body in r->body. */
static int _http(pcap_knob_t *k, const char *method, const char *uri,
		 const char *json, long *status, char *err, size_t err_len)
{
	rf_t *r = k->priv;
	struct curl_slist *h = NULL;
	char url[1024], auth[600];
	CURLcode rc;

	snprintf(url, sizeof(url), "%s%s", r->base, uri);
	free(r->body);
	r->body = NULL;
	r->len = 0;
	r->too_big = false;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "OData-Version: 4.0");
	if (!r->basic && r->token[0]) {
		snprintf(auth, sizeof(auth), "X-Auth-Token: %s", r->token);
		h = curl_slist_append(h, auth);
	}
	curl_easy_setopt(r->curl, CURLOPT_URL, url);
	curl_easy_setopt(r->curl, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(r->curl, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(r->curl, CURLOPT_POSTFIELDS, json);
	curl_easy_setopt(r->curl, CURLOPT_HTTPGET, json ? 0L : 1L);
	if (!json)
		curl_easy_setopt(r->curl, CURLOPT_CUSTOMREQUEST, method);
	rc = curl_easy_perform(r->curl);
	curl_slist_free_all(h);
	if (rc != CURLE_OK) {
		snprintf(err, err_len, "%s: %s %s: %s", k->ops->name, method,
			 url, r->too_big ? "answer over 1 MiB" :
			 curl_easy_strerror(rc));
		return -EIO;
	}
	curl_easy_getinfo(r->curl, CURLINFO_RESPONSE_CODE, status);
	return 0;
}

static int _login(pcap_knob_t *k, char *err, size_t err_len)
{
	rf_t *r = k->priv;
	json_object *o = json_object_new_object();
	long status = 0;
	int ret;

	json_object_object_add(o, "UserName", json_object_new_string(r->user));
	json_object_object_add(o, "Password", json_object_new_string(r->pw));
	r->token[0] = '\0';
	ret = _http(k, "POST", "/redfish/v1/SessionService/Sessions",
		    json_object_to_json_string(o), &status, err, err_len);
	json_object_put(o);
	if (!ret && (status < 200 || status > 299 || !r->token[0])) {
		snprintf(err, err_len, "%s: login as %s at %s: HTTP %ld%s",
			 k->ops->name, r->user, r->base, status,
			 r->token[0] ? "" : ", no X-Auth-Token");
		ret = status == 401 ? -EACCES : -EIO;
	}
	return ret;
}

/* A request with a session renewed once on 401; status 2xx or error. */
static int _call(pcap_knob_t *k, const char *method, const char *json,
		 char *err, size_t err_len)
{
	rf_t *r = k->priv;
	long status = 0;
	int ret = _http(k, method, r->control, json, &status, err, err_len);

	if (!ret && status == 401 && !r->basic) {
		if ((ret = _login(k, err, err_len)))
			return ret;
		ret = _http(k, method, r->control, json, &status, err,
			    err_len);
	}
	if (!ret && (status < 200 || status > 299)) {
		json_object *o = r->body ? json_tokener_parse(r->body) : NULL;
		json_object *e, *m;
		const char *msg = "";

		if (o && json_object_object_get_ex(o, "error", &e) &&
		    json_object_object_get_ex(e, "message", &m))
			msg = json_object_get_string(m);
		snprintf(err, err_len, "%s: %s %s%s: HTTP %ld%s%s",
			 k->ops->name, method, r->base, r->control, status,
			 *msg ? ": " : "", msg);
		json_object_put(o);
		return status == 401 || status == 403 ? -EACCES : -EIO;
	}
	return ret;
}

/* GET the Control: its SetPoint (W, -1 absent), its mode, its range. */
static int _get(pcap_knob_t *k, double *setpoint, char *mode, size_t mode_len,
		double *lo, double *hi, char *err, size_t err_len)
{
	rf_t *r = k->priv;
	json_object *o, *v;
	int ret = _call(k, "GET", NULL, err, err_len);

	if (ret)
		return ret;
	if (!(o = json_tokener_parse(r->body ? r->body : ""))) {
		snprintf(err, err_len, "%s: %s%s: not JSON", k->ops->name,
			 r->base, r->control);
		return -EPROTO;
	}
	*setpoint = json_object_object_get_ex(o, "SetPoint", &v) ?
		    json_object_get_double(v) : -1;
	snprintf(mode, mode_len, "%s",
		 json_object_object_get_ex(o, "ControlMode", &v) ?
		 json_object_get_string(v) : "");
	*lo = json_object_object_get_ex(o, "AllowableMin", &v) ?
	      json_object_get_double(v) : -1;
	*hi = json_object_object_get_ex(o, "AllowableMax", &v) ?
	      json_object_get_double(v) : -1;
	json_object_put(o);
	return 0;
}

static bool _yes(const char *v, bool dflt)
{
	return v ? !strcmp(v, "yes") : dflt;
}

static int _setup(pcap_knob_t *k, rf_t *r, long *timeout_ms, char *err,
		  size_t err_len)
{
	const char *host = pcap_knob_opt(k, "host");
	const char *ctl = pcap_knob_opt(k, "control");
	const char *auth = pcap_knob_opt(k, "auth");
	const char *pwfile = pcap_knob_opt(k, "password_file");
	const char *user = pcap_knob_opt(k, "user");
	bool tls = _yes(pcap_knob_opt(k, "tls"), true);
	uint32_t port, t;
	int ret;

	if (!host || !ctl || ctl[0] != '/') {
		snprintf(err, err_len, "knob '%s': needs host=H and control="
			 "/redfish/v1/.../Controls/NAME", k->spec);
		return -EINVAL;
	}
	if (auth && strcmp(auth, "session") && strcmp(auth, "basic")) {
		snprintf(err, err_len, "knob '%s': auth=%s is not session or "
			 "basic", k->spec, auth);
		return -EINVAL;
	}
	ret = pcap_opt_u32(k, "port", tls ? 443 : 80, 1, 65535, &port, err,
			   err_len);
	if (!ret)
		ret = pcap_opt_u32(k, "timeout_ms", 4000, 100, 60000, &t, err,
				   err_len);
	if (!ret && pwfile)
		ret = pcap_read_password(k, pwfile, r->pw, sizeof(r->pw), err,
				     err_len);
	if (ret)
		return ret;
	*timeout_ms = t;
	r->basic = auth && !strcmp(auth, "basic");
	snprintf(r->base, sizeof(r->base), "%s://%s:%u", tls ? "https" :
		 "http", host, port);
	snprintf(r->user, sizeof(r->user), "%s", user ? user : "");
	r->control = strdup(ctl);
	return r->control ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ knob ops */

static void _rf_close(pcap_knob_t *k)
{
	rf_t *r = k->priv;

	if (!r)
		return;
	if (r->curl)
		curl_easy_cleanup(r->curl);
	memset(r->pw, 0, sizeof(r->pw));
	free(r->control);
	free(r->body);
	free(r);
	k->priv = NULL;
}

static int _rf_open(pcap_knob_t *k, char *err, size_t err_len)
{
	rf_t *r = calloc(1, sizeof(*r));
	const char *ca = pcap_knob_opt(k, "ca_file");
	double sp, lo, hi;
	uint32_t min_w, max_w;
	char mode[32];
	long timeout_ms = 0;
	int ret;

	if (!(k->priv = r))
		return -ENOMEM;
	if ((ret = _setup(k, r, &timeout_ms, err, err_len)))
		return ret;
	ret = pcap_opt_u32(k, "min_w", 0, 1, 1000000, &min_w, err, err_len);
	if (!ret)
		ret = pcap_opt_u32(k, "max_w", 0, 1, 1000000, &max_w, err,
				   err_len);
	if (ret)
		return ret;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (!(r->curl = curl_easy_init()))
		return -ENOMEM;
	curl_easy_setopt(r->curl, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(r->curl, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(r->curl, CURLOPT_WRITEFUNCTION, _on_body);
	curl_easy_setopt(r->curl, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(r->curl, CURLOPT_HEADERFUNCTION, _on_header);
	curl_easy_setopt(r->curl, CURLOPT_HEADERDATA, r);
	if (ca)
		curl_easy_setopt(r->curl, CURLOPT_CAINFO, ca);
	if (!_yes(pcap_knob_opt(k, "verify"), true)) {
		curl_easy_setopt(r->curl, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(r->curl, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	if (r->basic) {
		curl_easy_setopt(r->curl, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		curl_easy_setopt(r->curl, CURLOPT_USERNAME, r->user);
		curl_easy_setopt(r->curl, CURLOPT_PASSWORD, r->pw);
	} else if ((ret = _login(k, err, err_len))) {
		return ret;
	}
	if ((ret = _get(k, &sp, mode, sizeof(mode), &lo, &hi, err, err_len)))
		return ret;
	if (min_w)
		lo = lo < min_w ? min_w : lo;
	if (max_w)
		hi = hi < 0 || hi > max_w ? max_w : hi;
	if (!(lo > 0) || !(hi > lo)) {
		snprintf(err, err_len, "%s: %s%s: no usable AllowableMin/"
			 "AllowableMax (give min_w= and max_w=)", k->ops->name,
			 r->base, r->control);
		return -EINVAL;
	}
	k->min_mw = (uint32_t)lround(lo * 1000);
	k->max_mw = (uint32_t)lround(hi * 1000);
	return 0;
}

static int _rf_apply(pcap_knob_t *k, uint32_t cap_mw, char *err,
		     size_t err_len)
{
	unsigned watts = (cap_mw + 500) / 1000;
	char json[96], mode[32];
	double sp, lo, hi;
	int ret;

	snprintf(json, sizeof(json),
		 "{\"SetPoint\": %u, \"ControlMode\": \"Automatic\"}", watts);
	ret = _call(k, "PATCH", json, err, err_len);
	if (!ret)
		ret = _get(k, &sp, mode, sizeof(mode), &lo, &hi, err, err_len);
	if (!ret && (fabs(sp - watts) > 0.5 || strcmp(mode, "Automatic"))) {
		snprintf(err, err_len, "%s: set %u W Automatic, the BMC reads "
			 "back %g W %s", k->ops->name, watts, sp, mode);
		ret = -EIO;
	}
	return ret;
}

static int _rf_read(pcap_knob_t *k, uint32_t *cap_mw, char *err,
		    size_t err_len)
{
	char mode[32];
	double sp, lo, hi;
	int ret = _get(k, &sp, mode, sizeof(mode), &lo, &hi, err, err_len);

	if (ret)
		return ret;
	if (!strcmp(mode, "Disabled") || sp < 0)
		*cap_mw = k->max_mw;
	else
		*cap_mw = (uint32_t)lround(sp * 1000);
	return 0;
}

static int _rf_restore(pcap_knob_t *k, char *err, size_t err_len)
{
	return _call(k, "PATCH", "{\"ControlMode\": \"Disabled\"}", err,
		     err_len);
}

const pcap_knob_ops_t pcap_knob_redfish_ops = {
	.name = "redfish",
	.keys = "host port tls control user password_file auth ca_file "
		"verify timeout_ms min_w max_w",
	.open = _rf_open,
	.apply = _rf_apply,
	.read = _rf_read,
	.restore = _rf_restore,
	.close = _rf_close,
};
