/*
 * pcap_agent.h - the node agent's core (issue #45): a decoded CAP message,
 * the lease (pcap_lease.h) and the node's knobs (pcap_node.h) put
 * together, and the REPORT it answers with.  Slurm-free, no sockets, no
 * clock: slurm-energy-powercap-agent is its I/O (the controller's
 * connection, MUNGE, the query socket's power and its running steps, a
 * timer) around these calls.
 *
 *   start     restore the knobs' defaults (a rebooted node, a restarted
 *             agent: no cap nobody renews)
 *   cap       a CAP for another node is refused with -EINVAL (misrouted:
 *             nothing applied, the report unchanged; the caller logs it);
 *             RESTORE restores now; else the lease decides and the knobs
 *             apply the node's cap, split by what each knob drew since the
 *             last CAP when all can tell (pcap_node_measure)
 *   tick      the lease lapsed: defaults back
 *   report    the last sequence applied, the power given by the caller,
 *             the cap the knobs hold, the node cap in force over the
 *             power's window (the time mean of the caps the agent held
 *             then: the caller's window ends at its meter's sample, on
 *             the same monotonic clock), ENFORCED when the last action
 *             worked (else its error text), JOB as told.  Before that,
 *             knobs whose read-back moved by more than
 *             PCAP_AGENT_REWRITE_TOL_MW since the agent last wrote them
 *             (a limit reset behind the agent's back: another tool, a BMC,
 *             a GPU reset) are written again, the cap or the defaults as
 *             the lease says; rewritten_from_mw then holds what was found
 *             (the caller logs it).
 */
#ifndef SE_PCAP_AGENT_H
#define SE_PCAP_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "pcap_lease.h"
#include "pcap_node.h"
#include "pcap_wire.h"

/* The node caps in force lately, for a report's window (a ring). */
#define PCAP_AGENT_CAP_HIST 16

typedef struct {
	int64_t t_ns;		/* in force from (the agent's monotonic clock) */
	uint32_t cap_mw;	/* the node cap; its maximum: none */
} pcap_cap_at_t;

typedef struct {
	char node[PCAP_WIRE_NAME_MAX];
	pcap_lease_t lease;
	pcap_node_knobs_t *knobs;
	char error[PCAP_WIRE_ERR_MAX];	/* the last action's; "" if fine */
	bool job;
	bool have_written_read;	/* the knobs read back after the last write */
	uint32_t written_read_mw;
	bool rewritten;		/* the last report wrote the knobs again */
	uint32_t rewritten_from_mw;	/* what they held then */
	pcap_cap_at_t cap_hist[PCAP_AGENT_CAP_HIST];
	size_t n_cap_hist;	/* ever noted; the ring keeps the last ones */
} pcap_agent_t;

/* A read-back within this of the one after the agent's last write is
 * the same (a knob's rounding); beyond it, the knob was set by another. */
#define PCAP_AGENT_REWRITE_TOL_MW 1000u

void pcap_agent_init(pcap_agent_t *a, const char *node,
		     pcap_node_knobs_t *knobs, int64_t hold_ns);

/* Each returns 0, or the knobs' error (also kept for the report). */
int pcap_agent_start(pcap_agent_t *a, int64_t now_ns);
int pcap_agent_cap(pcap_agent_t *a, int64_t now_ns, const pcap_cap_msg_t *m);
int pcap_agent_tick(pcap_agent_t *a, int64_t now_ns);

/* window_end_ns: when the power's window ended (0: no window). */
void pcap_agent_report(pcap_agent_t *a, uint32_t power_mw,
		       uint32_t window_ms, int64_t window_end_ns,
		       pcap_report_msg_t *out);

/* The time mean of the node caps in force over [t0_ns, t1_ns) (the
 * oldest one kept stands for what came before it); 0 when none was
 * noted or the window is empty. */
uint32_t pcap_agent_window_cap(const pcap_agent_t *a, int64_t t0_ns,
			       int64_t t1_ns);

#endif /* SE_PCAP_AGENT_H */
