/*
 * se_energy_int.h - what crosses the files of the energy glue (private to
 * src/acct_gather_energy/common/; the plugins see se_energy.h only).
 *
 * The glue is split by role, each file opening with the Slurm calls that
 * reach it; the dispatcher calls the roles, the roles call only down (the
 * state, the GPUs below the split, the step below its settle), and no file
 * both calls and is called by another (tests/check_layering.py):
 *
 *  se_energy.c         the entry points of se_energy.h: each call to the
 *                      role of the process that makes it
 *  se_energy_plugin.c  the plugins' own entry points and keys, over
 *                      se_energy.c
 *  se_energy_meter.c   the plugins' make_meter(): a built meter handed to
 *                      the glue (se_energy_meter_give), calling no role
 *  se_energy_node.c    slurmd: the sampler, the node's total, its carry
 *                      over a reload, the energy query server
 *  se_energy_share.c   slurmd, EnergyAttribution=share: the split of each
 *                      interval among the steps (attrib.h)
 *  se_energy_gpus.c    slurmd, EnergyGPU=nvml: the node's GPUs on the
 *                      meter's clock, in the split and in node mode
 *  se_energy_step.c    slurmstepd: the step's running total, from slurmd's
 *                      query socket or, as a fallback, Slurm's energy RPC
 *  se_energy_step_gpus.c  slurmstepd: the GPUs the step holds (Slurm's
 *                      device cgroup rule), sent with its queries
 *  se_energy_settle.c  slurmstepd: the step's energy over its own window,
 *                      at its end (se_energy_step_settle)
 *  se_energy_state.c   the state every role shares (the lock, the role,
 *                      the context id, the node's name, the step's energy
 *                      and record, the attribution mode), below them all
 *  se_version.c        the suite's version strings, for the load line
 *
 * The node code reads no step field and the step code no node field.  What
 * the step's files decide (when to ask slurmd, what to hold, how to
 * settle, what a restart of slurmd bridges) is Slurm-free: the step's
 * state and its decisions in src/common/step_energy.h, the arithmetic of
 * the carry and of a restart's bridge in src/common/energy_carry.h; the
 * step's files feed them Slurm's data and do the I/O.
 *
 * Locking: se_state_lock guards every field below and the node's state; it
 * is never held across I/O to a meter.  Every function declared here is
 * called with it held, unless its comment says otherwise.
 *
 * Include after Slurm's config.h.
 */
#ifndef SE_ENERGY_INT_H
#define SE_ENERGY_INT_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "src/common/slurm_xlator.h"
#include "slurm_compat_energy.h"
#include "src/slurmd/slurmd/slurmd.h"
#include "src/slurmd/slurmstepd/slurmstepd_job.h"

#include "attrib.h"
#include "energy_carry.h"
#include "energy_query.h"
#include "gpu_energy.h"
#include "sampler.h"
#include "se_energy.h"
#include "se_log.h"
#include "se_time.h"
#include "step_energy.h"

/* slurmd and slurmstepd export their slurmd_conf_t; other daemons do not. */
#pragma weak conf

/* ------------------------------------------------ se_energy_state.c */

typedef enum {
	ROLE_OTHER = 0,		/* slurmctld, clients: config only */
	ROLE_SLURMD,
	ROLE_STEPD,
} role_t;

extern pthread_mutex_t se_state_lock;
extern role_t se_role;
extern int se_context_id;	/* Slurm's plugin context (the step's RPC) */

/*
 * slurmstepd: the step's energy and every decision about it, Slurm-free
 * (src/common/step_energy.h); se_energy_step.c and se_energy_settle.c feed
 * it Slurm's data and do the I/O it asks for.
 */
extern step_energy_t se_step;
/* The step's record (ENERGY_DATA_STEP_PTR), for the settle and the GPUs. */
extern stepd_step_rec_t *se_step_job;

/* EnergyAttribution (se_energy_set_attribution, in every process). */
extern attrib_mode_t se_attribution_mode;

/* EnergyAttribution=share is configured (any process; the lock not
 * needed: conf_set sets it before any question). */
bool se_share_mode(void);

/*
 * The data types every role answers alike, for its get_data's default:
 * ENERGY_DATA_LAST_POLL (last_poll), ENERGY_DATA_SENSOR_CNT, and any other
 * an error naming it.  SLURM_SUCCESS or SLURM_ERROR.
 */
int se_energy_get_common(int data_type, time_t last_poll, void *data);

/*
 * slurmd's lock of what the meter's sampler thread reads in on_sample
 * beside the split (the cgroup scan, the GPUs): taken after
 * se_state_lock, before the split's own lock.
 */
extern pthread_mutex_t se_scan_lock;

static inline time_t _mono_to_wall_s(uint64_t t_ns)
{
	return t_ns ? (time_t) (se_mono_to_wall_ns(t_ns) / SE_NS_PER_SEC) : 0;
}

/* Slurm's NO_VAL is what step_energy.h's watts keep clear of. */
_Static_assert(STEP_WATTS_NO_VAL == NO_VAL, "STEP_WATTS_NO_VAL is NO_VAL");

/* slurmd's SlurmdSpoolDir (%n expanded), shared with its slurmstepds. */
static inline const char *_spool_dir(void)
{
	return (&conf && conf) ? conf->spooldir : NULL;
}

/* ------------------------------------------------- se_energy_node.c */

/*
 * slurmd: build this node's meter and start its sampler, once (a reload
 * continues the node's total from before it).  Fatal on a configuration
 * error.
 */
void se_node_start(const char *meter_name, se_energy_make_meter_fn make,
		   void *arg);

/* slurmd's answer to get_data. */
int se_node_get_data(int data_type, void *data);

/* fini(): carry the node's total out, stop the sampler, drop the state. */
void se_node_fini(void);

/* ------------------------------------------------ se_energy_share.c */

/*
 * slurmd, share mode (else nothing): the split state (kept over reloads)
 * and the hook that feeds it, into the sampler's configuration cfg.
 */
void se_share_start(const char *node_name, sampler_config_t *cfg);
/* Share mode: the running steps' shares into a snapshot (energy_snapshot.h;
 * the query server's thread).  Node mode: nothing. */
void se_share_snapshot(energy_snapshot_t *out);

/* The query server's share hook (energy_query_share_fn; its own thread, without
 * se_state_lock). */
int se_share_answer(void *arg, const energy_query_step_t *st,
		    uint64_t t0_ns, uint64_t t1_ns, uint64_t *share_mj,
		    uint64_t *last_ns, energy_query_gpu_t *gpu);

/* ------------------------------------------------- se_energy_gpus.c */

/* EnergyGPU=nvml is configured (any process, as se_share_mode). */
bool se_gpus_configured(void);
/* Each GPU's power and charged total into a snapshot (query server's
 * thread); nothing without EnergyGPU=nvml. */
void se_gpus_snapshot(energy_snapshot_t *out);

/*
 * slurmd, EnergyGPU=nvml (else nothing): start the GPUs' samplers (NVML
 * retried in the background when it does not answer yet; a node without
 * NVML says so and meters no GPU), every min(meter period, 1 s).  After
 * the meter's sampler, before the query server.
 */
void se_gpus_start(const char *node_name, uint64_t meter_period_ns);
/* The GPUs read now, with the meter's kicked reading (a step's boundary):
 * the query server's kick hook. */
void se_gpus_kick(void *arg);

/* Stop them (under se_scan_lock): after the query server and the meter's
 * sampler. */
void se_gpus_stop(void);

/* The GPUs, or NULL (none metered, or NVML not answering yet); any
 * thread, no lock.  The first call that finds them says so (info). */
gpu_energy_t *se_gpus_get(void);

/*
 * The meter's sampler thread, se_scan_lock held: every GPU's reading over
 * (the previous call's t1, t1_ns] into g (room for ATTRIB_MAX_GPUS), one
 * entry per GPU (valid false: not read, it stays in the CPU split); a
 * fault said once, its end too.  A GPU whose read of the meter's round is
 * not in yet is waited for, briefly (gpu_energy_await).  Returns the
 * number of GPUs (0: none).
 */
size_t se_gpus_interval(uint64_t t1_ns, attrib_gpu_energy_t *g);

/* After the split of that interval (rc: attrib_interval_gpus's; the
 * totals before and after it; NULL without a split): the next interval
 * starts at t1_ns; a cut is said once. */
void se_gpus_split_done(uint64_t t1_ns, int rc, const attrib_totals_t *before,
			const attrib_totals_t *after);

/* The totals file's GPU fields (EnergyGPU=nvml only), se_scan_lock held. */
void se_gpus_write_status(FILE *f, const attrib_totals_t *t);

/* A step's GPU minors as sampler masks (all 0: GPUs unknown, or ge NULL). */
void se_gpus_masks(gpu_energy_t *ge, const energy_query_step_t *st,
		   uint64_t *step_mask, uint64_t *job_mask);

/* The answer's "metered" and count from ge (NULL: not metered). */
void se_gpus_metered(gpu_energy_t *ge, energy_query_gpu_t *gpu);

/* The query server's GPU hook in node mode (energy_query_gpu_fn; its own
 * thread, no lock): the step's GPUs' energy x F at t0 and t1. */
int se_gpus_node_part(void *arg, const energy_query_step_t *st,
		      uint64_t t0_ns, uint64_t t1_ns, energy_query_gpu_t *gpu);

/* ------------------------------------------------- se_energy_step.c */

/* slurmstepd's conf_set: the step's start and base (once). */
void se_step_start(void);

/* slurmstepd's answer to get_data. */
int se_step_get_data(int data_type, void *data);

/* set_data(ENERGY_DATA_PROFILE): a profile sample of the step's power. */
void se_step_profile(void);

/*
 * A step ending (fini): tell slurmd the step's end.  Share mode: its job
 * stops being charged there even without the settle plugin.  Node mode:
 * the exporter's snapshot lists its final total and then drops it.
 */
void se_step_tell_end(void);

/*
 * Ask slurmd's query channel about [t0, t1] (a live source only), how as
 * energy_query_ask(): 0 makes slurmd read the meter for t1,
 * ENERGY_QUERY_NO_KICK asks what is known, ENERGY_QUERY_HOLD waits there
 * for the reading.  0 or -errno.
 */
int se_step_query(uint64_t t1_ns, unsigned how, uint64_t timeout_ns,
		  energy_query_answer_t *a);

/*
 * The answer of the poll's question in flight (sent as the step's tasks
 * started or were all reaped), waited for within its own timeout and
 * accounted as that poll's answer (its node total at its instant, and in
 * se_step.poll_answer when that poll is the step's end).  0 with it in *a,
 * -ENOENT none in flight, or the question's -errno.
 */
int se_step_collect(energy_query_answer_t *a);

/* The same, waited for no later than the monotonic deadline_ns either
 * (a settle's bound): past it, the answer is dropped (-ETIMEDOUT). */
int se_step_collect_by(uint64_t deadline_ns, energy_query_answer_t *a);

/* Close a question in flight whose answer no one will read (fini). */
void se_step_drop_question(void);

/*
 * EnergyAttribution=share: ask slurmd for the step's share up to t1 (end:
 * the step ended at t1) and account it.  0, or -errno: -ENOENT slurmd does
 * not know the step (yet), -EPROTO slurmd is not in share mode.
 */
int se_step_share(uint64_t t1_ns, bool end, unsigned how,
		  uint64_t timeout_ns, energy_query_answer_t *a);

/* -------------------------------------------- se_energy_step_gpus.c */

/*
 * The step's GPUs into a query's q (gpus_known and both minor sets): read
 * from Slurm's GRES at the first call where that is safe, the same sets
 * after.  Not known: q->gpus_known false.
 */
void se_step_gpus_fill(energy_query_step_t *q);

/* ----------------------------------------------- se_energy_settle.c */

/* Why this step will not settle, or NULL when it may (se_state_lock). */
const char *se_settle_refused(void);

/* From fini() (no lock held): settle the step now unless settle (the
 * acct_gather.conf keys) or a listed SPANK settle says otherwise. */
void se_settle_at_fini(const settle_conf_t *settle);

#endif
