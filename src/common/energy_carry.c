/*
 * energy_carry.c - a node's energy total across a reload or a restart of
 * slurmd (energy_carry.h): pure arithmetic, no state.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "energy_carry.h"
#include "se_time.h"

/* The window of the power that bridges a reload: at least this, or two
 * periods of the meter. */
#define CARRY_POWER_WINDOW_NS	(2 * SE_NS_PER_SEC)

/* energy_mj + power_mw over dt_ns */
static uint64_t _extend_mj(uint64_t energy_mj, uint64_t power_mw,
			   uint64_t dt_ns)
{
	return energy_mj + (uint64_t) ((double) power_mw * (double) dt_ns /
				       1e9);
}

energy_carry_join_t energy_carry_join(const energy_carry_t *carry,
				      uint64_t first_ns, uint64_t start_ns)
{
	energy_carry_join_t j = { 0 };

	if (!carry || !carry->valid) {
		if (first_ns < start_ns) {
			j.skip = true;
			j.skip_ns = start_ns;
		}
		return j;
	}
	if (first_ns >= carry->t_ns) {
		j.base_mj = _extend_mj(carry->energy_mj, carry->power_mw,
				       first_ns - carry->t_ns);
	} else {
		j.base_mj = carry->energy_mj;
		j.skip = true;
		j.skip_ns = carry->t_ns;
	}
	return j;
}

uint64_t energy_carry_total_mj(uint64_t base_mj, uint64_t skip_mj,
			       uint64_t count_mj)
{
	return base_mj + (count_mj > skip_mj ? count_mj - skip_mj : 0);
}

uint64_t energy_carry_pending_mj(const energy_carry_t *carry,
				 uint64_t now_ns, uint64_t hold_ns)
{
	uint64_t dt_ns = now_ns > carry->t_ns ? now_ns - carry->t_ns : 0;

	if (dt_ns > hold_ns)
		dt_ns = hold_ns;
	return _extend_mj(carry->energy_mj, carry->power_mw, dt_ns);
}

uint64_t energy_carry_window_ns(uint64_t last_ns, uint64_t first_ns,
				uint64_t period_ns)
{
	uint64_t w = 2 * period_ns, t0;

	if (w < CARRY_POWER_WINDOW_NS)
		w = CARRY_POWER_WINDOW_NS;
	t0 = last_ns > w ? last_ns - w : 0;
	return t0 < first_ns ? first_ns : t0;
}

uint64_t energy_carry_power_mw(uint64_t t0_ns, uint64_t e0_mj,
			       uint64_t t1_ns, uint64_t e1_mj,
			       uint64_t fallback_mw)
{
	if (t1_ns <= t0_ns || e1_mj <= e0_mj)
		return fallback_mw;
	return (uint64_t) ((double) (e1_mj - e0_mj) * 1e9 /
			   (double) (t1_ns - t0_ns));
}

uint64_t energy_carry_step_j(const energy_carry_step_t *v,
			     const energy_carry_answer_t *a,
			     energy_carry_how_t *how)
{
	uint64_t fill_j;
	/*
	 * 24.11+ says when slurmd started (0 before its first registration,
	 * and always 0 on 22.05): another start time than the last answer's
	 * is a restart even when the new total happens not to be lower.
	 * 24.11's "scontrol reconfigure" re-executes slurmd, so it is one.
	 */
	bool restarted = v->have_base &&
			 (a->restarted || (a->started_s && v->started_s &&
					   a->started_s != v->started_s));

	if (!v->have_base) {
		*how = ENERGY_CARRY_FIRST;
		return (uint64_t) a->watts * (a->t_ns - v->start_ns) /
		       SE_NS_PER_SEC;
	}
	if (a->node_j >= v->last_node_j && !restarted) {
		*how = ENERGY_CARRY_ADVANCE;
		return a->node_j - v->last_node_j;
	}
	/*
	 * slurmd counts from zero again.  What it counted since (node_j) is a
	 * lower bound of the interval; the other estimate is the interval
	 * filled linearly between the power of the last answer before and of
	 * this one (the error of a linear fill, as for a meter's gap; the last
	 * power held over the interval errs by the whole change of power);
	 * take the larger, never lose what was counted.
	 */
	*how = restarted ? ENERGY_CARRY_RESTARTED : ENERGY_CARRY_BACKWARDS;
	fill_j = ((uint64_t) v->last_watts + a->watts) *
		 (a->t_ns - v->last_ns) / (2 * SE_NS_PER_SEC);
	return fill_j < a->node_j ? a->node_j : fill_j;
}

energy_carry_share_t energy_carry_share(const energy_carry_share_t *s,
					uint64_t generation, uint64_t share_mj,
					bool *restarted)
{
	energy_carry_share_t n = *s;
	uint64_t mj;

	*restarted = s->have && generation != s->generation &&
		     share_mj < s->last_mj;
	if (*restarted)
		n.base_mj += s->last_mj;
	n.generation = generation;
	n.last_mj = share_mj;
	mj = n.base_mj + share_mj;
	if (mj > n.share_mj)
		n.share_mj = mj;
	n.have = true;
	return n;
}
