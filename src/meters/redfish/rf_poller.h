/*
 * rf_poller.h - the Redfish core of slurm-energy-pdu-poller(8) (issue
 * #41): each Redfish service of the map (a rack PDU, or a BMC) read once a
 * round for every node it feeds, and every node's reading made from those
 * documents as the node's own meter would make it.  Slurm-free.
 *
 * A node's reading is its rf_meter_t's (rf_meter.h), built from the map
 * exactly as the node's slurmd builds it, but fed the poller's documents
 * (rf_meter_conf_t.docs) instead of its own GETs: discovery, the counter's
 * units and restarts, summed outlets, all as without the poller.  A
 * service's round GETs each document its nodes read once; the outlets of
 * one collection (a PDU's Outlets) in one GET of the collection expanded
 * ($expand=.($levels=1)) when there are two or more and the service
 * expands it, else one by one.  The round is watched for the service's
 * sensing tick (rf_tick.h) and its readings stamped there; the services
 * are read one after the other, and a round that has taken half the
 * period stops watching (its remaining services stamped at their GETs'
 * middle, said once in the log).  A service that fails fails the reading
 * of every node it feeds, with the reason a node's own read would give
 * ("node n1: https://pdu1: GET ...: ...").
 *
 * Threads: rf_poller_round() in one thread (the poller's polling thread),
 * rf_poller_answer() from any other: each node's latest reading is kept
 * under a lock.
 */
#ifndef SE_RF_POLLER_H
#define SE_RF_POLLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pdu_poll_wire.h"
#include "rf_meter.h"

typedef struct rf_poller rf_poller_t;

/* One node: its meter's settings as its slurmd resolves them (base and
 * source from its map line, the shared credentials); docs is ignored. */
typedef struct {
	const char *name;
	rf_meter_conf_t meter;
} rf_poller_node_t;

typedef struct {
	const rf_poller_node_t *nodes;
	size_t n_nodes;
	uint64_t period_ns;	/* the rounds' period (the watch's budget) */
	bool tick_watch;	/* EnergyBMCRedfishTickWatch */
	const char *map_path;	/* for messages */
} rf_poller_config_t;

/* A poller over cfg (no I/O; cfg may be freed after).  0, -EINVAL with
 * err (a node named twice, a URL that is not one), or -ENOMEM. */
int rf_poller_create(const rf_poller_config_t *cfg, rf_poller_t **out,
		     char *err, size_t err_len);
void rf_poller_destroy(rf_poller_t *p);

/* One round: discovery for the nodes that have no source yet, every
 * service's GETs (watched for its tick), then every node's reading.  The
 * number of services whose round failed (their reason in the nodes'
 * readings and, at most once a minute per service, in the log). */
unsigned rf_poller_round(rf_poller_t *p);

/* A node asked again for the reading it has (its sampler kicked it at a
 * step's boundary): rf_poller_round_wanted() has work.  Any thread. */
bool rf_poller_wanted(rf_poller_t *p);

/* An early round for the nodes that asked again: their services read now
 * (no sooner than 0.5 s after their last round began: kicks coalesce),
 * watched for their ticks, and those nodes' readings made, so that a
 * step's boundary has a reading just after it, as when slurmd reads its
 * meter itself.  Same thread as rf_poller_round(); the number of services
 * that failed. */
unsigned rf_poller_round_wanted(rf_poller_t *p);

/* Node's latest reading as the poller answers it at now_ns (age_ns from
 * its stamp): 0; -ENOENT when the map has no such node. */
int rf_poller_answer(rf_poller_t *p, const char *node, uint64_t now_ns,
		     pdu_poll_reading_t *out);

typedef struct {
	size_t services, nodes, gets_a_round;	/* documents GET a round */
	unsigned long rounds;
	unsigned long requests;		/* HTTP requests (logins included) */
	unsigned long failed;		/* service rounds that failed */
	unsigned long unwatched;	/* service rounds not watched (budget) */
	unsigned long early;		/* early rounds (nodes asking again) */
} rf_poller_stats_t;

void rf_poller_stats(const rf_poller_t *p, rf_poller_stats_t *s);

#endif
