/*
 * bmc_redfish.h - a node's Redfish meter settings from its resolved
 * acct_gather_energy/bmc keys (bmc_conf_finish() done): one mapping for
 * the plugin's slurmd and the PDU poller, so that both read a node alike.
 * Needs rf_meter.h (libseredfish).
 */
#ifndef SE_BMC_REDFISH_H
#define SE_BMC_REDFISH_H

#include <stdio.h>
#include <string.h>

#include "bmc_conf.h"
#include "rf_meter.h"

/* *mc from c (pointers into c, and base: "https://" + host unless the
 * host is already a URL). */
static inline void bmc_redfish_meter_conf(const bmc_conf_t *c,
					  rf_meter_conf_t *mc, char *base,
					  size_t base_len)
{
	static const rf_pick_t picks[] = {
		[BMC_RF_SOURCE_AUTO] = RF_PICK_AUTO,
		[BMC_RF_SOURCE_ENERGY] = RF_PICK_ENERGY,
		[BMC_RF_SOURCE_POWER] = RF_PICK_POWER,
		[BMC_RF_SOURCE_URI] = RF_PICK_URI,
	};

	/* HOST[:PORT] is https; a URL is taken as written */
	snprintf(base, base_len, "%s%s", strstr(c->host, "://") ? "" :
		 "https://", c->host);
	memset(mc, 0, sizeof(*mc));
	mc->base = base;
	mc->user = c->user;
	mc->password = c->have_password ? c->password : NULL;
	mc->ca_file = c->ca_file;
	mc->tls_verify = c->tls_verify == BMC_TLS_YES;
	mc->auth = c->auth == BMC_AUTH_BASIC ? RF_AUTH_BASIC :
					       RF_AUTH_SESSION;
	mc->chassis = c->rf_chassis;
	mc->pick = picks[c->rf_source];
	mc->source_uri = c->rf_source_uri;
	mc->timeout_ns = c->timeout_ns;
	mc->max_power_mw = c->max_power_mw;
}

#endif
