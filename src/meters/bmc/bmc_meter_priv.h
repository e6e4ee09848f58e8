/*
 * bmc_meter_priv.h - shared by bmc_meter.c, its two methods and the helpers
 * below them (bmc_meter_util.c).
 */
#ifndef SE_BMC_METER_PRIV_H
#define SE_BMC_METER_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include <freeipmi/freeipmi.h>
#include <ipmi_monitoring.h>

#include "bmc_conf.h"
#include "meter.h"
#include "se_log.h"
#include "se_resolve.h"

/* An IPMI entity id (IPMI 2.0 §43.14) that is not known. */
#define BMC_ENTITY_UNKNOWN	0xff

struct bmc_meter {
	bmc_conf_t own_conf;		/* a copy: the caller's may go */
	const bmc_conf_t *conf;		/* &own_conf */
	bmc_method_t method;		/* DCMI or SENSORS once resolved */
	se_ratelimit_t rl;		/* open failures, method notes */
	bool open_told;			/* this run of failed opens has its
					 * reason in the log (once per fault,
					 * as the sampler marks it) */
	/* EnergyBMCHost as handed to FreeIPMI: its name resolved by
	 * bmc_lan_host() at open ("" in-band) */
	char lan_host[SE_RESOLVE_ADDR_LEN + 16];

	/* dcmi: one persistent libfreeipmi session */
	ipmi_ctx_t ipmi;
	uint64_t last_io_ns;		/* last answer on the session */
	uint8_t last_cc;		/* completion code of the last reading */
	bool enhanced;			/* rolling average in use */
	uint8_t avg_period;		/* its period byte (DCMI §6.1.1) */
	uint64_t avg_ns;		/* its length */
	bool stuck_known;		/* last_* below are set */
	uint16_t last_w;
	uint32_t last_stamp_s;
	uint64_t same_since_ns;		/* first read with these values */
	uint64_t last_t_ns;		/* stamp of the last reading */

	/* sensors: libipmimonitoring, a session per read */
	ipmi_monitoring_ctx_t mon;
	unsigned ids[BMC_MAX_SENSORS];	/* chosen record ids */
	size_t n_ids;			/* 0: not chosen yet */
};

/* dcmi method (bmc_meter_dcmi.c) */
int bmc_dcmi_open(struct bmc_meter *m, uint64_t deadline_ns);
int bmc_dcmi_read(struct bmc_meter *m, meter_reading_t *out,
		  uint64_t deadline_ns, char *msg, size_t msg_len);
void bmc_dcmi_close(struct bmc_meter *m);

/* sensors method (bmc_meter_sensors.c) */
int bmc_sensors_open(struct bmc_meter *m, uint64_t deadline_ns);
int bmc_sensors_read(struct bmc_meter *m, meter_reading_t *out,
		     uint64_t deadline_ns, char *msg, size_t msg_len);
void bmc_sensors_close(struct bmc_meter *m);

/* helpers (bmc_meter_util.c) */

/* Milliseconds left until deadline_ns, within [10, EnergyBMCTimeout]. */
unsigned bmc_timeout_ms(const struct bmc_meter *m, uint64_t deadline_ns);

/*
 * Resolve EnergyBMCHost's name by the deadline into m->lan_host as
 * "ADDRESS:PORT": FreeIPMI would look it up with no timeout.  An address,
 * an IPv6 literal and libipmimonitoring's in-band names are kept as they
 * are.  Returns 0 or the -errno of se_resolve() (logged).
 */
int bmc_lan_host(struct bmc_meter *m, uint64_t deadline_ns);

/* The host to hand FreeIPMI (NULL in-band); bmc_lan_host() first. */
const char *bmc_lib_host(const struct bmc_meter *m);

/* "10.0.0.5" or "in-band", for messages. */
const char *bmc_where(const struct bmc_meter *m);

/* Check power against EnergyBMCMaxWatts: 0 or -EAGAIN with msg. */
int bmc_check_range(const struct bmc_meter *m, uint64_t power_mw,
		    char *msg, size_t msg_len);

#endif
