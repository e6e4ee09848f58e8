/*
 * pcap_node.h - a node's cap over all of its knobs (issue #45): what the
 * node agent does with the cap the controller sends, and what a test rig
 * uses to cap a node by hand (contribs/powercap/se-powercap-node).
 *
 * PowerCapKnobs is a comma list of knob specs (pcap_knob.h; an option value
 * cannot hold a comma).  The node's cap, in [floor, max], is split over
 * the knobs by pcap_split: at the floor every knob at its minimum, at the
 * max every knob at its maximum, linear between.  An apply goes on after a
 * knob fails (the others still cap what they can) and returns the first
 * error: the agent then answers "not enforced" and the controller charges
 * the node its maximum.
 */
#ifndef SE_PCAP_NODE_H
#define SE_PCAP_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "pcap_knob.h"

#define PCAP_NODE_MAX_KNOBS	8

typedef struct {
	uint32_t floor_mw, max_mw;
	size_t n_knobs;
	pcap_knob_t *knob[PCAP_NODE_MAX_KNOBS];
} pcap_node_knobs_t;

/* Open every knob of specs; 0, or a negative errno with err naming the
 * spec (nothing left open). */
int pcap_node_open(pcap_node_knobs_t *nk, const char *specs,
		   uint32_t floor_mw, uint32_t max_mw, char *err,
		   size_t err_len);

/* Every knob to its share of cap_mw (clamped to [floor, max]); the first
 * error, all knobs tried. */
int pcap_node_apply(pcap_node_knobs_t *nk, uint32_t cap_mw, char *err,
		    size_t err_len);

/* Every knob to its default; the first error, all knobs tried. */
int pcap_node_restore(pcap_node_knobs_t *nk, char *err, size_t err_len);

/* The node cap the knobs hold now: the lowest node cap any knob's read-back
 * stands for (a knob reset behind our back shows as max). */
int pcap_node_read(pcap_node_knobs_t *nk, uint32_t *cap_mw, char *err,
		   size_t err_len);

void pcap_node_close(pcap_node_knobs_t *nk);

#endif /* SE_PCAP_NODE_H */
