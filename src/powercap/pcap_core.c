/*
 * pcap_core.c - one round of the cluster power cap: charges, wants, the
 * water level, spare headroom, hysteresis, order (pcap_core.h says why
 * each step is there and what it guarantees).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "pcap_core.h"

/* Bisection steps for the water level: 2^-48 of a node's range is far
 * below a milliwatt for any node under 2^32 mW. */
#define LEVEL_STEPS 48

/* ---------------------------------------------------- private functions */

static const char *_name(const pcap_node_t *nd)
{
	return nd->name ? nd->name : "(unnamed)";
}

static bool _enforced_measured(const pcap_node_t *nd)
{
	return (nd->flags & PCAP_ENFORCED) && (nd->flags & PCAP_MEASURED);
}

/* A node this round caps: enforced, measured and not released. */
static bool _controlled(const pcap_node_t *nd)
{
	return _enforced_measured(nd) && !(nd->out & PCAP_RELEASED);
}

static uint32_t _clamp(uint32_t v, uint32_t lo, uint32_t hi)
{
	if (v < lo)
		return lo;
	return v > hi ? hi : v;
}

/* What a node not under control takes until the next round: its maximum
 * (or more, if it draws more) when its knobs may not hold a cap; its cap
 * in force when they do but no reading came. */
static uint64_t _charge_mw(const pcap_node_t *nd)
{
	if (!(nd->flags & PCAP_ENFORCED)) {
		if ((nd->flags & PCAP_MEASURED) && nd->power_mw > nd->max_mw)
			return nd->power_mw;
		return nd->max_mw;
	}
	return _clamp(nd->cap_mw, nd->floor_mw, nd->max_mw);
}

/* Step 1 for such a node: its cap kept, its charge. */
static uint64_t _charge(pcap_node_t *nd)
{
	nd->new_cap_mw = _clamp(nd->cap_mw, nd->floor_mw, nd->max_mw);
	nd->out = (nd->flags & PCAP_ENFORCED) ? PCAP_HELD : PCAP_UNENFORCED;
	return _charge_mw(nd);
}

/* A donor's want: its draw + headroom, within its floor and max. */
static uint32_t _draw_and_headroom(const pcap_params_t *p,
				   const pcap_node_t *nd)
{
	uint64_t w = (uint64_t)nd->power_mw + p->headroom_mw;

	return _clamp(w > UINT32_MAX ? UINT32_MAX : (uint32_t)w,
		      nd->floor_mw, nd->max_mw);
}

/* Step 0: release the idle nodes (uncapped, charged draw + headroom) when
 * that leaves room for the other nodes' floors and charges; returns what
 * they are charged (0: none released). */
static uint64_t _release_idle(const pcap_params_t *p, pcap_node_t *nodes,
			      size_t n)
{
	uint64_t released = 0, others = 0;

	for (size_t i = 0; i < n; i++)
		nodes[i].out = 0;
	if (p->keep_idle_capped)
		return 0;
	for (size_t i = 0; i < n; i++) {
		pcap_node_t *nd = &nodes[i];

		if (!_enforced_measured(nd))
			others += _charge_mw(nd);
		else if (nd->flags & PCAP_IDLE)
			released += _draw_and_headroom(p, nd);
		else
			others += nd->floor_mw;
	}
	if (!released || released + others > p->cap_mw)
		return 0;
	for (size_t i = 0; i < n; i++) {
		pcap_node_t *nd = &nodes[i];

		if (_enforced_measured(nd) && (nd->flags & PCAP_IDLE)) {
			nd->out = PCAP_RELEASED;
			nd->new_cap_mw = nd->max_mw;
		}
	}
	return released;
}

/* Step 2: a greedy node wants its maximum, a donor its draw + headroom;
 * its draw judged against the cap in force while it was measured. */
static uint32_t _want(const pcap_params_t *p, pcap_node_t *nd)
{
	uint32_t judged = nd->window_cap_mw ? nd->window_cap_mw : nd->cap_mw;

	if ((uint64_t)nd->power_mw + p->at_cap_mw >= judged) {
		nd->out = PCAP_GREEDY;
		return nd->max_mw;
	}
	nd->out = PCAP_DONOR;
	return _draw_and_headroom(p, nd);
}

/* A node's cap at water level L: never below its floor, since want is not
 * (_want clamps it) and neither is floor + L * range. */
static uint32_t _at_level(const pcap_node_t *nd, uint32_t want, double level)
{
	double top = nd->floor_mw + level * (double)(nd->max_mw - nd->floor_mw);

	return top >= want ? want : (uint32_t)top;
}

static uint64_t _sum_at_level(const pcap_node_t *nodes, const uint32_t *want,
			      size_t n, double level)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (_controlled(&nodes[i]))
			sum += _at_level(&nodes[i], want[i], level);
	return sum;
}

static uint64_t _sum_new_caps(const pcap_node_t *nodes, size_t n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < n; i++)
		if (_controlled(&nodes[i]))
			sum += nodes[i].new_cap_mw;
	return sum;
}

/* Step 3, budget short of the wants: the largest level whose caps fit. */
static double _water_level(const pcap_node_t *nodes, const uint32_t *want,
			   size_t n, uint64_t budget)
{
	double lo = 0.0, hi = 1.0;

	for (int k = 0; k < LEVEL_STEPS; k++) {
		double mid = (lo + hi) / 2;

		if (_sum_at_level(nodes, want, n, mid) <= budget)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Step 3, every want met: spread the spare over the room below max. */
static void _spread_spare(pcap_node_t *nodes, size_t n, uint64_t spare)
{
	uint64_t room = 0;

	for (size_t i = 0; i < n; i++)
		if (_controlled(&nodes[i]))
			room += nodes[i].max_mw - nodes[i].new_cap_mw;
	if (!room)
		return;
	if (spare > room)
		spare = room;
	for (size_t i = 0; i < n; i++) {
		pcap_node_t *nd = &nodes[i];

		if (!_controlled(nd))
			continue;
		/* floor of the share: the sum stays <= spare */
		nd->new_cap_mw += (uint32_t)((double)spare *
					     (nd->max_mw - nd->new_cap_mw) /
					     (double)room);
	}
}

/* Step 4: keep caps that would move less than the hysteresis; then, while
 * the sum is over the budget, let kept caps above their target (in
 * target[]) go down to it.  Every kept cap that goes down takes the sum
 * back towards the targets' sum, which fits: the loop ends under budget. */
static uint64_t _hysteresis(const pcap_params_t *p, pcap_node_t *nodes,
			    const uint32_t *target, size_t n, uint64_t budget,
			    uint64_t sum)
{
	for (size_t i = 0; i < n; i++) {
		pcap_node_t *nd = &nodes[i];
		uint32_t t = nd->new_cap_mw, c = nd->cap_mw;
		uint32_t d = t > c ? t - c : c - t;

		if (!_controlled(nd) || !d || d >= p->hysteresis_mw ||
		    c < nd->floor_mw || c > nd->max_mw)
			continue;
		nd->new_cap_mw = c;
		sum = sum - t + c;
	}
	for (size_t i = 0; i < n && sum > budget; i++) {
		pcap_node_t *nd = &nodes[i];

		if (!_controlled(nd) || nd->new_cap_mw <= target[i])
			continue;
		sum -= nd->new_cap_mw - target[i];
		nd->new_cap_mw = target[i];
	}
	return sum;
}

/* ----------------------------------------------------- public functions */

int pcap_params_check(const pcap_params_t *p, const pcap_node_t *nodes,
		      size_t n, char *err, size_t err_len)
{
	uint64_t floors = 0;

	if (p->headroom_mw <= p->at_cap_mw) {
		snprintf(err, err_len,
			 "PowerCapHeadroomWatts=%.3f must exceed "
			 "PowerCapAtCapWatts=%.3f (else a donor given its draw "
			 "plus headroom would count as at its cap and flap)",
			 p->headroom_mw / 1e3, p->at_cap_mw / 1e3);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		if (nodes[i].floor_mw > nodes[i].max_mw) {
			snprintf(err, err_len,
				 "node %s: PowerCapFloorWatts=%.3f is above "
				 "PowerCapMaxWatts=%.3f", _name(&nodes[i]),
				 nodes[i].floor_mw / 1e3,
				 nodes[i].max_mw / 1e3);
			return -EINVAL;
		}
		floors += nodes[i].floor_mw;
	}
	if (floors > p->cap_mw) {
		snprintf(err, err_len,
			 "PowerCapWatts=%.3f is below the sum of the nodes' "
			 "PowerCapFloorWatts (%.3f W over %zu nodes): the cap "
			 "cannot be held", p->cap_mw / 1e3, floors / 1e3, n);
		return -EINVAL;
	}
	return 0;
}

int pcap_round(const pcap_params_t *p, pcap_node_t *nodes, size_t n,
	       pcap_stats_t *st)
{
	pcap_stats_t s = { 0 };
	uint64_t charged = 0, floors = 0, wants = 0, sum;
	uint32_t *want;
	char err[256];

	if (pcap_params_check(p, nodes, n, err, sizeof(err)))
		return -EINVAL;
	want = calloc(n ? n : 1, sizeof(*want));
	if (!want)
		return -ENOMEM;

	charged = _release_idle(p, nodes, n);
	for (size_t i = 0; i < n; i++) {
		pcap_node_t *nd = &nodes[i];

		if (nd->flags & PCAP_MEASURED)
			s.sum_power_mw += nd->power_mw;
		if (nd->out & PCAP_RELEASED)
			continue;
		if (!_controlled(nd)) {
			charged += _charge(nd);
			continue;
		}
		want[i] = _want(p, nd);
		floors += nd->floor_mw;
		wants += want[i];
	}
	s.budget_mw = charged < p->cap_mw ? p->cap_mw - charged : 0;

	if (floors > s.budget_mw || charged > p->cap_mw) {
		s.infeasible = true;
		s.level = 0;
	} else if (wants <= s.budget_mw) {
		s.level = 1;
	} else {
		s.level = _water_level(nodes, want, n, s.budget_mw);
	}
	for (size_t i = 0; i < n; i++)
		if (_controlled(&nodes[i]))
			nodes[i].new_cap_mw = _at_level(&nodes[i], want[i],
							s.level);
	sum = _sum_new_caps(nodes, n);
	if (!s.infeasible && s.level == 1 && sum < s.budget_mw) {
		_spread_spare(nodes, n, s.budget_mw - sum);
		sum = _sum_new_caps(nodes, n);
	}
	for (size_t i = 0; i < n; i++)
		want[i] = nodes[i].new_cap_mw;	/* from here on: the target */
	if (!s.infeasible)
		sum = _hysteresis(p, nodes, want, n, s.budget_mw, sum);
	free(want);

	for (size_t i = 0; i < n; i++) {
		pcap_node_t *nd = &nodes[i];

		if (nd->new_cap_mw != nd->cap_mw)
			nd->out |= PCAP_CHANGED;
		if (nd->new_cap_mw < nd->cap_mw)
			nd->out |= PCAP_LOWER;
		s.n_greedy += !!(nd->out & PCAP_GREEDY);
		s.n_donor += !!(nd->out & PCAP_DONOR);
		s.n_held += !!(nd->out & PCAP_HELD);
		s.n_unenforced += !!(nd->out & PCAP_UNENFORCED);
		s.n_changed += !!(nd->out & PCAP_CHANGED);
		s.n_lower += !!(nd->out & PCAP_LOWER);
		s.n_released += !!(nd->out & PCAP_RELEASED);
	}
	s.sum_caps_mw = sum + charged;
	if (st)
		*st = s;
	return 0;
}
