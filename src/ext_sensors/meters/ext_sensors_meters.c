/*
 * ext_sensors_meters.c - ext_sensors/meters: the Slurm glue (slurmctld).
 *
 * Drop-in for upstream's ext_sensors/rrd (same ext_sensors.conf), which read
 * every RRD file serially inside slurmctld's background loop and left switch
 * and cold-door data as TODO.  All logic is in es_core.c / es_conf.c, free
 * of Slurm; this file maps Slurm's records onto it:
 *
 *  update_component_data  _slurmctld_background() (controller.c) calls it
 *      every ExtSensorsFreq seconds under the node and job write locks.  It
 *      costs O(nodes) memory work: fold the reads the reader threads have
 *      finished, queue the next ones, copy values into node records.
 *  get_stependdata  _step_partial_comp() (step_mgr.c) calls it under the
 *      job write lock: the step's energy comes from the per-node series
 *      already in memory, never from a file.
 */
#include "config.h"		/* Slurm's, first */

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
#include "src/common/slurm_ext_sensors.h"
#include "src/common/slurm_topology.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "es_conf.h"
#include "es_core.h"
#include "se_log.h"
#include "se_slurm_log.h"
#include "se_time.h"

#define CONF_FILE	"ext_sensors.conf"
#define ERR_LEN		512

const char plugin_name[] = "ExtSensors meters plugin (slurm-energy-plugins)";
const char plugin_type[] = "ext_sensors/meters";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Entry points Slurm resolves with dlsym() (slurm_ext_sensors.c syms[]). */
extern int init(void);
extern int fini(void);
extern int ext_sensors_p_update_component_data(void);
extern int ext_sensors_p_get_stepstartdata(step_record_t *step_rec);
extern int ext_sensors_p_get_stependdata(step_record_t *step_rec);
extern List ext_sensors_p_get_config(void);

static es_conf_t es_cfg;
static es_core_t *core;
static int synced_node_cnt = -1;	/* node_record_count last given */

/* ---------------------------------------------------------- logging */

/* Our core logs through Slurm, prefixed with this plugin's type. */
static se_slurm_log_t log_to = SE_SLURM_LOG(EXT_SENSORS);


/* ---------------------------------------------------------- config */

/* Read ext_sensors.conf into es_cfg; fatal() on a bad file, at load time. */
static void _read_conf(void)
{
	char *path = get_extra_conf_path(CONF_FILE);
	s_p_options_t *opts;
	s_p_hashtbl_t *tbl;
	char err[ERR_LEN];
	size_t n = 0;

	while (es_conf_key(n))
		n++;
	opts = xcalloc(n + 1, sizeof(*opts));
	for (size_t i = 0; i < n; i++) {
		opts[i].key = (char *) es_conf_key(i);
		opts[i].type = S_P_STRING;
	}
	tbl = s_p_hashtbl_create(opts);
	if (s_p_parse_file(tbl, NULL, path, false, NULL) != SLURM_SUCCESS)
		fatal("%s: cannot parse %s (unknown key or bad line above)",
		      plugin_type, path);

	es_conf_init(&es_cfg);
	for (size_t i = 0; i < n; i++) {
		char *value = NULL;

		if (!s_p_get_string(&value, opts[i].key, tbl))
			continue;
		if (es_conf_set(&es_cfg, path, opts[i].key, value, err,
				sizeof(err)))
			fatal("%s: %s", plugin_type, err);
		xfree(value);
	}
	if (es_conf_check(&es_cfg, path, err, sizeof(err)))
		fatal("%s: %s", plugin_type, err);
	s_p_hashtbl_destroy(tbl);
	xfree(opts);
	xfree(path);
}

/* ---------------------------------------------------------- components */

/* Names from a hostlist expression ("sw[1-4]"), xfree'd by the caller. */
static char **_hostlist_names(const char *expr, size_t *n)
{
	hostlist_t hl = hostlist_create(expr);
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

	if (es_core_set_components(core, kind, names, n, err, sizeof(err)))
		error("%s: %s", plugin_type, err);
}

/* Node i of Slurm's table is component i (holes have no name). */
static void _sync_nodes(void)
{
	const char **names;
	node_record_t *node_ptr;

	if (synced_node_cnt == node_record_count)
		return;
	names = xcalloc(node_record_count + 1, sizeof(char *));
	for (int i = 0; (node_ptr = next_node(&i)); i++)
		names[i] = node_ptr->name;
	_set_kind(ES_KIND_NODE, names, (size_t) node_record_count);
	xfree(names);
	synced_node_cnt = node_record_count;
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

/* ---------------------------------------------------------- plugin API */

extern int init(void)
{
	char err[ERR_LEN];

	se_log_set_sink(se_slurm_log_sink, &log_to);
	_read_conf();
	if (!(core = es_core_create(&es_cfg, err, sizeof(err)))) {
		error("%s: %s", plugin_type, err);
		return SLURM_ERROR;
	}
	_sync_others();
	verbose("%s loaded (%u RRD reader threads)", plugin_name,
		es_cfg.threads);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	es_core_destroy(core, 2 * SE_NS_PER_SEC);
	core = NULL;
	es_conf_free(&es_cfg);
	se_log_set_sink(NULL, NULL);
	return SLURM_SUCCESS;
}

extern int ext_sensors_p_update_component_data(void)
{
	uint64_t now_ns = se_wall_ns();
	uint64_t round_ns = (slurm_conf.ext_sensors_freq ?
			     slurm_conf.ext_sensors_freq : 10) * SE_NS_PER_SEC;
	es_round_stats_t st;
	node_record_t *node_ptr;
	es_values_t v;

	_sync_nodes();
	es_core_round(core, now_ns, round_ns, &st);
	for (int i = 0; (node_ptr = next_node(&i)); i++)
		if (!es_core_values(core, ES_KIND_NODE, (size_t) i, now_ns,
				    &v))
			_copy_node_values(node_ptr, &v);

	log_flag(EXT_SENSORS, "%s: round: %u reads queued, %u still running, %u ok, %u failed, %u dropped late",
		 plugin_type, st.queued, st.in_flight, st.ok, st.failed,
		 st.late);
	return SLURM_SUCCESS;
}

extern int ext_sensors_p_get_stepstartdata(step_record_t *step_rec)
{
	/* The step's start instant is step_rec->start_time; nothing to do. */
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

extern int ext_sensors_p_get_stependdata(step_record_t *step_rec)
{
	uint64_t t0_ns, t1_ns = se_wall_ns(), energy_mj = 0;
	char err[ERR_LEN];
	size_t n, *nodes;
	uint64_t joules = NO_VAL64;

	if (!(es_cfg.data & ES_JOB_ENERGY) || !step_rec->ext_sensors)
		return SLURM_SUCCESS;
	_sync_nodes();
	t0_ns = (uint64_t) step_rec->start_time * SE_NS_PER_SEC;
	if (!(nodes = _step_nodes(step_rec, &n)))
		return SLURM_SUCCESS;

	if (es_core_energy_between(core, nodes, n, t0_ns, t1_ns, &energy_mj,
				   err, sizeof(err)))
		info("%s: %pS: no out-of-band energy: %s", plugin_type,
		     step_rec, err);
	else
		joules = (energy_mj + 500) / 1000;
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

static void _add_pair(List l, const char *name, char *value)
{
	config_key_pair_t *kp = xmalloc(sizeof(*kp));

	kp->name = xstrdup(name);
	kp->value = value;
	list_append(l, kp);
}

/* "Switch:sw1 = Joules=123 Watts=45 Temp=n/s" for each switch and door. */
static void _add_component_pairs(List l, es_kind_t kind, const char *label)
{
	uint64_t now_ns = se_wall_ns();
	size_t n = es_core_count(core, kind);
	es_values_t v;

	for (size_t i = 0; i < n; i++) {
		char *name, *val = NULL;

		if (es_core_values(core, kind, i, now_ns, &v))
			continue;
		name = xstrdup_printf("%s:%s", label,
				      es_core_name(core, kind, i));
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

extern List ext_sensors_p_get_config(void)
{
	List l = list_create(destroy_config_key_pair);
	char buf[4096];

	for (size_t i = 0; es_conf_key(i); i++) {
		const char *key = es_conf_key(i);

		_add_pair(l, key, xstrdup(es_conf_value(&es_cfg, key, buf,
							  sizeof(buf))));
	}
	list_sort(l, (ListCmpF) sort_key_pairs);
	if (core) {
		_add_component_pairs(l, ES_KIND_SWITCH, "Switch");
		_add_component_pairs(l, ES_KIND_DOOR, "ColdDoor");
	}
	return l;
}
