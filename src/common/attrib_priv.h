/*
 * attrib_priv.h - the state the three files of the attribution share.
 *
 * Private to attrib.c, attrib_gpus.c and attrib_tables.c; callers use
 * attrib.h (the model).  The files call downward only:
 *
 *   attrib.c         public API, an interval's order, the idle and CPU split
 *     -> attrib_gpus.c   the GPUs' part, taken first out of the interval
 *     -> attrib_tables.c the job and step tables, scratch, a step's
 *                        presence, the largest-remainder apportion
 *
 * Jobs and steps live in small arrays searched linearly: a node holds tens
 * of them, and a split is a few passes over them (bench/attrib measures it
 * at 128 steps).
 */
#ifndef SE_ATTRIB_PRIV_H
#define SE_ATTRIB_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attrib.h"

#define IDLE_RING		64

typedef struct {
	uint32_t step_id;
	bool seen;		/* in the last scan */
	bool was_seen;		/* in the scan before (for this interval) */
	bool ever_seen;
	bool closed;		/* registered, never seen: its one interval
				 * after its end was split */
	uint64_t last_cpu_ns;
	uint64_t delta_ns;	/* CPU time in this interval */
	uint64_t begin_ns, end_ns; /* registered by its slurmstepd, 0: not */
	uint64_t end_told_ns;	/* the latest split's instant when its end
				 * was registered (attrib_running_steps) */
	bool final_set;		/* final_mj holds its share (the extern
				 * step: its job's) at the first split that
				 * passed its end: what its settle read */
	uint64_t final_mj;
	uint64_t share_mj;
	uint64_t gpu_mj;	/* its GPUs' part of share_mj */
	uint64_t step_gpus;	/* GPU masks told by attrib_step_gpus */
	uint64_t job_gpus;
	bool gpus_unknown;	/* ... which said it could not tell */
} at_step_t;

typedef struct {
	uint32_t job_id;
	bool seen, was_seen;
	uint64_t last_cpu_ns;
	uint64_t delta_ns;
	uint32_t ncpus_cg;	/* from its cpuset */
	uint32_t ncpus_reg;	/* from its steps' registration */
	uint64_t share_mj;
	uint64_t gpu_mj;	/* its GPUs' part of share_mj */
	uint64_t last_present_ns;
	at_step_t *steps;
	size_t n, cap;
	/* this interval */
	uint64_t present_ns;	/* time present in the interval */
	uint64_t past_ns;	/* ... in a held span, while it is given */
	uint64_t part_mj;	/* its idle + CPU part, to its steps */
	uint64_t job_gpus;	/* its steps' job masks */
} at_job_t;

struct attrib {
	attrib_params_t p;
	bool started;
	uint64_t t_ns, energy_mj;	/* the previous sample */
	bool have_root;
	uint64_t root_cpu_ns;
	/* the running totals, as attrib_totals() gives them; its idle_mw,
	 * idle_learned and jobs are not kept here (0), but found there */
	attrib_totals_t tot;
	/* GPU energy nobody was known to hold while a new step's GPUs were
	 * not told yet (attrib.h, 1.): per GPU, over [t0, t1] */
	struct { uint64_t mj, t0, t1; } held[ATTRIB_MAX_GPUS];
	bool past;	/* the holders of a held span are being found */
	at_job_t *jobs;
	size_t n, cap;
	uint64_t idle_ring[IDLE_RING];	/* mW of job-free intervals */
	size_t idle_n, idle_pos;
	uint64_t *w;			/* scratch weights and results */
	uint64_t *out;
	size_t w_cap;
	/* this interval */
	uint64_t t0, dt, e;
	uint32_t node_cpus;
	bool any_job;
};

/* This interval's GPU part. */
typedef struct {
	uint64_t taken_mj;	/* out of the node's: to holders or nobody */
	uint64_t rest_mj;	/* of the taken, back to this interval's rest */
	uint64_t read_mj;	/* the GPUs read, after a cut (idle learning) */
	bool cut;
} at_gpu_part_t;

/* ------------------------------------------------- attrib_tables.c */

/* Job job_id's entry; made (zeroed) when create; NULL: none, or no memory. */
at_job_t *attrib_find_job(attrib_t *a, uint32_t job_id, bool create);
/* Step step_id's entry in job j, as attrib_find_job. */
at_step_t *attrib_find_step(at_job_t *j, uint32_t step_id, bool create);
/* a->w and a->out of at least n entries each; -ENOMEM when not. */
int attrib_scratch(attrib_t *a, size_t n);
/* Whether step s took part in the interval [t0, t1]. */
bool attrib_step_present(const at_step_t *s, uint64_t t0, uint64_t t1);

/* --------------------------------------------------- attrib_gpus.c */

/* The GPUs of attrib_interval, owners given by the caller, into gp. */
void attrib_gpus_split_owned(attrib_t *a, const attrib_gpu_t *g, size_t n,
			     at_gpu_part_t *gp);
/* The GPUs of attrib_interval_gpus, holders by the steps' masks (and the
 * held spans released or held), into gp. */
void attrib_gpus_split_read(attrib_t *a, const attrib_gpu_energy_t *g,
			    size_t n, at_gpu_part_t *gp);

#endif /* SE_ATTRIB_PRIV_H */
