/*
 * pcap_ctl.h - the controller's side of a cap group over time (issue #45):
 * what slurm-energy-powercapd decides between rounds, Slurm-free, no I/O,
 * no clock.  The daemon feeds it the agents' answers and the monotonic
 * time, and sends what it says through a callback; bench/powercap drives
 * it over simulated nodes.
 *
 *   round    (every period) each node's state for pcap_round: its last
 *            answer's power; its cap = the last cap sent (answered or not:
 *            the sum must hold whether it landed or not); enforced unless
 *            the node has been silent for silent_ns or its knobs failed.
 *            Raises still held from the last round are dropped (this round
 *            decides again).  The caps that go down are sent at once; the
 *            ones that go up are held.
 *   answer   an agent's reply (seq, power, enforced).  A lowered node is
 *            settled once a reply to its lower (or later) shows it drawing
 *            under its new cap + 1 % + 1 W.
 *   idle     whether the agent's answer said a job runs on the node
 *            (its JOB flag): an idle node is released by the next round
 *            (pcap_core.h step 0), and its cap (its maximum) is sent as a
 *            RESTORE: its knobs' defaults.  Not called: busy.
 *   tick     (often) the held raises are sent once every lowered node has
 *            settled, or gate_ns after the round.
 *
 * So the caps in force never sum above the cap while power comes down
 * (bench/powercap: 0.1 s peaks of 2 W against 643 W when raises go out
 * with the lowers), and a node whose agent died is charged its maximum
 * from silent_ns on, which its lease (pcap_lease.h) makes true.
 */
#ifndef SE_PCAP_CTL_H
#define SE_PCAP_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcap_core.h"

/* Send cap_mw to node i with sequence number seq. */
typedef void (*pcap_send_fn)(void *arg, size_t i, uint32_t cap_mw,
			     uint64_t seq);

typedef struct {
	uint32_t sent_cap_mw;	/* the last cap sent (the node's cap) */
	uint64_t sent_seq;
	uint32_t held_mw;	/* a raise not sent yet; 0: none */
	bool settling;		/* lowered, not yet seen under the cap */
	bool answered;		/* an answer since the last round */
	bool enforced;		/* the last answer's */
	uint32_t power_mw;	/* the last answer's */
	uint32_t window_cap_mw;	/* its cap in force over power_mw's window */
	bool idle;		/* the last answer said no job runs there */
	bool released;		/* uncapped by the last round (PCAP_RELEASED):
				 * its cap is sent as RESTORE */
	int64_t last_answer_ns;	/* INT64_MIN: never */
} pcap_ctl_node_t;

typedef struct {
	pcap_params_t params;
	int64_t gate_ns;	/* the longest raises wait */
	int64_t silent_ns;	/* no answer for this long: charged max */
	size_t n;
	pcap_node_t *nodes;	/* floor_mw, max_mw, name set by the caller */
	pcap_ctl_node_t *st;
	uint64_t seq;
	int64_t round_ns;
	uint64_t round_seq;	/* c->seq when the last round began sending */
	bool holding;
	bool uniform;		/* every node cap/n (clamped to its floor and
				 * max), whatever it draws: the "capped alike
				 * by hand" baseline greedy is measured
				 * against; no node charged its maximum */
	pcap_stats_t last;	/* the last round's */
} pcap_ctl_t;

/* nodes[i].floor_mw, max_mw (and name) must be set; every node starts as
 * sent its max (uncapped) and silent.  0 or -ENOMEM. */
int pcap_ctl_init(pcap_ctl_t *c, const pcap_params_t *p, pcap_node_t *nodes,
		  size_t n, int64_t gate_ns, int64_t silent_ns);
void pcap_ctl_free(pcap_ctl_t *c);

/* Node i's last answer said whether a job runs there (its JOB flag). */
void pcap_ctl_idle(pcap_ctl_t *c, size_t i, bool idle);

/* Node i's last answer said the cap in force over its reading's window
 * (its time mean; 0: unknown): the round judges its draw against it. */
void pcap_ctl_window_cap(pcap_ctl_t *c, size_t i, uint32_t window_cap_mw);

/* One round at now: 0, or pcap_round's error. */
int pcap_ctl_round(pcap_ctl_t *c, int64_t now_ns, pcap_send_fn send,
		   void *arg);

/* After a round: every node not sent a cap in it is sent its cap again
 * (a new sequence number), which renews its lease and asks its answer:
 * one CAP and one REPORT per node per round. */
void pcap_ctl_renew(pcap_ctl_t *c, pcap_send_fn send, void *arg);

/* Node i answered message seq (0: a report on its own). */
void pcap_ctl_answer(pcap_ctl_t *c, size_t i, int64_t now_ns, uint64_t seq,
		     uint32_t power_mw, bool enforced);

/* Send the held raises when due; true while some are still held. */
bool pcap_ctl_tick(pcap_ctl_t *c, int64_t now_ns, pcap_send_fn send,
		   void *arg);

#endif /* SE_PCAP_CTL_H */
