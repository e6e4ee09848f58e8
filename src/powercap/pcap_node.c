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

/* A counter failed (e: why) or, with e NULL, every counter read. */
static void _counter_said(pcap_node_knobs_t *nk, const char *e)
{
	if (!e) {
		nk->counter_error[0] = '\0';
		nk->counter_error_new = false;
	} else if (strcmp(nk->counter_error, e)) {
		snprintf(nk->counter_error, sizeof(nk->counter_error), "%s",
			 e);
		nk->counter_error_new = true;
	}
}

/* Every knob has a counter kind: the split by draw is possible. */
static bool _all_count(const pcap_node_knobs_t *nk)
{
	if (nk->n_knobs < 2)
		return false;	/* nothing to split */
	for (size_t i = 0; i < nk->n_knobs; i++)
		if (!pcap_knob_has_energy(nk->knob[i]))
			return false;
	return true;
}

void pcap_node_measure(pcap_node_knobs_t *nk, int64_t now_ns)
{
	uint64_t mj[PCAP_NODE_MAX_KNOBS];
	int64_t dt = now_ns - nk->energy_ns;
	char e[512];
	size_t i;

	if (nk->have_energy && dt < 100000000)
		return;		/* too short a window to say anything */
	nk->have_draw = false;
	if (!_all_count(nk)) {
		nk->have_energy = false;	/* the linear split */
		return;
	}
	for (i = 0; i < nk->n_knobs; i++)
		if (pcap_knob_energy(nk->knob[i], &mj[i], e, sizeof(e)))
			break;
	if (i < nk->n_knobs) {
		nk->have_energy = false;	/* linear until it reads */
		_counter_said(nk, e);
		return;
	}
	_counter_said(nk, NULL);
	if (nk->have_energy && dt > 0) {
		nk->have_draw = true;
		for (i = 0; i < nk->n_knobs; i++) {
			uint64_t d = mj[i] >= nk->energy_mj[i] ?
				     mj[i] - nk->energy_mj[i] : 0;
			uint64_t mw = d * 1000000000ULL / (uint64_t)dt;

			nk->draw_mw[i] = mw > UINT32_MAX ? UINT32_MAX
							 : (uint32_t)mw;
		}
	}
	memcpy(nk->energy_mj, mj, sizeof(mj));
	nk->energy_ns = now_ns;
	nk->have_energy = true;
}

/* Each knob's share of cap_mw: linear, or by draw when measured. */
static void _shares(const pcap_node_knobs_t *nk, uint32_t cap_mw,
		    uint32_t *share)
{
	uint32_t kmin[PCAP_NODE_MAX_KNOBS], kmax[PCAP_NODE_MAX_KNOBS];

	for (size_t i = 0; i < nk->n_knobs; i++) {
		kmin[i] = nk->knob[i]->min_mw;
		kmax[i] = nk->knob[i]->max_mw;
		share[i] = pcap_split(nk->floor_mw, nk->max_mw, cap_mw,
				      kmin[i], kmax[i]);
	}
	if (nk->have_draw)
		pcap_split_drawn(nk->n_knobs, nk->floor_mw, nk->max_mw, cap_mw,
				 kmin, kmax, nk->draw_mw, nk->last_mw,
				 PCAP_NODE_DRAW_MARGIN_MW, share);
}

bool pcap_node_split_moved(const pcap_node_knobs_t *nk, uint32_t cap_mw)
{
	uint32_t share[PCAP_NODE_MAX_KNOBS];

	if (!nk->have_draw)
		return false;
	_shares(nk, cap_mw, share);
	for (size_t i = 0; i < nk->n_knobs; i++) {
		uint32_t d = share[i] > nk->last_mw[i] ?
			     share[i] - nk->last_mw[i] :
			     nk->last_mw[i] - share[i];

		if (d > PCAP_NODE_DRAW_MARGIN_MW)
			return true;
	}
	return false;
}

int pcap_node_apply(pcap_node_knobs_t *nk, uint32_t cap_mw, char *err,
		    size_t err_len)
{
	uint32_t share[PCAP_NODE_MAX_KNOBS];
	int rv = 0;

	_shares(nk, cap_mw, share);
	nk->drawn_cap_mw = nk->have_draw ? cap_mw : 0;
	for (size_t i = 0; i < nk->n_knobs; i++) {
		pcap_knob_t *k = nk->knob[i];
		char e[512];
		int ret = pcap_knob_apply(k, share[i], e, sizeof(e));

		nk->last_mw[i] = ret ? 0 : share[i];
		if (ret)
			nk->drawn_cap_mw = 0;

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

		nk->last_mw[i] = 0;	/* at its max: no limit to judge by */
		nk->drawn_cap_mw = 0;

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
	bool held = nk->drawn_cap_mw != 0;

	for (size_t i = 0; i < nk->n_knobs; i++) {
		uint32_t v;
		int ret = pcap_knob_read(nk->knob[i], &v, err, err_len);

		if (ret)
			return ret;
		if (v + 1000 < nk->last_mw[i] || v > nk->last_mw[i] + 1000)
			held = false;
		v = _node_cap(nk, nk->knob[i], v);
		if (v < lowest)
			lowest = v;
	}
	*cap_mw = held ? nk->drawn_cap_mw : lowest;
	return 0;
}

void pcap_node_close(pcap_node_knobs_t *nk)
{
	for (size_t i = 0; i < nk->n_knobs; i++)
		pcap_knob_close(nk->knob[i]);
	nk->n_knobs = 0;
}
