/*
 * test_energy_acc.c - the energy accumulator against analytic integrals.
 *
 * Units: power in mW, time in ns, energy in mJ; 1 W for 1 s is 1000 mJ.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "energy_acc.h"

#define S(x)	((uint64_t) ((x) * 1000000000.0))	/* seconds to ns */
#define W(x)	((uint64_t) ((x) * 1000))		/* watts to mW */

static energy_acc_t *_acc(size_t history, uint64_t gap_ns, uint64_t max_mw,
			  uint64_t max_extra_ns)
{
	energy_acc_config_t cfg = {
		.history = history,
		.gap_ns = gap_ns,
		.max_power_mw = max_mw,
		.max_extrapolate_ns = max_extra_ns,
	};
	energy_acc_t *acc = energy_acc_create(&cfg);

	ck_assert_ptr_nonnull(acc);
	return acc;
}

static uint64_t _at(const energy_acc_t *acc, uint64_t t_ns)
{
	uint64_t e = 0;

	ck_assert_int_eq(energy_acc_energy_at(acc, t_ns, &e), 0);
	return e;
}

START_TEST(test_bad_config)
{
	energy_acc_config_t cfg = { .history = 1 };

	ck_assert_ptr_null(energy_acc_create(&cfg));
	ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(test_constant_power)
{
	energy_acc_t *acc = _acc(16, 0, 0, 0);
	energy_sample_t last;

	ck_assert_int_eq(energy_acc_add_power(acc, S(100), W(250)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(130), W(250)), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.energy_mj, 250 * 30 * 1000);
	ck_assert_uint_eq(last.power_mw, W(250));
	ck_assert_uint_eq(last.t_ns, S(130));
	ck_assert_uint_eq(last.flags, 0);
	ck_assert_uint_eq(_at(acc, S(110)), 250 * 10 * 1000);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_same_second)
{
	energy_acc_t *acc = _acc(16, 0, 0, 0);
	uint64_t t = S(1000);

	/* 2 kW for 500 us is 1 J; whole-second clocks would divide by 0 */
	ck_assert_int_eq(energy_acc_add_power(acc, t, W(2000)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, t + 500000, W(2000)), 0);
	ck_assert_uint_eq(_at(acc, t + 500000), 1000);
	ck_assert_uint_eq(_at(acc, t + 250000), 500);
	/* one ns later still counts, and is not a duplicate */
	ck_assert_int_eq(energy_acc_add_power(acc, t + 500001, W(2000)), 0);
	ck_assert_uint_eq(energy_acc_count(acc), 3);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_interpolate_changing_power)
{
	energy_acc_t *acc = _acc(16, 0, 0, 0);
	uint64_t e;

	/* 100 W at 0 s rising linearly to 300 W at 10 s */
	ck_assert_int_eq(energy_acc_add_power(acc, S(0) + 1, W(100)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(10) + 1, W(300)), 0);

	/* int_0^4 (100 + 20 s) ds = 400 + 160 = 560 J (linear energy
	 * interpolation would say 800 J) */
	ck_assert_uint_eq(_at(acc, S(4) + 1), 560000);
	/* int_0^3.3 = 330 + 10 x 3.3^2 = 438.9 J, to the truncated mJ */
	e = _at(acc, S(3.3) + 1);
	ck_assert(e >= 438899 && e <= 438900);
	ck_assert_uint_eq(_at(acc, S(10) + 1), 2000000);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_between)
{
	energy_acc_t *acc = _acc(16, 0, 0, 0);
	uint64_t e;

	ck_assert_int_eq(energy_acc_add_power(acc, S(10), W(100)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(20), W(300)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(30), W(300)), 0);
	/* [14, 25]: int_4^10 (100 + 20 s) ds + 5 s x 300 W = 1440 + 1500 J */
	ck_assert_int_eq(energy_acc_energy_between(acc, S(14), S(25), &e), 0);
	ck_assert_uint_eq(e, 2940000);
	ck_assert_int_eq(energy_acc_energy_between(acc, S(25), S(14), &e),
			 -EINVAL);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_extrapolation_bound)
{
	energy_acc_t *acc = _acc(16, 0, 0, S(5));

	ck_assert_int_eq(energy_acc_add_power(acc, S(0) + 1, W(100)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(10) + 1, W(100)), 0);
	ck_assert_uint_eq(_at(acc, S(12) + 1), 1200000);
	ck_assert_uint_eq(_at(acc, S(15) + 1), 1500000);
	/* held after 5 s of extrapolation, not 9000 J */
	ck_assert_uint_eq(_at(acc, S(90) + 1), 1500000);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_history_overflow)
{
	energy_acc_t *acc = _acc(4, 0, 0, 0);
	uint64_t e = 0;
	int i;

	ck_assert_int_eq(energy_acc_energy_at(acc, S(1), &e), -ENODATA);
	for (i = 1; i <= 10; i++)
		ck_assert_int_eq(energy_acc_add_power(acc, S(i), W(100)), 0);
	ck_assert_uint_eq(energy_acc_count(acc), 4);
	/* samples 7..10 kept; 2 s is gone: the oldest kept energy (600 J) */
	ck_assert_int_eq(energy_acc_energy_at(acc, S(2), &e), -ERANGE);
	ck_assert_uint_eq(e, 600000);
	ck_assert_int_eq(energy_acc_energy_between(acc, S(2), S(8), &e),
			 -ERANGE);
	ck_assert_uint_eq(_at(acc, S(7.5)), 650000);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_before_first_sample)
{
	energy_acc_t *acc = _acc(4, 0, 0, 0);
	uint64_t e = 99;

	ck_assert_int_eq(energy_acc_energy_at(acc, S(1), &e), -ENODATA);
	ck_assert_uint_eq(e, 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(5), W(100)), 0);
	e = 99;
	ck_assert_int_eq(energy_acc_energy_at(acc, S(1), &e), -ENODATA);
	ck_assert_uint_eq(e, 0);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_clock_step_rejected)
{
	energy_acc_t *acc = _acc(16, 0, 0, 0);
	energy_sample_t last;

	ck_assert_int_eq(energy_acc_add_power(acc, S(10), W(100)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(10), W(900)), -EINVAL);
	ck_assert_int_eq(energy_acc_add_power(acc, S(5), W(900)), -EINVAL);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(9), 5,
		&(counter_spec_t) { 32, 1.0, 0, 0 }, -1), -EINVAL);
	ck_assert_uint_eq(energy_acc_count(acc), 1);
	/* the refused samples left no trace */
	ck_assert_int_eq(energy_acc_add_power(acc, S(20), W(100)), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.energy_mj, 1000000);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_absurd_power_rejected)
{
	energy_acc_t *acc = _acc(16, 0, W(5000), 0);
	energy_acc_t *unbounded = _acc(16, 0, 0, 0);
	int64_t minus_5w = -5000;

	/* a negative reading cast to unsigned, with or without a bound */
	ck_assert_int_eq(energy_acc_add_power(acc, S(1), (uint64_t) minus_5w),
			 -ERANGE);
	ck_assert_int_eq(energy_acc_add_power(unbounded, S(1),
					      (uint64_t) minus_5w), -ERANGE);
	ck_assert_int_eq(energy_acc_add_power(acc, S(1), W(5000.001)),
			 -ERANGE);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(1), 0,
		&(counter_spec_t) { 32, 1.0, 0, 0 }, W(6000)), -ERANGE);
	ck_assert_uint_eq(energy_acc_count(acc), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(1), W(5000)), 0);
	energy_acc_destroy(acc);
	energy_acc_destroy(unbounded);
}
END_TEST

START_TEST(test_gap_flagged)
{
	energy_acc_t *acc = _acc(16, S(5), 0, 0);
	energy_sample_t last;

	ck_assert_int_eq(energy_acc_add_power(acc, S(1), W(100)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(5), W(100)), 0);
	ck_assert_uint_eq(energy_acc_gaps(acc), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(25), W(300)), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.flags, ENERGY_SAMPLE_GAP);
	ck_assert_uint_eq(energy_acc_gaps(acc), 1);
	/* linear power across the gap: 400 J + 20 s x 200 W */
	ck_assert_uint_eq(last.energy_mj, 4400000);
	energy_acc_destroy(acc);
}
END_TEST

static const counter_spec_t joule16 = { 16, 1000.0, 0, 0 };	/* 1 J per unit */

START_TEST(test_counter_wrap16)
{
	energy_acc_t *acc = _acc(16, 0, W(1000), 0);
	energy_sample_t last;

	ck_assert_int_eq(energy_acc_add_counter(acc, S(0) + 1, 65000,
						&joule16, -1), 0);
	/* 2000 J later the register wrapped to 1464 */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(10) + 1, 1464,
						&joule16, -1), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.energy_mj, 2000000);
	ck_assert_uint_eq(last.power_mw, W(200));
	ck_assert_uint_eq(last.flags, ENERGY_SAMPLE_COUNTER |
				      ENERGY_SAMPLE_WRAP);
	/* counter intervals interpolate energy linearly */
	ck_assert_uint_eq(_at(acc, S(2.5) + 1), 500000);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_counter_wrap32_given_power)
{
	counter_spec_t spec = { 32, 1.0, 0, 0 };	/* 1 mJ per unit */
	energy_acc_t *acc = _acc(16, 0, W(1000), 0);
	energy_sample_t last;

	ck_assert_int_eq(energy_acc_add_counter(acc, S(1), 0xffffff00ULL,
						&spec, W(50)), 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(2), 0x100, &spec,
						W(60)), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	/* the powers say 55 J; the counter counted 0x200 mJ: held within
	 * its step (1 mJ) of the count */
	ck_assert_uint_eq(last.energy_mj, 0x200 + 1);
	ck_assert_uint_eq(last.power_mw, W(60));	/* as the meter said */
	ck_assert(last.flags & ENERGY_SAMPLE_WRAP);
	ck_assert(last.flags & ENERGY_SAMPLE_DISCIPLINED);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_counter_reset_and_torn_read)
{
	energy_acc_t *acc = _acc(16, 0, W(1000), 0);
	energy_sample_t last;

	ck_assert_int_eq(energy_acc_add_counter(acc, S(0) + 1, 65000,
						&joule16, -1), 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(10) + 1, 1464,
						&joule16, -1), 0);
	/* back to 5: as a wrap 64077 J in 10 s, over 1 kW: dropped, held */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(20) + 1, 5,
						&joule16, -1), -EAGAIN);
	/* implausible against 1464, 5 J on from 5: the meter did restart */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(30) + 1, 10,
						&joule16, -1), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.flags, ENERGY_SAMPLE_COUNTER |
			  ENERGY_SAMPLE_RESET | ENERGY_SAMPLE_GAP);
	/* 20 s at the last known 200 W filled in */
	ck_assert_uint_eq(last.energy_mj, 6000000);
	ck_assert_uint_eq(energy_acc_gaps(acc), 1);
	/* counted from the new base */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(40) + 1, 110,
						&joule16, -1), 0);
	ck_assert_uint_eq(_at(acc, S(40) + 1), 6100000);
	/* a torn read (forward jump) is dropped, and the next one counts
	 * exactly from 110, with no gap fill */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(50) + 1, 60000,
						&joule16, -1), -EAGAIN);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(60) + 1, 210,
						&joule16, -1), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.energy_mj, 6200000);
	ck_assert_uint_eq(last.flags, ENERGY_SAMPLE_COUNTER);
	ck_assert_uint_eq(last.power_mw, W(5));	/* 100 J over 20 s */
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_counter_power_over_kicked_read)
{
	/* 200 W on a 1 J counter, read every second and once more 4 ms
	 * after a tick (a step's start kicks a read): that interval counted
	 * 0 J.  The power held across the counter reset that follows is the
	 * average over half a period at least, not that 4 ms's 0 W. */
	energy_acc_config_t cfg = { .history = 16, .max_power_mw = W(2000),
				    .power_window_ns = S(0.5) };
	energy_acc_t *acc = energy_acc_create(&cfg);
	energy_sample_t last;
	double t[] = { 1, 2, 3, 3.004 };
	size_t i;

	ck_assert_ptr_nonnull(acc);
	for (i = 0; i < 4; i++)
		ck_assert_int_eq(energy_acc_add_counter(acc, S(t[i]),
				1000 + (uint64_t) (200 * t[i]), &joule16, -1),
				0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.energy_mj, 400000);
	/* (600 - 400) J over 1.004 s */
	ck_assert_uint_eq(last.power_mw, 199203);
	/* the counter jumps 30 kJ: dropped once, then a reset */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(4.004),
				31000 + 800, &joule16, -1), -EAGAIN);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(5.004),
				31000 + 1000, &joule16, -1), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert(last.flags & ENERGY_SAMPLE_RESET);
	/* true 800.8 J since t = 1; 400 J + 199.203 W x 2 s */
	ck_assert_uint_eq(last.energy_mj, 400000 + 398406);
	energy_acc_destroy(acc);
}
END_TEST

/* A small LCG: the same instants on every machine for a seed. */
static double _uniform(uint32_t *state)
{
	*state = *state * 1664525u + 1013904223u;
	return (double) (*state >> 8) / (double) (1u << 24);
}

/*
 * 200 W on a 1 J counter read every second, with reads kicked at random
 * instants (a step's start, sstat, an energy query: 0.5 ms to 300 ms after
 * the one before), and the counter jumping by 30 kJ at a random instant
 * (test_faults_modbus_bmc.py's node3): whatever reads fall after the jump,
 * one reading is dropped, the next one is the reset, and the energy is the
 * 200 W line, the jump not counted.
 */
START_TEST(test_counter_jump_whatever_the_reads)
{
	energy_acc_config_t cfg = { .history = 256, .max_power_mw = W(2000),
				    .power_window_ns = S(0.5) };
	uint32_t seed;

	for (seed = 1; seed <= 12; seed++) {
		energy_acc_t *acc = energy_acc_create(&cfg);
		uint32_t r = seed;
		double jump = 5 + _uniform(&r), t = 1, t_reset = 0;
		int dropped = 0, resets = 0, n = 0;
		uint64_t e;

		ck_assert_ptr_nonnull(acc);
		while (t < 10) {
			uint64_t raw = 1000 + (uint64_t) (200 * t) +
				       (t >= jump ? 30000 : 0);
			energy_sample_t last;
			int rc = energy_acc_add_counter(acc, S(t), raw,
							&joule16, -1);

			if (rc) {
				ck_assert_int_eq(rc, -EAGAIN);
				dropped++;
			} else {
				ck_assert_int_eq(energy_acc_last(acc, &last),
						 0);
				if (last.flags & ENERGY_SAMPLE_RESET) {
					resets++;
					t_reset = t;
				}
			}
			/* the next read: kicked soon, or the next tick */
			if (_uniform(&r) < 0.6)
				t += 0.0005 + 0.3 * _uniform(&r) *
						 _uniform(&r);
			else
				t = floor(t) + 1;
			n++;
		}
		ck_assert_msg(dropped == 1 && resets == 1,
			      "seed %u: %d dropped, %d resets in %d reads",
			      seed, dropped, resets, n);
		/* filled at the 200 W it was counting: within the 1 J
		 * register's step at both ends of the power's window */
		ck_assert_int_eq(energy_acc_energy_at(acc, S(9), &e), 0);
		ck_assert_msg(llabs((long long) e - 1600000) <= 6000,
			      "seed %u: %llu mJ over 8 s at 200 W", seed,
			      (unsigned long long) e);
		ck_assert_int_eq(energy_acc_energy_between(acc, S(jump - 1),
				 S(t_reset + 1), &e), 0);
		ck_assert_msg(llabs((long long) e - (long long) ((t_reset -
			      jump + 2) * 200000)) <= 6000,
			      "seed %u: %llu mJ across the jump", seed,
			      (unsigned long long) e);
		energy_acc_destroy(acc);
	}
}
END_TEST

/*
 * Two garbled readings in a row that do not follow on from each other are
 * not a reset: both dropped, and the next good one counts exactly from the
 * base (a meter giving garbage is a fault, not a new counter).
 */
START_TEST(test_counter_garbage_twice_is_no_reset)
{
	energy_acc_t *acc = _acc(16, 0, W(2000), 0);
	energy_acc_anomaly_t a;
	energy_sample_t last;

	ck_assert_int_eq(energy_acc_add_counter(acc, S(1), 1000, &joule16,
						-1), 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(2), 40000, &joule16,
						-1), -EAGAIN);
	/* 3 ms later, 31 kJ below the held one: garbage too */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(2.003), 9000,
						&joule16, -1), -ERANGE);
	energy_acc_anomaly(acc, &a);
	ck_assert_uint_eq(a.count, 2);
	ck_assert_uint_eq(a.kind, ENERGY_ACC_REJECTED);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(3), 1400, &joule16,
						-1), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.flags, ENERGY_SAMPLE_COUNTER);
	ck_assert_uint_eq(last.energy_mj, 400000);
	ck_assert_uint_eq(energy_acc_gaps(acc), 0);
	/* a jump, then a read kicked 2 ms later that follows on from it
	 * (the counter did move): the reset, one reading dropped */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(4), 31600, &joule16,
						-1), -EAGAIN);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(4.002), 31600,
						&joule16, -1), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert(last.flags & ENERGY_SAMPLE_RESET);
	energy_acc_anomaly(acc, &a);
	ck_assert_uint_eq(a.count, 4);		/* dropped, then the reset */
	ck_assert_uint_eq(a.kind, ENERGY_SAMPLE_RESET);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_counter64_backwards_is_reset)
{
	counter_spec_t spec = { 64, 1.0, 0, 0 };
	energy_acc_t *acc = _acc(16, 0, 0, 0);
	energy_sample_t last;

	ck_assert_int_eq(energy_acc_add_counter(acc, S(1), UINT64_MAX - 10,
						&spec, W(1)), 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(2), 5, &spec, W(1)),
			 -EAGAIN);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(3), 6, &spec, W(1)), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert(last.flags & ENERGY_SAMPLE_RESET);
	ck_assert_uint_eq(last.energy_mj, 2000);	/* 1 W x 2 s */
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_counter_ambiguous_gap)
{
	energy_acc_t *acc = _acc(16, S(30), W(1000), 0);
	energy_sample_t last;

	/* 65535 J of range at <= 1 kW is 65.5 s: 100 s may hide a wrap */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(1), 100, &joule16,
						W(100)), 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(101), 200, &joule16,
						W(100)), 0);
	ck_assert_int_eq(energy_acc_last(acc, &last), 0);
	ck_assert_uint_eq(last.energy_mj, 10000000);	/* 100 W x 100 s */
	ck_assert(last.flags & ENERGY_SAMPLE_GAP);
	ck_assert_uint_eq(energy_acc_gaps(acc), 1);
	/* and counting goes on from the new base */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(111), 1200, &joule16,
						W(100)), 0);
	ck_assert_uint_eq(_at(acc, S(111)), 11000000);
	energy_acc_destroy(acc);
}
END_TEST

START_TEST(test_no_rounding_drift)
{
	counter_spec_t micro = { 32, 0.001, 0, 0 };	/* 1 uJ per unit */
	energy_acc_t *c = _acc(8, 0, 0, 0);
	energy_acc_t *p = _acc(8, 0, 0, 0);
	uint64_t raw = 0, t = S(1);
	int i, refused = 0;

	ck_assert_int_eq(energy_acc_add_counter(c, t, raw, &micro, -1), 0);
	ck_assert_int_eq(energy_acc_add_power(p, t, 1), 0);
	/* counted, not a ck_assert each: Check writes a record of every
	 * assertion, 200,000 of them here (seconds under valgrind) */
	for (i = 0; i < 100000; i++) {
		t += 1000000;			/* 1 ms */
		raw += 333;			/* 0.333 mJ */
		refused += energy_acc_add_counter(c, t, raw, &micro, -1) != 0;
		refused += energy_acc_add_power(p, t, 1) != 0;
	}
	ck_assert_int_eq(refused, 0);
	/* truncating per sample would give 0 for both */
	ck_assert_uint_eq(_at(c, t), 33300);
	ck_assert_uint_eq(_at(p, t), 100);	/* 1 mW for 100 s */
	energy_acc_destroy(c);
	energy_acc_destroy(p);
}
END_TEST

START_TEST(test_counter_power_switch)
{
	counter_spec_t spec = { 32, 1000.0, 0, 0 };
	energy_acc_t *acc = _acc(16, 0, 0, 0);

	ck_assert_int_eq(energy_acc_add_counter(acc, S(1), 100, &spec,
						W(100)), 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(11), 1100, &spec,
						W(100)), 0);
	/* the counter register is missing for a while: power only */
	ck_assert_int_eq(energy_acc_add_power(acc, S(21), W(100)), 0);
	/* back: the counter moved 2000 J meanwhile, but 1000 J of that was
	 * already counted by the trapezoid; it must not count twice */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(31), 3100, &spec,
						W(100)), 0);
	ck_assert_uint_eq(_at(acc, S(31)), 3000000);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(41), 4100, &spec,
						W(100)), 0);
	ck_assert_uint_eq(_at(acc, S(41)), 4000000);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(42), 4100,
		&(counter_spec_t) { 32, 0.0, 0, 0 }, -1), -EINVAL);
	energy_acc_destroy(acc);
}
END_TEST

/*
 * flags_between: a sample's flags belong to the interval ending at it, so
 * (t0, t1] holds the samples after t0 up to and including t1, and the
 * next one when t1 falls inside its interval.
 */
START_TEST(test_flags_between)
{
	energy_acc_t *acc = _acc(8, S(2), W(1000), 0);
	const counter_spec_t spec = { .width_bits = 64, .mj_per_unit = 1 };

	ck_assert_uint_eq(energy_acc_flags_between(acc, 0, S(5)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(1), W(100)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(2), W(100)), 0);
	ck_assert_int_eq(energy_acc_add_power(acc, S(10), W(100)), 0); /* gap */
	ck_assert_int_eq(energy_acc_add_power(acc, S(11), W(100)), 0);
	/* nothing before the first sample was dropped: no flag for it */
	ck_assert_uint_eq(energy_acc_flags_between(acc, 0, S(2)), 0);
	/* (2, 9] lies inside the gap the reading at 10 closed */
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(2), S(9)),
			  ENERGY_SAMPLE_GAP);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(1), S(2)), 0);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(1), S(1.5)), 0);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(2), S(10)),
			  ENERGY_SAMPLE_GAP);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(9.9), S(11)),
			  ENERGY_SAMPLE_GAP);
	/* the sample at t0 is not in (t0, t1] */
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(10), S(11)), 0);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(11), S(10)), 0);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(11), S(11)), 0);
	/* a counter reset: a torn read is dropped, the second is the reset */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(12), 5000000, &spec, -1),
			 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(13), 5100000, &spec, -1),
			 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(14), 10, &spec, -1),
			 -EAGAIN);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(15), 20, &spec, -1), 0);
	/* the reading at 15 spans (13, 15]: the reset is in (13, 14.5] */
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(13), S(14.5)) &
			  ENERGY_SAMPLE_RESET, ENERGY_SAMPLE_RESET);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(12), S(13)) &
			  (ENERGY_SAMPLE_RESET | ENERGY_SAMPLE_GAP), 0);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(13), S(15)) &
			  (ENERGY_SAMPLE_RESET | ENERGY_SAMPLE_GAP),
			  ENERGY_SAMPLE_RESET | ENERGY_SAMPLE_GAP);
	/* 8 kept: 12 went in at the 5th push after 10; now (1, 2] is gone:
	 * what happened there is unknown, taken as a gap */
	ck_assert_int_eq(energy_acc_add_counter(acc, S(16), 30, &spec, -1), 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(17), 40, &spec, -1), 0);
	ck_assert_int_eq(energy_acc_add_counter(acc, S(18), 50, &spec, -1), 0);
	ck_assert_uint_eq(energy_acc_count(acc), 8);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(1.5), S(1.8)),
			  ENERGY_SAMPLE_GAP);
	ck_assert_uint_eq(energy_acc_flags_between(acc, S(16), S(18)) &
			  (ENERGY_SAMPLE_RESET | ENERGY_SAMPLE_GAP), 0);
	energy_acc_destroy(acc);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("energy_acc");
	TCase *p = tcase_create("power");
	TCase *c = tcase_create("counter");

	tcase_add_test(p, test_bad_config);
	tcase_add_test(p, test_constant_power);
	tcase_add_test(p, test_same_second);
	tcase_add_test(p, test_interpolate_changing_power);
	tcase_add_test(p, test_between);
	tcase_add_test(p, test_extrapolation_bound);
	tcase_add_test(p, test_history_overflow);
	tcase_add_test(p, test_before_first_sample);
	tcase_add_test(p, test_clock_step_rejected);
	tcase_add_test(p, test_absurd_power_rejected);
	tcase_add_test(p, test_gap_flagged);
	suite_add_tcase(s, p);

	tcase_add_test(c, test_counter_wrap16);
	tcase_add_test(c, test_counter_wrap32_given_power);
	tcase_add_test(c, test_counter_reset_and_torn_read);
	tcase_add_test(c, test_counter_power_over_kicked_read);
	tcase_add_test(c, test_counter_jump_whatever_the_reads);
	tcase_add_test(c, test_counter_garbage_twice_is_no_reset);
	tcase_add_test(c, test_counter64_backwards_is_reset);
	tcase_add_test(c, test_counter_ambiguous_gap);
	tcase_add_test(c, test_no_rounding_drift);
	tcase_add_test(c, test_counter_power_switch);
	tcase_add_test(c, test_flags_between);
	tcase_set_timeout(c, 30);
	suite_add_tcase(s, c);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
