/*
 * ext_sensors_meters.c - ext_sensors/meters: the Slurm glue (slurmctld).
 *
 * Drop-in for upstream's ext_sensors/rrd (same ext_sensors.conf), which read
 * every RRD file serially inside slurmctld's background loop and left switch
 * and cold-door data as TODO.  All logic is free of Slurm, in es_pool.c
 * (the reader pool), es_conf.c, es_step_starts.c and es_cadence_watch.c;
 * this file maps Slurm's records onto it:
 *
 * What slurmctld 22.05 calls, and with which locks (conf, job, node):
 *
 *  update_component_data  _slurmctld_background() (controller.c), under
 *      node_write_lock (read, write, write), every ExtSensorsFreq seconds --
 *      but only when is_ping_done(): right after the AcctGatherNodeFreq
 *      branch has started its node-energy agent (ping_begin()) that is
 *      false, so with AcctGatherNodeFreq=1 the call nearly never comes.  It
 *      only adopts the reads already finished and copies values into the
 *      node records (O(nodes) memory work).
 *  get_stepstartdata  _slurm_rpc_job_step_create() (proc_req.c), under
 *      (none, write, read): remembers the step's start instant (start_time
 *      is whole seconds); node records are read-locked, so not written.
 *  get_stependdata  _step_partial_comp() (step_mgr.c), from
 *      _slurm_rpc_step_complete() under (none, write, write): the step's
 *      energy from the per-node series already in memory (finished reads
 *      adopted first), never from a file; the step's node records are
 *      refreshed too.
 *
 * The reads themselves never wait for those calls: the core's pacer thread
 * runs a round every ExtSensorsFreq seconds on its own clock, and its hook
 * (_pacer_hook) takes slurmctld's node write lock itself -- for O(nodes)
 * memory work, never for I/O -- to sync the node set, publish the values,
 * and say once in the log when slurmctld's own calls are starved.
 */
#include "config.h"		/* Slurm's, first */

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "src/common/slurm_xlator.h"

#include "src/common/bitstring.h"
#include "src/common/hostlist.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/parse_config.h"
#include "src/common/read_config.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"
#include "slurm_compat_ext_sensors.h"

#include "es_cadence_watch.h"
#include "es_conf.h"
#include "es_pool.h"
#include "se_log.h"
#include "se_slurm_conf.h"
#include "se_slurm_log.h"
#include "se_time.h"

#define CONF_FILE	"ext_sensors.conf"
#define ERR_LEN		512

const char plugin_name[] = "ExtSensors meters plugin (slurm-energy-plugins)";
const char plugin_type[] = "ext_sensors/meters";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Entry points Slurm resolves with dlsym(): slurm_compat_ext_sensors.h. */

static es_conf_t es_cfg;
static es_pool_t *core;
/* Under slurmctld's node write lock (every caller holds it): */
static int synced_node_cnt = -1;	/* node_record_count last given */
static es_cadence_t cadence;		/* of update_component_data calls */

/* slurmctld's lock calls, found at run time: a process that loads the
 * plugin without being slurmctld (the benchmark) has none, and then no
 * hook publishes on its own. */
static void (*lock_fn)(slurmctld_lock_t);
static void (*unlock_fn)(slurmctld_lock_t);

/* ---------------------------------------------------------- logging */

/* Our core logs through Slurm, prefixed with this plugin's type. */
static se_slurm_log_t log_to = SE_SLURM_LOG(EXT_SENSORS);


/* ---------------------------------------------------------- config */

/* Read ext_sensors.conf into es_cfg; fatal() on a bad file, at load time. */
static void _read_conf(void)
{
	char *path = get_extra_conf_path(CONF_FILE);
	s_p_options_t *opts = se_slurm_conf_options(&es_conf_desc);
	s_p_hashtbl_t *tbl = s_p_hashtbl_create(opts);
	char err[ERR_LEN];

	if (s_p_parse_file(tbl, NULL, path, false, NULL) != SLURM_SUCCESS)
		fatal("%s: cannot parse %s (unknown key or bad line above)",
		      plugin_type, path);
	if (se_slurm_conf_parse(&es_conf_desc, &es_cfg, tbl, path, err,
				sizeof(err)))
		fatal("%s: %s", plugin_type, err);
	s_p_hashtbl_destroy(tbl);
	xfree(opts);
	xfree(path);
}

/* ---------------------------------------------------------- components */

/* Names from a hostlist expression ("sw[1-4]"), xfree'd by the caller. */
static char **_hostlist_names(const char *expr, size_t *n)
{
	se_hostlist_t hl = hostlist_create(expr);
	char **names = NULL, *h;

	*n = 0;
	while ((h = hostlist_shift(hl))) {
		xrecalloc(names, *n + 1, sizeof(char *));
		names[(*n)++] = xstrdup(h);
		free(h);
	}
	hostlist_destroy(hl);
	return names;
}

static void _names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		xfree(names[i]);
	xfree(names);
}

static void _set_kind(es_kind_t kind, const char *const *names, size_t n)
{
	char err[ERR_LEN];

	if (es_pool_set_components(core, kind, names, n, err, sizeof(err)))
		error("%s: %s", plugin_type, err);
}

/* Node i of Slurm's table is component i (holes have no name).  True when
 * the set was given anew (its new members want a read now). */
static bool _sync_nodes(void)
{
	const char **names;
	node_record_t *node_ptr;

	if (synced_node_cnt == node_record_count)
		return false;
	names = xcalloc(node_record_count + 1, sizeof(char *));
	for (int i = 0; (node_ptr = next_node(&i)); i++)
		names[i] = node_ptr->name;
	_set_kind(ES_KIND_NODE, names, (size_t) node_record_count);
	xfree(names);
	synced_node_cnt = node_record_count;
	return true;
}

/* Switches: Switches= if given, else topology.conf's; doors: ColdDoors=. */
static void _sync_others(void)
{
	char **names;
	size_t n = 0;

	if (es_cfg.data & (ES_SWITCH_ENERGY | ES_SWITCH_TEMP)) {
		if (es_cfg.switches) {
			names = _hostlist_names(es_cfg.switches, &n);
		} else {
			names = xcalloc(switch_record_cnt + 1, sizeof(char *));
			for (int i = 0; i < switch_record_cnt; i++)
				names[n++] = xstrdup(
					switch_record_table[i].name);
		}
		_set_kind(ES_KIND_SWITCH, (const char *const *) names, n);
		_names_free(names, n);
	}
	if (es_cfg.data & ES_DOOR_TEMP) {
		names = _hostlist_names(es_cfg.cold_doors, &n);
		_set_kind(ES_KIND_DOOR, (const char *const *) names, n);
		_names_free(names, n);
	}
}

/* ---------------------------------------------------------- node records */

static void _copy_node_values(node_record_t *node_ptr, const es_values_t *v)
{
	ext_sensors_data_t *ext = node_ptr->ext_sensors;

	if (!ext)
		return;
	if (es_cfg.data & ES_NODE_ENERGY) {
		ext->consumed_energy = v->has_energy ?
			(v->energy_mj + 500) / 1000 : NO_VAL64;
		ext->energy_update_time = v->has_energy ?
			(time_t) (v->energy_t_ns / SE_NS_PER_SEC) : 0;
		ext->current_watts = v->has_power ?
			(uint32_t) lround(v->watts) : NO_VAL;
	}
	if (es_cfg.data & ES_NODE_TEMP)
		ext->temperature = v->has_temp ?
			(uint32_t) lround(v->temp_c) : NO_VAL;
}

/* Copy every node's values into its record (node write lock held). */
static void _publish_nodes(uint64_t now_ns)
{
	node_record_t *node_ptr;
	es_values_t v;

	for (int i = 0; (node_ptr = next_node(&i)); i++)
		if (!es_pool_values(core, ES_KIND_NODE, (size_t) i, now_ns,
				    &v))
			_copy_node_values(node_ptr, &v);
}

static uint64_t _period_ns(void)
{
	return (slurm_conf.ext_sensors_freq ? slurm_conf.ext_sensors_freq :
		10) * SE_NS_PER_SEC;
}

/* Once: slurmctld's update calls are far apart (node write lock held). */
static void _check_starved(uint64_t mono_ns)
{
	uint64_t gap_ns;

	if (!es_cadence_starved(&cadence, mono_ns, &gap_ns))
		return;
	info("%s: slurmctld has not called ext_sensors_p_update_component_data for %.0f s (ExtSensorsFreq=%u): its background loop runs that call only when no node RPC cycle is in flight (is_ping_done()), which AcctGatherNodeFreq, HealthCheckInterval and SlurmdTimeout pings start; this plugin reads every %u s and publishes node values on its own, so nothing is lost (said once; see ext_sensors_meters(5))",
	     plugin_type, (double) gap_ns / SE_NS_PER_SEC,
	     slurm_conf.ext_sensors_freq,
	     (unsigned) (_period_ns() / SE_NS_PER_SEC));
}

/*
 * After each pacer round, in the pacer's thread: under slurmctld's node
 * write lock (only), sync the node set, adopt the finished reads and copy
 * values into the node records.  A new node set asks for a round at once,
 * an empty one (before read_slurm_conf()) for another look in a second.
 */
static uint64_t _pacer_hook(void *arg)
{
	slurmctld_lock_t node_write = {
		NO_LOCK, NO_LOCK, WRITE_LOCK, NO_LOCK, NO_LOCK };
	uint64_t now_ns = se_wall_ns(), delay_ns = 0;
	es_round_stats_t st;
	bool changed;

	lock_fn(node_write);
	changed = _sync_nodes();
	if (node_record_count > 0)
		es_cadence_arm(&cadence, se_mono_ns());
	es_pool_adopt(core, now_ns, &st);
	_publish_nodes(now_ns);
	_check_starved(se_mono_ns());
	if (changed && node_record_count > 0)
		delay_ns = SE_NS_PER_MS;
	else if (node_record_count <= 0)
		delay_ns = SE_NS_PER_SEC;
	unlock_fn(node_write);
	return delay_ns;
}

/* ---------------------------------------------------------- plugin API */

extern int init(void)
{
	char err[ERR_LEN];
	int rc;

	se_slurm_log_install(&log_to);
	_read_conf();
	if (!(core = es_pool_create(&es_cfg, err, sizeof(err)))) {
		error("%s: %s", plugin_type, err);
		return SLURM_ERROR;
	}
	_sync_others();
	es_cadence_init(&cadence, slurm_conf.ext_sensors_freq *
			SE_NS_PER_SEC);
	lock_fn = (void (*)(slurmctld_lock_t)) dlsym(RTLD_DEFAULT,
						     "lock_slurmctld");
	unlock_fn = (void (*)(slurmctld_lock_t)) dlsym(RTLD_DEFAULT,
						       "unlock_slurmctld");
	if (!lock_fn || !unlock_fn)
		lock_fn = NULL;
	rc = es_pool_start_pacer(core, _period_ns(),
				 lock_fn ? _pacer_hook : NULL, NULL);
	if (rc) {
		error("%s: cannot start the pacer thread: %s", plugin_type,
		      strerror(-rc));
		es_pool_destroy(core, SE_NS_PER_SEC);
		core = NULL;
		return SLURM_ERROR;
	}
	verbose("%s loaded (%u RRD reader threads, a round every %u s on its own%s)",
		plugin_name, es_cfg.threads,
		(unsigned) (_period_ns() / SE_NS_PER_SEC),
		lock_fn ? ", node values published by it" :
		"; node values published by slurmctld's calls only");
	if (!slurm_conf.ext_sensors_freq)
		info("%s: ExtSensorsFreq=0: slurmctld never calls for a round; reading every 10 s on its own", plugin_type);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	es_pool_destroy(core, 2 * SE_NS_PER_SEC);
	core = NULL;
	es_conf_free(&es_cfg);
	se_log_set_sink(NULL, NULL);
	return SLURM_SUCCESS;
}

/* Under node_write_lock (read, write, write) of _slurmctld_background. */
extern int ext_sensors_p_update_component_data(void)
{
	uint64_t now_ns = se_wall_ns(), mono_ns = se_mono_ns(), gap_ns;
	es_round_stats_t st, pacer;
	uint64_t rounds;
	unsigned taken;

	_check_starved(mono_ns);
	gap_ns = es_cadence_call(&cadence, mono_ns);
	if (_sync_nodes())
		es_pool_kick(core);
	taken = es_pool_adopt(core, now_ns, &st);
	_publish_nodes(now_ns);

	es_pool_pacer_stats(core, &pacer, &rounds);
	log_flag(EXT_SENSORS, "%s: update call (%.1f s after the previous one): %u finished reads adopted; pacer round %"PRIu64": %u reads queued, %u still running, %u ok, %u failed, %u dropped late",
		 plugin_type, (double) gap_ns / SE_NS_PER_SEC, taken, rounds,
		 pacer.queued, pacer.in_flight, pacer.ok, pacer.failed,
		 pacer.late);
	return SLURM_SUCCESS;
}

static es_step_key_t _step_key(const step_record_t *step_rec)
{
	return (es_step_key_t) { step_rec->step_id.job_id,
				 step_rec->step_id.step_id,
				 step_rec->step_id.step_het_comp };
}

/* Under (none, write, read) of _slurm_rpc_job_step_create. */
extern int ext_sensors_p_get_stepstartdata(step_record_t *step_rec)
{
	es_step_key_t key = _step_key(step_rec);

	/* start_time is whole seconds, taken just before this call */
	if ((es_cfg.data & ES_JOB_ENERGY) &&
	    es_pool_step_begin(core, &key, se_wall_ns()))
		error("%s: %pS: out of memory for its start instant",
		      plugin_type, step_rec);
	return SLURM_SUCCESS;
}

/* Indices of the step's nodes; xfree'd by the caller. */
static size_t *_step_nodes(const step_record_t *step_rec, size_t *n)
{
	bitstr_t *bm = step_rec->step_node_bitmap;
	size_t *idx;
	int first, last;

	*n = 0;
	if (!bm || (first = bit_ffs(bm)) < 0)
		return NULL;
	last = bit_fls(bm);
	idx = xcalloc(bit_set_count(bm), sizeof(*idx));
	for (int i = first; i <= last; i++)
		if (bit_test(bm, i))
			idx[(*n)++] = (size_t) i;
	return idx;
}

/* The step's last node is reporting (exit_node_bitmap set just before). */
static bool _step_last_call(const step_record_t *step_rec)
{
	bitstr_t *done = step_rec->exit_node_bitmap;

	return !done || bit_set_count(done) == bit_size(done);
}

/* Copy the values of the step's nodes into their records. */
static void _publish_step_nodes(const size_t *nodes, size_t n,
				uint64_t now_ns)
{
	node_record_t *node_ptr;
	es_values_t v;

	for (size_t i = 0; i < n; i++)
		if ((node_ptr = node_record_table_ptr[nodes[i]]) &&
		    !es_pool_values(core, ES_KIND_NODE, nodes[i], now_ns, &v))
			_copy_node_values(node_ptr, &v);
}

/* Under (none, write, write) of _slurm_rpc_step_complete, or the job and
 * node write locks of a node failure's step kill. */
extern int ext_sensors_p_get_stependdata(step_record_t *step_rec)
{
	uint64_t t0_ns, t1_ns = se_wall_ns(), energy_mj = 0;
	es_step_key_t key = _step_key(step_rec);
	char err[ERR_LEN];
	size_t n, *nodes;
	uint64_t joules = NO_VAL64;

	if (!(es_cfg.data & ES_JOB_ENERGY) || !step_rec->ext_sensors)
		return SLURM_SUCCESS;
	if (_sync_nodes())
		es_pool_kick(core);
	t0_ns = es_pool_step_start(core, &key, (uint64_t) step_rec->start_time
				   * SE_NS_PER_SEC, _step_last_call(step_rec));
	if (!(nodes = _step_nodes(step_rec, &n)))
		return SLURM_SUCCESS;

	/* adopts what the readers finished: never "no series" for want of
	 * a call from slurmctld's background loop */
	if (es_pool_energy_between(core, nodes, n, t0_ns, t1_ns, &energy_mj,
				   err, sizeof(err)))
		info("%s: %pS: no out-of-band energy: %s", plugin_type,
		     step_rec, err);
	else
		joules = (energy_mj + 500) / 1000;
	_publish_step_nodes(nodes, n, t1_ns);
	log_flag(EXT_SENSORS, "%s: %pS: %"PRIu64" J over %.3f s on %zu node(s)",
		 plugin_type, step_rec, joules == NO_VAL64 ? 0 : joules,
		 (double) (t1_ns - t0_ns) / SE_NS_PER_SEC, n);
	xfree(nodes);

	step_rec->ext_sensors->consumed_energy = joules;
	/* Fill the step's energy only where the in-band plugin gave none,
	 * as upstream does (sacct shows it; the job sums its steps). */
	if (joules != NO_VAL64 && step_rec->jobacct &&
	    (!step_rec->jobacct->energy.consumed_energy ||
	     step_rec->jobacct->energy.consumed_energy == NO_VAL64))
		step_rec->jobacct->energy.consumed_energy = joules;
	return SLURM_SUCCESS;
}

static void _add_pair(se_list_t l, const char *name, char *value)
{
	config_key_pair_t *kp = xmalloc(sizeof(*kp));

	kp->name = xstrdup(name);
	kp->value = value;
	list_append(l, kp);
}

/* "Switch:sw1 = Joules=123 Watts=45 Temp=n/s" for each switch and door. */
static void _add_component_pairs(se_list_t l, es_kind_t kind, const char *label)
{
	uint64_t now_ns = se_wall_ns();
	size_t n = es_pool_count(core, kind);
	es_values_t v;

	for (size_t i = 0; i < n; i++) {
		char *name, *val = NULL;

		if (es_pool_values(core, kind, i, now_ns, &v))
			continue;
		name = xstrdup_printf("%s:%s", label,
				      es_pool_name(core, kind, i));
		if (v.has_energy)
			xstrfmtcat(val, "Joules=%" PRIu64 " ",
				   (v.energy_mj + 500) / 1000);
		if (v.has_power)
			xstrfmtcat(val, "Watts=%.0f ", v.watts);
		if (v.has_temp)
			xstrfmtcat(val, "Temp=%.1f", v.temp_c);
		_add_pair(l, name, val ? val : xstrdup("n/s"));
		xfree(name);
	}
}

extern se_list_t ext_sensors_p_get_config(void)
{
	se_list_t l = list_create(destroy_config_key_pair);

	se_slurm_conf_values(&es_conf_desc, &es_cfg, l);
	list_sort(l, (ListCmpF) sort_key_pairs);
	if (core) {
		_add_component_pairs(l, ES_KIND_SWITCH, "Switch");
		_add_component_pairs(l, ES_KIND_DOOR, "ColdDoor");
	}
	return l;
}
