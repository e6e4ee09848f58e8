/*
 * se_energy.h - what turns a meter backend into an acct_gather_energy plugin.
 *
 * Every energy plugin of the suite (modbus, bmc, rrd) is a thin file that
 * parses its acct_gather.conf keys and builds a meter; this glue does the
 * rest, the same way for all of them:
 *
 *  slurmd     one sampler thread owns the meter (src/common/sampler.h).  Every
 *             get_data call is answered at once from it, never with I/O:
 *             ENERGY_DATA_NODE_ENERGY[_UP], STRUCT, JOULES_TASK give the node's
 *             energy interpolated to "now"; NODE_ENERGY_UP and JOULES_TASK also
 *             kick the sampler.  SENSOR_CNT is always 1, even before the first
 *             sample, because slurmd's _rpc_acct_gather_energy() sends no reply
 *             at all for 0 sensors (the step would wait for its RPC timeout).
 *
 *  slurmstepd asks slurmd for the node energy (slurm_get_node_energy(), one
 *             cheap RPC) and reports the step's energy relative to its start
 *             (the running total; the settle below may replace it at the
 *             end with the energy between the step's exact boundaries):
 *             the first answer (taken when the step's plugin is configured,
 *             before its tasks start) is the base.  The step's energy never
 *             decreases; a node counter that goes backwards (slurmd restarted)
 *             is bridged, logged, and never wipes what was counted.
 *
 * Units: acct_gather_energy_t holds joules and watts (consumed_energy,
 * base_consumed_energy, previous_consumed_energy in J; current_watts and
 * ave_watts in W; poll_time wall-clock seconds of the last good sample).
 *
 * Slurm serialises calls into one plugin with its own context lock; the glue
 * still keeps its state under a mutex of its own, never held across I/O.
 */
#ifndef SE_ENERGY_H
#define SE_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "attrib.h"
#include "conf_desc.h"
#include "gpu_meter_conf.h"
#include "meter.h"
#include "sampler.h"
#include "settle_conf.h"

/*
 * The suite's version and the Slurm release it was built for (se_version.c:
 * our se_config.h and Slurm's config.h both define PACKAGE_VERSION, so no
 * Slurm-glue file can include both).
 */
extern const char se_energy_version[];
extern const char se_energy_slurm_version[];

/* The meter a plugin hands to the glue in slurmd. */
#define SE_ENERGY_DESCRIBE_MAX	1024	/* an SNMP node of 64 outlets */
typedef struct {
	const meter_ops_t *ops;
	void *dev;			/* given to ops; owned by the glue */
	void (*dev_free)(void *dev);	/* after the sampler has stopped */
	sampler_config_t cfg;		/* cfg.label is copied */
	char describe[SE_ENERGY_DESCRIBE_MAX]; /* for the load line:
					 * "tcp://h:502 unit 1, counter reg
					 * 0x48, every 1s, timeout 500ms" */
} se_energy_meter_t;

/*
 * What every make_meter() of a live meter does once it has built dev and
 * written the meter's own description into out->describe: hand dev to the
 * glue (read through ops, freed by dev_free once the sampler has stopped)
 * under the suite's sampler policy for period_ns and timeout_ns
 * (sampler_config_init), and append that timing to out->describe
 * (", every Ps, timeout Tms").  The plugin then sets what is its own in
 * out->cfg (counter, power bound, label).
 */
void se_energy_meter_give(se_energy_meter_t *out, const meter_ops_t *ops,
			  void *dev, void (*dev_free)(void *dev),
			  uint64_t period_ns, uint64_t timeout_ns);

/*
 * Build the meter of node `node` (slurmd only).  Returns 0; SE_ENERGY_NO_METER
 * when the configuration gives the node no meter on purpose (it then reports
 * no data; err may say why); a negative errno is a configuration error,
 * described in err.
 */
#define SE_ENERGY_NO_METER	1

typedef int (*se_energy_make_meter_fn)(void *arg, const char *node,
				       se_energy_meter_t *out,
				       char *err, size_t err_len);

/*
 * For sources whose data arrives late (an RRD row is written a step or more
 * after the power it averages): the node's energy over [t0_ns, t1_ns]
 * (wall-clock ns) from the source's own history, read in slurmstepd.  Sets
 * *complete when the data covers both ends.  Returns 0 or a negative errno
 * with the reason in msg.
 */
typedef int (*se_energy_window_fn)(const char *node, uint64_t t0_ns,
				   uint64_t t1_ns, uint64_t *energy_mj,
				   bool *complete, char *msg, size_t msg_len);

/*
 * What an energy plugin of ours gives the shared Slurm entry points:
 * se_energy_plugin.c defines init(), fini() and every acct_gather_energy_p_*
 * from it, so a plugin file holds only its plugin_* symbols, this struct
 * and its make_meter().  Its acct_gather.conf keys are its back-end's
 * descriptor (conf_desc.h), registered with Slurm as strings and checked by
 * the back-end's own parsers, whose messages name file, key and value
 * (Slurm's would only say "bad").
 */
typedef struct {
	const char *meter_name;		/* "modbus": in the load line */
	const se_conf_desc_t *conf_desc; /* the acct_gather.conf keys */
	void *conf;			/* the configuration conf_desc fills,
					 * the plugin's own (make_meter reads
					 * it) */
	se_energy_make_meter_fn make_meter; /* arg: acct_gather.conf's path */
	se_energy_window_fn window_energy;  /* NULL: data is live (below) */
} se_energy_plugin_t;

/* Defined by each plugin. */
extern const se_energy_plugin_t se_energy_plugin;

/*
 * From the plugin's init(): route the core's se_log() to Slurm's log
 * (error/info/debug/log_flag(ENERGY)) with plugin_type as prefix.
 */
void se_energy_init(void);

/*
 * From the plugin's conf_set(), after its keys were parsed (conf_error is
 * the parse/validation message, NULL when the configuration is good).
 *   slurmd:     a bad configuration is fatal here, at load time, with the
 *               message naming file, key and value; otherwise make_meter()
 *               is called for this node and the sampler started.
 *   slurmstepd: remembers context_id and takes the step's base energy.
 *   elsewhere:  a bad configuration is logged; nothing starts.
 * meter_name ("modbus") goes into the load line that proves our plugin, not
 * a stock one of the same name, is the one running.
 */
void se_energy_conf_set(int context_id, const char *meter_name,
			const char *conf_error, se_energy_make_meter_fn make,
			void *arg);

/*
 * From the plugin's conf_set(), before se_energy_conf_set(): the
 * attribution keys (EnergyAttribution=node|share and the rest, attrib.h;
 * copied).  With share, slurmd splits every interval of the node's energy
 * among the steps by their cgroups' CPU time and serves each step its
 * share on the energy query socket; a step's energy (running and settled)
 * is its share, the extern step's its job's.
 */
void se_energy_set_attribution(const attrib_conf_t *c);

/*
 * From conf_set, after se_energy_set_attribution: the GPU keys
 * (EnergyGPU=none|nvml, EnergyGPUFactor, EnergyGPULibrary; copied).  With
 * nvml, slurmd also meters the node's NVIDIA GPUs on the meter's clock:
 * in share mode each step is charged its GPUs' energy plus its share of
 * the rest, in node mode a step is shown its GPUs' part.
 */
void se_energy_set_gpus(const gpu_meter_conf_t *c);

/* The settle keys as acct_gather.conf sets them (conf_set): whether a
 * step's last poll waits for the reading after its end. */
void se_settle_conf_note(const settle_conf_t *settle);

/*
 * From fini(): stop the sampler (slurmd), drop all state.  In slurmstepd at
 * the step's end (after its tasks, before its completion is sent: every
 * release calls fini() there, doc/design-settle-in-plugin.md), settle the
 * step as settle says (EnergySettle, EnergySettleMaxWait), unless it is
 * left to spank_energy_settle.so (se_energy_settle_spank_present).
 * Returns true in a slurmstepd whose step may still settle later (the
 * SPANK plugin's): the plugin then keeps its configuration too.
 */
bool se_energy_fini(const settle_conf_t *settle);

/* The three data entry points, to be returned from the plugin's own. */
int se_energy_update_node_energy(void);
int se_energy_get_data(int data_type, void *data);
int se_energy_set_data(int data_type, void *data);

/*
 * Step settle: from the plugin's own fini() (se_energy_fini), or called in
 * slurmstepd by the optional SPANK plugin spank_energy_settle.so
 * (slurm_spank_exit: after srun has been told the tasks ended, up to
 * 25.11, before the step's completion goes to slurmctld), found with
 * dlsym().  A step settles once: a second call returns 1 at once.
 *  - A plugin with window_energy waits up to max_wait_s seconds for the
 *    data to cover the step's end, then sets the step's energy to
 *    window_energy() over the step's own [start, end] (the tasks' end: the
 *    last accounting poll before slurmstepd began ending the step).  Batch
 *    and extern steps are left as they are: a wait there would delay the
 *    job's own end.
 *  - A live plugin (no window_energy) asks slurmd's sampler history through
 *    the energy query channel (energy_query.h) for E(t1) - E(t0): t0 the
 *    first accounting poll (the first task's start; the step's own start
 *    without tasks), t1 as above; each was kicked a reading at the time.
 *    It waits for the reading after t1 at most the sampler's period +
 *    deadline + 0.25 s (and max_wait_s).  Every step settles: the wait is
 *    one read.  Incomplete data or a restarted slurmd keep the running
 *    total, logged once.
 * Returns 0 when the energy was set, 1 when there was nothing to do, a
 * negative errno on failure (the running total is then kept).  Never waits
 * past max_wait_s (cut clear of UnkillableStepTimeout).
 */
int se_energy_step_settle(unsigned max_wait_s);

/*
 * Called in slurmstepd by spank_energy_settle.so's slurm_spank_init (found
 * with dlsym(), as the settle): the SPANK plugin is listed and will call
 * se_energy_step_settle() at the step's end.  Up to Slurm 25.11 fini()
 * then leaves the settle to it (slurm_spank_exit runs after srun is told
 * the tasks ended, so a wait there does not hold srun); on 26.05 srun waits
 * for both alike and fini() settles.  Returns 0.
 */
int se_energy_settle_spank_present(void);

/* Node name of this slurmd/slurmstepd (NodeName, also with -N); NULL
 * in other processes. */
const char *se_energy_node_name(void);

#endif
