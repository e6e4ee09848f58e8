/*
 * counter.h - hardware energy counters: width, wrap and reset.
 *
 * A meter's energy register is an unsigned counter of a known width (16, 32
 * or 64 bits).  Between two reads it may wrap (pass 2^width - 1 back to 0) or
 * be reset (meter power cycle, operator clear).  A backwards counter is never
 * trusted: it is a wrap only when the wrapped delta is plausible for the
 * elapsed time, otherwise a reset.
 */
#ifndef SE_COUNTER_H
#define SE_COUNTER_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
	COUNTER_FORWARD = 0,	/* cur >= prev: plain delta */
	COUNTER_WRAPPED,	/* cur < prev, wrapped delta plausible */
	COUNTER_RESET,		/* cur < prev (or jump too large): delta unknown */
} counter_event_t;

/*
 * Classify the step of a counter of width_bits (1..64) from prev to cur
 * (bits above width_bits are ignored).
 * max_delta is the largest delta (in counter units) the elapsed time makes
 * plausible (e.g. max power x elapsed / unit, rounded up): a larger forward
 * jump or wrapped delta is a reset.  0 means no bound from time: any
 * forward step is then believed, and a backwards one is a wrap only when the
 * wrapped delta is at most half the counter's range.
 * A 64-bit counter never wraps: backwards is always a reset.
 * On COUNTER_FORWARD and COUNTER_WRAPPED, *delta is the counted delta.
 * On COUNTER_RESET, *delta is 0 and the caller fills the interval otherwise.
 */
counter_event_t counter_step(uint64_t prev, uint64_t cur, unsigned width_bits,
			     uint64_t max_delta, uint64_t *delta);

/*
 * The register's own step at reading raw, in counter units.
 * significand_bits 0: an integer register, whose every unit is a step.
 * significand_bits N > 0: a binary floating-point register (float32: 24)
 * carried in fixed point (raw = value x 2^F for some F): it holds N
 * significant bits, so its step is its ulp at the reading, which doubles
 * each time the reading passes a power of two: 2^(bitlength(raw) - N)
 * units, at least 1.  A float32 kWh register at 20,000 kWh steps by 2^-9 kWh.
 */
uint64_t counter_resolution(uint64_t raw, unsigned significand_bits);

/*
 * The largest delta, in counter units, a meter can really count between two
 * readings dt_ns apart: max_power_mw x dt_ns / mj_per_unit, rounded up,
 * plus the register's step at each reading (step_a + step_b: either reading
 * may sit anywhere inside its step).  0 (no bound) without max_power_mw;
 * saturates at UINT64_MAX.
 */
uint64_t counter_max_delta(double mj_per_unit, uint64_t max_power_mw,
			   uint64_t dt_ns, uint64_t step_a, uint64_t step_b);

/*
 * Could a counter of width_bits pass through its whole range (wrap more
 * than once, or once and land past where it started) within a plausible
 * delta of max_delta units?  Then a wrap cannot be told from a reset or a
 * second wrap: a configuration error when max_delta is what one poll
 * period plus one timeout allows.  Never for 64-bit counters.
 */
bool counter_wrap_ambiguous(unsigned width_bits, uint64_t max_delta);

#endif
