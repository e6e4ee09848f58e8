/*
 * pcap_knob_dcmi.c - the "dcmi" knob: the BMC's power limit (DCMI 1.5
 * §6.6.2-6.6.4, netfn 0x2C group 0xDC: Get Power Limit 0x03, Set Power
 * Limit 0x04, Activate/Deactivate Power Limit 0x05), through libfreeipmi:
 * in-band (the node's own BMC, /dev/ipmi0) unless host= is given, then an
 * IPMI 2.0 LAN session.  DCMI does not say a limit's range, so the admin
 * gives it (min_w, max_w: the node's draw at its floor and uncapped).
 * apply sets the limit (exception action "no action": the BMC throttles,
 * never powers off), activates it if it was not, and reads it back; restore
 * deactivates it (the BMC's own default is no limit).  Options:
 *   min_w=W max_w=W      required, max_w > min_w
 *   host=HOST port=P     out of band (absent: in-band; port default 623)
 *   user=NAME password_file=PATH privilege=user|operator|admin (admin)
 *   workaround=opensesspriv   FreeIPMI's -W opensesspriv (ipmi_sim)
 *   timeout_ms=MS        each request (default 2000)
 *   correction_ms=MS     the BMC's correction time limit (default 1000)
 * The password is read from its file and never shown in a message.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <freeipmi/freeipmi.h>

#include "pcap_knob_priv.h"

#define DCMI_NETFN		0x2c
#define DCMI_GROUP		0xdc
#define DCMI_GET_LIMIT		0x03
#define DCMI_SET_LIMIT		0x04
#define DCMI_ACTIVATE_LIMIT	0x05
#define DCMI_CC_NO_LIMIT	0x80	/* "No Active Set Power Limit" */

typedef struct {
	ipmi_ctx_t ctx;
	uint32_t correction_ms;
} dcmi_t;

/* ---------------------------------------------------- private functions */

static const char *_cc_text(uint8_t cc)
{
	switch (cc) {
	case 0x80: return "no active power limit";
	case 0x84: return "power limit out of range";
	case 0x85: return "correction time out of range";
	case 0x89: return "statistics reporting period out of range";
	case 0xc1: return "command not supported";
	case 0xcc: return "invalid data field";
	case 0xd4: return "insufficient privilege";
	default: return "error";
	}
}

/* One request: the response's length, or a negative errno with err set
 * (cc_out gets the completion code when the BMC answered). */
static int _cmd(pcap_knob_t *k, const char *what, const uint8_t *rq,
		unsigned rq_len, uint8_t *rs, unsigned rs_max, uint8_t *cc_out,
		char *err, size_t err_len)
{
	dcmi_t *d = k->priv;
	int n = ipmi_cmd_raw(d->ctx, IPMI_BMC_IPMB_LUN_BMC, DCMI_NETFN, rq,
			     rq_len, rs, rs_max);

	if (n < 0) {
		snprintf(err, err_len, "%s: %s: %s", k->ops->name, what,
			 ipmi_ctx_errormsg(d->ctx));
		return -EIO;
	}
	if (n < 2 || rs[0] != rq[0]) {
		snprintf(err, err_len, "%s: %s: a response of %d bytes",
			 k->ops->name, what, n);
		return -EPROTO;
	}
	if (cc_out)
		*cc_out = rs[1];
	if (rs[1]) {
		snprintf(err, err_len, "%s: %s: completion code 0x%02x (%s)",
			 k->ops->name, what, rs[1], _cc_text(rs[1]));
		return rs[1] == 0xd4 ? -EACCES : -EIO;
	}
	return n;
}

/* The limit in force, in W; 0 when none is active. */
static int _get_limit(pcap_knob_t *k, uint32_t *watts, char *err,
		      size_t err_len)
{
	uint8_t rq[] = { DCMI_GET_LIMIT, DCMI_GROUP, 0, 0 }, rs[32], cc = 0;
	int n = _cmd(k, "Get Power Limit", rq, sizeof(rq), rs, sizeof(rs), &cc,
		     err, err_len);

	if (n < 0 && cc == DCMI_CC_NO_LIMIT) {
		*watts = 0;
		return 0;
	}
	if (n < 0)
		return n;
	/* cmd, cc, group, 2 reserved, exception actions, watts (LS first) */
	if (n < 8) {
		snprintf(err, err_len, "%s: Get Power Limit: a response of %d "
			 "bytes", k->ops->name, n);
		return -EPROTO;
	}
	*watts = rs[6] | rs[7] << 8;
	return 0;
}

static int _activate(pcap_knob_t *k, bool on, char *err, size_t err_len)
{
	uint8_t rq[] = { DCMI_ACTIVATE_LIMIT, DCMI_GROUP, on, 0, 0 }, rs[16];
	int n = _cmd(k, on ? "Activate Power Limit" : "Deactivate Power Limit",
		     rq, sizeof(rq), rs, sizeof(rs), NULL, err, err_len);

	return n < 0 ? n : 0;
}

static int _set_limit(pcap_knob_t *k, uint16_t watts, char *err,
		      size_t err_len)
{
	dcmi_t *d = k->priv;
	uint32_t c = d->correction_ms;
	uint8_t rq[] = {
		DCMI_SET_LIMIT, DCMI_GROUP, 0, 0, 0,
		0x00,				/* exception: no action */
		watts & 0xff, watts >> 8,
		c & 0xff, (c >> 8) & 0xff, (c >> 16) & 0xff, c >> 24,
		0, 0,
		1, 0,				/* sampling period: 1 s */
	}, rs[16];
	char what[48];
	int n;

	snprintf(what, sizeof(what), "Set Power Limit %u W", watts);
	n = _cmd(k, what, rq, sizeof(rq), rs, sizeof(rs), NULL, err, err_len);
	return n < 0 ? n : 0;
}

static int _privilege(const pcap_knob_t *k, uint8_t *out, char *err,
		      size_t err_len)
{
	const char *v = pcap_knob_opt(k, "privilege");

	if (!v || !strcmp(v, "admin"))
		*out = IPMI_PRIVILEGE_LEVEL_ADMIN;
	else if (!strcmp(v, "operator"))
		*out = IPMI_PRIVILEGE_LEVEL_OPERATOR;
	else if (!strcmp(v, "user"))
		*out = IPMI_PRIVILEGE_LEVEL_USER;
	else {
		snprintf(err, err_len, "knob '%s': privilege=%s is not user, "
			 "operator or admin", k->spec, v);
		return -EINVAL;
	}
	return 0;
}

static int _connect(pcap_knob_t *k, uint32_t timeout_ms, char *err,
		    size_t err_len)
{
	dcmi_t *d = k->priv;
	const char *host = pcap_knob_opt(k, "host");
	const char *port = pcap_knob_opt(k, "port");
	const char *pwfile = pcap_knob_opt(k, "password_file");
	const char *wa = pcap_knob_opt(k, "workaround");
	unsigned flags = 0;
	char pw[128] = "", hostport[300];
	uint8_t priv;
	int rc;

	if (!host) {
		rc = ipmi_ctx_find_inband(d->ctx, NULL, 0, 0, 0, NULL, 0,
					  IPMI_FLAGS_DEFAULT);
		if (rc == 1)
			return 0;
		snprintf(err, err_len, "%s: no in-band BMC found (%s)",
			 k->ops->name, rc ? ipmi_ctx_errormsg(d->ctx) :
			 "no driver answered");
		return -ENODEV;
	}
	if (wa && strcmp(wa, "opensesspriv")) {
		snprintf(err, err_len, "knob '%s': workaround=%s (known: "
			 "opensesspriv)", k->spec, wa);
		return -EINVAL;
	}
	if (wa)
		flags = IPMI_WORKAROUND_FLAGS_OUTOFBAND_2_0_OPEN_SESSION_PRIVILEGE;
	if ((rc = _privilege(k, &priv, err, err_len)))
		return rc;
	if (pwfile && (rc = pcap_read_password(k, pwfile, pw, sizeof(pw), err,
					   err_len)))
		return rc;
	/* FreeIPMI reads "HOST:PORT"; a port keeps 127.0.0.1 out of band */
	snprintf(hostport, sizeof(hostport), "%s:%s", host,
		 port ? port : "623");
	rc = ipmi_ctx_open_outofband_2_0(d->ctx, hostport,
					 pcap_knob_opt(k, "user"),
					 pw[0] ? pw : NULL, NULL, 0, priv, 3,
					 timeout_ms, timeout_ms / 4, flags,
					 IPMI_FLAGS_DEFAULT);
	memset(pw, 0, sizeof(pw));
	if (rc) {
		snprintf(err, err_len, "%s: cannot open a session with %s: %s",
			 k->ops->name, hostport, ipmi_ctx_errormsg(d->ctx));
		return -EIO;
	}
	return 0;
}

/* ------------------------------------------------------------ knob ops */

static void _dcmi_close(pcap_knob_t *k)
{
	dcmi_t *d = k->priv;

	if (!d)
		return;
	if (d->ctx) {
		ipmi_ctx_close(d->ctx);
		ipmi_ctx_destroy(d->ctx);
	}
	free(d);
	k->priv = NULL;
}

static int _dcmi_open(pcap_knob_t *k, char *err, size_t err_len)
{
	uint32_t min_w, max_w, timeout_ms;
	dcmi_t *d = calloc(1, sizeof(*d));
	int ret;

	if (!(k->priv = d))
		return -ENOMEM;
	ret = pcap_opt_u32(k, "min_w", 0, 1, 65534, &min_w, err, err_len);
	if (!ret)
		ret = pcap_opt_u32(k, "max_w", 0, 1, 65534, &max_w, err,
				   err_len);
	if (!ret)
		ret = pcap_opt_u32(k, "timeout_ms", 2000, 100, 60000,
				   &timeout_ms, err, err_len);
	if (!ret)
		ret = pcap_opt_u32(k, "correction_ms", 1000, 1, 600000,
				   &d->correction_ms, err, err_len);
	if (ret)
		return ret;
	if (!min_w || !max_w || max_w <= min_w) {
		snprintf(err, err_len, "knob '%s': needs min_w=W and max_w=W "
			 "with max_w > min_w (DCMI does not say the BMC's "
			 "range)", k->spec);
		return -EINVAL;
	}
	k->min_mw = min_w * 1000;
	k->max_mw = max_w * 1000;
	if (!(d->ctx = ipmi_ctx_create())) {
		snprintf(err, err_len, "%s: ipmi_ctx_create failed",
			 k->ops->name);
		return -ENOMEM;
	}
	return _connect(k, timeout_ms, err, err_len);
}

static int _dcmi_apply(pcap_knob_t *k, uint32_t cap_mw, char *err,
		       size_t err_len)
{
	uint16_t watts = (uint16_t)((cap_mw + 500) / 1000);
	uint32_t back;
	int ret = _set_limit(k, watts, err, err_len);

	if (!ret)
		ret = _get_limit(k, &back, err, err_len);
	if (!ret && back != watts)
		ret = _activate(k, true, err, err_len);
	if (!ret && back != watts)
		ret = _get_limit(k, &back, err, err_len);
	if (!ret && back != watts) {
		snprintf(err, err_len, "%s: set and activated %u W, the BMC "
			 "reads back %u W", k->ops->name, watts, back);
		ret = -EIO;
	}
	return ret;
}

/* The limit in force; no active limit reads as the knob's max. */
static int _dcmi_read(pcap_knob_t *k, uint32_t *cap_mw, char *err,
		      size_t err_len)
{
	uint32_t watts;
	int ret = _get_limit(k, &watts, err, err_len);

	if (!ret)
		*cap_mw = watts ? watts * 1000 : k->max_mw;
	return ret;
}

static int _dcmi_restore(pcap_knob_t *k, char *err, size_t err_len)
{
	uint32_t watts;
	int ret = _get_limit(k, &watts, err, err_len);

	if (!ret && watts)
		ret = _activate(k, false, err, err_len);
	return ret;
}

const pcap_knob_ops_t pcap_knob_dcmi_ops = {
	.name = "dcmi",
	.keys = "min_w max_w host port user password_file privilege "
		"workaround timeout_ms correction_ms",
	.open = _dcmi_open,
	.apply = _dcmi_apply,
	.read = _dcmi_read,
	.restore = _dcmi_restore,
	.close = _dcmi_close,
};
