/*
 * se_energy_node.c - slurmd's side of the energy glue: one sampler thread
 * owns the meter, and every question is answered from it at once, never
 * with I/O (se_energy.h).  What Slurm 22.05 asks slurmd, and so what each
 * answer must be (src/ paths are Slurm's):
 *
 *  slurmd/req.c:_rpc_acct_gather_update()  (slurmctld, AcctGatherNodeFreq)
 *	update_node_energy(), then get_sum(ENERGY_DATA_NODE_ENERGY): the node
 *	total shown by scontrol show node (CurrentWatts NO_VAL = "n/s").
 *  slurmd/slurmd.c:_fill_registration_msg()  get_sum(NODE_ENERGY) likewise.
 *  slurmd/req.c:_rpc_acct_gather_energy()  (a step's slurm_get_node_energy)
 *	LAST_POLL and SENSOR_CNT, then STRUCT or, when the last poll is older
 *	than the request's delta, JOULES_TASK, into a SENSOR_CNT array.  With
 *	SENSOR_CNT 0 it sends no reply at all.
 *  slurm_acct_gather.c:acct_gather_reconfig()  unloads the plugin (fini,
 *	dlclose) and loads it again: the plugin is linked -z nodelete, so the
 *	node total carried over below survives and a detached sampler thread
 *	never runs in unmapped code.
 *
 * The steps ask the same total through the energy query socket served
 * here (energy_query.h), without Slurm's RPC; in share mode the socket
 * serves each step its share instead (se_energy_share.c).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "se_energy_int.h"

/*
 * The query server's hooks (_node_hook_lock) run in the server's thread,
 * which _node_stop joins under se_state_lock: they try the lock for at
 * most this long (then the step asks Slurm's RPC instead), in these steps.
 */
#define TOTAL_LOCK_WAIT_NS	(5 * SE_NS_PER_MS)
#define TOTAL_LOCK_RETRY_NS	(100 * SE_NS_PER_US)

/* slurmd: the sampler and what readers derived from it */
typedef struct {
	sampler_t *sampler;
	se_energy_meter_t meter;
	bool unmetered;		/* configured without a meter */
	uint64_t base_mj;	/* carried over from before a reconfigure */
	uint64_t skip_mj;	/* sampler energy not the node's: before
				 * the carry or before start_ns */
	uint64_t start_ns;	/* monotonic: this sampler's start */
	bool joined;		/* first sample seen (_node_join) */
	/* A reconfigure's carry until the new sampler's first sample joins
	 * it (valid: still pending) */
	energy_carry_t carry;
	uint64_t reported_mj;	/* highest energy ever answered */
	uint64_t prev_reported_j; /* consumed_energy of the previous answer */
	bool have_first;	/* first_* valid (for ave_watts) */
	uint64_t first_ns;	/* the instant first_mj stands for */
	uint64_t first_mj;
	/* the steps' energy queries (live sources) */
	energy_query_server_t *query_server;
} node_state_t;

static node_state_t node;
/* Node energy at the last fini(): survives a reload (-z nodelete). */
static energy_carry_t carry;
/* The id of slurmd's node total's continuity (energy_query.h), drawn once
 * per slurmd process: the total is carried over reloads (-z nodelete
 * keeps this too) and starts again from zero only when slurmd does. */
static uint64_t total_id;
/* When that total began (wall clock, ns): the exporter's _created. */
static uint64_t total_start_wall_ns;

static void _node_stop(void)
{
	if (!node.sampler)
		return;
	/* The query server reads the sampler: it goes first. */
	energy_query_server_stop(node.query_server);
	node.query_server = NULL;
	/*
	 * sampler_stop() joins the thread, or detaches it when the backend
	 * overruns its deadline; a detached thread may still use dev, so dev
	 * is freed only after a join.  The thread itself closes the device.
	 */
	if (sampler_stop(node.sampler) == 0 && node.meter.dev_free)
		node.meter.dev_free(node.meter.dev);
	node.sampler = NULL;
	/* After the meter's sampler, under the scan lock: a detached one
	 * finishing its on_sample finds the GPUs gone. */
	se_gpus_stop();
	xfree(node.meter.cfg.label);
}

/*
 * The new sampler's first sample: its totals count from that sample's
 * instant, and a reload's carry meets them there (energy_carry_join: no
 * interval counted twice or not at all).  Before it, the carry's total is
 * held (_node_energy_mj).
 */
static void _node_join(const sampler_status_t *st)
{
	energy_carry_join_t j;
	uint64_t e_mj = 0;

	if (node.joined || !st->first_sample_ns)
		return;
	node.joined = true;
	j = energy_carry_join(&node.carry, st->first_sample_ns, node.start_ns);
	node.carry.valid = false;
	node.base_mj = j.base_mj;
	if (j.skip && !sampler_energy_at(node.sampler, j.skip_ns, &e_mj))
		node.skip_mj = e_mj;
}

/* The node's total from the sampler's (never below 0). */
static uint64_t _node_mj(uint64_t sampler_mj)
{
	return energy_carry_total_mj(node.base_mj, node.skip_mj, sampler_mj);
}

/*
 * A reload's carry from this sampler (before it stops): the node's history
 * at its last sample, not an extrapolation to now (a meter's last power
 * may be far off: a counter-only meter's, from two readings milliseconds
 * apart), with the average power of the last seconds for the gap.  A
 * sampler without a sample passes its own carry on.
 */
static void _node_carry_out(const sampler_status_t *st)
{
	uint64_t t1 = st->last_sample_ns, t0, e0 = 0, e1 = 0;

	if (node.carry.valid || !t1) {
		carry.energy_mj = node.carry.valid ? node.carry.energy_mj :
				  node.base_mj;
		carry.t_ns = node.carry.valid ? node.carry.t_ns :
			     se_mono_ns();
		carry.power_mw = node.carry.valid ? node.carry.power_mw : 0;
		return;
	}
	t0 = energy_carry_window_ns(t1, st->first_sample_ns,
				    node.meter.cfg.period_ns);
	(void) sampler_energy_at(node.sampler, t1, &e1);
	(void) sampler_energy_at(node.sampler, t0, &e0);
	carry.energy_mj = _node_mj(e1);
	carry.t_ns = t1;
	carry.power_mw = energy_carry_power_mw(t0, e0, t1, e1, st->power_mw);
}

/* Node energy now, carried over reloads, never decreasing. */
static uint64_t _node_energy_mj(const sampler_status_t *st)
{
	uint64_t mj;

	_node_join(st);
	if (node.carry.valid)
		mj = energy_carry_pending_mj(&node.carry, se_mono_ns(),
					     sampler_reach_ns(
						node.meter.cfg.period_ns,
						node.meter.cfg.deadline_ns));
	else
		mj = _node_mj(st->energy_mj);
	if (mj < node.reported_mj)
		mj = node.reported_mj;
	node.reported_mj = mj;
	return mj;
}

/*
 * Fill one acct_gather_energy_t with the node's totals now, from the
 * sampler's last sample and interpolation; never blocks on the meter.
 * Returns SLURM_ERROR when there has been no sample yet (totals then say
 * "no data": 0 J so far, current_watts NO_VAL, poll_time 0).
 */
static int _node_fill(acct_gather_energy_t *e)
{
	sampler_status_t st;
	uint64_t now_ns = se_mono_ns(), mj, t_ns, at_mj;

	memset(e, 0, sizeof(*e));
	e->current_watts = NO_VAL;
	se_energy_set_start_time(e);	/* 24.11+: tells steps of a restart */
	if (!node.sampler) {
		e->consumed_energy = node.reported_mj / 1000;
		return SLURM_ERROR;
	}

	sampler_status(node.sampler, &st);
	mj = _node_energy_mj(&st);
	e->consumed_energy = mj / 1000;
	e->previous_consumed_energy = node.prev_reported_j;
	e->base_consumed_energy = e->consumed_energy - node.prev_reported_j;
	node.prev_reported_j = e->consumed_energy;
	if (!st.last_sample_ns)
		return SLURM_ERROR;

	e->current_watts = step_energy_mw_to_w(st.power_mw);
	e->poll_time = _mono_to_wall_s(st.last_sample_ns);
	/*
	 * The average between two samples' instants and energies, not the
	 * energy extrapolated to the times of asking: a late source (RRD rows,
	 * 10-20 s behind) is extrapolated by a different amount at each
	 * question, and over the minute after start that read 487 W on a
	 * node of 100-400 W.  The first instant is one the node's total
	 * counts from: a late source's newest row at start is older than the
	 * sampler's start, where the total begins (_node_join), and an
	 * average from there read 13 W on a node of 120-240 W.  A reload's
	 * carry still pending stands for now.
	 */
	t_ns = now_ns;
	at_mj = mj;
	if (!node.carry.valid &&
	    !sampler_energy_at(node.sampler, st.last_sample_ns, &at_mj)) {
		t_ns = st.last_sample_ns;
		at_mj = _node_mj(at_mj);
	}
	if (!node.have_first && t_ns >= node.start_ns) {
		node.have_first = true;
		node.first_ns = t_ns;
		node.first_mj = at_mj;
	}
	if (node.have_first && t_ns >= node.first_ns + SE_NS_PER_SEC &&
	    at_mj >= node.first_mj)
		e->ave_watts = step_energy_avg_w(at_mj - node.first_mj,
						 t_ns - node.first_ns);
	else
		e->ave_watts = e->current_watts;
	return SLURM_SUCCESS;
}

static time_t _node_last_poll(void)
{
	sampler_status_t st;

	if (!node.sampler)
		return 0;
	sampler_status(node.sampler, &st);
	return _mono_to_wall_s(st.last_sample_ns);
}

/*
 * se_state_lock for a query server hook, and the check that arg is the
 * sampler still served.  The hooks run in the server's thread, which
 * _node_stop joins under se_state_lock: they never wait long for it, and
 * a server of a sampler being replaced answers without it.  0 with the
 * lock held, or -EBUSY (taken for TOTAL_LOCK_WAIT_NS) / -ESTALE, not held.
 */
static int _node_hook_lock(void *arg)
{
	uint64_t until = se_mono_ns() + TOTAL_LOCK_WAIT_NS;

	while (pthread_mutex_trylock(&se_state_lock)) {
		if (se_mono_ns() >= until)
			return -EBUSY;
		se_sleep_ns(TOTAL_LOCK_RETRY_NS);
	}
	if (!node.sampler || node.sampler != arg) {
		slurm_mutex_unlock(&se_state_lock);
		return -ESTALE;
	}
	return 0;
}

/*
 * The node's total for a step's energy query: what _node_fill answers
 * Slurm's energy RPC, so that the step needs no RPC (energy_query.h).
 * Taken under _node_hook_lock.  0, or -errno (the step then asks Slurm's
 * RPC).
 */
static int _node_total(void *arg, uint64_t *total_mj, uint64_t *power_mw,
		       uint64_t *sample_ns)
{
	sampler_status_t st;
	int rc = _node_hook_lock(arg);

	if (rc)
		return rc;
	sampler_status(node.sampler, &st);
	*total_mj = _node_energy_mj(&st);
	*power_mw = st.power_mw;
	*sample_ns = st.last_sample_ns;
	slurm_mutex_unlock(&se_state_lock);
	return st.last_sample_ns ? 0 : -ENODATA;
}

/*
 * The node's snapshot for slurm-energy-exporter (energy_snapshot.h), in
 * the query server's thread after it filled the sampler's part: the
 * node's total as _node_total gives it (both modes), then the steps'
 * shares (share mode) and the GPUs.  No maximum power: the plugins'
 * maxima (EnergyBMCMaxWatts, EnergyModbusMaxPower, a map's MaxPower) are
 * plausibility bounds, above which a reading is refused, so the power
 * served never exceeds them and an alert on them could never fire; the
 * exporter's --max-watts gives the node's rating.  The same lock as
 * _node_total: -EBUSY when se_state_lock stays taken (the scrape then
 * fails, nothing stale is served).
 */
static int _node_snapshot(void *arg, energy_snapshot_t *out)
{
	sampler_status_t st;
	int rc = _node_hook_lock(arg);

	if (rc)
		return rc;
	sampler_status(node.sampler, &st);
	out->total_mj = _node_energy_mj(&st);
	out->total_id = total_id;
	out->total_start_wall_ns = total_start_wall_ns;
	out->flags |= ENERGY_SNAPSHOT_TOTAL;
	slurm_mutex_unlock(&se_state_lock);
	se_share_snapshot(out);
	se_gpus_snapshot(out);
	return 0;
}

/*
 * The query server's hooks for this node's mode (energy_query.h).  Share
 * mode: the share hook answers a step's share and its GPUs' part.  Node
 * mode: the node's total (its id drawn once per slurmd process: the total
 * is carried over reloads, -z nodelete keeps the id too), and the GPUs'
 * part from the GPU hook.  With GPUs, a step's boundary kicks the meter:
 * the GPUs read at that instant too, so the boundary's interval has their
 * energy up to it.  arg is the sampler served, which _node_total checks.
 */
static const energy_query_hooks_t *_node_hooks(void)
{
	static energy_query_hooks_t hooks;
	bool gpus = se_gpus_configured();

	memset(&hooks, 0, sizeof(hooks));
	hooks.arg = node.sampler;
	if (gpus)
		hooks.kick = se_gpus_kick;
	if (!total_id) {
		total_id = energy_query_random_id();
		total_start_wall_ns = se_wall_ns();
	}
	/* both modes: slurm-energy-exporter's scrape */
	hooks.snapshot = _node_snapshot;
	if (se_share_mode()) {
		hooks.share = se_share_answer;
		return &hooks;
	}
	hooks.total = _node_total;
	hooks.total_id = total_id;
	/* node mode's step series are the sampler's increase over the step:
	 * not the total of a source that settles from its own history */
	hooks.steps_unlisted = se_energy_plugin.window_energy != NULL;
	if (gpus)
		hooks.gpus = se_gpus_node_part;
	return &hooks;
}

/*
 * Serve the steps' energy queries (energy_query.h) for a live source, and
 * their shares in share mode; a source with window_energy settles from its
 * own history instead, but with EnergyGPU=nvml its steps still ask their
 * GPU part here.  A failure costs only the settle's exactness (in share
 * mode: steps keep the node's total): logged, not fatal.
 */
static void _node_serve(const char *name)
{
	char path[PATH_MAX], err[512] = "";
	int rc;

	if (se_energy_plugin.window_energy && !se_share_mode() &&
	    !se_gpus_configured())
		return;
	rc = energy_query_socket_path(_spool_dir(), name, path, sizeof(path));
	if (rc == -ENAMETOOLONG) {
		error("%s: node %s: energy query socket path too long for AF_UNIX (at most 107 bytes): %s; choose a shorter SlurmdSpoolDir. Steps keep their running energy total",
		      plugin_type, name, path);
		return;
	}
	if (rc) {
		error("%s: node %s: no SlurmdSpoolDir for the energy query socket; steps keep their running energy total",
		      plugin_type, name);
		return;
	}
	node.query_server = energy_query_server_start(
		path, node.sampler, node.meter.cfg.period_ns,
		node.meter.cfg.deadline_ns, _node_hooks(), err, sizeof(err));
	if (!node.query_server)
		error("%s: node %s: %s; steps keep their running energy total",
		      plugin_type, name, err);
	else
		debug("%s: node %s: serving step energy queries on %s",
		      plugin_type, name, path);
}

void se_node_start(const char *meter_name, se_energy_make_meter_fn make,
		   void *arg)
{
	const char *name = se_energy_node_name();
	se_energy_meter_t m = { 0 };
	char err[512] = "";
	int rc;

	if (node.sampler || node.unmetered)
		return;
	if (!name)
		fatal("%s: cannot tell this slurmd's node name", plugin_type);
	rc = make(arg, name, &m, err, sizeof(err));
	if (rc == SE_ENERGY_NO_METER) {
		node.unmetered = true;
		info("%s: slurm-energy-plugins %s (built for Slurm %s), meter %s: node %s has no meter configured (%s); it reports no energy",
		     plugin_type, se_energy_version, se_energy_slurm_version,
		     meter_name, name, err[0] ? err : "Device=none");
		return;
	}
	if (rc)
		fatal("%s: node %s: %s", plugin_type, name, err);

	node.meter = m;
	node.meter.cfg.label = xstrdup(m.cfg.label);
	se_share_start(name, &node.meter.cfg);
	node.start_ns = se_mono_ns();
	if (!(node.sampler = sampler_start(m.ops, m.dev, &node.meter.cfg)))
		fatal("%s: node %s: cannot start the %s sampler for %s: %m",
		      plugin_type, name, meter_name, node.meter.describe);
	se_gpus_start(name, node.meter.cfg.period_ns);
	_node_serve(name);

	/* A reload (scontrol reconfigure) continues the node's total from
	 * the new sampler's first sample (_node_join). */
	if (carry.valid) {
		node.carry = carry;	/* valid: pending */
		node.base_mj = carry.energy_mj;
		node.reported_mj = carry.reported_mj;
		carry.valid = false;
	}

	info("%s: slurm-energy-plugins %s (built for Slurm %s) started on node %s: meter %s %s",
	     plugin_type, se_energy_version, se_energy_slurm_version, name,
	     meter_name, node.meter.describe);
}

int se_node_get_data(int data_type, void *data)
{
	switch (data_type) {
	case ENERGY_DATA_NODE_ENERGY_UP:
	case ENERGY_DATA_JOULES_TASK:
		/* "fresh data wanted": ask for a read, answer with what is
		 * known now; the RPC thread never waits on the meter. */
		if (node.sampler)
			sampler_kick(node.sampler);
		return _node_fill(data);
	case ENERGY_DATA_NODE_ENERGY:
	case ENERGY_DATA_STRUCT:
		return _node_fill(data);
	default:
		return se_energy_get_common(data_type, _node_last_poll(), data);
	}
}

void se_node_fini(void)
{
	sampler_status_t st;

	if (node.sampler) {
		sampler_status(node.sampler, &st);
		carry.reported_mj = _node_energy_mj(&st);
		_node_carry_out(&st);
		carry.valid = true;
		_node_stop();
	}
	memset(&node, 0, sizeof(node));
}
