/*
 * pcap_lease.c - the node agent's lease on its cap (pcap_lease.h says
 * which event leads to which action, and why).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include "pcap_lease.h"

void pcap_lease_init(pcap_lease_t *l, int64_t hold_ns)
{
	*l = (pcap_lease_t){ .hold_ns = hold_ns > 0 ? hold_ns : 1 };
}

pcap_action_t pcap_lease_tick(pcap_lease_t *l, int64_t now_ns)
{
	if (!l->started) {
		l->started = true;
		return PCAP_ACT_RESTORE;
	}
	if (l->capped && now_ns >= l->lease_end_ns) {
		l->capped = false;
		return PCAP_ACT_RESTORE;
	}
	return PCAP_ACT_NONE;
}

pcap_action_t pcap_lease_cap(pcap_lease_t *l, int64_t now_ns, uint64_t seq,
			     uint32_t cap_mw, int64_t lease_ns)
{
	if (l->seq && seq <= l->seq)
		return PCAP_ACT_NONE;		/* crossed: older than ours */
	if (lease_ns <= 0 || lease_ns > l->hold_ns)
		lease_ns = l->hold_ns;
	l->started = true;
	l->seq = seq;
	l->lease_end_ns = now_ns + lease_ns;
	if (l->capped && cap_mw == l->cap_mw && l->enforced)
		return PCAP_ACT_NONE;		/* renewed, nothing to write */
	l->capped = true;
	l->cap_mw = cap_mw;
	return PCAP_ACT_APPLY;
}

void pcap_lease_result(pcap_lease_t *l, bool ok)
{
	l->enforced = ok;
}
