/*
 * test_gpu_cursor.c - a GPU's energy over the node meter's intervals
 * (gpu_cursor_interval) on a synthetic GPU: an energy accumulator fed by
 * hand with counter readings (as NVML's, in mJ) and a sampler status set
 * by hand, so that faults land exactly where the test puts them.
 *
 * Units: time in ns (S() from seconds), energy in mJ.
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "energy_acc.h"
#include "gpu_cursor.h"

#define S(x)	((uint64_t) ((x) * 1000000000.0))	/* seconds to ns */
#define STALE	S(2)	/* a 1 s period plus a 1 s read deadline */

/* A GPU as its sampler would hold it. */
typedef struct {
	energy_acc_t *acc;
	sampler_status_t st;
} gpu_t;

static const counter_spec_t spec = { .width_bits = 64, .mj_per_unit = 1 };

static void _status(void *src, sampler_status_t *out)
{
	*out = ((gpu_t *) src)->st;
}

static int _energy_at(void *src, uint64_t t_ns, uint64_t *mj)
{
	return energy_acc_energy_at(((gpu_t *) src)->acc, t_ns, mj);
}

static uint32_t _flags(void *src, uint64_t t0_ns, uint64_t t1_ns)
{
	return energy_acc_flags_between(((gpu_t *) src)->acc, t0_ns, t1_ns);
}

static const gpu_source_ops_t ops = {
	.status = _status,
	.energy_at = _energy_at,
	.flags_between = _flags,
};

static void _gpu_init(gpu_t *g)
{
	/* 1 kW bound; an interval over 1.5 s is a gap (the sampler's
	 * default for a 1 s period would be 3.5 s: shorter here keeps the
	 * run short) */
	energy_acc_config_t cfg = { .history = 64, .gap_ns = S(1.5),
				    .max_power_mw = 1000 * 1000 };

	memset(g, 0, sizeof(*g));
	g->acc = energy_acc_create(&cfg);
	ck_assert_ptr_nonnull(g->acc);
}

/* A good read at t_s seconds of the counter's raw mJ. */
static void _read_ok(gpu_t *g, double t_s, uint64_t raw)
{
	ck_assert_int_eq(energy_acc_add_counter(g->acc, S(t_s), raw, &spec,
						-1), 0);
	g->st.state = SAMPLER_OK;
	g->st.consecutive_failures = 0;
	g->st.last_error = 0;
	g->st.last_sample_ns = S(t_s);
	if (!g->st.first_sample_ns)
		g->st.first_sample_ns = S(t_s);
}

/* A failed read (err: its -errno). */
static void _read_failed(gpu_t *g, int err)
{
	g->st.state = SAMPLER_FAILING;
	g->st.consecutive_failures++;
	g->st.last_error = err;
}

/* Before a reset: 100 W plus a little more each second. */
static uint64_t _raw(unsigned k)
{
	return k > 21 ? 400 + (k - 21) * 100000ULL + k * 11ULL :
			1000000 + k * 100000ULL + k * k * 37ULL;
}

typedef struct {
	gpu_why_t why;
	unsigned out_run;
} expect_t;

/* Interval k is as expected: want's, or in with no run (want left 0). */
static void _check_interval(unsigned k, const gpu_interval_t *iv,
			    const expect_t *want)
{
	if (want->why != GPU_IN || want->out_run)
		ck_assert_msg(iv->why == want->why &&
			      iv->out_run == want->out_run,
			      "interval %u: %s after %u, want %s after %u", k,
			      gpu_why_str(iv->why), iv->out_run,
			      gpu_why_str(want->why), want->out_run);
	else
		ck_assert_msg(iv->why == GPU_IN && !iv->out_run,
			      "interval %u: %s after %u", k,
			      gpu_why_str(iv->why), iv->out_run);
}

/*
 * A run of 32 meter intervals (k - 1, k] s with the GPU read at each
 * whole second, and faults: reads failing at 11-13 (the GPU lost at 13),
 * the gap they leave at 14, the counter restarted before 21 (that
 * reading held, the reset taken at 22, which follows on from it), a read
 * hung from 26 to 28 and its gap at 29.  Each interval is in
 * or out as the design says, and the in-intervals' energies add up to
 * the counter's energy over them, to the mJ: nothing of a gap or reset
 * is charged.
 */
START_TEST(test_cursor_faults)
{
	const expect_t want[33] = {
		[1] = { GPU_OUT_STARTING, 0 },	/* nothing at or before 0 */
		[12] = { GPU_OUT_FAILING, 1 },	/* 2 failures in a row */
		[13] = { GPU_OUT_LOST, 2 },
		[14] = { GPU_OUT_GAP, 3 },	/* back, over a gap */
		[15] = { GPU_IN, 3 },		/* "after 3 intervals" */
		[22] = { GPU_OUT_RESET, 1 },
		[23] = { GPU_IN, 1 },
		[28] = { GPU_OUT_STALE, 1 },	/* 25 + 2 s < 28 */
		[29] = { GPU_OUT_GAP, 2 },
		[30] = { GPU_IN, 2 },
	};
	const uint64_t truth = (_raw(10) - _raw(1)) + (_raw(20) - _raw(14)) +
			       (_raw(25) - _raw(22)) + (_raw(32) - _raw(29));
	gpu_cursor_t c = { 0 };
	uint64_t sum = 0;
	gpu_t g;

	_gpu_init(&g);
	for (unsigned k = 1; k <= 32; k++) {
		gpu_interval_t iv;

		if (k == 11 || k == 12)
			_read_failed(&g, -EAGAIN);
		else if (k == 13)
			_read_failed(&g, -ENODEV);
		else if (k == 21) {
			/* the counter restarted: the first reading is held
			 * (no failed read: the sampler reads again, and the
			 * next one, following on from it, is the reset) */
			ck_assert_int_eq(energy_acc_add_counter(g.acc, S(k),
								300, &spec,
								-1), -EAGAIN);
		} else if (k < 26 || k > 28)
			_read_ok(&g, k, _raw(k));
		/* 26-28: a read hangs, the state stays OK */
		gpu_cursor_interval(&c, &ops, &g, S(k - 1), S(k), STALE, &iv);
		_check_interval(k, &iv, &want[k]);
		if (iv.why != GPU_IN)
			ck_assert_uint_eq(iv.energy_mj, 0);
		/* while reads fail or hang short of out, the GPU is read up
		 * to its newest sample: nothing yet */
		if (k == 11 || k == 21 || k == 26 || k == 27)
			ck_assert_uint_eq(iv.energy_mj, 0);
		/* an ordinary second: exactly the counter's rise */
		if (k == 5 || k == 16 || k == 31)
			ck_assert_uint_eq(iv.energy_mj, _raw(k) - _raw(k - 1));
		sum += iv.energy_mj;
	}
	ck_assert_uint_eq(sum, truth);
	energy_acc_destroy(g.acc);
}
END_TEST

/*
 * The meter's instants between the GPU's samples: a GPU sampled ahead of
 * the meter is read at t1 itself (interpolated), one behind it up to its
 * newest sample, and what lies past that falls into the next interval.
 * Either way the sum telescopes to the energy between the first t0 with
 * a sample before it and the last point read, exactly.
 */
START_TEST(test_cursor_between_samples)
{
	gpu_cursor_t ahead = { 0 }, behind = { 0 };
	uint64_t sum_ahead = 0, sum_behind = 0, e0, e1;
	gpu_t g;

	_gpu_init(&g);
	_read_ok(&g, 1, _raw(1));
	for (unsigned k = 2; k <= 12; k++) {
		gpu_interval_t iv;

		/* behind: the meter at k + 0.5 sees samples up to k */
		_read_ok(&g, k, _raw(k));
		gpu_cursor_interval(&behind, &ops, &g, S(k - 0.5), S(k + 0.5),
				    STALE, &iv);
		ck_assert_int_eq(iv.why, GPU_IN);
		if (k > 2)
			ck_assert_uint_eq(iv.energy_mj, _raw(k) - _raw(k - 1));
		sum_behind += iv.energy_mj;
		/* ahead: the meter at k - 0.5, a sample already past it;
		 * (0.5, 1.5] begins before the GPU's first sample */
		gpu_cursor_interval(&ahead, &ops, &g, S(k - 1.5), S(k - 0.5),
				    STALE, &iv);
		ck_assert_int_eq(iv.why, k == 2 ? GPU_OUT_STARTING : GPU_IN);
		sum_ahead += iv.energy_mj;
	}
	/* both based at 1.5 s, the first t0 the GPU has a sample before */
	ck_assert_int_eq(energy_acc_energy_at(g.acc, S(1.5), &e0), 0);
	ck_assert_uint_eq(e0, (_raw(2) - _raw(1)) / 2);
	/* behind: up to its newest sample, 12 s */
	ck_assert_uint_eq(sum_behind, _raw(12) - _raw(1) - e0);
	/* ahead: up to the last t1, 11.5 s, between two samples */
	ck_assert_int_eq(energy_acc_energy_at(g.acc, S(11.5), &e1), 0);
	ck_assert_uint_eq(sum_ahead, e1 - e0);
	ck_assert_uint_gt(e1, _raw(11) - _raw(1));
	ck_assert_uint_lt(e1, _raw(12) - _raw(1));
	energy_acc_destroy(g.acc);
}
END_TEST

/* 100 W from 1 MJ on: the counter's raw mJ at t_s seconds. */
static uint64_t _raw_at(double t_s)
{
	return 1000000 + (uint64_t) (t_s * 100000.0);
}

/*
 * The GPU comes back between the meter's instant and the moment its
 * interval is read: the return reading (at k + 0.5, over the gap) is
 * already there when (k - 1, k] is read, and k lies inside the gap it
 * closes.  That interval is filled in, not measured: out, and the run
 * of out intervals goes on, so the fault is said once and its end once
 * (test_gpu_share saw "GPU lost" and then "gap in its samples" 15 s later
 * on the same GPU, its energy of (k - 1, k] taken from the gap's line).
 */
START_TEST(test_cursor_return_read_before_the_interval)
{
	const expect_t want[21] = {
		[12] = { GPU_OUT_LOST, 1 },
		[13] = { GPU_OUT_LOST, 2 },
		[14] = { GPU_OUT_GAP, 3 },	/* 14 inside (10, 14.5] */
		[15] = { GPU_OUT_GAP, 4 },	/* (14, 14.5] still is */
		[16] = { GPU_IN, 4 },
	};
	unsigned said_out = 0, said_back = 0;
	uint64_t sum = 0, e0, e1;
	gpu_cursor_t c = { 0 };
	gpu_t g;

	_gpu_init(&g);
	for (unsigned k = 1; k <= 20; k++) {
		gpu_interval_t iv;

		if (k <= 10)
			_read_ok(&g, k, _raw_at(k));
		else if (k == 11)
			_read_failed(&g, -EAGAIN);
		else if (k == 12)
			_read_failed(&g, -ENODEV);
		else if (k >= 14)	/* back: read half a second late */
			_read_ok(&g, k + 0.5, _raw_at(k + 0.5));
		gpu_cursor_interval(&c, &ops, &g, S(k - 1), S(k), STALE, &iv);
		if (k > 1)	/* (0, 1] has no sample before it */
			_check_interval(k, &iv, &want[k]);
		/* what se_energy_gpus.c says, as it decides it */
		said_out += iv.why != GPU_IN && iv.why != GPU_OUT_STARTING &&
			    iv.out_run == 1;
		said_back += iv.why == GPU_IN && iv.out_run > 0;
		sum += iv.energy_mj;
	}
	ck_assert_uint_eq(said_out, 1);
	ck_assert_uint_eq(said_back, 1);
	/* measured only: (1, 10] and (15, 20], nothing of the gap */
	ck_assert_int_eq(energy_acc_energy_at(g.acc, S(15), &e0), 0);
	ck_assert_int_eq(energy_acc_energy_at(g.acc, S(20), &e1), 0);
	ck_assert_uint_eq(sum, (_raw_at(10) - _raw_at(1)) + (e1 - e0));
	ck_assert_uint_eq(e1 - e0, 5 * 100000);
	energy_acc_destroy(g.acc);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("gpu_cursor");
	TCase *tc = tcase_create("synthetic");

	tcase_add_test(tc, test_cursor_faults);
	tcase_add_test(tc, test_cursor_between_samples);
	tcase_add_test(tc, test_cursor_return_read_before_the_interval);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
