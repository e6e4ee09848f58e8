/*
 * rf_source.h - which of a Redfish chassis' readings the meter uses, and
 * what one reading of them is.  No I/O of its own: documents come from a
 * fetch function (HTTP in the meter, mockup files in the unit tests).
 *
 * Discovery, at open, best first (issue #41, DESIGN.md §8):
 *   energy counters
 *     1. the chassis' EnvironmentMetrics EnergyJoules
 *     2. its EnvironmentMetrics EnergykWh
 *     3. a chassis-level Sensor (PhysicalContext Chassis or none) of
 *        ReadingType EnergyJoules, EnergykWh or EnergyWh, in that order
 *     4. PowerSubsystem's PowerSupplies: each supply's Metrics EnergykWh,
 *        summed (every supply must have one)
 *   power
 *     5. EnvironmentMetrics PowerWatts
 *     6. a chassis-level Sensor of ReadingType Power
 *     7. the supplies' Metrics InputPowerWatts, summed
 *     8. legacy Power: PowerControl[0].PowerConsumedWatts (deprecated
 *        since Power v1_7_0, what CEEMS reads)
 * With a counter, power is read too when the chassis has it, preferring
 * the counter's own documents (EnvironmentMetrics has both PowerWatts and
 * its energy; a supply's Metrics both InputPowerWatts and EnergykWh: one
 * GET a document), so the accumulator shapes the counter's coarse steps by
 * power.  Two sensors of the same best type are ambiguous: skipped, and
 * said, so the admin names one (EnergyBMCRedfishSource=URI).
 *
 * Counter units: the counter's value goes to the accumulator as an integer
 * in units of its step, which is the finest decimal the BMC has written so
 * far (a kWh counter read as 325.675 steps by 1 Wh; as 325675 by 1 kWh):
 * 10^-d of the reading's unit, d at most RF_MAX_DECIMALS_* of that unit.
 * A counter is a JSON number: it never wraps (width 64), and it is reset
 * when its SensorResetTime changes or it goes back (rf_counter_restarted).
 */
#ifndef SE_RF_SOURCE_H
#define SE_RF_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "energy_acc.h"
#include "rf_json.h"

#define RF_MAX_PROBES		8	/* power supplies summed */
#define RF_MAX_MEMBERS		128	/* sensors looked at, one by one */
#define RF_RESET_TIME_MAX	40	/* an ISO 8601 date-time, with room */
/* The reset times of a summed series, one per probe, joined by spaces */
#define RF_RESET_TIMES_MAX	(RF_RESET_TIME_MAX * RF_MAX_PROBES)

/* Decimals kept: a step of at least 1 J, 1 Wh, 1 Wh (kWh to 3 decimals).
 * Finer digits are not trusted as a step: a BMC printing a binary float
 * ("8765.432000000001") would otherwise declare a 3.6 J step on a 1 Wh
 * counter, and the accumulator would hold energy to the counter's 3.6 kJ
 * jumps instead of shaping them by power. */
#define RF_MAX_DECIMALS_J	0
#define RF_MAX_DECIMALS_WH	0
#define RF_MAX_DECIMALS_KWH	3

typedef enum {
	RF_Q_JOULES = 0,
	RF_Q_WH,
	RF_Q_KWH,
	RF_Q_WATTS,
} rf_quantity_t;

/* Where one number is: a document and a path in it (rf_json_at).  A path
 * that ends at an object reads its Reading (and SensorResetTime): an
 * excerpt (EnvironmentMetrics' EnergykWh) or a Sensor ("" path). */
typedef struct {
	char uri[RF_URI_MAX];
	char path[64];
} rf_probe_t;

/* A quantity read at one or more places and summed. */
typedef struct {
	const char *what;	/* "EnvironmentMetrics EnergyJoules", ... */
	rf_quantity_t q;
	rf_probe_t probes[RF_MAX_PROBES];
	size_t n;
} rf_series_t;

typedef enum {
	RF_PICK_AUTO = 0,	/* best first, as above */
	RF_PICK_ENERGY,		/* an energy counter, or fail */
	RF_PICK_POWER,		/* power only, even with a counter */
	RF_PICK_URI,		/* the resources named (and nothing else) */
} rf_pick_t;

/*
 * Several resources named (RF_PICK_URI with a list: a node's two PDU
 * outlets) that are members of one collection of one service are read in
 * one GET of that collection with $expand=.($levels=1), when discovery
 * found that the service expands it (public-pdu declares ExpandQuery):
 * one request a period for every outlet a PDU feeds on this host, not one
 * per outlet.
 */
typedef struct {
	char uri[RF_URI_MAX + 24];	/* the collection, with its query */
	size_t n;			/* members read through it */
} rf_batch_t;

typedef struct {
	char chassis[RF_URI_MAX];	/* the chassis chosen */
	bool has_energy;
	rf_series_t energy;
	bool has_power;
	rf_series_t power;
	char notes[256];		/* what was passed over, and why */
	rf_batch_t batches[RF_MAX_PROBES];
	size_t n_batches;
} rf_source_t;

/*
 * Fetch one document: 0 and *doc (the caller puts it), or -errno with a
 * message naming the URI.  -ENOENT means the resource is not there (404):
 * discovery then looks elsewhere.
 */
typedef int (*rf_fetch_fn)(void *arg, const char *uri, json_object **doc,
			   char *msg, size_t msg_len);

typedef struct {
	rf_fetch_fn fetch;
	void *arg;
} rf_fetcher_t;

/*
 * Choose the source: chassis_sel is NULL (the service's only outermost
 * chassis), a chassis Id or a URI; pick and uri (for RF_PICK_URI: a
 * Sensor, an EnvironmentMetrics, a PowerSupplyMetrics, a Power resource
 * or an Outlet; or a comma-separated list of up to RF_MAX_PROBES of them,
 * summed: each a path on the service, or a URL "https://pdu2/redfish/..."
 * on another service, which the fetcher is given as written) as
 * EnergyBMCRedfishSource.  Returns 0; -ENOENT when the
 * chassis has none of the sources asked for ("the chassis ... has no
 * ..."); -EINVAL when the chassis is ambiguous; or the fetch's -errno.
 * msg names the URI at fault.
 */
int rf_discover(const rf_fetcher_t *f, const char *chassis_sel,
		rf_pick_t pick, const char *uri, rf_source_t *out,
		char *msg, size_t msg_len);

/* One line: "EnvironmentMetrics EnergyJoules (counter) + PowerWatts at
 * /redfish/v1/Chassis/1U". */
void rf_source_describe(const rf_source_t *s, char *buf, size_t len);

/* The distinct URIs a reading GETs (energy's, then power's). */
size_t rf_source_uris(const rf_source_t *s, const char *uris[],
		      size_t max);

/* One reading of a series from its documents (docs[i] is the answer to
 * uris[i] of rf_source_uris()). */
typedef struct {
	double value;		/* summed, in the series' quantity */
	unsigned decimals;	/* finest written by any probe */
	char reset_time[RF_RESET_TIMES_MAX]; /* every probe's
					 * SensorResetTime, joined ("") */
} rf_value_t;

/*
 * Read series s out of the documents.  0, or -ENODATA with msg naming the
 * URI and path that has no number.
 */
int rf_series_read(const rf_series_t *s, const char *const uris[],
		   json_object *const docs[], size_t n_docs, rf_value_t *out,
		   char *msg, size_t msg_len);

/*
 * A counter value as the accumulator takes it: *raw in units of its step
 * (10^-decimals of the quantity, decimals capped as above) and spec
 * (64 bits, mJ per unit).  -ERANGE for a negative or too large value.
 */
int rf_counter_raw(rf_quantity_t q, double value, unsigned decimals,
		   uint64_t *raw, counter_spec_t *spec);

/*
 * Did the counter restart between two readings: SensorResetTime changed
 * (both known), or the value went back (ResetMetrics, a BMC that lost it
 * at a reboot)?
 */
bool rf_counter_restarted(double prev, const char *prev_reset_time,
			  double cur, const char *cur_reset_time);

/* The batch (index in s->batches) that reads uri, or -1: GET it alone. */
int rf_source_batch_of(const rf_source_t *s, const char *uri);

/* Are the readings of two answers to one GET the same: every field a
 * source reads (a Reading of energy or power, a counter's
 * SensorResetTime), of the resource and, for a collection expanded, of
 * each member?  What else a service puts in it (a timestamp, a status) is
 * not looked at: the poller's watch for the sensing tick (rf_poller.c). */
bool rf_readings_same(json_object *a, json_object *b);

/* The GET that reads uri with its siblings: its parent collection with
 * $expand=.($levels=1), on uri's service ("" when uri has no parent). */
void rf_batch_uri(const char *uri, char *out, size_t len);

/* The member of an expanded collection (a batch's answer) whose
 * @odata.id is uri's path, if it came expanded (not a bare link); NULL
 * otherwise.  Borrowed from coll. */
json_object *rf_batch_member(json_object *coll, const char *uri);

/* Split EnergyBMCRedfishSource's list at commas into items: the count,
 * or 0 (more than RF_MAX_PROBES, an empty or a too long item). */
size_t rf_uri_list_split(const char *list, char items[][RF_URI_MAX]);

/* The path of a member's URI in its batch's answer ("/redfish/v1/..."
 * of "https://pdu2/redfish/v1/..."). */
const char *rf_uri_path(const char *uri);

/* Names for logs: "EnergyJoules", "W", ... */
const char *rf_quantity_name(rf_quantity_t q);

#endif
