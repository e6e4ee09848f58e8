/*
 * counter.c - classify a hardware energy counter's step: forward, wrap, reset.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "counter.h"

static uint64_t _mask(unsigned width_bits)
{
	if (width_bits >= 64)
		return UINT64_MAX;
	return (1ULL << width_bits) - 1;
}

/*
 * Is a delta plausible?  With a bound from the elapsed time, it must not
 * exceed it.  Without one, a wrap is believed only when it passes less than
 * half the counter's range: a meter that restarts from 0 shows up as a
 * "wrap" of nearly the full range, which must not become energy.
 */
static int _plausible(uint64_t delta, uint64_t max_delta, uint64_t mask,
		      int wrapped)
{
	if (max_delta)
		return delta <= max_delta;
	if (wrapped)
		return delta <= mask / 2;
	return 1;
}

counter_event_t counter_step(uint64_t prev, uint64_t cur, unsigned width_bits,
			     uint64_t max_delta, uint64_t *delta)
{
	uint64_t mask = _mask(width_bits);
	uint64_t d;

	*delta = 0;
	prev &= mask;
	cur &= mask;

	if (cur >= prev) {
		d = cur - prev;
		if (!_plausible(d, max_delta, mask, 0))
			return COUNTER_RESET;
		*delta = d;
		return COUNTER_FORWARD;
	}

	/* A 64-bit energy counter does not wrap in the life of a machine. */
	if (width_bits >= 64 || width_bits == 0)
		return COUNTER_RESET;

	d = (cur - prev) & mask;
	if (!_plausible(d, max_delta, mask, 1))
		return COUNTER_RESET;
	*delta = d;
	return COUNTER_WRAPPED;
}

uint64_t counter_resolution(uint64_t raw, unsigned significand_bits)
{
	unsigned bits;

	if (!significand_bits || !raw)
		return 1;
	bits = 64 - (unsigned) __builtin_clzll(raw);
	if (bits <= significand_bits)
		return 1;
	return 1ULL << (bits - significand_bits);
}

uint64_t counter_max_delta(double mj_per_unit, uint64_t max_power_mw,
			   uint64_t dt_ns, uint64_t step_a, uint64_t step_b)
{
	long double units;

	if (!max_power_mw || !(mj_per_unit > 0))
		return 0;
	units = (long double) max_power_mw * dt_ns / 1e9L / mj_per_unit;
	units = ceill(units) + (long double) step_a + (long double) step_b;
	if (units >= (long double) UINT64_MAX)
		return UINT64_MAX;
	return (uint64_t) units;
}

bool counter_wrap_ambiguous(unsigned width_bits, uint64_t max_delta)
{
	return max_delta && width_bits < 64 && max_delta > _mask(width_bits);
}
