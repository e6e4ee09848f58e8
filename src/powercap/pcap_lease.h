/*
 * pcap_lease.h - the node agent's decisions about its cap over time (issue
 * #45, doc/design-powercap.md "Safe by default"), Slurm-free, no I/O, no
 * clock: the agent feeds it events with the monotonic time and does what
 * it answers (apply a cap through its knobs, or restore their defaults).
 *
 *   start       the agent restores the defaults: a rebooted node, or an
 *               agent restarted after a crash, never keeps a cap nobody
 *               renews.
 *   cap         a message from the controller (seq, cap, lease): applied
 *               unless older than one already applied (messages may cross
 *               on a reconnect); the lease runs from now for the lease the
 *               controller asked, bounded by the agent's own hold_ns.
 *   tick        lease lapsed (the controller died or lost the node): the
 *               defaults come back.
 *   (no job end: a node's jobs are the steps slurmd lists as running,
 *   which the agent reports; the controller's next round releases a node
 *   whose jobs ended, doc/design-powercap.md "Jobs ending")
 *   knob result a failed apply is remembered so the next answer says the
 *               node is not enforced (the controller charges it its max).
 */
#ifndef SE_PCAP_LEASE_H
#define SE_PCAP_LEASE_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
	PCAP_ACT_NONE = 0,
	PCAP_ACT_APPLY,		/* apply pcap_lease_t.cap_mw */
	PCAP_ACT_RESTORE,	/* restore the knobs' defaults */
} pcap_action_t;

typedef struct {
	int64_t hold_ns;	/* the longest lease the agent grants */
	bool started;
	bool capped;		/* a cap is in force under a lease */
	bool enforced;		/* the last apply or restore succeeded */
	uint32_t cap_mw;
	uint64_t seq;		/* the last message applied */
	int64_t lease_end_ns;
} pcap_lease_t;

void pcap_lease_init(pcap_lease_t *l, int64_t hold_ns);

/* The agent has started (or its timer ticked): RESTORE once at start,
 * RESTORE when a lease lapsed, else NONE. */
pcap_action_t pcap_lease_tick(pcap_lease_t *l, int64_t now_ns);

/* A cap message.  lease_ns <= 0 or above hold_ns: hold_ns. */
pcap_action_t pcap_lease_cap(pcap_lease_t *l, int64_t now_ns, uint64_t seq,
			     uint32_t cap_mw, int64_t lease_ns);

/* What the knobs did with the last action. */
void pcap_lease_result(pcap_lease_t *l, bool ok);

#endif /* SE_PCAP_LEASE_H */
