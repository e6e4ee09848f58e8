/*
 * gpu_cursor.c - a GPU's energy over the node meter's intervals.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <string.h>

#include "energy_acc.h"
#include "gpu_cursor.h"

/* Private functions */

static uint64_t _min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Can the GPU be read up to t1 at all? */
static gpu_why_t _health(const sampler_status_t *st, uint64_t t1_ns,
			 uint64_t stale_ns)
{
	if (st->state == SAMPLER_STARTING || !st->last_sample_ns)
		return GPU_OUT_STARTING;
	/* One failed read loses nothing: the next reading spans it, as the
	 * sampler itself holds (it says nothing before a second). */
	if (st->state == SAMPLER_FAILING && st->consecutive_failures >= 2)
		return st->last_error == -ENODEV ? GPU_OUT_LOST :
						   GPU_OUT_FAILING;
	if (st->last_sample_ns + stale_ns < t1_ns)
		return GPU_OUT_STALE;
	return GPU_IN;
}

/* Samples whose interval the sampler filled in rather than measured. */
static gpu_why_t _flags_why(uint32_t flags)
{
	if (flags & ENERGY_SAMPLE_RESET)
		return GPU_OUT_RESET;
	if (flags & ENERGY_SAMPLE_GAP)
		return GPU_OUT_GAP;
	return GPU_IN;
}

/* Go on from the GPU's energy at tb_ns (after an out interval, or the
 * first ever): nothing before tb_ns is charged. */
static gpu_why_t _rebase(gpu_cursor_t *c, const gpu_source_ops_t *ops,
			 void *src, const sampler_status_t *st, uint64_t tb_ns)
{
	uint64_t e;

	if (tb_ns < st->first_sample_ns)
		return GPU_OUT_STARTING;
	if (ops->energy_at(src, tb_ns, &e))
		return GPU_OUT_GAP;	/* older than the history kept */
	c->based = true;
	c->c_mj = e;
	c->tc_ns = tb_ns;
	return GPU_IN;
}

static void _out(gpu_cursor_t *c, gpu_why_t why, gpu_interval_t *out)
{
	c->based = false;
	out->why = why;
	if (why != GPU_OUT_STARTING)
		c->out_run++;
	out->out_run = c->out_run;
}

/* Public functions */

const char *gpu_why_str(gpu_why_t why)
{
	switch (why) {
	case GPU_IN:
		return "in";
	case GPU_OUT_STARTING:
		return "no sample yet";
	case GPU_OUT_FAILING:
		return "read failing";
	case GPU_OUT_LOST:
		return "GPU lost";
	case GPU_OUT_STALE:
		return "no fresh sample (read hung?)";
	case GPU_OUT_RESET:
		return "counter reset";
	case GPU_OUT_GAP:
		return "gap in its samples";
	}
	return "?";
}

void gpu_cursor_interval(gpu_cursor_t *c, const gpu_source_ops_t *ops,
			 void *src, uint64_t t0_ns, uint64_t t1_ns,
			 uint64_t stale_ns, gpu_interval_t *out)
{
	sampler_status_t st;
	gpu_why_t why;
	uint64_t te, e = 0;

	memset(out, 0, sizeof(*out));
	ops->status(src, &st);
	why = _health(&st, t1_ns, stale_ns);
	/* never past the newest sample: no extrapolation */
	te = _min(t1_ns, st.last_sample_ns);
	/* a GPU whose newest sample is before t0 starts from it (nothing
	 * of the interval is known yet: its energy counts next time) */
	if (why == GPU_IN && !c->based)
		why = _rebase(c, ops, src, &st, _min(t0_ns, te));
	if (why == GPU_IN && te > c->tc_ns)
		why = _flags_why(ops->flags_between(src, c->tc_ns, te));
	if (why == GPU_IN && te > c->tc_ns && ops->energy_at(src, te, &e))
		why = GPU_OUT_GAP;
	if (why != GPU_IN) {
		_out(c, why, out);
		return;
	}
	if (te > c->tc_ns) {
		out->energy_mj = e > c->c_mj ? e - c->c_mj : 0;
		c->c_mj = e;
		c->tc_ns = te;
	}
	out->out_run = c->out_run;
	c->out_run = 0;
}
