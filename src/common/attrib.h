/*
 * attrib.h - a shared node's measured energy split among its jobs and steps.
 *
 * Slurm-free.  At every meter sample, slurmd's sampler hands the node's
 * cumulative energy and a scan of the jobs' and steps' cgroups
 * (cg_cpu.h) to attrib_interval(), which splits the energy measured since
 * the previous sample:
 *
 *  1. GPU part: each GPU's energy in the interval to the step(s) holding
 *     it (attrib_interval_gpus: the holders come from the masks the steps
 *     registered with attrib_step_gpus); a GPU nobody holds is
 *     unattributed, but stays in the rest (3.) when a step present in the
 *     interval could not tell its GPUs.  A step that began less than 5 s
 *     ago and could not tell them yet (it asked before Slurm set up its
 *     devices; its next question tells them) makes the energy of the GPUs
 *     nobody holds wait, held (gpu_held_mj), until no such step is left
 *     (a held span of at most 5 s): then it goes to the holders the masks
 *     give over the held span, by their registered begin and end, the
 *     rest as above.  A GPU that could not be read stays in the rest.  When the GPUs together report more than the
 *     node's meter, each is cut in proportion to fit (counted in the
 *     totals).
 *  2. Idle part: idle power x interval (EnergyIdleWatts, or learned: the
 *     median power, less the GPUs read, of the last 64 intervals with no
 *     job on the node and no cut, once there are 3), at most what is
 *     left.  With EnergyIdle=share it goes to
 *     the jobs by allocated CPUs x time present in the interval, the
 *     unallocated CPUs' part unattributed; with EnergyIdle=none all of it is
 *     unattributed.
 *  3. The rest, by the jobs' CPU time in the interval (cgroup deltas); when
 *     no job used CPU, like the idle part among the jobs present; with no
 *     job present, unattributed.
 *  Within a job, its idle and CPU parts go to its steps by their own CPU
 *  time (equally when none used any); the extern step is not one of them:
 *  its total is the job's whole share (under PrologFlags=Contain the job
 *  line of sacct is the extern step's).
 *
 * Every split is in integer mJ by largest remainders, so over any run
 *   charged (sum of job shares) + unattributed == measured, to the mJ
 * (+ the GPU energy held at that moment for a new step, 1.).
 * A job or step whose cgroup vanished since the previous sample (it ended
 * in between) still gets its last interval: the parent's CPU time keeps
 * the time of children already removed, so the parent's delta less its
 * living children's is the vanished ones'.  A step that slurmd never saw in
 * a scan (it started and ended between two samples) is known when its
 * slurmstepd registered (attrib_step_begin) and gets its job's unexplained
 * CPU time.  A sample that never came (meter outage) makes the next
 * interval longer: its energy is the cumulative difference, so nothing is
 * lost or invented.
 *
 * Not thread-safe: the caller holds its own lock around every call.
 */
#ifndef SE_ATTRIB_H
#define SE_ATTRIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cg_cpu.h"
#include "conf_desc.h"

/* ----------------------------------------------------- configuration */

typedef enum {
	ATTRIB_MODE_NODE = 0,	/* Slurm's: each step gets the node delta */
	ATTRIB_MODE_SHARE,	/* each step gets its share */
} attrib_mode_t;

typedef enum {
	ATTRIB_IDLE_SHARE = 0,	/* by allocated CPUs */
	ATTRIB_IDLE_NONE,	/* left unattributed */
} attrib_idle_t;

typedef struct {
	attrib_mode_t mode;	/* EnergyAttribution=node|share */
	attrib_idle_t idle;	/* EnergyIdle=share|none */
	bool idle_set;		/* EnergyIdleWatts given ... */
	uint64_t idle_mw;	/* ... in mW */
	char *cgroup_root;	/* EnergyCgroupRoot (malloc'ed), NULL: auto */
} attrib_conf_t;

/* The keys above, for every energy plugin of the suite. */
extern const se_conf_desc_t attrib_conf_desc;

void attrib_conf_init(attrib_conf_t *c);
void attrib_conf_free(attrib_conf_t *c);

/* ------------------------------------------------------------ the split */

typedef struct {
	attrib_idle_t idle;
	bool idle_set;		/* idle_mw configured; else learned */
	uint64_t idle_mw;
	uint32_t node_cpus;	/* the node's CPUs (Slurm's CPUs=); 0: the
				 * scan's root cpuset, else unknown */
	uint64_t retain_ns;	/* a job gone this long is forgotten
				 * (0: 10 minutes) */
} attrib_params_t;

/* One GPU's energy in the interval and its owner. */
typedef struct {
	uint64_t energy_mj;
	bool owned;
	uint32_t job_id, step_id;
} attrib_gpu_t;

/* One GPU's reading in the interval, for attrib_interval_gpus(). */
typedef struct {
	uint64_t energy_mj;	/* charged energy: NVML's x EnergyGPUFactor */
	uint64_t raw_mj;	/* NVML's own, for the totals only */
	bool valid;		/* false: not read; its energy stays in the
				 * node's and is split by CPU time */
} attrib_gpu_energy_t;

/* Most GPUs a node's split knows: bit i of a mask is the GPU sampler i. */
#define ATTRIB_MAX_GPUS	64

typedef struct {
	uint64_t measured_mj;	/* since the first sample */
	uint64_t charged_mj;	/* sum of the jobs' shares */
	uint64_t unattributed_mj;
	uint64_t idle_mw;	/* idle power in use (0: not known yet) */
	bool idle_learned;	/* ... learned, not configured */
	unsigned long intervals;
	size_t jobs;		/* jobs held */
	/* GPUs: charged + unowned + to_rest + clipped + held == the
	 * energy_mj of the GPUs read (valid) */
	uint64_t gpu_raw_mj;	/* what NVML gave (valid GPUs) */
	uint64_t gpu_charged_mj; /* to their holders (in charged_mj) */
	uint64_t gpu_unowned_mj; /* nobody's (in unattributed_mj) */
	uint64_t gpu_to_rest_mj; /* nobody's, left in the CPU split: a
				  * present step's GPUs were unknown */
	uint64_t gpu_clipped_mj; /* cut: the GPUs above the node's meter */
	uint64_t gpu_held_mj;	/* held now for a new step's GPUs (see the
				 * top): charged + unattributed + held ==
				 * measured */
	unsigned long gpu_clipped_intervals;
	unsigned long gpu_out_intervals; /* with a GPU not read (!valid) */
} attrib_totals_t;

typedef struct attrib attrib_t;

attrib_t *attrib_new(const attrib_params_t *p);
void attrib_free(attrib_t *a);

/*
 * One sample: the node's cumulative energy energy_mj at monotonic t_ns and
 * the cgroup scan made at it; gpus (n_gpus, may be 0) the GPUs' energy in
 * the interval since the previous call.  The first call only sets the
 * baselines.  Returns 0, -EINVAL (t_ns or energy_mj went back: baselines
 * are reset, nothing split), -ENOMEM.
 */
int attrib_interval(attrib_t *a, uint64_t t_ns, uint64_t energy_mj,
		    const cg_scan_t *scan, const attrib_gpu_t *gpus,
		    size_t n_gpus);

/*
 * As attrib_interval(), the GPUs' holders found by the split itself: g[i]
 * (n, at most ATTRIB_MAX_GPUS) is GPU sampler i's reading over the
 * interval.  GPU i goes to (1) the numbered (srun) steps present in the
 * interval whose step mask holds i; else (2) each present job whose job
 * mask holds i: its batch step if present, else its interactive step if
 * present, else the job only (as the extern step); else (3) nobody.  k
 * holders get equal parts.  Returns 0, ATTRIB_GPUS_CUT (the GPUs read more
 * than the node over the interval and were cut to it: the caller may say
 * so; the totals tell by how much), -EINVAL (as attrib_interval, or n too
 * large), -ENOMEM.
 */
#define ATTRIB_GPUS_CUT	1
int attrib_interval_gpus(attrib_t *a, uint64_t t_ns, uint64_t energy_mj,
			 const cg_scan_t *scan, const attrib_gpu_energy_t *g,
			 size_t n);

/* The energy source restarted (its cumulative energy counts from 0
 * again): the next sample is a new baseline; shares are kept. */
void attrib_rebase(attrib_t *a);

/*
 * A step's slurmstepd says it started at t_ns, in a job with ncpus CPUs on
 * this node (0: unknown) / that it ended at t_ns.  Known from then on,
 * even if its cgroup is never seen; its times bound the job's presence
 * in the idle split.
 */
int attrib_step_begin(attrib_t *a, uint32_t job_id, uint32_t step_id,
		      uint64_t t_ns, uint32_t ncpus);
int attrib_step_end(attrib_t *a, uint32_t job_id, uint32_t step_id,
		    uint64_t t_ns);

/*
 * The GPUs a step may use (bit i: GPU sampler i): step_mask its own (a
 * numbered step's; 0 for the job-wide batch, interactive and extern
 * steps), job_mask its job's on this node.  known false: the step could
 * not tell (an older slurmstepd, GRES unread); the masks are then ignored
 * and, while it is present, GPUs nobody holds stay in the CPU split (after
 * the hold of a new step's first seconds, see the top).  A
 * step never told holds no GPU and blocks nothing.  Each call replaces
 * the step's masks.  Returns 0, -ENOMEM.
 */
int attrib_step_gpus(attrib_t *a, uint32_t job_id, uint32_t step_id,
		     uint64_t step_mask, uint64_t job_mask, bool known);

/*
 * A step's share so far (the extern step: its job's whole share).
 * *last_ns is the end of the last interval split (a share is final for
 * a step that ended before it).  Returns 0, -ENOENT unknown step.
 */
int attrib_share(const attrib_t *a, uint32_t job_id, uint32_t step_id,
		 uint64_t *share_mj, uint64_t *last_ns);

/* A step's share with its GPU part, as attrib_share(). */
typedef struct {
	uint64_t share_mj;	/* all of it, GPUs included */
	uint64_t gpu_mj;	/* of which its GPUs' (extern: the job's) */
	uint64_t last_ns;
} attrib_step_share_t;

int attrib_step_share(const attrib_t *a, uint32_t job_id, uint32_t step_id,
		      attrib_step_share_t *out);

void attrib_totals(const attrib_t *a, attrib_totals_t *out);

/* One step on the node and its share so far (attrib_running_steps). */
typedef struct {
	uint32_t job_id, step_id;
	bool ended;		/* registered its end (or its cgroup went) */
	bool final;		/* ... and the split has passed it: share_mj
				 * is its total for good */
	uint64_t share_mj;	/* as attrib_step_share() (extern: the job's);
				 * once final, as it was at the first split
				 * past its end (what its settle read) */
} attrib_step_row_t;

/*
 * The steps running on the node, and those ended until the first split
 * that starts linger_ns after their end (or after it was told, when told
 * late): the live totals an exporter serves, each step's series ending
 * at least linger_ns less one interval after its value became final (so
 * that a scrape sees the final value: a step's end kicks extra samples,
 * so "one interval" alone may last milliseconds).  A step is running from its registered begin or
 * its first scan until its registered end or, never registered as ended,
 * its cgroup's vanishing.  Fills out[0..max-1] in the tables' order and returns how
 * many there are in all (more than max: the rest left out).
 */
size_t attrib_running_steps(const attrib_t *a, attrib_step_row_t *out,
			    size_t max, uint64_t linger_ns);

/*
 * Split total among weights w[0..n-1] in proportion, in integers that sum
 * to total exactly: floors, then one more to the largest remainders (the
 * lower index first on ties).  Returns false, out all 0, when every weight
 * is 0.
 */
bool attrib_apportion(uint64_t total, const uint64_t *w, size_t n,
		      uint64_t *out);

#endif
