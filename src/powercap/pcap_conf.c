/*
 * pcap_conf.c - powercap.conf's key table and the checks of its keys
 * together (pcap_conf.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "pcap_conf.h"
#include "pcap_knob.h"
#include "pcap_wire.h"
#include "se_hostlist.h"
#include "se_time.h"

#define MW(w) ((uint64_t)((w) * 1000.0 + 0.5))

/* Each knob spec of the comma list, by its syntax (nothing opened). */
static int _check_knobs(const conf_where_t *w, const char *value, char *err,
			size_t err_len)
{
	char *copy = strdup(value), *save = NULL, *tok;
	char e[400];
	int rv = 0, n = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !rv;
	     tok = strtok_r(NULL, ",", &save), n++)
		if (pcap_knob_check_spec(tok, e, sizeof(e)))
			rv = conf_fail(w, value, err, err_len, -EINVAL, "%s",
				       e);
	if (!rv && !n)
		rv = conf_fail(w, value, err, err_len, -EINVAL, "no knob");
	free(copy);
	return rv;
}

/* Node names expanded from a hostlist: each a word of at most
 * PCAP_WIRE_NAME_MAX - 1. */
static int _check_names(const conf_where_t *w, const char *value,
			const char *names, char *err, size_t err_len)
{
	const char *p = names;
	size_t len;

	for (; *p; p += len + (p[len] == ',')) {
		len = strcspn(p, ",");
		if (len >= PCAP_WIRE_NAME_MAX ||
		    strcspn(p, ", \t[]=:") != len)
			return conf_fail(w, value, err, err_len, -EINVAL,
					 "node name '%.*s': 1 to %d "
					 "characters, no blank, '=' or ':'",
					 (int)len, p, PCAP_WIRE_NAME_MAX - 1);
	}
	return 0;
}

/* PowerCapNodes, a NodeClass's Nodes: Slurm's hostlist ("node[01-32],
 * gpu1"), kept expanded as a comma list (char **field). */
static int _nodes(void *field, const conf_where_t *w, const char *value,
		  char *err, size_t err_len)
{
	char **out = field, *names, e[200];
	int rv;

	if (!*value)
		return conf_fail(w, value, err, err_len, -EINVAL, "no node");
	if ((rv = se_hostlist_expand(value, PCAP_CONF_MAX_NODES, &names, e,
				     sizeof(e))))
		return rv == -ENOMEM ? rv :
			conf_fail(w, value, err, err_len, rv, "%s", e);
	if ((rv = _check_names(w, value, names, err, err_len))) {
		free(names);
		return rv;
	}
	free(*out);
	*out = names;
	return 0;
}

/* PowerCapController: HOST:PORT, where the agents connect. */
static int _check_controller(const conf_where_t *w, const char *value,
			     char *err, size_t err_len)
{
	const char *colon = strrchr(value, ':');
	char *end;
	long port;

	if (!colon || colon == value)
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "expected HOST:PORT");
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || port < 1 || port > 65535)
		return conf_fail(w, value, err, err_len, -EINVAL,
				 "bad port (1-65535)");
	return 0;
}

static const char *const no_yes[] = { "no", "yes", NULL };
static const char *const release_cap[] = { "release", "cap", NULL };

static const se_conf_key_t keys[] = {
	SE_KEY_REAL("PowerCapWatts", pcap_conf_t, cap_w, 1, 1e9),
	SE_KEY_SECONDS("PowerCapPeriod", pcap_conf_t, period_ns,
		       100 * SE_NS_PER_MS, 60 * SE_NS_PER_SEC),
	SE_KEY_REAL("PowerCapHeadroomWatts", pcap_conf_t, headroom_w, 0,
		    100000),
	SE_KEY_REAL("PowerCapAtCapWatts", pcap_conf_t, at_cap_w, 0, 100000),
	SE_KEY_REAL("PowerCapHysteresisWatts", pcap_conf_t, hysteresis_w, 0,
		    100000),
	SE_KEY_MILLIS("PowerCapRaiseGate", pcap_conf_t, raise_gate_ns, 0,
		      60000),
	SE_KEY_SECONDS("PowerCapHoldSeconds", pcap_conf_t, hold_ns,
		       SE_NS_PER_SEC, 86400 * SE_NS_PER_SEC),
	SE_KEY_REAL("PowerCapFloorWatts", pcap_conf_t, floor_w, 0, 4000000),
	SE_KEY_REAL("PowerCapMaxWatts", pcap_conf_t, max_w, 1, 4000000),
	SE_KEY_STR("PowerCapKnobs", pcap_conf_t, knobs, _check_knobs, ""),
	SE_KEY_CUSTOM("PowerCapNodes", pcap_conf_t, nodes, char *, _nodes),
	SE_KEY_STR("PowerCapController", pcap_conf_t, controller,
		   _check_controller, ""),
	SE_KEY_PATH("PowerCapStateFile", pcap_conf_t, state_file, NULL, ""),
	SE_KEY_ENUM("PowerCapJobRecords", pcap_conf_t, job_records, no_yes),
	SE_KEY_ENUM("PowerCapIdleNodes", pcap_conf_t, idle_nodes, release_cap),
};

/* A NodeClass line's keys (pcap_class_t). */
static const se_conf_key_t class_keys[] = {
	SE_KEY_CUSTOM("Nodes", pcap_class_t, nodes, char *, _nodes),
	SE_KEY_REAL("FloorWatts", pcap_class_t, floor_w, 0, 4000000),
	SE_KEY_REAL("MaxWatts", pcap_class_t, max_w, 1, 4000000),
	SE_KEY_STR("Knobs", pcap_class_t, knobs, _check_knobs, ""),
};
#define N_CLASS_KEYS (sizeof(class_keys) / sizeof(class_keys[0]))

static const se_conf_key_t *_class_key(const char *name)
{
	for (size_t i = 0; i < N_CLASS_KEYS; i++)
		if (!strcasecmp(class_keys[i].name, name))
			return &class_keys[i];
	return NULL;
}

void pcap_conf_init(pcap_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->period_ns = SE_NS_PER_SEC;
	c->headroom_w = PCAP_DEFAULT_HEADROOM_MW / 1000.0;
	c->at_cap_w = PCAP_DEFAULT_AT_CAP_MW / 1000.0;
	c->hysteresis_w = PCAP_DEFAULT_HYSTERESIS_MW / 1000.0;
	c->raise_gate_ns = 500 * SE_NS_PER_MS;
	c->hold_ns = 30 * SE_NS_PER_SEC;
}

void pcap_conf_free(pcap_conf_t *c)
{
	free(c->knobs);
	free(c->nodes);
	free(c->controller);
	free(c->state_file);
	for (size_t i = 0; i < c->n_classes; i++) {
		free(c->classes[i].name);
		free(c->classes[i].nodes);
		free(c->classes[i].knobs);
	}
	free(c->classes);
	pcap_conf_init(c);
}

static int _need(const char *file, const char *key, bool given, char *err,
		 size_t err_len)
{
	if (given)
		return 0;
	snprintf(err, err_len, "%s: %s is required", file, key);
	return -EINVAL;
}

/* One node of class k against PowerCapNodes and the classes before it. */
static int _check_class_node(const pcap_conf_t *c, const pcap_class_t *k,
			     const char *node, const char *file, char *err,
			     size_t err_len)
{
	if (c->nodes && !conf_in_list(c->nodes, node)) {
		snprintf(err, err_len, "%s:%u: NodeClass=%s: node %s is not in "
			 "PowerCapNodes", file, k->line, k->name, node);
		return -EINVAL;
	}
	for (const pcap_class_t *o = c->classes; o < k; o++)
		if (conf_in_list(o->nodes, node)) {
			snprintf(err, err_len, "%s:%u: NodeClass=%s: node %s is "
				 "in NodeClass=%s too", file, k->line,
				 k->name, node, o->name);
			return -EINVAL;
		}
	return 0;
}

static int _check_class(const pcap_conf_t *c, const pcap_class_t *k,
			const char *file, char *err, size_t err_len)
{
	char *list, *save = NULL, *tok;
	int rv = 0;

	if (!k->nodes || !(k->max_w > 0)) {
		snprintf(err, err_len, "%s:%u: NodeClass=%s: %s is required",
			 file, k->line, k->name, k->nodes ? "MaxWatts" :
			 "Nodes");
		return -EINVAL;
	}
	if (k->floor_w >= k->max_w) {
		snprintf(err, err_len, "%s:%u: NodeClass=%s: FloorWatts=%g is "
			 "not below MaxWatts=%g", file, k->line, k->name,
			 k->floor_w, k->max_w);
		return -EINVAL;
	}
	if (!(list = strdup(k->nodes)))
		return -ENOMEM;
	for (tok = strtok_r(list, ",", &save); tok && !rv;
	     tok = strtok_r(NULL, ",", &save))
		rv = _check_class_node(c, k, tok, file, err, err_len);
	free(list);
	return rv;
}

int pcap_conf_check(pcap_conf_t *c, const char *file, char *err,
		    size_t err_len)
{
	int rv;

	if ((rv = _need(file, "PowerCapWatts", c->cap_w > 0, err, err_len)) ||
	    (rv = _need(file, "PowerCapMaxWatts", c->max_w > 0, err,
			err_len)) ||
	    (rv = _need(file, "PowerCapKnobs", c->knobs && *c->knobs, err,
			err_len)))
		return rv;
	if (c->floor_w >= c->max_w) {
		snprintf(err, err_len, "%s: PowerCapFloorWatts=%g is not below "
			 "PowerCapMaxWatts=%g", file, c->floor_w, c->max_w);
		return -EINVAL;
	}
	if (c->headroom_w <= c->at_cap_w) {
		snprintf(err, err_len, "%s: PowerCapHeadroomWatts=%g must "
			 "exceed PowerCapAtCapWatts=%g (else a donor given its "
			 "draw plus headroom would count as at its cap and "
			 "flap)", file, c->headroom_w, c->at_cap_w);
		return -EINVAL;
	}
	if (c->raise_gate_ns >= c->period_ns) {
		snprintf(err, err_len, "%s: PowerCapRaiseGate=%llu must be "
			 "shorter than PowerCapPeriod (%g s)", file,
			 (unsigned long long)(c->raise_gate_ns / SE_NS_PER_MS),
			 c->period_ns / 1e9);
		return -EINVAL;
	}
	if (c->hold_ns < 3 * c->period_ns) {
		snprintf(err, err_len, "%s: PowerCapHoldSeconds=%g is under 3 "
			 "PowerCapPeriod (%g s): leases would lapse between "
			 "rounds", file, c->hold_ns / 1e9, c->period_ns / 1e9);
		return -EINVAL;
	}
	if (c->floor_w > c->cap_w) {
		snprintf(err, err_len, "%s: PowerCapWatts=%g is below "
			 "PowerCapFloorWatts=%g: the cap cannot be held", file,
			 c->cap_w, c->floor_w);
		return -EINVAL;
	}
	for (size_t i = 0; i < c->n_classes; i++)
		if ((rv = _check_class(c, &c->classes[i], file, err, err_len)))
			return rv;
	return 0;
}

void pcap_conf_node(const pcap_conf_t *c, const char *node,
		    pcap_node_conf_t *out)
{
	*out = (pcap_node_conf_t){ .floor_w = c->floor_w,
				   .max_w = c->max_w, .knobs = c->knobs };
	for (size_t i = 0; i < c->n_classes; i++) {
		const pcap_class_t *k = &c->classes[i];

		if (!conf_in_list(k->nodes, node))
			continue;
		out->class_name = k->name;
		out->floor_w = k->floor_w;
		out->max_w = k->max_w;
		if (k->knobs)
			out->knobs = k->knobs;
		return;
	}
}

void pcap_conf_params(const pcap_conf_t *c, pcap_params_t *p)
{
	p->cap_mw = MW(c->cap_w);
	p->headroom_mw = (uint32_t)MW(c->headroom_w);
	p->at_cap_mw = (uint32_t)MW(c->at_cap_w);
	p->hysteresis_mw = (uint32_t)MW(c->hysteresis_w);
	p->keep_idle_capped = c->idle_nodes == 1;
}

/* A NodeClass=NAME line (pairs[0]) into a new class of c. */
static int _class_line(pcap_conf_t *c, const char *path, unsigned line,
		       const conf_pair_t *pairs, size_t n_pairs, char *err,
		       size_t err_len)
{
	conf_where_t w = { path, "NodeClass", line };
	const char *name = pairs[0].value;
	pcap_class_t *nc;
	int rv;

	if (!*name || strcspn(name, " \t,=:[]") != strlen(name))
		return conf_fail(&w, name, err, err_len, -EINVAL,
				 "a class is named by a word");
	for (size_t i = 0; i < c->n_classes; i++)
		if (!strcmp(c->classes[i].name, name))
			return conf_fail(&w, name, err, err_len, -EINVAL,
					 "class named twice");
	if (!(nc = realloc(c->classes, (c->n_classes + 1) * sizeof(*nc))))
		return -ENOMEM;
	c->classes = nc;
	nc = &c->classes[c->n_classes++];
	*nc = (pcap_class_t){ .line = line, .name = strdup(name) };
	if (!nc->name)
		return -ENOMEM;
	for (size_t i = 1; i < n_pairs; i++) {
		const se_conf_key_t *k = _class_key(pairs[i].key);

		w.key = pairs[i].key;
		if (!k)
			return conf_fail(&w, pairs[i].value, err, err_len,
					 -EINVAL, "not a NodeClass key (Nodes, "
					 "FloorWatts, MaxWatts, Knobs)");
		w.key = k->name;
		if ((rv = se_conf_key_parse(k, nc, &w, pairs[i].value, err,
					    err_len)))
			return rv;
	}
	return 0;
}

static int _line(void *arg, const char *path, unsigned line,
		 const conf_pair_t *pairs, size_t n_pairs, char *err,
		 size_t err_len)
{
	char where[512];

	if (n_pairs && !strcasecmp(pairs[0].key, "NodeClass"))
		return _class_line(arg, path, line, pairs, n_pairs, err,
				   err_len);
	snprintf(where, sizeof(where), "%s:%u", path, line);
	for (size_t i = 0; i < n_pairs; i++) {
		conf_where_t w = { path, "NodeClass", line };
		int rv;

		if (!strcasecmp(pairs[i].key, "NodeClass"))
			return conf_fail(&w, pairs[i].value, err, err_len,
					 -EINVAL, "must come first on its "
					 "line");
		rv = se_conf_set(&pcap_conf_desc, arg, where, pairs[i].key,
				 pairs[i].value, err, err_len);
		if (rv)
			return rv;
	}
	return 0;
}

int pcap_conf_read(pcap_conf_t *c, const char *path, char *err,
		   size_t err_len)
{
	int rv;

	pcap_conf_init(c);
	if (!(rv = conf_read_pairs_file(path, _line, c, err, err_len)))
		rv = pcap_conf_check(c, path, err, err_len);
	if (rv)
		pcap_conf_free(c);
	return rv;
}

SE_CONF_DESC_DEFINE(pcap_conf_desc, pcap_conf, pcap_conf_t, "powercap",
		    "powercap.conf", keys);
