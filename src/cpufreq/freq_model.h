/*
 * freq_model.h - choose a CPU frequency from an application's history.
 *
 * A history is a list of runs (frequency -> elapsed seconds, energy in
 * joules).  Repeats at one frequency are aggregated by their median, so one
 * noisy run moves nothing.  Only measured frequencies are candidates (no
 * extrapolation beyond the evidence).
 *
 *   min_energy: least median energy among the frequencies whose median time
 *     is within (1 + max_slowdown) of the fastest one's; energies within
 *     energy_tolerance of that least energy count as equal and the highest
 *     such frequency wins, so a flat curve (DVFS does not pay) runs fast.
 *   min_time: least median time among the frequencies within the energy cap
 *     (J) and the power cap (W, energy / time); ties go to the lower energy.
 *     When no frequency meets the caps, the one with the least average power.
 */
#ifndef SE_FREQ_MODEL_H
#define SE_FREQ_MODEL_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint32_t khz;
	double elapsed_s;
	double energy_j;
} freq_run_t;

typedef struct {
	uint32_t khz;
	double time_s;		/* median */
	double energy_j;	/* median */
	unsigned n;		/* runs aggregated */
} freq_point_t;

typedef struct {
	double max_slowdown;	  /* min_energy: 0.05 = 5 % */
	double energy_tolerance;  /* min_energy: 0.02 = 2 % */
	double energy_cap_j;	  /* min_time: 0 = none */
	double power_cap_w;	  /* min_time: 0 = none */
	uint32_t min_khz, max_khz; /* allowed range; 0 = open */
	unsigned min_freqs;	  /* fewer distinct frequencies: no choice */
} freq_model_params_t;

typedef enum {
	FREQ_CHOICE_OK = 0,
	FREQ_CHOICE_NO_HISTORY,	   /* too few frequencies measured */
	FREQ_CHOICE_CAP_UNMET,	   /* min_time: nothing met the caps */
} freq_choice_status_t;

typedef struct {
	freq_choice_status_t status;
	uint32_t khz;		/* 0 when NO_HISTORY */
	double time_s, energy_j;	/* predicted (the medians) */
} freq_choice_t;

/*
 * Aggregate runs (any order; runs with khz 0, non-finite or negative values
 * are skipped) into points sorted by ascending khz, at most max_points.
 * Only frequencies within [min_khz, max_khz] of prm (if prm) are kept.
 * Returns the number of points.
 */
size_t freq_model_aggregate(const freq_run_t *runs, size_t n_runs,
			    const freq_model_params_t *prm,
			    freq_point_t *points, size_t max_points);

/* Choose with min_energy / min_time.  Always fills *out; returns 0, or
 * -ENODATA when there is too little history (status NO_HISTORY). */
int freq_model_min_energy(const freq_run_t *runs, size_t n_runs,
			  const freq_model_params_t *prm, freq_choice_t *out);
int freq_model_min_time(const freq_run_t *runs, size_t n_runs,
			const freq_model_params_t *prm, freq_choice_t *out);

#endif
