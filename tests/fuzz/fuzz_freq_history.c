/*
 * fuzz_freq_history - the history file of the min_energy / min_time
 * policies (src/cpufreq/freq_history.c), then the model that reads it
 * (freq_model.c), as job_submit/energy_policy does at submission.
 *
 * Input: the history file.  Invariants:
 *  - it always loads (a bad line is skipped and counted, never fatal);
 *  - every run kept has a key without blanks, a frequency > 0, a finite
 *    elapsed time > 0 and a finite energy >= 0;
 *  - runs kept + bad lines <= lines in the file;
 *  - the runs of a key are exactly the entries with that key;
 *  - aggregated points are strictly ascending in kHz, medians within the
 *    runs' range at that frequency, counts adding up to the runs;
 *  - a choice (min_energy, min_time) is one of the points' frequencies,
 *    within the allowed range, or says there is no history.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <math.h>

#include "freq_history.h"
#include "freq_model.h"

#define MAX_RUNS 256

static void check_choice(const freq_choice_t *ch, int rc,
			 const freq_point_t *pts, size_t n_pts,
			 const freq_model_params_t *prm)
{
	size_t i;

	if (rc) {
		FUZZ_CHECK(rc == -ENODATA && ch->status ==
			   FREQ_CHOICE_NO_HISTORY, "rc %d status %d", rc,
			   ch->status);
		return;
	}
	for (i = 0; i < n_pts && pts[i].khz != ch->khz; i++)
		;
	FUZZ_CHECK(i < n_pts, "chose %u kHz, not a measured frequency",
		   ch->khz);
	FUZZ_CHECK(ch->khz >= prm->min_khz &&
		   (!prm->max_khz || ch->khz <= prm->max_khz),
		   "chose %u kHz outside [%u, %u]", ch->khz, prm->min_khz,
		   prm->max_khz);
	FUZZ_CHECK(isfinite(ch->time_s) && isfinite(ch->energy_j),
		   "prediction %g s %g J", ch->time_s, ch->energy_j);
}

static void check_model(const freq_run_t *runs, size_t n, const uint8_t *d)
{
	freq_model_params_t prm = {
		.max_slowdown = d[0] / 100.0,
		.energy_tolerance = d[1] / 1000.0,
		.energy_cap_j = d[2] * 1000.0,
		.power_cap_w = d[3] * 10.0,
		.min_khz = d[4] * 100000u,
		.max_khz = d[5] ? (d[4] + d[5]) * 100000u : 0,
		.min_freqs = 1 + d[6] % 4,
	};
	freq_point_t pts[MAX_RUNS];
	freq_choice_t ch;
	size_t n_pts, total = 0;

	n_pts = freq_model_aggregate(runs, n, &prm, pts, MAX_RUNS);
	FUZZ_CHECK(n_pts <= n, "%zu points from %zu runs", n_pts, n);
	for (size_t i = 0; i < n_pts; i++) {
		double tmin = INFINITY, tmax = -INFINITY;
		double emin = INFINITY, emax = -INFINITY;

		FUZZ_CHECK(i == 0 || pts[i].khz > pts[i - 1].khz,
			   "points not ascending at %zu", i);
		for (size_t r = 0; r < n; r++) {
			if (runs[r].khz != pts[i].khz)
				continue;
			tmin = fmin(tmin, runs[r].elapsed_s);
			tmax = fmax(tmax, runs[r].elapsed_s);
			emin = fmin(emin, runs[r].energy_j);
			emax = fmax(emax, runs[r].energy_j);
		}
		FUZZ_CHECK(pts[i].n >= 1 && pts[i].time_s >= tmin &&
			   pts[i].time_s <= tmax && pts[i].energy_j >= emin &&
			   pts[i].energy_j <= emax,
			   "%u kHz: median %g s %g J outside the runs", pts[i].khz,
			   pts[i].time_s, pts[i].energy_j);
		total += pts[i].n;
	}
	FUZZ_CHECK(total <= n, "points count %zu runs of %zu", total, n);

	check_choice(&ch, freq_model_min_energy(runs, n, &prm, &ch), pts,
		     n_pts, &prm);
	check_choice(&ch, freq_model_min_time(runs, n, &prm, &ch), pts,
		     n_pts, &prm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	freq_history_t h;
	freq_run_t runs[MAX_RUNS];
	uint8_t prm[7] = { 5, 20, 0, 0, 0, 0, 1 };
	char err[512];
	size_t lines = 0, n;
	int rc;

	for (size_t i = 0; i < size; i++)
		lines += data[i] == '\n';
	lines += size && data[size - 1] != '\n';
	memcpy(prm, data, size < sizeof(prm) ? size : sizeof(prm));

	freq_history_init(&h);
	rc = freq_history_load(&h, fuzz_file(data, size), err, sizeof(err));
	FUZZ_CHECK(rc == 0, "history refused: %s", err);
	FUZZ_CHECK(h.n + h.bad_lines <= lines, "%zu runs + %u bad of %zu lines",
		   h.n, h.bad_lines, lines);
	for (size_t i = 0; i < h.n; i++) {
		const freq_hist_entry_t *e = &h.e[i];

		FUZZ_CHECK(e->key[0] && e->key[0] != '#' &&
			   !strpbrk(e->key, " \t\r\n"), "key '%s'", e->key);
		FUZZ_CHECK(e->run.khz > 0 && isfinite(e->run.elapsed_s) &&
			   e->run.elapsed_s > 0 && isfinite(e->run.energy_j) &&
			   e->run.energy_j >= 0, "run %u kHz %g s %g J",
			   e->run.khz, e->run.elapsed_s, e->run.energy_j);
	}
	if (h.n) {
		size_t same = 0;

		for (size_t i = 0; i < h.n; i++)
			same += !strcmp(h.e[i].key, h.e[0].key);
		n = freq_history_runs(&h, h.e[0].key, runs, MAX_RUNS);
		FUZZ_CHECK(n == (same < MAX_RUNS ? same : MAX_RUNS),
			   "%zu runs of '%s', %zu entries", n, h.e[0].key,
			   same);
		check_model(runs, n, prm);
	}
	freq_history_free(&h);
	return 0;
}
