/*
 * snmp_poller.h - the core of slurm-energy-pdu-poller(8) (issue #44): each
 * PDU of the SNMP map polled once a round with one GET for every outlet the
 * map lists on it, and every node's reading made from those answers, as the
 * node's own meter would make it.  Slurm-free, unit-tested on a fake agent.
 *
 * A node's reading is its snmp_meter_t's (snmp_meter.h), built from the
 * map exactly as the node's slurmd builds it (snmp_conf_resolve), but fed
 * by the poller's GETs (snmp_meter_put_values) instead of its own: shares,
 * negative power, the outlets' counters unwrapped and summed, a reset, all
 * as without the poller.  A PDU's GET holds the union of the OIDs of every
 * node on it, each OID once; it is split only when the agent answers
 * tooBig (the chunk halved and remembered for that PDU).  The PDUs are
 * polled one after the other, each bounded by EnergySNMPTimeout: a PDU
 * down costs its timeout in the round, and fails the reading of every
 * node it feeds, with the message a node's own read would give ("node n1:
 * PDU pdua (10.0.0.5): GET: no answer by the deadline").
 *
 * Threads: snmp_poller_round() in one thread (the poller's polling
 * thread), snmp_poller_answer() from any other: each node's latest reading
 * is kept under a lock.
 */
#ifndef SE_SNMP_POLLER_H
#define SE_SNMP_POLLER_H

#include <stddef.h>
#include <stdint.h>

#include "snmp_conf.h"
#include "pdu_poll_wire.h"
#include "snmp_transport.h"

/* The most OIDs in one GET before any tooBig: our own bound (a rack's 40
 * nodes on two outlets each is 80), so that a large map starts from GETs
 * of a moderate size.  An agent whose message size cannot hold the answer
 * says tooBig (RFC 3416, 4.2.1) and the poller halves the GET. */
#define SNMP_POLLER_MAX_OIDS	128

typedef struct snmp_poller snmp_poller_t;

typedef struct {
	const snmp_conf_t *conf;		/* map and secrets read */
	const char *const *nodes;		/* every node of the map */
	size_t n_nodes;
	const snmp_hostlist_ops_t *hl;
	const snmp_transport_t *transport;	/* NULL: net-snmp */
	size_t max_oids;			/* 0: SNMP_POLLER_MAX_OIDS */
} snmp_poller_config_t;

/* A poller over cfg (no I/O; the conf may be freed after).  0, -EINVAL
 * with err (a node the map gives no outlet, an OID that does not parse),
 * or -ENOMEM. */
int snmp_poller_create(const snmp_poller_config_t *cfg, snmp_poller_t **out,
		       char *err, size_t err_len);
void snmp_poller_destroy(snmp_poller_t *p);

/* One round: every PDU's GET(s), then every node's reading.  The number
 * of PDUs whose GET failed (their reason in the nodes' readings and, at
 * most once a minute per PDU, in the log). */
unsigned snmp_poller_round(snmp_poller_t *p);

/* Node's latest reading as the poller answers it at now_ns (age_ns from
 * the GETs' instant): 0; -ENOENT when the map has no such node (out's
 * status and error say so too, for the answer). */
int snmp_poller_answer(snmp_poller_t *p, const char *node, uint64_t now_ns,
		       pdu_poll_reading_t *out);

/* A node asked again for the reading it has (its sampler kicked at a
 * step's boundary): wanted says so, and round_wanted GETs the PDUs of
 * such nodes between rounds, no sooner than 0.5 s after their last GET,
 * and makes their readings (the number of PDU polls that failed).  The
 * same as rf_poller's early rounds: without them a step's boundary waits
 * up to a period for the next round. */
bool snmp_poller_wanted(snmp_poller_t *p);
unsigned snmp_poller_round_wanted(snmp_poller_t *p);

typedef struct {
	size_t pdus, nodes, oids;	/* oids: in all the PDUs' GETs */
	unsigned long rounds;
	unsigned long gets;		/* GET requests sent */
	unsigned long failed;		/* PDU polls that failed */
	unsigned long early;		/* rounds for nodes asking again */
} snmp_poller_stats_t;

void snmp_poller_stats(const snmp_poller_t *p, snmp_poller_stats_t *s);

#endif /* SE_SNMP_POLLER_H */
