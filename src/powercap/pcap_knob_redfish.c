/*
 * pcap_knob_redfish.c - the "redfish" knob: a BMC's Redfish Control of
 * ControlType Power (DMTF Control.v1_7_0, e.g. /redfish/v1/Chassis/1U/
 * Controls/PowerLimit): apply PATCHes {"SetPoint": W, "ControlMode":
 * "Automatic"} and reads the Control back; restore PATCHes {"ControlMode":
 * "Disabled"} (no limit: the BMC's own default is not known to us); read
 * gives the SetPoint, or the knob's max while the Control is Disabled.  The
 * range is the Control's AllowableMin..AllowableMax (min_w/max_w narrow
 * it, or stand in where the BMC omits them).  HTTP is the Redfish meter's
 * client (src/meters/redfish/rf_http.h: one kept libcurl handle, session
 * authentication renewed once on a 401 or basic, TLS verified, answers
 * bounded, the session deleted at close).  Options:
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

#include "pcap_knob_priv.h"
#include "rf_http.h"
#include "rf_json.h"
#include "se_time.h"

/* A call is at most a login, the request and the request again after a
 * renewed login (rf_http.h), each within timeout_ms. */
#define RF_CALL_REQUESTS	3

typedef struct {
	rf_http_t *http;
	char base[320];		/* for messages */
	char *control;
	uint64_t timeout_ns;	/* each request's */
} rf_t;

/* the knob's options, as rf_http's messages name them */
static const rf_http_names_t knob_names = {
	.credentials = "user, password_file",
	.ca_file = "ca_file",
	.basic = "auth=basic",
};

/* ---------------------------------------------------- private functions */

static uint64_t _deadline(const rf_t *r)
{
	return se_mono_ns() + RF_CALL_REQUESTS * r->timeout_ns;
}

/* rf_http's answer, its message named by the knob. */
static int _named(pcap_knob_t *k, int ret, const char *msg, char *err,
		  size_t err_len)
{
	if (ret)
		snprintf(err, err_len, "%s: %s", k->ops->name, msg);
	return ret;
}

static int _patch(pcap_knob_t *k, const char *json, char *err,
		  size_t err_len)
{
	rf_t *r = k->priv;
	char msg[512];

	return _named(k, rf_http_patch(r->http, r->control, json,
				       _deadline(r), msg, sizeof(msg)),
		      msg, err, err_len);
}

/* GET the Control: its SetPoint (W, -1 absent), its mode, its range. */
static int _get(pcap_knob_t *k, double *setpoint, char *mode, size_t mode_len,
		double *lo, double *hi, char *err, size_t err_len)
{
	rf_t *r = k->priv;
	json_object *o;
	const char *m;
	char msg[512];
	int ret = rf_http_get(r->http, r->control, _deadline(r), &o, msg,
			      sizeof(msg));

	if (ret)
		return _named(k, ret, msg, err, err_len);
	if (!rf_json_number(o, "SetPoint", setpoint, NULL, 0))
		*setpoint = -1;
	m = rf_json_string(o, "ControlMode");
	snprintf(mode, mode_len, "%s", m ? m : "");
	if (!rf_json_number(o, "AllowableMin", lo, NULL, 0))
		*lo = -1;
	if (!rf_json_number(o, "AllowableMax", hi, NULL, 0))
		*hi = -1;
	json_object_put(o);
	return 0;
}

static bool _yes(const char *v, bool dflt)
{
	return v ? !strcmp(v, "yes") : dflt;
}

/* The client for the knob's options (password read from its file, wiped
 * once rf_http holds its copy). */
static int _setup(pcap_knob_t *k, rf_t *r, char *err, size_t err_len)
{
	const char *host = pcap_knob_opt(k, "host");
	const char *ctl = pcap_knob_opt(k, "control");
	const char *auth = pcap_knob_opt(k, "auth");
	const char *pwfile = pcap_knob_opt(k, "password_file");
	bool tls = _yes(pcap_knob_opt(k, "tls"), true);
	rf_http_conf_t hc = {
		.user = pcap_knob_opt(k, "user"),
		.ca_file = pcap_knob_opt(k, "ca_file"),
		.tls_verify = _yes(pcap_knob_opt(k, "verify"), true),
		.auth = auth && !strcmp(auth, "basic") ? RF_AUTH_BASIC :
			RF_AUTH_SESSION,
		.names = &knob_names,
	};
	char pw[128] = "";
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
		ret = pcap_read_password(k, pwfile, pw, sizeof(pw), err,
					 err_len);
	if (ret)
		return ret;
	snprintf(r->base, sizeof(r->base), "%s://%s:%u",
		 tls ? "https" : "http", host, port);
	hc.base = r->base;
	hc.password = pw;
	hc.timeout_ns = t * SE_NS_PER_MS;
	r->timeout_ns = hc.timeout_ns;
	r->http = rf_http_create(&hc);
	explicit_bzero(pw, sizeof(pw));
	r->control = strdup(ctl);
	return r->http && r->control ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ knob ops */

static void _rf_close(pcap_knob_t *k)
{
	rf_t *r = k->priv;

	if (!r)
		return;
	rf_http_destroy(r->http);
	free(r->control);
	free(r);
	k->priv = NULL;
}

static int _rf_open(pcap_knob_t *k, char *err, size_t err_len)
{
	rf_t *r = calloc(1, sizeof(*r));
	double sp, lo, hi;
	uint32_t min_w, max_w;
	char mode[32];
	int ret;

	if (!(k->priv = r))
		return -ENOMEM;
	if ((ret = _setup(k, r, err, err_len)))
		return ret;
	ret = pcap_opt_u32(k, "min_w", 0, 1, 1000000, &min_w, err, err_len);
	if (!ret)
		ret = pcap_opt_u32(k, "max_w", 0, 1, 1000000, &max_w, err,
				   err_len);
	if (ret)
		return ret;
	if (rf_http_global_init()) {
		snprintf(err, err_len, "%s: libcurl did not initialise",
			 k->ops->name);
		return -EIO;
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
	ret = _patch(k, json, err, err_len);
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
	return _patch(k, "{\"ControlMode\": \"Disabled\"}", err, err_len);
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
