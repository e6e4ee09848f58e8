/*
 * pcap_node.c - a node's cap over its knobs (pcap_node.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_node.h"

/* The node cap a knob's cap stands for (pcap_split inverted). */
static uint32_t _node_cap(const pcap_node_knobs_t *nk, const pcap_knob_t *k,
			  uint32_t knob_mw)
{
	double f;

	if (k->max_mw <= k->min_mw || knob_mw >= k->max_mw)
		return nk->max_mw;
	if (knob_mw <= k->min_mw)
		return nk->floor_mw;
	f = (double)(knob_mw - k->min_mw) / (k->max_mw - k->min_mw);
	return nk->floor_mw + (uint32_t)(f * (nk->max_mw - nk->floor_mw) +
					 0.5);
}

int pcap_node_open(pcap_node_knobs_t *nk, const char *specs,
		   uint32_t floor_mw, uint32_t max_mw, char *err,
		   size_t err_len)
{
	char *copy, *save = NULL, *tok;
	int rv = 0;

	memset(nk, 0, sizeof(*nk));
	if (floor_mw >= max_mw) {
		snprintf(err, err_len, "PowerCapFloorWatts=%.3f is not below "
			 "PowerCapMaxWatts=%.3f", floor_mw / 1e3,
			 max_mw / 1e3);
		return -EINVAL;
	}
	nk->floor_mw = floor_mw;
	nk->max_mw = max_mw;
	if (!(copy = strdup(specs)))
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !rv;
	     tok = strtok_r(NULL, ",", &save)) {
		pcap_knob_t *k;

		if (nk->n_knobs == PCAP_NODE_MAX_KNOBS) {
			snprintf(err, err_len, "PowerCapKnobs=%s: more than %d "
				 "knobs", specs, PCAP_NODE_MAX_KNOBS);
			rv = -E2BIG;
		} else if (!(k = pcap_knob_open(tok, err, err_len))) {
			rv = -EINVAL;
		} else {
			nk->knob[nk->n_knobs++] = k;
		}
	}
	free(copy);
	if (!rv && !nk->n_knobs) {
		snprintf(err, err_len, "PowerCapKnobs=%s: no knob", specs);
		rv = -EINVAL;
	}
	if (rv)
		pcap_node_close(nk);
	return rv;
}

int pcap_node_apply(pcap_node_knobs_t *nk, uint32_t cap_mw, char *err,
		    size_t err_len)
{
	int rv = 0;

	for (size_t i = 0; i < nk->n_knobs; i++) {
		pcap_knob_t *k = nk->knob[i];
		uint32_t share = pcap_split(nk->floor_mw, nk->max_mw, cap_mw,
					    k->min_mw, k->max_mw);
		char e[512];
		int ret = pcap_knob_apply(k, share, e, sizeof(e));

		if (ret && !rv) {
			rv = ret;
			snprintf(err, err_len, "%s", e);
		}
	}
	return rv;
}

int pcap_node_restore(pcap_node_knobs_t *nk, char *err, size_t err_len)
{
	int rv = 0;

	for (size_t i = 0; i < nk->n_knobs; i++) {
		char e[512];
		int ret = pcap_knob_restore(nk->knob[i], e, sizeof(e));

		if (ret && !rv) {
			rv = ret;
			snprintf(err, err_len, "%s", e);
		}
	}
	return rv;
}

int pcap_node_read(pcap_node_knobs_t *nk, uint32_t *cap_mw, char *err,
		   size_t err_len)
{
	uint32_t lowest = nk->max_mw;

	for (size_t i = 0; i < nk->n_knobs; i++) {
		uint32_t v;
		int ret = pcap_knob_read(nk->knob[i], &v, err, err_len);

		if (ret)
			return ret;
		v = _node_cap(nk, nk->knob[i], v);
		if (v < lowest)
			lowest = v;
	}
	*cap_mw = lowest;
	return 0;
}

void pcap_node_close(pcap_node_knobs_t *nk)
{
	for (size_t i = 0; i < nk->n_knobs; i++)
		pcap_knob_close(nk->knob[i]);
	nk->n_knobs = 0;
}
