/*
 * pcap_node.h - a node's cap over all of its knobs (issue #45): what the
 * node agent does with the cap the controller sends, and what a test rig
 * uses to cap a node by hand (contribs/powercap/se-powercap-node).
 *
 * PowerCapKnobs is a comma list of knob specs (pcap_knob.h; an option value
 * cannot hold a comma).  The node's cap, in [floor, max], is split over
 * the knobs by pcap_split: at the floor every knob at its minimum, at the
 * max every knob at its maximum, linear between.  When every knob can say
 * what its domain draws (its energy counter: RAPL energy_uj, NVML's per
 * GPU) and pcap_node_measure is called once a round, the split is by draw
 * instead (pcap_split_drawn): a knob not using its share (a GPU node's
 * package under a GPU-bound job) gives it to the others, so the node
 * draws its cap where its busy knobs need it, and the controller does not
 * count it a donor for a share it could not use.  An apply goes on after a
 * knob fails (the others still cap what they can) and returns the first
 * error: the agent then answers "not enforced" and the controller charges
 * the node its maximum.
 */
#ifndef SE_PCAP_NODE_H
#define SE_PCAP_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcap_knob.h"

#define PCAP_NODE_MAX_KNOBS	8

/* A knob under its limit by more than this (its draw over the last
 * round) gives the rest to the others; 2 x this under PowerCapAtCapWatts'
 * default (5 W), so a node whose busy knobs are at their limits still
 * reads at its cap. */
#define PCAP_NODE_DRAW_MARGIN_MW	1000u

typedef struct {
	uint32_t floor_mw, max_mw;
	size_t n_knobs;
	pcap_knob_t *knob[PCAP_NODE_MAX_KNOBS];
	/* the split by draw (pcap_node_measure) */
	bool have_draw;			/* every knob's draw known */
	uint32_t draw_mw[PCAP_NODE_MAX_KNOBS];
	uint32_t last_mw[PCAP_NODE_MAX_KNOBS];	/* 0: none applied */
	bool have_energy;
	uint64_t energy_mj[PCAP_NODE_MAX_KNOBS];
	int64_t energy_ns;
	uint32_t drawn_cap_mw;	/* the node cap last split by draw; 0: none */
	/* why the split is linear though every knob has a counter: the
	 * counter that failed ("" while they read); new until said once */
	char counter_error[512];
	bool counter_error_new;
} pcap_node_knobs_t;

/* Open every knob of specs; 0, or a negative errno with err naming the
 * spec (nothing left open). */
int pcap_node_open(pcap_node_knobs_t *nk, const char *specs,
		   uint32_t floor_mw, uint32_t max_mw, char *err,
		   size_t err_len);

/* Each knob's mean draw since the last call, from its energy counter, for
 * the next apply (two knobs or more, all with counters; else the linear
 * split).  now_ns: a monotonic clock; calls under 100 ms apart count
 * nothing.  A counter that fails to read sets counter_error and, when its
 * text is new, counter_error_new: the caller logs it once and clears the
 * flag (a knob kind without a counter is no error). */
void pcap_node_measure(pcap_node_knobs_t *nk, int64_t now_ns);

/* The split by draw of cap_mw differs from what the knobs were last given
 * by more than the margin (an unchanged node cap to apply again). */
bool pcap_node_split_moved(const pcap_node_knobs_t *nk, uint32_t cap_mw);

/* Every knob to its share of cap_mw (clamped to [floor, max]); the first
 * error, all knobs tried. */
int pcap_node_apply(pcap_node_knobs_t *nk, uint32_t cap_mw, char *err,
		    size_t err_len);

/* Every knob to its default; the first error, all knobs tried. */
int pcap_node_restore(pcap_node_knobs_t *nk, char *err, size_t err_len);

/* The node cap the knobs hold now: the lowest node cap any knob's read-back
 * stands for (a knob reset behind our back shows as max); after a split
 * by draw whose shares every knob still holds (within 1 W), that cap. */
int pcap_node_read(pcap_node_knobs_t *nk, uint32_t *cap_mw, char *err,
		   size_t err_len);

void pcap_node_close(pcap_node_knobs_t *nk);

#endif /* SE_PCAP_NODE_H */
