/*
 * pcap_conf.h - powercap.conf, the cluster power cap's keys (issue #45;
 * doc/design-powercap.md), as a key table (conf_desc.h): every error
 * names the file, the key and the value; the keys together are checked
 * once all are set (pcap_conf_check).  Slurm-free.
 *
 *   PowerCapWatts=W            the cap (required)
 *   PowerCapPeriod=S           between rounds (1; 0.1 to 60)
 *   PowerCapHeadroomWatts=W    a donor keeps its draw plus this (15)
 *   PowerCapAtCapWatts=W       within this of its cap a node is greedy (5)
 *   PowerCapHysteresisWatts=W  smaller changes are not made (5)
 *   PowerCapRaiseGate=MS       the longest raises wait (500; < the period)
 *   PowerCapHoldSeconds=S      an agent's lease (30; >= 3 periods)
 *   PowerCapFloorWatts=W       a node's floor (required)
 *   PowerCapMaxWatts=W         a node's uncapped cap (required, > floor)
 *   PowerCapKnobs=SPECS        a node's knobs (required; pcap_knob.h)
 *   PowerCapNodes=HOSTLIST     the nodes of the cap group, Slurm's
 *                              hostlist ("node[01-32],gpu1"; the
 *                              daemon's; required by slurm-energy-powercapd)
 *   PowerCapController=H:P     where the agents connect (the daemon
 *                              listens on P; required by both programs)
 *   PowerCapStateFile=PATH     the daemon publishes the cap's state there
 *                              (pcap_state.h); cli_filter/energy_policy
 *                              reads it at submit (optional)
 *   PowerCapJobRecords=yes|no  the daemon writes each capped job's record
 *                              into its AdminComment (no; pcap_jobrec.h)
 *   PowerCapIdleNodes=release|cap  a node without a job uncapped (release,
 *                              the default; pcap_core.h step 0) or kept
 *                              capped as a donor
 * PowerCapFloorWatts, PowerCapMaxWatts and PowerCapKnobs are the nodes'
 * unless a node class says otherwise, on a line of its own, as slurm.conf
 * has NodeName lines:
 *   NodeClass=NAME Nodes=N1,N2 MaxWatts=W [FloorWatts=W] [Knobs=SPECS]
 * (FloorWatts 0 and Knobs the file's PowerCapKnobs when not given); its
 * nodes must be in PowerCapNodes when the file has it, and a node is in
 * one class at most.  One cap group per file: a site with several (one
 * per room or partition) runs one daemon per file.
 */
#ifndef SE_PCAP_CONF_H
#define SE_PCAP_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "conf_desc.h"
#include "pcap_core.h"

/* A NodeClass line. */
typedef struct {
	char *name;
	char *nodes;		/* Nodes expanded: a comma list */
	double floor_w, max_w;
	char *knobs;		/* NULL: the file's PowerCapKnobs */
	unsigned line;
} pcap_class_t;

/* The most nodes a hostlist of the file may name. */
#define PCAP_CONF_MAX_NODES	100000

typedef struct {
	double cap_w;
	uint64_t period_ns;
	double headroom_w, at_cap_w, hysteresis_w;
	uint64_t raise_gate_ns;
	uint64_t hold_ns;
	double floor_w, max_w;
	char *knobs;
	char *nodes;		/* PowerCapNodes expanded: a comma list */
	char *controller;	/* HOST:PORT */
	char *state_file;	/* PowerCapStateFile; NULL: none */
	int job_records;	/* PowerCapJobRecords: 1 yes, 0 no */
	int idle_nodes;		/* PowerCapIdleNodes: 0 release, 1 cap */
	pcap_class_t *classes;	/* NodeClass lines */
	size_t n_classes;
} pcap_conf_t;

/* What a node is configured with: its class's, else the file's. */
typedef struct {
	const char *class_name;	/* NULL: no class */
	double floor_w, max_w;
	const char *knobs;
} pcap_node_conf_t;

extern const se_conf_desc_t pcap_conf_desc;

void pcap_conf_init(pcap_conf_t *c);
void pcap_conf_free(pcap_conf_t *c);
int pcap_conf_check(pcap_conf_t *c, const char *file, char *err,
		    size_t err_len);

/* Read path (key=value pairs, '#' comments) into c and check it: 0, or a
 * negative errno with err naming the file (and line), key and value; c is
 * then empty. */
int pcap_conf_read(pcap_conf_t *c, const char *path, char *err,
		   size_t err_len);

/* node's floor, maximum and knobs (a checked configuration). */
void pcap_conf_node(const pcap_conf_t *c, const char *node,
		    pcap_node_conf_t *out);

/* The round's parameters from a checked configuration. */
void pcap_conf_params(const pcap_conf_t *c, pcap_params_t *p);

#endif /* SE_PCAP_CONF_H */
