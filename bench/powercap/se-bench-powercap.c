/*
 * se-bench-powercap.c - the cluster power cap's controller (issue #45,
 * src/powercap/pcap_core.c) on simulated clusters, two tables:
 *
 * 1. Round time: pcap_round() over 1,000 and 10,000 nodes (a mix of CPU
 *    and GPU nodes, donors and greedy ones, 1 % silent, 1 % with failing
 *    knobs), the nodes' draw following their new caps between rounds as a
 *    live cluster's would; CPU time of the calling thread per round.
 *
 * 2. Load following: NODES nodes (70 % CPU nodes 100 W idle, floor 120,
 *    max 450; 30 % GPU nodes 250 W idle, floor 350, max 2000) each run a
 *    seeded list of jobs filling SECONDS of uncapped time: jobs of 2-8
 *    phases (CPU jobs: compute 320-440 W, I/O 140-180 W; GPU jobs:
 *    1300-1950 W and 450-600 W), 5-40 s each, idle gaps of 0-20 s between.
 *    The cap is the workload's mean uncapped draw / 1.3.  A node's power
 *    is min(demand, cap in force): at once when that is up, with a
 *    first-order lag TAU when down (a limit enforced over RAPL's time
 *    window, a BMC's loop); a job phase progresses at
 *    (power - idle) / (demand - idle) of full speed (speed linear in the
 *    dynamic power: a conservative model for both policies), idle gaps at
 *    wall speed.  Policies on the same workload:
 *      uncapped   the reference (its draw is 130 % of the cap);
 *      alike      every node capped once at the same fraction of its
 *                 floor..max range, the caps summing to the cap (capping
 *                 every node alike, heterogeneity-aware);
 *      greedy     the controller's own logic (src/powercap/pcap_ctl.c over
 *                 pcap_round) every PERIOD s; each node's agent reports
 *                 its mean power over the last 0.1 s every 0.1 s,
 *                 answering the last cap its knobs applied; a cap sent
 *                 lands LAT later; raises wait until every lowered node
 *                 reports under its new cap + 1 % or PCAP_GATE s after
 *                 the round; from a cold start with every node uncapped;
 *      greedy-unordered  the same with no gate: raises go with the
 *                 lowers (what the order buys).
 *    Columns: slowdown = the jobs' total time / their uncapped time - 1;
 *    over = the 1 s windows whose mean total power exceeds the cap by more
 *    than 0.1 % (after the cold start), the worst excess; peak = the worst
 *    excess of a 0.1 s mean (what a breaker sees, and what the order of
 *    lowers before raises is for); cold = the time from start until
 *    the first 1 s window under the cap; raise = from a node's demand going
 *    above its cap to the controller raising that cap (median, max; only
 *    where it was raised before the demand fell).
 *
 * usage: se-bench-powercap [NODES [SECONDS [SEED]]]   (100, 600, 1)
 * Environment: PCAP_PERIOD (1.0 s), PCAP_LAT (0.2 s), PCAP_TAU (0.5 s),
 * PCAP_GATE (0.5 s).
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pcap_core.h"
#include "pcap_ctl.h"

#define DT 0.01			/* simulation step, s */
#define OVERSUBSCRIBE 1.3
#define SETTLED 1.01		/* a lowered node is under its cap + 1 % */
static double GATE_TIMEOUT = 0.5;	/* s after the round: raise anyway */
#define OVER_TOL 1.001		/* a window is over at cap + 0.1 % */
#define PEAK_S 0.1		/* the short window of the peak column */
#define REPORT_S 0.1		/* agents report their mean power */

/* -------------------------------------------------------- round timing */

static double _cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int _cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void _round_time(size_t n, int rounds, unsigned seed)
{
	pcap_node_t *nd = calloc(n, sizeof(*nd));
	double *demand = calloc(n, sizeof(*demand)), *ms;
	pcap_params_t p = {
		.headroom_mw = PCAP_DEFAULT_HEADROOM_MW,
		.at_cap_mw = PCAP_DEFAULT_AT_CAP_MW,
		.hysteresis_mw = PCAP_DEFAULT_HYSTERESIS_MW,
	};
	pcap_stats_t st = { 0 };
	uint64_t total_demand = 0;

	ms = calloc(rounds, sizeof(*ms));
	for (size_t i = 0; i < n; i++) {
		bool gpu = i % 10 < 3;

		nd[i].floor_mw = gpu ? 350000 : 120000;
		nd[i].max_mw = gpu ? 2000000 : 450000;
		nd[i].cap_mw = nd[i].max_mw;
		nd[i].flags = PCAP_MEASURED | PCAP_ENFORCED;
		if (i % 100 == 17)
			nd[i].flags = PCAP_ENFORCED;		/* silent */
		if (i % 100 == 53)
			nd[i].flags = PCAP_MEASURED;		/* failing */
		demand[i] = gpu ? 400 + rand_r(&seed) % 1550 :
				  110 + rand_r(&seed) % 330;
		total_demand += (uint64_t)(demand[i] * 1000);
	}
	p.cap_mw = (uint64_t)(total_demand / OVERSUBSCRIBE);
	for (int r = 0; r < rounds; r++) {
		double t0;

		for (size_t i = 0; i < n; i++) {
			uint32_t d = (uint32_t)(demand[i] * 1000);

			if (r && !(rand_r(&seed) % 20))	/* 5 % change */
				demand[i] = nd[i].max_mw / 1000.0 *
					    (0.25 + (rand_r(&seed) % 75) / 100.0);
			if (r)
				nd[i].cap_mw = nd[i].new_cap_mw;
			nd[i].power_mw = d < nd[i].cap_mw ? d : nd[i].cap_mw;
		}
		t0 = _cpu_ms();
		pcap_round(&p, nd, n, &st);
		ms[r] = _cpu_ms() - t0;
	}
	qsort(ms, rounds, sizeof(*ms), _cmp_d);
	printf("| %6zu | %6d | %8.3f | %8.3f | %8.3f | %6zu | %6zu | %6zu |\n",
	       n, rounds, ms[rounds / 2], ms[(int)(rounds * 0.99)],
	       ms[rounds - 1], st.n_greedy, st.n_donor, st.n_changed);
	free(ms);
	free(demand);
	free(nd);
}

/* --------------------------------------------------------- load following */

typedef struct {
	double demand_w, work_s;
	bool job;
} phase_t;

typedef struct {
	bool gpu;
	double idle_w;
	uint32_t floor_mw, max_mw;
	phase_t *ph;
	size_t n_ph;
} sim_node_t;

typedef struct {
	size_t ph;		/* current phase */
	double left_s;		/* its work left */
	double power_w;
	double cap_w;		/* in force */
	double pend_cap_w;	/* sent, to take effect at pend_t */
	double pend_t;		/* -1: none */
	uint64_t pend_seq, applied_seq;
	double energy_j;	/* since the agent's last report */
	double job_time_s;	/* wall time spent in job phases */
	double throttled_since;	/* -1: not throttled */
} node_state_t;

typedef struct {
	const char *name;
	double slowdown, over_worst_w, cold_s, makespan_s, peak_w;
	int over_windows, windows;
	double raise_med_s, raise_max_s;
	size_t raises;
} sim_result_t;

typedef enum { POL_UNCAPPED, POL_ALIKE, POL_GREEDY, POL_UNORDERED } pol_t;

static double _unif(unsigned *seed, double lo, double hi)
{
	return lo + (hi - lo) * (rand_r(seed) / (double)RAND_MAX);
}

static void _workload(sim_node_t *nodes, size_t n, double seconds,
		      unsigned seed, double *mean_w, double *job_s)
{
	double energy = 0;

	*job_s = 0;
	for (size_t i = 0; i < n; i++) {
		sim_node_t *s = &nodes[i];
		double t = 0;
		size_t cap = 16;

		s->gpu = i % 10 < 3;
		s->idle_w = s->gpu ? 250 : 100;
		s->floor_mw = s->gpu ? 350000 : 120000;
		s->max_mw = s->gpu ? 2000000 : 450000;
		s->ph = malloc(cap * sizeof(*s->ph));
		s->n_ph = 0;
		while (t < seconds) {
			int phases = 2 + rand_r(&seed) % 7;

			for (int k = 0; k <= phases && t < seconds; k++) {
				phase_t *ph;
				bool gap = k == phases;

				if (s->n_ph == cap)
					s->ph = realloc(s->ph, (cap *= 2) *
							sizeof(*s->ph));
				ph = &s->ph[s->n_ph++];
				ph->job = !gap;
				ph->work_s = gap ? _unif(&seed, 0, 20) :
						   _unif(&seed, 5, 40);
				if (t + ph->work_s > seconds)
					ph->work_s = seconds - t;
				if (gap)
					ph->demand_w = s->idle_w;
				else if (k % 2 == 0)
					ph->demand_w = s->gpu ?
						_unif(&seed, 1300, 1950) :
						_unif(&seed, 320, 440);
				else
					ph->demand_w = s->gpu ?
						_unif(&seed, 450, 600) :
						_unif(&seed, 140, 180);
				t += ph->work_s;
				energy += ph->demand_w * ph->work_s;
				if (ph->job)
					*job_s += ph->work_s;
			}
		}
	}
	*mean_w = energy / seconds;
}

/* The caps of "alike": one fraction L of every node's range, summing to
 * the cap (pcap_round with every node greedy gives exactly that). */
static void _alike_caps(const sim_node_t *nodes, size_t n, uint64_t cap_mw,
			double *cap_w)
{
	pcap_node_t *nd = calloc(n, sizeof(*nd));
	pcap_params_t p = {
		.cap_mw = cap_mw, .headroom_mw = PCAP_DEFAULT_HEADROOM_MW,
		.at_cap_mw = PCAP_DEFAULT_AT_CAP_MW, .hysteresis_mw = 0,
	};

	for (size_t i = 0; i < n; i++) {
		nd[i].floor_mw = nodes[i].floor_mw;
		nd[i].max_mw = nodes[i].max_mw;
		nd[i].cap_mw = nd[i].power_mw = nodes[i].max_mw;
		nd[i].flags = PCAP_MEASURED | PCAP_ENFORCED;
	}
	pcap_round(&p, nd, n, NULL);
	for (size_t i = 0; i < n; i++)
		cap_w[i] = nd[i].new_cap_mw / 1000.0;
	free(nd);
}

/* The controller's messages land on a node after the knob latency (a
 * newer one replaces one still on its way). */
typedef struct {
	node_state_t *ns;
	double t, lat;
} wire_t;

static void _send(void *arg, size_t i, uint32_t cap_mw, uint64_t seq)
{
	wire_t *w = arg;

	w->ns[i].pend_cap_w = cap_mw / 1000.0;
	w->ns[i].pend_t = w->t + w->lat;
	w->ns[i].pend_seq = seq;
}

/* Every agent reports its mean power over the last REPORT_S, answering
 * the last message its knobs applied. */
static void _reports(pcap_ctl_t *ctl, node_state_t *ns, size_t n,
		     int64_t now_ns)
{
	for (size_t i = 0; i < n; i++) {
		pcap_ctl_answer(ctl, i, now_ns, ns[i].applied_seq,
				(uint32_t)(ns[i].energy_j / REPORT_S * 1000),
				true);
		ns[i].energy_j = 0;
	}
}

static void _simulate(const sim_node_t *nodes, size_t n, pol_t pol,
		      uint64_t cap_mw, double period, double lat, double tau,
		      double job_s, sim_result_t *res)
{
	node_state_t *ns = calloc(n, sizeof(*ns));
	pcap_node_t *nd = calloc(n, sizeof(*nd));
	double *alike = calloc(n, sizeof(*alike));
	double *raise = NULL, cap_w = cap_mw / 1000.0, window_j = 0;
	double t = 0, next_round = period, next_window = 1.0;
	double peak_j = 0, next_peak = PEAK_S, next_report = REPORT_S;
	bool ctl_on = pol == POL_GREEDY || pol == POL_UNORDERED;
	pcap_ctl_t ctl;
	wire_t wire = { .ns = ns, .lat = lat };
	double job_total = 0, alpha = 1 - exp(-DT / tau);
	size_t n_raise = 0, raise_cap = 0, busy = n;
	bool cold = pol == POL_GREEDY || pol == POL_UNORDERED;
	pcap_params_t p = {
		.cap_mw = cap_mw, .headroom_mw = PCAP_DEFAULT_HEADROOM_MW,
		.at_cap_mw = PCAP_DEFAULT_AT_CAP_MW,
		.hysteresis_mw = PCAP_DEFAULT_HYSTERESIS_MW,
	};

	memset(res, 0, sizeof(*res));
	for (size_t i = 0; i < n; i++) {
		nd[i].floor_mw = nodes[i].floor_mw;
		nd[i].max_mw = nodes[i].max_mw;
	}
	/* unordered: no gate, the raises go with the lowers */
	if (ctl_on && pcap_ctl_init(&ctl, &p, nd, n, pol == POL_GREEDY ?
				    (int64_t)(GATE_TIMEOUT * 1e9) : 0,
				    3 * (int64_t)(period * 1e9)))
		abort();
	if (pol == POL_ALIKE)
		_alike_caps(nodes, n, cap_mw, alike);
	for (size_t i = 0; i < n; i++) {
		ns[i].left_s = nodes[i].ph[0].work_s;
		ns[i].cap_w = pol == POL_ALIKE ? alike[i] :
			      nodes[i].max_mw / 1000.0;
		ns[i].power_w = nodes[i].idle_w;
		ns[i].pend_t = -1;
		ns[i].throttled_since = -1;
	}
	while (busy) {
		double total = 0;

		busy = 0;
		for (size_t i = 0; i < n; i++) {
			node_state_t *s = &ns[i];
			const sim_node_t *sn = &nodes[i];
			const phase_t *ph;
			double target, speed;

			if (s->pend_t >= 0 && t >= s->pend_t) {
				if (s->pend_cap_w > s->cap_w &&
				    s->throttled_since >= 0) {
					if (n_raise == raise_cap)
						raise = realloc(raise,
							(raise_cap = raise_cap *
							 2 + 64) *
							sizeof(*raise));
					raise[n_raise++] =
						t - s->throttled_since;
					s->throttled_since = -1;
				}
				s->cap_w = s->pend_cap_w;
				s->applied_seq = s->pend_seq;
				s->pend_t = -1;
			}
			if (s->ph >= sn->n_ph) {
				target = sn->idle_w;
			} else {
				ph = &sn->ph[s->ph];
				target = ph->demand_w < s->cap_w ?
					 ph->demand_w : s->cap_w;
				if (ph->demand_w > s->cap_w + 0.5) {
					if (s->throttled_since < 0)
						s->throttled_since = t;
				} else {
					s->throttled_since = -1;
				}
			}
			/* a draw going up follows the demand at once; going
			 * down under a new cap it takes the limit's window */
			if (target >= s->power_w)
				s->power_w = target;
			else
				s->power_w += (target - s->power_w) * alpha;
			s->energy_j += s->power_w * DT;
			total += s->power_w;
			if (s->ph >= sn->n_ph)
				continue;
			busy++;
			ph = &sn->ph[s->ph];
			if (!ph->job) {
				speed = 1;
			} else {
				speed = (s->power_w - sn->idle_w) /
					(ph->demand_w - sn->idle_w);
				speed = speed < 0 ? 0 : speed > 1 ? 1 : speed;
				s->job_time_s += DT;
			}
			s->left_s -= speed * DT;
			if (s->left_s <= 0 && ++s->ph < sn->n_ph)
				s->left_s = sn->ph[s->ph].work_s;
		}
		window_j += total * DT;
		peak_j += total * DT;
		t += DT;
		if (t >= next_peak - 1e-9) {
			if (!cold && pol != POL_UNCAPPED &&
			    peak_j / PEAK_S - cap_w > res->peak_w)
				res->peak_w = peak_j / PEAK_S - cap_w;
			peak_j = 0;
			next_peak += PEAK_S;
		}
		if (t >= next_window - 1e-9) {
			double mean = window_j;	/* over 1 s */

			if (cold && mean <= cap_w * OVER_TOL) {
				cold = false;
				res->cold_s = next_window;
			} else if (!cold && pol != POL_UNCAPPED) {
				res->windows++;
				if (mean > cap_w * OVER_TOL) {
					res->over_windows++;
					if (mean - cap_w > res->over_worst_w)
						res->over_worst_w =
							mean - cap_w;
				}
			}
			window_j = 0;
			next_window += 1.0;
		}
		if (!ctl_on)
			continue;
		wire.t = t;
		if (t >= next_report - 1e-9) {
			_reports(&ctl, ns, n, (int64_t)(t * 1e9));
			next_report += REPORT_S;
		}
		if (t >= next_round - 1e-9) {
			pcap_ctl_round(&ctl, (int64_t)(t * 1e9), _send, &wire);
			next_round += period;
		}
		pcap_ctl_tick(&ctl, (int64_t)(t * 1e9), _send, &wire);
	}
	if (ctl_on)
		pcap_ctl_free(&ctl);
	for (size_t i = 0; i < n; i++)
		job_total += ns[i].job_time_s;
	res->slowdown = job_total / job_s - 1;
	res->makespan_s = t;
	res->raises = n_raise;
	if (n_raise) {
		qsort(raise, n_raise, sizeof(*raise), _cmp_d);
		res->raise_med_s = raise[n_raise / 2];
		res->raise_max_s = raise[n_raise - 1];
	}
	free(raise);
	free(alike);
	free(nd);
	free(ns);
}

static double _env(const char *name, double dflt)
{
	const char *v = getenv(name);

	return v && *v ? atof(v) : dflt;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 100;
	double seconds = argc > 2 ? atof(argv[2]) : 600;
	unsigned seed = argc > 3 ? strtoul(argv[3], NULL, 10) : 1;
	double period = _env("PCAP_PERIOD", 1.0), lat = _env("PCAP_LAT", 0.2);
	double tau = _env("PCAP_TAU", 0.5), mean_w, job_s;
	GATE_TIMEOUT = _env("PCAP_GATE", GATE_TIMEOUT);
	static const char *const names[] = { "uncapped", "alike", "greedy",
					     "greedy-unordered" };
	sim_node_t *nodes = calloc(n, sizeof(*nodes));
	uint64_t cap_mw;

	if (!n || seconds <= 0 || period <= 0 || lat < 0 || tau <= 0) {
		fprintf(stderr, "usage: se-bench-powercap [NODES [SECONDS "
			"[SEED]]] (PCAP_PERIOD, PCAP_LAT, PCAP_TAU > 0)\n");
		return 2;
	}
	printf("## pcap_round: CPU time per round (ms)\n\n");
	printf("|  nodes | rounds |   median |      p99 |      max | greedy"
	       " |  donor | changed |\n");
	printf("|-------:|-------:|---------:|---------:|---------:|-------:"
	       "|-------:|-------:|\n");
	_round_time(1000, 500, seed);
	_round_time(10000, 100, seed);

	_workload(nodes, n, seconds, seed, &mean_w, &job_s);
	cap_mw = (uint64_t)(mean_w / OVERSUBSCRIBE * 1000);
	printf("\n## load following: %zu nodes, %.0f s of work each, "
	       "uncapped mean draw %.0f W, cap %.0f W (%.0f %%)\n",
	       n, seconds, mean_w, cap_mw / 1000.0, OVERSUBSCRIBE * 100);
	printf("period %.2f s, knob latency %.2f s, power lag tau %.2f s, "
	       "raise gate %.2f s, seed %u\n\n", period, lat, tau,
	       GATE_TIMEOUT, seed);
	printf("| policy           | slowdown | makespan s | over/windows |"
	       " worst over W | peak 0.1 s W | cold s | raise med s |"
	       " raise max s | raises |\n");
	printf("|------------------|---------:|-----------:|-------------:|"
	       "-------------:|-------------:|-------:|------------:|"
	       "------------:|-------:|\n");
	for (int pol = POL_UNCAPPED; pol <= POL_UNORDERED; pol++) {
		sim_result_t r;

		_simulate(nodes, n, pol, cap_mw, period, lat, tau, job_s, &r);
		printf("| %-16s | %7.1f%% | %10.1f | %5d/%-6d | %12.1f | "
		       "%12.1f | %6.1f | %11.2f | %11.2f | %6zu |\n",
		       names[pol], r.slowdown * 100, r.makespan_s,
		       r.over_windows, r.windows, r.over_worst_w, r.peak_w,
		       r.cold_s, r.raise_med_s,
		       r.raise_max_s, r.raises);
	}
	for (size_t i = 0; i < n; i++)
		free(nodes[i].ph);
	free(nodes);
	return 0;
}
