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

#endif
