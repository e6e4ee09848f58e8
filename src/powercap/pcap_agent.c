/*
 * pcap_agent.c - the node agent's core (pcap_agent.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pcap_agent.h"

/* Do what the lease said; keep the outcome for the report. */
static int _act(pcap_agent_t *a, pcap_action_t act)
{
	char err[PCAP_WIRE_ERR_MAX];
	int ret = 0;

	if (act == PCAP_ACT_NONE)
		return 0;
	a->error[0] = '\0';
	if (act == PCAP_ACT_APPLY)
		ret = pcap_node_apply(a->knobs, a->lease.cap_mw, a->error,
				      sizeof(a->error));
	else
		ret = pcap_node_restore(a->knobs, a->error,
					sizeof(a->error));
	if (!ret)
		a->error[0] = '\0';
	pcap_lease_result(&a->lease, !ret);
	/* what a knob reset behind the agent's back is told by */
	a->have_written_read = !ret &&
		!pcap_node_read(a->knobs, &a->written_read_mw, err,
				sizeof(err));
	return ret;
}

/* The knobs moved since the agent wrote them: write them again. */
static void _hold_written(pcap_agent_t *a, uint32_t read_mw)
{
	uint32_t d;

	a->rewritten = false;
	if (!a->have_written_read || !a->lease.enforced || a->error[0])
		return;
	d = read_mw > a->written_read_mw ? read_mw - a->written_read_mw :
					   a->written_read_mw - read_mw;
	if (d <= PCAP_AGENT_REWRITE_TOL_MW)
		return;
	a->rewritten = true;
	a->rewritten_from_mw = read_mw;
	_act(a, a->lease.capped ? PCAP_ACT_APPLY : PCAP_ACT_RESTORE);
}

void pcap_agent_init(pcap_agent_t *a, const char *node,
		     pcap_node_knobs_t *knobs, int64_t hold_ns)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->node, sizeof(a->node), "%s", node);
	a->knobs = knobs;
	pcap_lease_init(&a->lease, hold_ns);
}

int pcap_agent_start(pcap_agent_t *a, int64_t now_ns)
{
	return _act(a, pcap_lease_tick(&a->lease, now_ns));
}

int pcap_agent_cap(pcap_agent_t *a, int64_t now_ns, const pcap_cap_msg_t *m)
{
	pcap_action_t act;

	if (strcmp(m->node, a->node))
		return -EINVAL;		/* misrouted: the caller logs it */
	pcap_node_measure(a->knobs, now_ns);	/* the knobs' draws: a round */
	if (m->flags & PCAP_CAP_RESTORE) {
		bool at_defaults = a->lease.started && !a->lease.capped &&
				   a->lease.enforced && !a->error[0];

		a->lease.capped = false;
		a->lease.seq = m->seq > a->lease.seq ? m->seq : a->lease.seq;
		/* an idle node is sent RESTORE every round: its knobs (a
		 * BMC's PATCH) are written once, not every round */
		return at_defaults ? 0 : _act(a, PCAP_ACT_RESTORE);
	}
	act = pcap_lease_cap(&a->lease, now_ns, m->seq, m->cap_mw,
			     (int64_t)m->lease_ms * 1000000);
	/* the same cap renewed: written again only if the knobs' draws
	 * moved its split (pcap_node_split_moved) */
	if (act == PCAP_ACT_NONE && a->lease.capped && a->lease.enforced &&
	    pcap_node_split_moved(a->knobs, a->lease.cap_mw))
		act = PCAP_ACT_APPLY;
	return _act(a, act);
}

int pcap_agent_tick(pcap_agent_t *a, int64_t now_ns)
{
	return _act(a, pcap_lease_tick(&a->lease, now_ns));
}

void pcap_agent_report(pcap_agent_t *a, uint32_t power_mw,
		       uint32_t window_ms, pcap_report_msg_t *out)
{
	char err[PCAP_WIRE_ERR_MAX];

	memset(out, 0, sizeof(*out));
	snprintf(out->node, sizeof(out->node), "%s", a->node);
	out->seq = a->lease.seq;
	out->power_mw = power_mw;
	out->window_ms = window_ms;
	if (pcap_node_read(a->knobs, &out->cap_mw, err, sizeof(err))) {
		out->cap_mw = 0;
		if (!a->error[0])
			snprintf(a->error, sizeof(a->error), "%s", err);
	} else {
		_hold_written(a, out->cap_mw);
		if (a->rewritten && a->have_written_read)
			out->cap_mw = a->written_read_mw;
	}
	out->flags = (a->lease.enforced && !a->error[0] ?
		      PCAP_REPORT_ENFORCED : 0) |
		     (a->job ? PCAP_REPORT_JOB : 0);
	snprintf(out->error, sizeof(out->error), "%s", a->error);
}
