/*
 * energy_acc.c - cumulative energy on monotonic time, with a history ring.
 *
 * Precision: the running total is whole mJ plus a double remainder in
 * [0, 1) mJ, so no per-sample truncation accumulates.  On the power path the
 * trapezoid (p0 + p1) x dt / 2 is computed exactly in 128-bit integers; on
 * the counter path the energy of a segment is recomputed from the exact
 * count of counter units since the segment began, never summed per sample.
 *
 * Counter with power (the discipline): the integrated power predicts each
 * interval; the counter's count since the segment began, c, is only known
 * to within its step s at the base and at the reading (an integer register
 * truncates, a float one rounds: either way the true count lies within
 * max(s_base, s_now) of c).  The prediction is clamped into that window.
 * A sound power register keeps the energy inside it, untouched; a biased
 * one is pulled back by its bias only, never by the register's step.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "counter.h"
#include "energy_acc.h"
#include "se_time.h"

typedef unsigned __int128 u128;

/* An energy as whole mJ plus a remainder in [0, 1) mJ. */
typedef struct {
	uint64_t mj;
	double frac;
} acc_energy_t;

/* One history entry: the public sample plus what interpolation needs. */
typedef struct {
	uint64_t t_ns;
	acc_energy_t e;
	uint64_t power_mw;
	uint32_t flags;
	bool linear;	/* the interval ending here came from a counter
			 * alone: interpolate energy linearly, not the
			 * power */
} acc_entry_t;

struct energy_acc {
	energy_acc_config_t cfg;
	acc_entry_t *ring;
	size_t head;		/* oldest entry */
	size_t count;
	bool dropped;		/* the ring has overflowed at least once */
	unsigned long gaps;
	acc_energy_t total;	/* energy at the newest sample */

	/* counter path: the current segment (since the base or last reset) */
	bool have_base;
	counter_spec_t spec;
	uint64_t base_raw;	/* last accepted raw reading */
	acc_energy_t seg_start;	/* energy when the segment began */
	uint64_t seg_units;	/* exact count of units since then */
	uint64_t seg_base_step;	/* the register's step at the base, units */
	uint64_t last_step;	/* its step at the last accepted reading */
	/* a reading implausible against the base, held until the next one
	 * tells a torn read from a reset (energy_acc_add_counter) */
	bool held;
	uint64_t held_raw;
	uint64_t held_t_ns;
	energy_acc_anomaly_t anomaly;
};

/* ------------------------------------------------------------ energies */

static void _e_normalise(acc_energy_t *e)
{
	double whole = floor(e->frac);

	e->mj += (uint64_t) whole;
	e->frac -= whole;
}

/* Add num / den mJ exactly to the whole part; the rest to the remainder. */
static void _e_add_ratio(acc_energy_t *e, u128 num, uint64_t den)
{
	e->mj += (uint64_t) (num / den);
	e->frac += (double) (uint64_t) (num % den) / (double) den;
	_e_normalise(e);
}

static void _e_add(acc_energy_t *e, long double mj)
{
	long double whole = floorl(mj);

	e->mj += (uint64_t) whole;
	e->frac += (double) (mj - whole);
	_e_normalise(e);
}

/* b - a in mJ (b >= a). */
static long double _e_diff(const acc_energy_t *b, const acc_energy_t *a)
{
	return (long double) (b->mj - a->mj) + b->frac - a->frac;
}

/* b - a in mJ, either order. */
static long double _e_signed_diff(const acc_energy_t *b, const acc_energy_t *a)
{
	if (b->mj >= a->mj)
		return _e_diff(b, a);
	return -(long double) (a->mj - b->mj) + b->frac - a->frac;
}

/* Energy of power p_mw held for dt_ns: p x dt / 1e9 mJ. */
static void _e_add_flat(acc_energy_t *e, uint64_t p_mw, uint64_t dt_ns)
{
	_e_add_ratio(e, (u128) p_mw * dt_ns, SE_NS_PER_SEC);
}

/* Trapezoid of linear power from p0 to p1 over dt: (p0 + p1) dt / 2e9 mJ. */
static void _e_add_trapezoid(acc_energy_t *e, uint64_t p0_mw, uint64_t p1_mw,
			     uint64_t dt_ns)
{
	_e_add_ratio(e, ((u128) p0_mw + p1_mw) * dt_ns, 2 * SE_NS_PER_SEC);
}

/* ---------------------------------------------------------------- ring */

static acc_entry_t *_at(const energy_acc_t *acc, size_t i)
{
	return &acc->ring[(acc->head + i) % acc->cfg.history];
}

static acc_entry_t *_newest(const energy_acc_t *acc)
{
	return _at(acc, acc->count - 1);
}

static void _push(energy_acc_t *acc, const acc_entry_t *ent)
{
	if (acc->count == acc->cfg.history) {
		acc->head = (acc->head + 1) % acc->cfg.history;
		acc->count--;
		acc->dropped = true;
	}
	acc->count++;
	*_newest(acc) = *ent;
	acc->total = ent->e;
}

/* Index of the newest entry at or before t_ns (t_ns >= oldest). */
static size_t _find(const energy_acc_t *acc, uint64_t t_ns)
{
	size_t lo = 0, hi = acc->count - 1;

	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;

		if (_at(acc, mid)->t_ns <= t_ns)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* ------------------------------------------------------------- checks */

/* Power beyond INT64_MAX is a negative reading cast to unsigned. */
static bool _power_plausible(const energy_acc_t *acc, uint64_t power_mw)
{
	if (power_mw > INT64_MAX)
		return false;
	return !acc->cfg.max_power_mw || power_mw <= acc->cfg.max_power_mw;
}

static int _check_time(const energy_acc_t *acc, uint64_t t_ns)
{
	if (acc->count && t_ns <= _newest(acc)->t_ns)
		return -EINVAL;
	return 0;
}

static bool _spec_valid(const counter_spec_t *spec)
{
	return spec && spec->width_bits >= 1 && spec->width_bits <= 64 &&
	       isfinite(spec->mj_per_unit) && spec->mj_per_unit > 0;
}

static bool _spec_same(const counter_spec_t *a, const counter_spec_t *b)
{
	return a->width_bits == b->width_bits &&
	       a->mj_per_unit == b->mj_per_unit &&
	       a->significand_bits == b->significand_bits &&
	       a->registers == b->registers;
}

/* The counter's step at raw, in units: its register's, times the
 * registers it sums (counter_spec_t.registers). */
static uint64_t _step(const counter_spec_t *spec, uint64_t raw)
{
	uint64_t n = spec->registers > 1 ? spec->registers : 1;

	return counter_resolution(raw, spec->significand_bits) * n;
}

/* Mark an interval longer than gap_ns; returns the flag to set. */
static uint32_t _gap_flag(energy_acc_t *acc, uint64_t dt_ns)
{
	if (!acc->cfg.gap_ns || dt_ns <= acc->cfg.gap_ns)
		return 0;
	acc->gaps++;
	return ENERGY_SAMPLE_GAP;
}

/* ------------------------------------------------------------- public */

energy_acc_t *energy_acc_create(const energy_acc_config_t *cfg)
{
	energy_acc_t *acc;

	if (!cfg || cfg->history < 2 || cfg->max_power_mw > INT64_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if (!(acc = calloc(1, sizeof(*acc))))
		return NULL;
	acc->cfg = *cfg;
	if (!(acc->ring = calloc(cfg->history, sizeof(*acc->ring)))) {
		free(acc);
		return NULL;
	}
	return acc;
}

void energy_acc_destroy(energy_acc_t *acc)
{
	if (!acc)
		return;
	free(acc->ring);
	free(acc);
}

int energy_acc_add_power(energy_acc_t *acc, uint64_t t_ns, uint64_t power_mw)
{
	acc_entry_t ent = { .t_ns = t_ns, .power_mw = power_mw };
	int rc;

	if ((rc = _check_time(acc, t_ns)))
		return rc;
	if (!_power_plausible(acc, power_mw))
		return -ERANGE;

	ent.e = acc->total;
	if (acc->count) {
		const acc_entry_t *prev = _newest(acc);
		uint64_t dt = t_ns - prev->t_ns;

		_e_add_trapezoid(&ent.e, prev->power_mw, power_mw, dt);
		ent.flags |= _gap_flag(acc, dt);
	}
	/* Counter deltas across a power-only stretch would count it twice. */
	acc->have_base = false;
	_push(acc, &ent);
	return 0;
}

/*
 * Fill the interval up to ent->t_ns with the trapezoid from the previous
 * power to the reading's own (or, without one, the previous power held),
 * and start a new counter segment at raw.
 */
static void _counter_rebase(energy_acc_t *acc, acc_entry_t *ent,
			    const counter_spec_t *spec, uint64_t raw,
			    int64_t power_mw)
{
	ent->e = acc->total;
	if (acc->count) {
		const acc_entry_t *prev = _newest(acc);

		ent->power_mw = power_mw >= 0 ? (uint64_t) power_mw :
						prev->power_mw;
		_e_add_trapezoid(&ent->e, prev->power_mw, ent->power_mw,
				 ent->t_ns - prev->t_ns);
	} else {
		/* First reading: power unknown until a second one. */
		ent->power_mw = power_mw >= 0 ? (uint64_t) power_mw : 0;
	}
	ent->linear = false;

	acc->have_base = true;
	acc->spec = *spec;
	acc->base_raw = raw;
	acc->seg_start = ent->e;
	acc->seg_units = 0;
	acc->seg_base_step = _step(spec, raw);
	acc->last_step = acc->seg_base_step;
	acc->held = false;
}

/* Largest plausible delta from the base to raw over dt_ns (units). */
static uint64_t _max_delta(const energy_acc_t *acc, uint64_t raw,
			   uint64_t dt_ns)
{
	return counter_max_delta(acc->spec.mj_per_unit, acc->cfg.max_power_mw,
				 dt_ns, _step(&acc->spec, acc->base_raw),
				 _step(&acc->spec, raw));
}

static void _note_anomaly(energy_acc_t *acc, uint32_t kind, uint64_t raw,
			  uint64_t dt_ns, uint64_t max_delta)
{
	energy_acc_anomaly_t *a = &acc->anomaly;

	a->count++;
	a->kind = kind;
	a->prev_raw = acc->base_raw;
	a->raw = raw;
	a->dt_ns = dt_ns;
	a->max_delta = max_delta;
}

/*
 * Does raw at t_ns follow on from the held reading: a step from it that
 * MaxPower allows over their own interval, however short (a read kicked a
 * few ms later has a bound of a few units, and a counter that really moved
 * stays within it)?
 */
static bool _follows_held(const energy_acc_t *acc, uint64_t t_ns,
			  uint64_t raw)
{
	uint64_t max_delta, delta;

	if (!acc->held || t_ns <= acc->held_t_ns)
		return false;
	max_delta = counter_max_delta(acc->spec.mj_per_unit,
				      acc->cfg.max_power_mw,
				      t_ns - acc->held_t_ns,
				      _step(&acc->spec, acc->held_raw),
				      _step(&acc->spec, raw));
	return counter_step(acc->held_raw, raw, acc->spec.width_bits,
			    max_delta, &delta) != COUNTER_RESET;
}

/*
 * A reading implausible against the base that does not follow on from a
 * held one: dropped, and held in its place.  -EAGAIN when nothing was held
 * (the next reading decides), -ERANGE when it contradicts the reading held
 * before it (neither can be trusted yet: a meter giving garbage).
 */
static int _hold(energy_acc_t *acc, uint64_t t_ns, uint64_t raw,
		 uint64_t dt_ns, uint64_t max_delta)
{
	int rc = acc->held ? -ERANGE : -EAGAIN;

	_note_anomaly(acc, ENERGY_ACC_REJECTED, raw, dt_ns, max_delta);
	acc->held = true;
	acc->held_raw = raw;
	acc->held_t_ns = t_ns;
	return rc;
}

/*
 * Energy since prev of a counter interval with a power reading: the
 * trapezoid, clamped to within one step of what the counter counted (the
 * step of the base or of this reading, whichever is larger), and never
 * below prev's.  Returns the energy added; sets DISCIPLINED when clamped.
 */
static long double _disciplined(const energy_acc_t *acc,
				const acc_entry_t *prev,
				const acc_energy_t *counted, uint64_t power_mw,
				uint64_t dt_ns, uint32_t *flags)
{
	uint64_t step = acc->seg_base_step > acc->last_step ?
			acc->seg_base_step : acc->last_step;
	long double window = (long double) step * acc->spec.mj_per_unit;
	long double c = _e_signed_diff(counted, &prev->e);
	long double x = ((long double) prev->power_mw + power_mw) * dt_ns /
			(2.0L * SE_NS_PER_SEC);

	if (x < c - window) {
		x = c - window;
		*flags |= ENERGY_SAMPLE_DISCIPLINED;
	} else if (x > c + window) {
		x = c + window;
		*flags |= ENERGY_SAMPLE_DISCIPLINED;
	}
	return x > 0 ? x : 0;
}

/*
 * A counter alone: its power at ent, the average back to the newest entry
 * at least power_window_ns before it (or the oldest kept).  The last
 * interval alone may be a few ms (a read kicked by a step's start or an
 * sstat), where one count is tens of watts; that power is held across a
 * counter reset and extrapolated past the newest reading.
 */
static uint64_t _counter_power(const energy_acc_t *acc,
			       const acc_entry_t *ent)
{
	size_t i = acc->count - 1;
	const acc_entry_t *from = _at(acc, i);
	long double de_mj;

	while (i > 0 && ent->t_ns - from->t_ns < acc->cfg.power_window_ns)
		from = _at(acc, --i);
	de_mj = _e_signed_diff(&ent->e, &from->e);
	if (de_mj <= 0)
		return 0;
	/* mJ/ns x 1e12 = mW */
	return (uint64_t) llroundl(de_mj * SE_NS_PER_SEC /
				   (ent->t_ns - from->t_ns));
}

/* Accept a counted delta: the segment's count is kept exactly. */
static void _counter_advance(energy_acc_t *acc, acc_entry_t *ent,
			     uint64_t raw, uint64_t delta, int64_t power_mw)
{
	const acc_entry_t *prev = _newest(acc);
	acc_energy_t counted;

	acc->seg_units += delta;
	acc->base_raw = raw;
	acc->last_step = _step(&acc->spec, raw);
	acc->held = false;

	counted = acc->seg_start;
	_e_add(&counted, (long double) acc->seg_units * acc->spec.mj_per_unit);

	if (power_mw >= 0) {
		ent->power_mw = (uint64_t) power_mw;
		ent->e = prev->e;
		_e_add(&ent->e, _disciplined(acc, prev, &counted,
					     ent->power_mw,
					     ent->t_ns - prev->t_ns,
					     &ent->flags));
		ent->linear = false;
		return;
	}
	ent->e = counted;
	ent->linear = true;
	if (_e_signed_diff(&ent->e, &prev->e) < 0) {
		/* The discipline left prev above the count: hold. */
		ent->e = prev->e;
	}
	ent->power_mw = _counter_power(acc, ent);
}

int energy_acc_add_counter(energy_acc_t *acc, uint64_t t_ns, uint64_t raw,
			   const counter_spec_t *spec, int64_t power_mw)
{
	acc_entry_t ent = { .t_ns = t_ns, .flags = ENERGY_SAMPLE_COUNTER };
	counter_event_t ev;
	uint64_t dt, delta, max_delta;
	int rc;

	if (!_spec_valid(spec))
		return -EINVAL;
	if ((rc = _check_time(acc, t_ns)))
		return rc;
	if (power_mw >= 0 && !_power_plausible(acc, (uint64_t) power_mw))
		return -ERANGE;
	if (spec->width_bits < 64)
		raw &= (1ULL << spec->width_bits) - 1;

	if (!acc->have_base || !_spec_same(&acc->spec, spec)) {
		if (acc->count)
			ent.flags |= _gap_flag(acc, t_ns - _newest(acc)->t_ns);
		_counter_rebase(acc, &ent, spec, raw, power_mw);
		_push(acc, &ent);
		return 0;
	}

	dt = t_ns - _newest(acc)->t_ns;
	max_delta = _max_delta(acc, raw, dt);
	ev = counter_step(acc->base_raw, raw, spec->width_bits, max_delta,
			  &delta);

	if (counter_wrap_ambiguous(spec->width_bits, max_delta)) {
		/* So long a silence that whole wraps may hide in it. */
		ent.flags |= ENERGY_SAMPLE_GAP;
		if (!_gap_flag(acc, dt))
			acc->gaps++;
		_note_anomaly(acc, ENERGY_SAMPLE_GAP, raw, dt, max_delta);
		_counter_rebase(acc, &ent, spec, raw, power_mw);
	} else if (ev == COUNTER_RESET) {
		/*
		 * An implausible reading is dropped and held: a torn read
		 * of a register pair or a garbled reply, unless the next
		 * reading follows on from it, which only a counter that
		 * really restarted or jumped does.  Decided by the two
		 * readings themselves, not by how many reads (kicked ones
		 * a few ms apart, or periodic ones) fell after the jump.
		 */
		if (!_follows_held(acc, t_ns, raw))
			return _hold(acc, t_ns, raw, dt, max_delta);
		_note_anomaly(acc, ENERGY_SAMPLE_RESET, raw, dt, max_delta);
		ent.flags |= ENERGY_SAMPLE_RESET | ENERGY_SAMPLE_GAP;
		if (!_gap_flag(acc, dt))
			acc->gaps++;
		_counter_rebase(acc, &ent, spec, raw, power_mw);
	} else {
		if (ev == COUNTER_WRAPPED)
			ent.flags |= ENERGY_SAMPLE_WRAP;
		ent.flags |= _gap_flag(acc, dt);
		_counter_advance(acc, &ent, raw, delta, power_mw);
	}
	_push(acc, &ent);
	return 0;
}

/* Energy after entry a by tau_ns, inside the interval a..b. */
static long double _interpolate(const acc_entry_t *a, const acc_entry_t *b,
				uint64_t tau_ns)
{
	long double span = b->t_ns - a->t_ns;
	long double de = _e_diff(&b->e, &a->e);
	long double tau = tau_ns, p0 = a->power_mw, p1 = b->power_mw;
	long double x;

	long double whole = (p0 + p1) * span / (2 * SE_NS_PER_SEC);

	if (b->linear || whole <= 0) {
		x = de * tau / span;
	} else {
		/*
		 * integral of p0 + (p1 - p0) s / span over s in [0, tau],
		 * scaled to the interval's energy: the same for a pure
		 * trapezoid, and a disciplined interval keeps its shape.
		 */
		x = (p0 * tau + (p1 - p0) * tau * tau / (2 * span)) /
		    SE_NS_PER_SEC;
		x *= de / whole;
	}
	/* Rounding must not step outside the interval's own energies. */
	if (x < 0)
		x = 0;
	if (x > de)
		x = de;
	return x;
}

static uint64_t _floor_mj(const acc_energy_t *base, long double add_mj)
{
	return base->mj + (uint64_t) floorl(base->frac + add_mj);
}

int energy_acc_energy_at(const energy_acc_t *acc, uint64_t t_ns,
			 uint64_t *energy_mj)
{
	const acc_entry_t *a, *last;
	acc_energy_t e;
	uint64_t dt;
	size_t i;

	*energy_mj = 0;
	if (!acc->count)
		return -ENODATA;

	a = _at(acc, 0);
	if (t_ns < a->t_ns) {
		*energy_mj = a->e.mj;
		return acc->dropped ? -ERANGE : -ENODATA;
	}

	i = _find(acc, t_ns);
	a = _at(acc, i);
	if (i + 1 < acc->count) {
		*energy_mj = _floor_mj(&a->e, _interpolate(a, _at(acc, i + 1),
							  t_ns - a->t_ns));
		return 0;
	}

	last = a;
	dt = t_ns - last->t_ns;
	if (acc->cfg.max_extrapolate_ns && dt > acc->cfg.max_extrapolate_ns)
		dt = acc->cfg.max_extrapolate_ns;
	e = last->e;
	_e_add_flat(&e, last->power_mw, dt);
	*energy_mj = e.mj;
	return 0;
}

int energy_acc_energy_between(const energy_acc_t *acc, uint64_t t0_ns,
			      uint64_t t1_ns, uint64_t *energy_mj)
{
	uint64_t e0, e1;
	int rc0, rc1;

	*energy_mj = 0;
	if (t0_ns > t1_ns)
		return -EINVAL;
	rc0 = energy_acc_energy_at(acc, t0_ns, &e0);
	rc1 = energy_acc_energy_at(acc, t1_ns, &e1);
	if (e1 > e0)
		*energy_mj = e1 - e0;
	return rc0 ? rc0 : rc1;
}

uint32_t energy_acc_flags_between(const energy_acc_t *acc, uint64_t t0_ns,
				  uint64_t t1_ns)
{
	uint32_t flags = 0;
	size_t i = 0;

	if (!acc->count || t0_ns >= t1_ns)
		return 0;
	if (t0_ns < _at(acc, 0)->t_ns) {
		/* what happened before the oldest sample kept is unknown */
		if (acc->dropped)
			flags |= ENERGY_SAMPLE_GAP;
	} else {
		i = _find(acc, t0_ns) + 1;	/* the first after t0 */
	}
	for (; i < acc->count && _at(acc, i)->t_ns <= t1_ns; i++)
		flags |= _at(acc, i)->flags;
	/* t1 inside the interval of the next sample: part of it is ours */
	if (i < acc->count && (!i || _at(acc, i - 1)->t_ns < t1_ns))
		flags |= _at(acc, i)->flags;
	return flags;
}

int energy_acc_last(const energy_acc_t *acc, energy_sample_t *out)
{
	const acc_entry_t *last;

	if (!acc->count)
		return -ENODATA;
	last = _newest(acc);
	out->t_ns = last->t_ns;
	out->energy_mj = last->e.mj;
	out->power_mw = last->power_mw;
	out->flags = last->flags;
	return 0;
}

void energy_acc_anomaly(const energy_acc_t *acc, energy_acc_anomaly_t *out)
{
	*out = acc->anomaly;
}

double energy_acc_counter_step_mj(const energy_acc_t *acc)
{
	if (!acc->have_base)
		return 0;
	return (double) acc->last_step * acc->spec.mj_per_unit;
}

size_t energy_acc_count(const energy_acc_t *acc)
{
	return acc->count;
}

unsigned long energy_acc_gaps(const energy_acc_t *acc)
{
	return acc->gaps;
}
