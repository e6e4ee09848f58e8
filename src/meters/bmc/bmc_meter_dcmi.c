/*
 * bmc_meter_dcmi.c - DCMI Get Power Reading on a persistent libfreeipmi
 * session (DCMI 1.5 §6.6.1; request and response bytes in bmc_dcmi_codec.c).
 *
 * The session is opened once and kept: a read is one request and one
 * response (about 45 us on loopback).  libfreeipmi's session timeout,
 * set to EnergyBMCTimeout, bounds the wait for each answer (counted from
 * the request) and is also an idle limit: a session silent for longer is
 * taken as gone.  So the session lasts while reads come more often than
 * EnergyBMCTimeout (the defaults, 1 s and 2000 ms, keep it); after a longer
 * silence (a longer EnergyBMCFrequency, a backoff) it is reopened before
 * the read.  A BMC that stops answering fails the read by the deadline
 * with -ETIMEDOUT; the sampler closes and reopens.  Closing sends Close
 * Session, bounded by the same timeout.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bmc_dcmi_codec.h"
#include "bmc_meter_priv.h"
#include "se_time.h"

#define DCMI_RS_MAX		64
#define DCMI_STUCK_PERIODS	5
#define DCMI_STUCK_MIN_PERIOD_NS (2 * SE_NS_PER_SEC)

static const uint8_t _freeipmi_priv[] = {
	[BMC_PRIV_USER] = IPMI_PRIVILEGE_LEVEL_USER,
	[BMC_PRIV_OPERATOR] = IPMI_PRIVILEGE_LEVEL_OPERATOR,
	[BMC_PRIV_ADMIN] = IPMI_PRIVILEGE_LEVEL_ADMIN,
};

/* libfreeipmi's error of the last call as a negative errno. */
static int _errno(ipmi_ctx_t ctx)
{
	switch (ipmi_ctx_errnum(ctx)) {
	case IPMI_ERR_USERNAME_INVALID:
	case IPMI_ERR_PASSWORD_INVALID:
	case IPMI_ERR_K_G_INVALID:
	case IPMI_ERR_PRIVILEGE_LEVEL_INSUFFICIENT:
	case IPMI_ERR_PRIVILEGE_LEVEL_CANNOT_BE_OBTAINED:
	case IPMI_ERR_AUTHENTICATION_TYPE_UNAVAILABLE:
	case IPMI_ERR_CIPHER_SUITE_ID_UNAVAILABLE:
	case IPMI_ERR_PASSWORD_VERIFICATION_TIMEOUT:
		return -EACCES;
	case IPMI_ERR_CONNECTION_TIMEOUT:
	case IPMI_ERR_SESSION_TIMEOUT:
	case IPMI_ERR_MESSAGE_TIMEOUT:
	case IPMI_ERR_DRIVER_TIMEOUT:
		return -ETIMEDOUT;
	case IPMI_ERR_IPMI_2_0_UNAVAILABLE:
		return -EPROTONOSUPPORT;
	case IPMI_ERR_DEVICE_NOT_FOUND:
	case IPMI_ERR_DEVICE_NOT_SUPPORTED:
		return -ENODEV;
	case IPMI_ERR_BMC_BUSY:
	case IPMI_ERR_DRIVER_BUSY:
		return -EBUSY;
	case IPMI_ERR_OUT_OF_MEMORY:
		return -ENOMEM;
	case IPMI_ERR_HOSTNAME_INVALID:
		return -EHOSTUNREACH;
	default:
		return -EIO;
	}
}

/* A session silent this long is reopened before use (3/4 of the timeout,
 * so that libfreeipmi's own idle check never fires first). */
static bool _idle(const struct bmc_meter *m)
{
	return se_mono_ns() - m->last_io_ns > m->conf->timeout_ns / 4 * 3;
}

/* Open the session (LAN 2.0 or 1.5) or find the in-band driver. */
static int _connect(struct bmc_meter *m)
{
	const bmc_conf_t *c = m->conf;
	const char *pw = c->have_password ? c->password : NULL;
	const char *host = bmc_lib_host(m);
	unsigned timeout_ms = c->timeout_ns / SE_NS_PER_MS;
	unsigned retrans_ms = timeout_ms / 4;
	int rc;

	if (!c->host) {
		rc = ipmi_ctx_find_inband(m->ipmi, NULL, 0, 0, 0, NULL, 0,
					  IPMI_FLAGS_DEFAULT);
		return rc == 1 ? 0 : rc == 0 ? -ENODEV : _errno(m->ipmi);
	}
	if (c->protocol == BMC_PROTO_1_5)
		rc = ipmi_ctx_open_outofband(m->ipmi, host, c->user, pw,
					     IPMI_AUTHENTICATION_TYPE_MD5,
					     _freeipmi_priv[c->privilege],
					     timeout_ms, retrans_ms,
					     c->workarounds_1_5,
					     IPMI_FLAGS_DEFAULT);
	else
		rc = ipmi_ctx_open_outofband_2_0(m->ipmi, host, c->user, pw,
						 NULL, 0,
						 _freeipmi_priv[c->privilege],
						 (uint8_t) c->cipher_suite,
						 timeout_ms, retrans_ms,
						 c->workarounds_2_0,
						 IPMI_FLAGS_DEFAULT);
	return rc ? _errno(m->ipmi) : 0;
}

/* Send a DCMI request; returns the response length or -errno. */
static int _cmd(struct bmc_meter *m, const uint8_t *rq, size_t rq_len,
		uint8_t *rs, size_t rs_max)
{
	int n = ipmi_cmd_raw(m->ipmi, IPMI_BMC_IPMB_LUN_BMC, DCMI_NETFN, rq,
			     (unsigned) rq_len, rs, (unsigned) rs_max);

	return n < 0 ? _errno(m->ipmi) : n;
}

/*
 * Enhanced statistics (DCMI 1.5 §6.1.1 parameter 5): use the shortest
 * rolling average offered if it is at most twice the sampling period.
 */
static void _choose_average(struct bmc_meter *m)
{
	uint8_t rq[DCMI_CAPABILITIES_RQ_LEN], rs[DCMI_RS_MAX];
	uint8_t periods[DCMI_MAX_ROLLING_PERIODS];
	uint64_t period_ms[DCMI_MAX_ROLLING_PERIODS];
	size_t n_rq = dcmi_capabilities_rq(rq, DCMI_CAP_PARAM_ENHANCED_STATS);
	size_t n = 0;
	int len, i;

	m->enhanced = false;
	len = _cmd(m, rq, n_rq, rs, sizeof(rs));
	if (len < 0 || dcmi_parse_rolling_periods(rs, (size_t) len, periods,
						  period_ms,
						  DCMI_MAX_ROLLING_PERIODS, &n))
		return;
	i = dcmi_choose_period(period_ms, n,
			       m->conf->period_ns / SE_NS_PER_MS);
	if (i < 0)
		return;
	m->enhanced = true;
	m->avg_period = periods[i];
	m->avg_ns = period_ms[i] * SE_NS_PER_MS;
}

/* One Get Power Reading in the current mode. */
static int _power_reading(struct bmc_meter *m, dcmi_power_reading_t *pr)
{
	uint8_t rq[DCMI_POWER_READING_RQ_LEN], rs[DCMI_RS_MAX];
	size_t n_rq;
	int len;

	n_rq = m->enhanced ?
	       dcmi_power_reading_rq(rq, DCMI_MODE_ENHANCED_POWER_STATS,
				     m->avg_period) :
	       dcmi_power_reading_rq(rq, DCMI_MODE_SYSTEM_POWER_STATS, 0);
	len = _cmd(m, rq, n_rq, rs, sizeof(rs));
	if (len < 0)
		return len;
	m->last_cc = len > 1 ? rs[1] : 0;
	return dcmi_parse_power_reading(rs, (size_t) len, pr);
}

/*
 * The first reading of a session says whether DCMI works here: "invalid
 * command" (no DCMI) and a refusal (another completion code, e.g. 0xD4
 * insufficient privilege) both leave EnergyBMCMethod=auto to the sensors.
 */
static int _probe(struct bmc_meter *m)
{
	bool fallback = m->conf->method == BMC_METHOD_AUTO;
	dcmi_power_reading_t pr;
	int rc = _power_reading(m, &pr);

	if (rc == -EOPNOTSUPP) {
		if (!fallback)
			se_log_limited(&m->rl, se_mono_ns(), SE_LOG_ERROR,
				       "BMC %s: no DCMI Get Power Reading (invalid command); use EnergyBMCMethod=sensors",
				       bmc_where(m));
		return rc;
	}
	if (rc == -EINVAL) {
		se_log_limited(&m->rl, se_mono_ns(),
			       fallback ? SE_LOG_INFO : SE_LOG_ERROR,
			       "BMC %s: DCMI Get Power Reading refused with completion code 0x%02x%s",
			       bmc_where(m), m->last_cc,
			       m->last_cc == IPMI_CC_INSUFFICIENT_PRIVILEGE ?
			       " (insufficient privilege: raise EnergyBMCPrivilege)" : "");
		return fallback ? -EOPNOTSUPP :
		       m->last_cc == IPMI_CC_INSUFFICIENT_PRIVILEGE ? -EACCES : -EIO;
	}
	return rc == -ETIMEDOUT || rc == -EACCES ? rc : 0;
}

static void _log_open_failure(struct bmc_meter *m, int rc)
{
	const bmc_conf_t *c = m->conf;

	/* once per fault: the retries of the same outage say nothing new */
	if (m->open_told)
		return;
	m->open_told = true;
	const char *hint = rc == -EACCES ?
		" (check EnergyBMCUser, EnergyBMCPasswordFile, EnergyBMCPrivilege, EnergyBMCCipherSuite)" :
		rc == -ETIMEDOUT ?
		" (BMC unreachable or hung; EnergyBMCWorkaroundFlags may be needed)" : "";

	if (!c->host) {
		se_log_limited(&m->rl, se_mono_ns(), SE_LOG_ERROR,
			       "BMC in-band: no IPMI driver found (%s)",
			       strerror(-rc));
		return;
	}
	se_log_limited(&m->rl, se_mono_ns(), SE_LOG_ERROR,
		       "BMC %s: cannot open an IPMI %s session as '%s': %s%s",
		       c->host, c->protocol == BMC_PROTO_1_5 ? "1.5" : "2.0",
		       c->user ? c->user : "", ipmi_ctx_errormsg(m->ipmi),
		       hint);
}

/* A fresh context and session, the host looked up again by the
 * deadline (libfreeipmi's own lookup has no timeout); logs a failure. */
static int _session(struct bmc_meter *m, uint64_t deadline_ns)
{
	int rc;

	bmc_dcmi_close(m);
	if ((rc = bmc_lan_host(m, deadline_ns)))
		return rc;
	if (!(m->ipmi = ipmi_ctx_create()))
		return -ENOMEM;
	if ((rc = _connect(m))) {
		_log_open_failure(m, rc);
		bmc_dcmi_close(m);
		return rc;
	}
	m->last_io_ns = se_mono_ns();
	return 0;
}

int bmc_dcmi_open(struct bmc_meter *m, uint64_t deadline_ns)
{
	int rc;

	if ((rc = _session(m, deadline_ns)))
		return rc;
	m->enhanced = false;
	m->stuck_known = false;
	if ((rc = _probe(m)))
		goto fail;
	_choose_average(m);
	se_log(SE_LOG_DEBUG, "BMC %s: DCMI session open, %s", bmc_where(m),
	       m->enhanced ? "enhanced statistics (rolling average)" :
			     "current power");
	return 0;
fail:
	bmc_dcmi_close(m);
	return rc;
}

void bmc_dcmi_close(struct bmc_meter *m)
{
	if (!m->ipmi)
		return;
	ipmi_ctx_close(m->ipmi);
	ipmi_ctx_destroy(m->ipmi);
	m->ipmi = NULL;
}

/*
 * A reading whose watts and BMC time stamp have not moved for
 * DCMI_STUCK_PERIODS sampling periods (at least 2 s each) is stuck: the
 * BMC's power monitor has hung while the BMC still answers.  A BMC that
 * leaves the time stamp at 0 cannot be checked.
 */
static bool _stuck(struct bmc_meter *m, const dcmi_power_reading_t *pr,
		   uint64_t now_ns, uint64_t *stuck_ns)
{
	uint64_t period = m->conf->period_ns;
	uint64_t limit;

	if (period < DCMI_STUCK_MIN_PERIOD_NS)
		period = DCMI_STUCK_MIN_PERIOD_NS;
	limit = DCMI_STUCK_PERIODS * period;

	if (!m->stuck_known || pr->current_w != m->last_w ||
	    pr->timestamp_s != m->last_stamp_s || !pr->timestamp_s) {
		m->stuck_known = true;
		m->last_w = pr->current_w;
		m->last_stamp_s = pr->timestamp_s;
		m->same_since_ns = now_ns;
		return false;
	}
	*stuck_ns = now_ns - m->same_since_ns;
	return *stuck_ns > limit;
}

static int _fail_read(struct bmc_meter *m, int rc, char *msg, size_t len)
{
	if (rc == -EPROTO)
		snprintf(msg, len, "BMC %s: malformed DCMI response",
			 bmc_where(m));
	else if (rc == -EINVAL)
		snprintf(msg, len,
			 "BMC %s: Get Power Reading: completion code 0x%02x",
			 bmc_where(m), m->last_cc);
	else if (rc == -EOPNOTSUPP)
		snprintf(msg, len,
			 "BMC %s: Get Power Reading is no longer supported",
			 bmc_where(m));
	else
		snprintf(msg, len, "BMC %s: Get Power Reading: %s",
			 bmc_where(m), ipmi_ctx_errormsg(m->ipmi));
	/* a bad completion code or busy BMC leaves the session usable */
	return rc == -EINVAL || rc == -EBUSY ? -EAGAIN : rc;
}

int bmc_dcmi_read(struct bmc_meter *m, meter_reading_t *out,
		  uint64_t deadline_ns, char *msg, size_t msg_len)
{
	char scratch[8];
	dcmi_power_reading_t pr;
	uint64_t t0, t1, stuck_ns, power_mw;
	int rc;

	if (!msg) {
		msg = scratch;
		msg_len = sizeof(scratch);
	}
	if (_idle(m) && (rc = _session(m, deadline_ns))) {
		snprintf(msg, msg_len, "BMC %s: reopening the idle session failed",
			 bmc_where(m));
		return rc;
	}
	t0 = se_mono_ns();
	rc = _power_reading(m, &pr);
	t1 = se_mono_ns();
	if (rc)
		return _fail_read(m, rc, msg, msg_len);
	m->last_io_ns = t1;

	if (!pr.active) {
		snprintf(msg, msg_len, "BMC %s: no power measurement available",
			 bmc_where(m));
		return -EAGAIN;
	}
	if (_stuck(m, &pr, t1, &stuck_ns)) {
		snprintf(msg, msg_len,
			 "BMC %s: power reading stuck at %u W (BMC time stamp %u) for %.0f s",
			 bmc_where(m), pr.current_w, pr.timestamp_s,
			 (double) stuck_ns / SE_NS_PER_SEC);
		return -EAGAIN;
	}
	power_mw = 1000ULL * (m->enhanced ? pr.avg_w : pr.current_w);
	if ((rc = bmc_check_range(m, power_mw, msg, msg_len)))
		return rc;

	memset(out, 0, sizeof(*out));
	out->has_power = true;
	out->power_mw = power_mw;
	/* an average stands for the middle of its window */
	out->t_ns = t0 + (t1 - t0) / 2 - (m->enhanced ? m->avg_ns / 2 : 0);
	if (out->t_ns <= m->last_t_ns)	/* the mode changed on a reopen */
		out->t_ns = m->last_t_ns + 1;
	m->last_t_ns = out->t_ns;
	return 0;
}
