/*
 * pdu_poller_redfish.c - slurm-energy-pdu-poller's Redfish family (issue
 * #41): the nodes of EnergyBMCMap, each with the meter settings its slurmd
 * would have (bmc_conf_resolve_map, bmc_conf_finish, the shared mapping
 * of bmc_redfish.h), handed to rf_poller.c.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "bmc_redfish.h"
#include "conf.h"
#include "pdu_poller.h"

#define PP_MAX_LINES	4096

/* The map's Nodes= values and where each is. */
typedef struct {
	char *exprs[PP_MAX_LINES];
	char *where[PP_MAX_LINES];
	size_t n;
} pp_lines_t;

static int _map_line(void *arg, const char *path, unsigned line,
		     const conf_pair_t *pairs, size_t n, char *err,
		     size_t len)
{
	pp_lines_t *l = arg;
	char where[300];

	for (size_t i = 0; i < n; i++) {
		if (strcasecmp(pairs[i].key, "Nodes"))
			continue;
		if (l->n == PP_MAX_LINES) {
			snprintf(err, len, "%s:%u: more than %d lines", path,
				 line, PP_MAX_LINES);
			return -E2BIG;
		}
		snprintf(where, sizeof(where), "%s:%u", path, line);
		if (!(l->exprs[l->n] = strdup(pairs[i].value)) ||
		    !(l->where[l->n] = strdup(where)))
			return -ENOMEM;
		l->n++;
	}
	return 0;
}

static void _lines_free(pp_lines_t *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->exprs[i]);
		free(l->where[i]);
	}
	free(l);
}

/* Every node of the map, each once. */
static int _map_nodes(const bmc_conf_t *c, const char *conf_path,
		      char ***names, size_t *n, char *err, size_t len)
{
	pp_lines_t *l = calloc(1, sizeof(*l));
	int rc;

	if (!l)
		return -ENOMEM;
	if (!c->map_path) {
		snprintf(err, len, "%s: EnergyBMCPoller needs EnergyBMCMap "
			 "(the nodes the poller reads for)", conf_path);
		rc = -EINVAL;
	} else if (!(rc = conf_read_pairs_file(c->map_path, _map_line, l,
					       err, len))) {
		rc = pp_hostlist_names((const char *const *) l->exprs,
				       (const char *const *) l->where, l->n,
				       names, n, err, len);
	}
	_lines_free(l);
	return rc;
}

/* Node's keys resolved into *nc (a copy of c) and its meter settings. */
static int _node(const bmc_conf_t *c, const char *conf_path,
		 const char *node, bmc_conf_t *nc, rf_poller_node_t *pn,
		 char *base, size_t base_len, char *err, size_t len)
{
	int rc;

	if ((rc = bmc_conf_copy(nc, c)))
		return rc;
	/* the poller is the one that reads the password (bmc_conf.h) */
	free(nc->poller);
	nc->poller = NULL;
	if ((rc = bmc_conf_resolve_map(nc, node, &pp_hostlist_ops, err,
				       len)) ||
	    (rc = bmc_conf_finish(nc, conf_path, node, err, len)))
		return rc;
	pn->name = node;
	bmc_redfish_meter_conf(nc, &pn->meter, base, base_len);
	return 0;
}

int pp_redfish_make(const bmc_conf_t *c, const char *conf_path,
		    rf_poller_t **out, char *err, size_t err_len)
{
	rf_poller_config_t pc = {
		.period_ns = c->period_ns, .map_path = c->map_path,
		.tick_watch = c->rf_tick_watch == BMC_TICK_WATCH_YES,
	};
	rf_poller_node_t *pn = NULL;
	bmc_conf_t *nc = NULL;
	char **names = NULL, (*bases)[300] = NULL;
	size_t n = 0;
	int rc;

	*out = NULL;
	if ((rc = _map_nodes(c, conf_path, &names, &n, err, err_len)))
		return rc;
	rc = -ENOMEM;
	if (!(pn = calloc(n + 1, sizeof(*pn))) ||
	    !(nc = calloc(n + 1, sizeof(*nc))) ||
	    !(bases = calloc(n + 1, sizeof(*bases))))
		goto out;
	for (size_t i = 0; i < n; i++) {
		bmc_conf_init(&nc[i]);
		if ((rc = _node(c, conf_path, names[i], &nc[i], &pn[i],
				bases[i], sizeof(bases[i]), err, err_len)))
			goto out;
	}
	pc.nodes = pn;
	pc.n_nodes = n;
	if (n)	/* the method's defaults, applied by bmc_conf_finish */
		pc.period_ns = nc[0].period_ns;
	if (rf_http_global_init()) {
		snprintf(err, err_len, "libcurl: curl_global_init failed");
		rc = -EIO;
		goto out;
	}
	rc = rf_poller_create(&pc, out, err, err_len);
out:
	for (size_t i = 0; nc && i < n; i++)
		bmc_conf_free(&nc[i]);	/* the passwords wiped */
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(nc);
	free(pn);
	free(bases);
	return rc;
}
