/*
 * bmc_meter_util.c - what the BMC's methods share (bmc_meter_priv.h):
 * timeouts from the deadline, the BMC's address looked up within it, the
 * range check.  Below bmc_meter.c and its methods, so that the dispatcher
 * calls the methods and they call only down here (no circle:
 * tests/check_layering.py).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* strerror_r() that returns the string */
#endif

#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "bmc_meter_priv.h"
#include "se_time.h"

#define BMC_TIMEOUT_MIN_MS	10
/* RMCP's port (IPMI 2.0 §13.1.2), FreeIPMI's default */
#define BMC_LAN_PORT		"623"

unsigned bmc_timeout_ms(const struct bmc_meter *m, uint64_t deadline_ns)
{
	uint64_t now = se_mono_ns();
	uint64_t left_ms = deadline_ns > now ?
			   (deadline_ns - now) / SE_NS_PER_MS : 0;
	uint64_t max_ms = m->conf->timeout_ns / SE_NS_PER_MS;

	if (left_ms > max_ms)
		left_ms = max_ms;
	if (left_ms < BMC_TIMEOUT_MIN_MS)
		left_ms = BMC_TIMEOUT_MIN_MS;
	return (unsigned) left_ms;
}

/* Hosts libipmimonitoring reads in-band when given without a port. */
static bool _inband_name(const char *host)
{
	static const char *const names[] = {
		"localhost", "127.0.0.1", "ipv6-localhost", "ip6-localhost",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(host, names[i]))
			return true;
	return false;
}

/* Kept as written: nothing to look up, or a meaning of its own. */
static bool _keep_host(const char *host, const char *colon)
{
	return host[0] == '[' || (colon && strchr(colon + 1, ':')) ||
	       (!colon && _inband_name(host));
}

int bmc_lan_host(struct bmc_meter *m, uint64_t deadline_ns)
{
	const char *host = m->conf->host, *colon;
	char name[256], addr[SE_RESOLVE_ADDR_LEN], ebuf[128];
	size_t n;
	int rc;

	m->lan_host[0] = '\0';
	if (!host)
		return 0;
	colon = strchr(host, ':');
	n = colon ? (size_t) (colon - host) : strlen(host);
	if (_keep_host(host, colon) || n >= sizeof(name)) {
		snprintf(m->lan_host, sizeof(m->lan_host), "%s", host);
		return 0;
	}
	memcpy(name, host, n);
	name[n] = '\0';
	rc = se_resolve(name, SOCK_DGRAM, deadline_ns, addr, sizeof(addr));
	if (rc) {
		se_log_limited(&m->rl, se_mono_ns(), SE_LOG_ERROR,
			       "BMC %s: looking up %s: %s", host, name,
			       strerror_r(-rc, ebuf, sizeof(ebuf)));
		return rc;
	}
	if (!strcmp(addr, name))	/* an address: as it was written */
		snprintf(m->lan_host, sizeof(m->lan_host), "%s", host);
	else	/* the port always, or 127.0.0.1 alone would go in-band */
		snprintf(m->lan_host, sizeof(m->lan_host),
			 strchr(addr, ':') ? "[%s]:%s" : "%s:%s", addr,
			 colon ? colon + 1 : BMC_LAN_PORT);
	return 0;
}

const char *bmc_lib_host(const struct bmc_meter *m)
{
	return m->conf->host ? m->lan_host : NULL;
}

const char *bmc_where(const struct bmc_meter *m)
{
	return m->conf->host ? m->conf->host : "in-band";
}

int bmc_check_range(const struct bmc_meter *m, uint64_t power_mw,
		    char *msg, size_t msg_len)
{
	if (power_mw <= m->conf->max_power_mw)
		return 0;
	if (msg)
		snprintf(msg, msg_len,
			 "BMC %s: %.3f W is above EnergyBMCMaxWatts=%llu: reading dropped",
			 bmc_where(m), power_mw / 1000.0,
			 (unsigned long long) (m->conf->max_power_mw / 1000));
	return -EAGAIN;
}
