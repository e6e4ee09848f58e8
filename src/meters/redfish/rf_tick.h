/*
 * rf_tick.h - watching a Redfish service for its sensing tick, so that a
 * reading is stamped when the service took it, not when it was asked.
 *
 * A BMC or a PDU refreshes its readings once a SensingInterval and answers
 * from that cache: a reading is up to one interval old when read, and
 * EnvironmentMetrics and Outlets say nothing of when it was taken (no
 * ReadingTime; a BMC's clock is not the node's anyway).  So a read watches
 * for the documents to change: the tick lies between the last round of
 * GETs that saw the old values and the first that saw the new ones, and
 * the reading is stamped there.  Rounds are a fiftieth of the interval
 * apart (at least RF_TICK_PACE_NS), so a tick is known to a few ms and a
 * read costs some 25-40 rounds whatever the interval; the interval is
 * learned from two changes in a row on the first reads.  No prediction of
 * the next tick: a service's clock drifts from ours, a tick seen does
 * not.  Watching stops after an interval and a quarter, at RF_TICK_MAX_NS,
 * or at the read's deadline, and is not tried when a round takes over half
 * the interval (a 3 s BMC) or the readings stand still (a flat power with
 * a kWh counter: 10 reads in a row with no change seen, then tried again
 * one read in 20; a loaded host misses a few): the reading is then
 * stamped at its round's midpoint, up to one interval late.
 *
 * Two users: a node's meter (rf_meter.c: its own documents) and the PDU
 * poller (rf_poller.c: all the outlets one PDU feeds, for every node).
 * What a round is, and whether two differ, is theirs: the watch only asks
 * for rounds into one of three slots and compares two slots.
 */
#ifndef SE_RF_TICK_H
#define SE_RF_TICK_H

#include <stdbool.h>
#include <stdint.h>

#include "se_time.h"

#define RF_TICK_MAX_NS		(1500 * SE_NS_PER_MS)
#define RF_TICK_MAX_ROUNDS	1000
#define RF_TICK_PACE_NS		(2 * SE_NS_PER_MS)	/* rounds apart, at least */
#define RF_TICK_LEARN_PACE_NS	(10 * SE_NS_PER_MS)	/* 150 rounds at most */
#define RF_TICK_GUARD_NS	(10 * SE_NS_PER_MS)	/* headroom to the limit */
#define RF_TICK_SLOTS		3

/* What the watch has learned of one service (zeroed: nothing yet). */
typedef struct {
	uint64_t sense_ns;	/* the interval; 0: not learned */
	unsigned misses;	/* reads in a row with no tick seen */
	unsigned learn_fails;	/* reads that saw one tick, not two */
	unsigned learn_reads;	/* reads while the interval is unknown */
	bool off;		/* never watch (EnergyBMCRedfishTickWatch=no) */
} rf_tick_t;

typedef struct {
	/* One round of GETs into slot (0..RF_TICK_SLOTS-1, replacing what
	 * it held): 0 with its first GET's start and its last's end, or
	 * -errno (the watch then ends on the last good round). */
	int (*round)(void *ctx, int slot, uint64_t deadline_ns,
		     uint64_t *start_ns, uint64_t *end_ns);
	/* Do the readings of slots a and b differ? */
	bool (*changed)(void *ctx, int a, int b);
} rf_tick_ops_t;

/*
 * Watch from the round in slot cur (made by the caller, from start_ns to
 * end_ns) until the readings change.  Returns the slot that holds the
 * reading to use: the first round with the new values (and *tick_ns the
 * instant between it and the round before), or with no change seen in the
 * budget the last good round (*tick_ns 0: stamp it at its midpoint,
 * *start_ns and *end_ns then that round's).  extra_round: after a change,
 * one round more (several services read one after the other: the change
 * may be the last one's alone).
 */
int rf_tick_watch(rf_tick_t *t, const rf_tick_ops_t *ops, void *ctx,
		  int cur, uint64_t *start_ns, uint64_t *end_ns,
		  uint64_t deadline_ns, bool extra_round, uint64_t *tick_ns);

#endif
