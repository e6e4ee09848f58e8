/*
 * test_modbus_counter.c - energy registers as meters in service have them,
 * through the plugin's own decoding and the shared accumulator.
 *
 * A simulated meter integrates a known load exactly and shows it in its
 * energy register the way the real device does: an integer register holds
 * floor(reading / unit) (a meter advances only once a whole unit has
 * accumulated), a float32 register the reading rounded to the nearest
 * float, both starting from a reading of tens of thousands of kWh, not
 * from zero.  Register words are built here from those rules (struct-level
 * bit copies, not the codec's encoder); the plugin side decodes them with
 * mb_decode_energy() and the counter spec of modbus_energy_counter_spec(),
 * as acct_gather_energy/modbus does, and feeds energy_acc with the power
 * register's watts, once a second plus kicks in between.
 *
 * For every built-in model and for int32/int64/float32 custom maps, three
 * hours at about 300 W and at 2.5 kW, with MaxPower at its default and at
 * 3000 W:
 *   - no reading is refused and no anomaly is recorded;
 *   - the node's total is the register's total within one step (no step
 *     lost or counted twice) and within two of the truth;
 *   - 30 s windows ("jobs") all through the run are within 1 % of the
 *     truth: a job's figure does not jump with the register's step.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counter.h"
#include "energy_acc.h"
#include "modbus_codec.h"
#include "modbus_conf.h"
#include "modbus_meter.h"

#define NS		1000000000ULL
#define RUN_S		(3 * 3600)
#define KWH		3.6e6

/* ------------------------------------------------------------- the load */

/*
 * A load that moves as a node's does: a value every other second, random
 * within +/-30 % of the base, with a jump of -50 % to +50 % held for a
 * minute now and then, never above the 3 kW node's peak (the MaxPower an
 * admin sets for it); linear in between, so its integral is exact.
 */
#define KNOT_S		2
#define PEAK_W		2950.0
typedef struct {
	double *w;		/* watts at each whole second, RUN_S + 2 */
	double *cum_j;		/* exact integral from 0 to each second */
} load_t;

static uint64_t rng_state;

static double _uniform(void)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (double) (rng_state >> 11) / (double) (1ULL << 53);
}

static void _load_make(load_t *l, double base_w, uint64_t seed)
{
	double jump = 1.0;

	rng_state = seed;
	l->w = calloc(RUN_S + 2, sizeof(double));
	l->cum_j = calloc(RUN_S + 2, sizeof(double));
	for (int i = 0; i < RUN_S + 2; i++) {
		if (i % 60 == 0)
			jump = _uniform() < 0.3 ? 0.5 + _uniform() : 1.0;
		if (i % KNOT_S == 0 || i == RUN_S + 1)
			l->w[i] = fmin(PEAK_W, base_w * jump *
					       (0.7 + 0.6 * _uniform()));
		else
			l->w[i] = -1;	/* on the line between knots */
	}
	for (int i = 1; i < RUN_S + 1; i++) {
		if (l->w[i] < 0)
			l->w[i] = (l->w[i - 1] + l->w[i + 1]) / 2;
	}
	for (int i = 0; i < RUN_S + 2; i++) {
		if (i)
			l->cum_j[i] = l->cum_j[i - 1] +
				      (l->w[i - 1] + l->w[i]) / 2.0;
	}
}

static void _load_free(load_t *l)
{
	free(l->w);
	free(l->cum_j);
}

static double _watts(const load_t *l, double t)
{
	int i = (int) t;
	double f = t - i;

	return l->w[i] + (l->w[i + 1] - l->w[i]) * f;
}

/* The exact integral of the load from 0 to t (linear pieces). */
static double _joules(const load_t *l, double t)
{
	int i = (int) t;
	double f = t - i;

	return l->cum_j[i] + l->w[i] * f + (l->w[i + 1] - l->w[i]) * f * f / 2;
}

/* ------------------------------------------------------------ the meter */

typedef struct {
	const char *name;
	mb_type_t type;
	mb_order_t order;
	double scale;		/* J per register unit */
	double start_kwh;	/* what the meter read when slurmd started */
} reg_case_t;

/* The register's words for a reading of e_j joules, as the meter shows it. */
static void _register_words(const reg_case_t *rc, double e_j, uint16_t *regs)
{
	double units = e_j / rc->scale;
	uint64_t raw;

	if (rc->type == MB_FLOAT32) {
		float f = (float) units;	/* round to nearest */
		uint32_t bits;

		memcpy(&bits, &f, sizeof(bits));
		raw = bits;
	} else {
		raw = (uint64_t) floor(units);
		if (rc->type == MB_INT32)
			raw &= 0x7fffffffULL;	/* counts up, back to 0 */
	}
	mb_encode_raw(raw, rc->type, rc->order, regs);
}

/* ------------------------------------------------------------- the run */

typedef struct {
	double total_j;		/* accumulator, first to last reading */
	double count_j;		/* the register's own total */
	double truth_j;
	double step_j;		/* the register's largest step in the run */
	double worst_window;	/* largest |error| of a 30 s window */
	unsigned long refused;
	unsigned long anomalies;
	unsigned long readings;
} run_result_t;

static uint64_t _decode(const reg_case_t *rc, const uint16_t *regs)
{
	uint64_t count = 0;

	ck_assert_int_eq(mb_decode_energy(regs, rc->type, rc->order, &count),
			 0);
	return count;
}

static double _acc_j(energy_acc_t *acc, double t)
{
	uint64_t mj;

	ck_assert_int_eq(energy_acc_energy_at(acc, (uint64_t) (t * NS), &mj),
			 0);
	return mj / 1000.0;
}

/*
 * Readings once a second (0.37 s off the load's own seconds, so the
 * trapezoid of the power readings is not exact) and, on a third of the
 * seconds, a kick at a random instant in between, as a step's start or
 * end asks for one.
 */
static void _run(const reg_case_t *rc, double base_w, double max_power_w,
		 run_result_t *out)
{
	energy_acc_config_t cfg = {
		.history = 8192, .gap_ns = 3 * NS,
		.max_power_mw = (uint64_t) (max_power_w * 1000),
	};
	energy_acc_t *acc = energy_acc_create(&cfg);
	double start_j = rc->start_kwh * KWH, t_first = 0, t_last = 0;
	uint64_t first_count = 0, last_count = 0, first_mj = 0;
	energy_acc_anomaly_t an;
	counter_spec_t spec;
	load_t load;
	uint16_t regs[4];

	memset(out, 0, sizeof(*out));
	modbus_energy_counter_spec(rc->type, rc->scale, 1.0, &spec);
	_load_make(&load, base_w, (uint64_t) (base_w * 7 + rc->start_kwh));
	for (int s = 0; s < RUN_S; s++) {
		double ts[2] = { s + 0.37, s + 0.37 + 0.05 + 0.9 * _uniform() };
		int n = _uniform() < 1.0 / 3 ? 2 : 1;

		for (int k = 0; k < n; k++) {
			double t = ts[k], step;
			uint64_t count;
			int rc_add;

			_register_words(rc, start_j + _joules(&load, t), regs);
			count = _decode(rc, regs);
			rc_add = energy_acc_add_counter(acc,
				(uint64_t) (t * NS), count, &spec,
				(int64_t) llround(_watts(&load, t) * 1000));
			if (rc_add) {
				out->refused++;
				continue;
			}
			step = counter_resolution(count,
						  spec.significand_bits) *
			       spec.mj_per_unit / 1000.0;
			if (step > out->step_j)
				out->step_j = step;
			if (!out->readings++) {
				energy_sample_t first;

				ck_assert_int_eq(energy_acc_last(acc, &first),
						 0);
				first_mj = first.energy_mj;
				t_first = t;
				first_count = count;
			}
			t_last = t;
			last_count = count;
		}
	}
	energy_acc_anomaly(acc, &an);
	out->anomalies = an.count;
	/* the first reading has left the ring: its energy was kept */
	out->total_j = _acc_j(acc, t_last) - first_mj / 1000.0;
	out->count_j = (double) (last_count - first_count) *
		       spec.mj_per_unit / 1000.0;
	out->truth_j = _joules(&load, t_last) - _joules(&load, t_first);

	/* 30 s jobs at phases spread over the run's last 40 minutes (the
	 * history ring holds those) */
	for (double t0 = RUN_S - 2400 + 0.11; t0 + 30 < t_last; t0 += 97.3) {
		double got = _acc_j(acc, t0 + 30) - _acc_j(acc, t0);
		double truth = _joules(&load, t0 + 30) - _joules(&load, t0);
		double err = fabs(got - truth) / truth;

		if (err > out->worst_window)
			out->worst_window = err;
	}
	_load_free(&load);
	energy_acc_destroy(acc);
}

static void _check_case(const reg_case_t *rc)
{
	static const double loads[] = { 300.0, 2500.0 };
	static const double max_powers[] = { MODBUS_DEF_MAX_POWER_W, 3000.0 };

	for (unsigned li = 0; li < 2; li++) {
		for (unsigned mi = 0; mi < 2; mi++) {
			run_result_t r;

			_run(rc, loads[li], max_powers[mi], &r);
			printf("%-22s %5.0f W  MaxPower %6.0f W: total %.1f J, register %.1f J, truth %.1f J, step %.1f J, worst 30 s job %.3f %%\n",
			       rc->name, loads[li], max_powers[mi], r.total_j,
			       r.count_j, r.truth_j, r.step_j,
			       100 * r.worst_window);
			ck_assert_msg(!r.refused && !r.anomalies,
				      "%s at %g W, MaxPower %g: %lu refused, %lu anomalies",
				      rc->name, loads[li], max_powers[mi],
				      r.refused, r.anomalies);
			ck_assert_msg(fabs(r.total_j - r.count_j) <= r.step_j,
				      "%s: total %.1f J vs register %.1f J (step %.1f J)",
				      rc->name, r.total_j, r.count_j, r.step_j);
			ck_assert_msg(fabs(r.total_j - r.truth_j) <=
				      2 * r.step_j,
				      "%s: total %.1f J vs truth %.1f J (step %.1f J)",
				      rc->name, r.total_j, r.truth_j, r.step_j);
			ck_assert_msg(r.worst_window < 0.01,
				      "%s at %g W: a 30 s job %.3f %% off",
				      rc->name, loads[li],
				      100 * r.worst_window);
		}
	}
}

/* ---------------------------------------------------------------- tests */

/* Where each built-in model's meter is read from: in service for years. */
static double _start_kwh(const char *model)
{
	if (!strcmp(model, "sdm630"))
		return 20000.0;		/* float32 steps of 2^-9 kWh */
	if (!strcmp(model, "sdm72d"))
		return 16380.0;		/* crosses 2^14 kWh: the step doubles */
	if (!strcmp(model, "em24"))
		return 23456.7;		/* 0.1 kWh steps: 360 kJ */
	return 45678.9;
}

START_TEST(test_builtin_models)
{
	const mb_model_t *m = &mb_models[_i];
	reg_case_t rc = {
		.name = m->name, .type = m->energy.type,
		.order = m->energy.order, .scale = m->energy.scale,
		.start_kwh = _start_kwh(m->name),
	};

	_check_case(&rc);
}
END_TEST

START_TEST(test_custom_maps)
{
	static const reg_case_t cases[] = {
		{ "custom int32 Wh cdab", MB_INT32, MB_ORDER_CDAB, 3600.0,
		  31234.5 },
		{ "custom int64 0.01 kWh", MB_INT64, MB_ORDER_DCBA, 36000.0,
		  87654.3 },
		{ "custom float32 Wh", MB_FLOAT32, MB_ORDER_CDAB, 3600.0,
		  54321.0 },
	};

	_check_case(&cases[_i]);
}
END_TEST

/* sdm72d's run crosses 16,384 kWh: the float32 step goes 2^-10 -> 2^-9. */
START_TEST(test_float_step_doubles)
{
	uint16_t regs[2];
	uint64_t below, above;
	reg_case_t rc = { "sdm72d", MB_FLOAT32, MB_ORDER_ABCD, KWH, 0 };

	_register_words(&rc, 16383.9 * KWH, regs);
	below = _decode(&rc, regs);
	_register_words(&rc, 16384.1 * KWH, regs);
	above = _decode(&rc, regs);
	ck_assert_uint_eq(counter_resolution(below, FLT_MANT_DIG) * 2,
			  counter_resolution(above, FLT_MANT_DIG));
	/* 2^-10 kWh in fixed point of 2^24 per kWh */
	ck_assert_uint_eq(counter_resolution(below, FLT_MANT_DIG), 1U << 14);
}
END_TEST

/*
 * Without a power register the energy is the counter's own: a coarse one
 * jumps by its step, and nothing else is invented between its steps.
 */
START_TEST(test_coarse_counter_without_power)
{
	energy_acc_config_t cfg = { .history = 64, .max_power_mw = 3000000 };
	energy_acc_t *acc = energy_acc_create(&cfg);
	reg_case_t rc = { "em24", MB_INT32, MB_ORDER_CDAB, 0.1 * KWH, 0 };
	/* 23456.75 kWh: half a step in, so the first step comes at 90 s */
	counter_spec_t spec;
	uint16_t regs[2];
	uint64_t mj;

	modbus_energy_counter_spec(rc.type, rc.scale, 1.0, &spec);
	/* 2 kW for 200 s: 400 kJ, of which the register shows one step */
	for (int s = 0; s <= 200; s++) {
		double e = 23456.75 * KWH + 2000.0 * s;

		_register_words(&rc, e, regs);
		ck_assert_int_eq(energy_acc_add_counter(acc, s * NS,
			_decode(&rc, regs), &spec, -1), 0);
	}
	ck_assert_int_eq(energy_acc_energy_at(acc, 200 * NS, &mj), 0);
	ck_assert_uint_eq(mj, 360000000);	/* one step: 0.1 kWh */
	ck_assert(energy_acc_counter_step_mj(acc) == 360000000.0);
	energy_acc_destroy(acc);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("modbus_counter");
	TCase *tc = tcase_create("in_service");
	int n_models = 0;

	while (mb_models[n_models].name)
		n_models++;
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_builtin_models, 0, n_models);
	tcase_add_loop_test(tc, test_custom_maps, 0, 3);
	tcase_add_test(tc, test_float_step_doubles);
	tcase_add_test(tc, test_coarse_counter_without_power);
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
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
