/*
 * rf_tick.c - the sensing tick watch (rf_tick.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include "rf_tick.h"

/* A slot neither a nor b. */
static int _free_slot(int a, int b)
{
	int s = 0;

	while (s == a || s == b)
		s++;
	return s;
}

/* Whether to watch at all, and until when (*limit). */
static bool _worth_watching(rf_tick_t *t, uint64_t start, uint64_t end,
			    uint64_t deadline_ns, uint64_t *limit)
{
	uint64_t get_ns = end - start;

	*limit = end + RF_TICK_MAX_NS;
	if (deadline_ns < *limit)
		*limit = deadline_ns;
	/* too slow to bracket a tick to a small part of an interval (a
	 * bracket of half an interval is still better than a midpoint) */
	if (t->sense_ns && get_ns > t->sense_ns / 2)
		return false;
	/* readings that stand still, or change too seldom for the interval
	 * to be learned (a flat power, a kWh counter alone): tried again on
	 * one read in 20, not watched for RF_TICK_MAX_NS on every read */
	if (t->misses >= 10 && t->misses % 20) {
		t->misses++;
		return false;
	}
	if (!t->sense_ns && ++t->learn_reads > 3 && t->learn_reads % 20)
		return false;
	/* an interval and a bit: a reading that does not change (flat
	 * power, a kWh counter between steps) is not watched for longer */
	if (t->sense_ns && end + t->sense_ns + t->sense_ns / 4 + 2 * get_ns <
			   *limit)
		*limit = end + t->sense_ns + t->sense_ns / 4 + 2 * get_ns;
	return true;
}

int rf_tick_watch(rf_tick_t *t, const rf_tick_ops_t *ops, void *ctx,
		  int cur, uint64_t *start_ns, uint64_t *end_ns,
		  uint64_t deadline_ns, bool extra_round, uint64_t *tick_ns)
{
	uint64_t start[RF_TICK_SLOTS], end[RF_TICK_SLOTS];
	uint64_t get_ns = *end_ns - *start_ns, limit, tick;
	/* a tick to a fiftieth of the interval, a few ms: some 25-40 rounds
	 * a read on average, whatever the interval */
	uint64_t pace = !t->sense_ns ? RF_TICK_LEARN_PACE_NS :
			t->sense_ns / 50 > RF_TICK_PACE_NS ?
			t->sense_ns / 50 : RF_TICK_PACE_NS;
	unsigned rounds = 0;
	int prev = cur, next, got = -1;

	*tick_ns = 0;
	if (t->off || !_worth_watching(t, *start_ns, *end_ns, deadline_ns,
				       &limit))
		return cur;
	start[cur] = *start_ns;
	end[cur] = *end_ns;
	for (;;) {
		/* a few ms apart: as fine as a tick needs, light on the
		 * service; the wait counts against the limit as rounds do */
		uint64_t now = se_mono_ns();
		uint64_t at = start[prev] + pace > now ? start[prev] + pace :
							 now;

		if (rounds++ >= RF_TICK_MAX_ROUNDS ||
		    at + 2 * get_ns + RF_TICK_GUARD_NS >= limit)
			break;
		if (at > now)
			se_sleep_ns(at - now);
		next = _free_slot(prev, got);
		if (ops->round(ctx, next, deadline_ns, &start[next],
			       &end[next]))
			break;
		if (end[next] - start[next] > get_ns)
			get_ns = end[next] - start[next];
		if (!ops->changed(ctx, prev, next)) {
			prev = next;
			continue;
		}
		/* the service looked at its cache when each request came */
		tick = start[prev] + (start[next] - start[prev]) / 2;
		/* a second change in this watch: the interval, two ticks in
		 * a row (it bounds how long and how finely a read watches;
		 * the stamp comes from the tick seen) */
		if (*tick_ns && !t->sense_ns)
			t->sense_ns = tick - *tick_ns;
		*tick_ns = tick;
		got = next;
		/* several services read one after the other: a round more
		 * reads every one after the tick (services that tick
		 * together; independent ones: acct_gather_energy_bmc(5)) */
		if (extra_round) {
			int x = _free_slot(prev, got);

			if (!ops->round(ctx, x, deadline_ns, &start[x],
					&end[x]))
				got = x;
		}
		if (t->sense_ns || t->learn_fails >= 3)
			break;
		/* the interval: watch for a second change, from the last
		 * good round (not a failed extra one's) */
		prev = got;
		got = -1;
	}
	if (*tick_ns) {
		int res = got >= 0 ? got : prev;

		t->misses = 0;
		t->learn_fails += !t->sense_ns;
		*start_ns = start[res];
		*end_ns = end[res];
		return res;
	}
	t->misses++;
	*start_ns = start[prev];
	*end_ns = end[prev];
	return prev;
}
