/*
 * rf_meter.h - a Redfish BMC (or any Redfish resource with power or
 * energy) as a meter_ops_t, for acct_gather_energy/bmc's
 * EnergyBMCMethod=redfish.
 *
 * open:  the first time, discovery (rf_source.h) through the service's
 *        links, said in one log line (the source, and what was passed
 *        over); the source is kept across reopens, and found again only
 *        when one of its resources answers 404.
 * read:  one GET per document of the source (one for EnvironmentMetrics,
 *        one per supply for PowerSubsystem; one per PDU for the outlets
 *        it feeds here, through its Outlets collection expanded, when
 *        discovery found it expands), each within the read's
 *        deadline and at most EnergyBMCTimeout, on the kept connection.
 *        A counter goes out in units of its step with its spec
 *        (meter_reading_t.counter_spec) and, when the chassis has power,
 *        with it, so that the accumulator shapes the counter's coarse
 *        steps by power.  A counter that restarted (SensorResetTime
 *        changed, or it went back) gives a reading of power only: the
 *        accumulator ends the counter's segment there (energy_acc.h: a
 *        power sample clears the base) and the next reading starts a new
 *        one, so the interval across the restart is filled from power,
 *        never a step lost or counted twice.
 * close: the session deleted, the connection closed.
 * Only the sampler thread calls these.  Errors name the URI; the password
 * never appears in a message.
 */
#ifndef SE_RF_METER_H
#define SE_RF_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meter.h"
#include "rf_http.h"
#include "rf_source.h"

typedef struct {
	const char *base;	/* "https://bmc.mgmt", "http://127.0.0.1:8000" */
	const char *user;	/* NULL: no authentication */
	const char *password;
	const char *ca_file;	/* NULL: the system's CAs */
	bool tls_verify;
	rf_auth_t auth;
	const char *chassis;	/* NULL: the only outermost one */
	rf_pick_t pick;
	const char *source_uri;	/* RF_PICK_URI: URI[,URI...], each a path
				 * on base or a URL of another service
				 * (same credentials), summed */
	uint64_t timeout_ns;	/* longest request */
	uint64_t max_power_mw;	/* readings above are dropped */
	/* NULL: the meter GETs its documents over HTTP(S).  Else every
	 * document, discovery's and the readings', comes from docs, asked
	 * by its absolute URL (base + path, or the URL as written): the PDU
	 * poller's rounds (rf_poller.h).  The meter then makes no request
	 * and watches no tick; its readings come from rf_meter_read_at(). */
	const rf_fetcher_t *docs;
} rf_meter_conf_t;

typedef struct rf_meter rf_meter_t;

extern const meter_ops_t rf_meter_ops;

/* A meter (conf copied; no I/O).  NULL with errno ENOMEM. */
rf_meter_t *rf_meter_create(const rf_meter_conf_t *conf);

/* Close (if open) and free. */
void rf_meter_destroy(rf_meter_t *m);

/* For the plugin's load line: "redfish https://10.0.0.5 as admin
 * (session, TLS verified against /etc/slurm/bmc-ca.pem)". */
void rf_meter_describe(const rf_meter_t *m, char *buf, size_t len);

/* The source chosen ("" before discovery), for slurm-energy-check. */
const char *rf_meter_source(const rf_meter_t *m);

/* Requests and logins made, over every service of the meter (base's and
 * those a source list names by URL), for tests and the bench. */
unsigned long rf_meter_requests(const rf_meter_t *m);
unsigned long rf_meter_logins(const rf_meter_t *m);

/* Rounds of GETs made (one GET of each document of the source; a read
 * makes several while it watches for the BMC's sensing tick). */
unsigned long rf_meter_rounds(const rf_meter_t *m);

/* Longest absolute URL a meter asks its documents by (rf_meter_urls). */
#define RF_URL_MAX	(2 * RF_URI_MAX + 32)

/* Discovery done (the source known)?  Only then are there URLs to read. */
bool rf_meter_discovered(const rf_meter_t *m);

/* The absolute URLs one reading asks for, each once (a batch's expanded
 * collection for its members): their number (0 before discovery, at most
 * max). */
size_t rf_meter_urls(const rf_meter_t *m, char (*urls)[RF_URL_MAX],
		     size_t max);

/* A reading from the documents docs gives now (rf_meter_conf_t.docs),
 * stamped at t_ns: as meter_ops_t.read, with -ENODEV when the source is
 * gone (a document answered 404: discovery runs again at the next open). */
int rf_meter_read_at(rf_meter_t *m, uint64_t t_ns, meter_reading_t *out,
		     char *msg, size_t msg_len);

/* Watch for the BMC's sensing tick (default on; rf_meter.c): off, a
 * reading is one round stamped at its midpoint (bench: HTTP alone). */
void rf_meter_set_tick_sync(rf_meter_t *m, bool on);

#endif
