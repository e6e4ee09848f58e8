/*
 * snmp_meter.h - a node's rack PDU outlets over SNMP, behind the meter_ops_t
 * interface (src/common/meter.h).  Slurm-free.
 *
 * A node is fed by one or more outlets (two supplies on two PDUs; a
 * chassis of nodes on shared outlets, each node billed its share).  Each
 * read sends one GET per PDU, holding the power and energy OIDs of every
 * outlet of this node on it, bounded by min(the read's deadline, the
 * timeout): a PDU late or down fails the read, the sampler gap-fills it
 * and reopens later; nothing here waits past the deadline.
 *
 * Energy: when every outlet has an energy counter of the same size (unit x
 * share), the reading carries the sum of the outlets' counters, each
 * unwrapped here (counter_step() with a bound from the outlet's MaxPower)
 * into one 64-bit count in that unit, with spec.registers = the number of
 * outlets, and the sum of the outlets' powers: the accumulator shapes the
 * coarse count by the power and holds it within the sum's step.  An outlet
 * whose counter went back (reset by an operator, a PDU restart) or jumped
 * gives that reading power only: the accumulator ends the counter's
 * segment there and fills the interval from power, never a count lost or
 * counted twice.  Without a counter on every outlet, or with unequal
 * units, power alone is integrated.
 *
 * Messages name the node, the PDU and its host, never a secret.
 */
#ifndef SE_SNMP_METER_H
#define SE_SNMP_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "energy_acc.h"
#include "meter.h"
#include "snmp_models.h"
#include "snmp_transport.h"

#define SNMP_NAME_MAX		64
#define SNMP_HOST_MAX		256
#define SNMP_INDEX_MAX		64
/* A power reading below 0 W down to this many watts is an outlet's noise
 * at idle and reads 0 W; further below, the read fails. */
#define SNMP_NEGATIVE_NOISE_W	50.0

typedef struct {
	char name[SNMP_NAME_MAX];	/* PDU= in the map */
	char host[SNMP_HOST_MAX];
	char context[SNMP_NAME_MAX];	/* v3 context name, "" none */
	snmp_secret_t secret;
} snmp_pdu_t;

typedef struct {
	size_t pdu;			/* into the config's pdus */
	const snmp_model_t *model;
	char index[SNMP_INDEX_MAX];	/* "7", "1.7": the table index */
	double share;			/* the node's part, (0, 1] */
	double max_power_w;		/* the outlet's bound */
} snmp_outlet_t;

typedef struct {
	const char *node;			/* for messages */
	const snmp_pdu_t *pdus;
	size_t n_pdus;
	const snmp_outlet_t *outlets;
	size_t n_outlets;
	const snmp_transport_t *transport;	/* NULL: net-snmp */
	uint64_t timeout_ns;			/* longest request */
} snmp_meter_config_t;

typedef struct snmp_meter snmp_meter_t;

extern const meter_ops_t snmp_meter_ops;

/* A meter (config copied; no I/O).  0, -EINVAL (message in err: an OID
 * that does not parse, too many OIDs for one PDU) or -ENOMEM. */
int snmp_meter_create(const snmp_meter_config_t *cfg, snmp_meter_t **out,
		      char *err, size_t err_len);

/* Close (if open) and free; NULL is fine. */
void snmp_meter_destroy(snmp_meter_t *m);

/* The counter's spec when readings carry one (see the top); false: power
 * alone. */
bool snmp_meter_counter_spec(const snmp_meter_t *m, counter_spec_t *spec);

/* The node's bound: the sum of its outlets' MaxPower x share, in W. */
double snmp_meter_max_power_w(const snmp_meter_t *m);

/* "pdua 7 + pdub 7" (for the sampler's log prefix). */
const char *snmp_meter_label(const snmp_meter_t *m);

/* One line: PDUs, hosts, models, outlets, shares, which path. */
void snmp_meter_describe(const snmp_meter_t *m, char *buf, size_t len);

/* GET requests sent (one per PDU per read), for tests and the bench. */
unsigned long snmp_meter_requests(const snmp_meter_t *m);

/*
 * The meter without its own GETs, for the PDU poller (snmp_poller.h),
 * which GETs each PDU once for every node on it: the meter's PDUs, the
 * OIDs the meter would GET from PDU pdu (in the order of its values), its
 * answers put from the poller's GET, and the node's reading of the values
 * put, at t_ns (the GETs' instant), exactly as the meter's read computes
 * it after its own GETs (shares, negative power, the counters unwrapped
 * and summed, a reset seen).  0 or the read's -errno with msg.
 */
size_t snmp_meter_n_pdus(const snmp_meter_t *m);
const snmp_pdu_t *snmp_meter_pdu(const snmp_meter_t *m, size_t pdu,
				 const snmp_oid_t **oids, size_t *n_oids);
void snmp_meter_put_values(snmp_meter_t *m, size_t pdu,
			   const snmp_value_t *vals);
int snmp_meter_reading(snmp_meter_t *m, uint64_t t_ns, meter_reading_t *out,
		       char *msg, size_t msg_len);

#endif
