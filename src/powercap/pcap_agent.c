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

/* The node cap in force now noted, when it changed: the lease's cap while
 * the knobs hold it, else the node's maximum (defaults, or unknown). */
static void _note_cap(pcap_agent_t *a, int64_t now_ns)
{
	uint32_t cap = a->knobs->max_mw;
	pcap_cap_at_t *last;

	if (a->lease.capped && a->lease.enforced && a->lease.cap_mw < cap)
		cap = a->lease.cap_mw;
	last = a->n_cap_hist ?
	       &a->cap_hist[(a->n_cap_hist - 1) % PCAP_AGENT_CAP_HIST] : NULL;
	if (last && last->cap_mw == cap)
		return;
	a->cap_hist[a->n_cap_hist++ % PCAP_AGENT_CAP_HIST] =
		(pcap_cap_at_t){ .t_ns = now_ns, .cap_mw = cap };
}

uint32_t pcap_agent_window_cap(const pcap_agent_t *a, int64_t t0_ns,
			       int64_t t1_ns)
{
	size_t n = a->n_cap_hist < PCAP_AGENT_CAP_HIST ? a->n_cap_hist :
		   PCAP_AGENT_CAP_HIST;
	size_t first = a->n_cap_hist - n;
	long double sum = 0;

	/* all the caps kept came after the window: unknown (16 changes
	 * since the meter's sample) */
	if (!n || t1_ns <= t0_ns ||
	    a->cap_hist[first % PCAP_AGENT_CAP_HIST].t_ns >= t1_ns)
		return 0;
	for (size_t k = 0; k < n; k++) {
		const pcap_cap_at_t *e =
			&a->cap_hist[(first + k) % PCAP_AGENT_CAP_HIST];
		int64_t from = k ? e->t_ns : t0_ns;
		int64_t to = k + 1 < n ?
			a->cap_hist[(first + k + 1) % PCAP_AGENT_CAP_HIST].t_ns :
			t1_ns;

		if (from < t0_ns)
			from = t0_ns;
		if (to > t1_ns)
			to = t1_ns;
		if (to > from)
			sum += (long double)e->cap_mw * (long double)(to - from);
	}
	return (uint32_t)(sum / (long double)(t1_ns - t0_ns) + 0.5L);
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
	int ret = _act(a, pcap_lease_tick(&a->lease, now_ns));

	_note_cap(a, now_ns);
	return ret;
}

int pcap_agent_cap(pcap_agent_t *a, int64_t now_ns, const pcap_cap_msg_t *m)
{
	pcap_action_t act;
	int ret;

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
		ret = at_defaults ? 0 : _act(a, PCAP_ACT_RESTORE);
		_note_cap(a, now_ns);
		return ret;
	}
	act = pcap_lease_cap(&a->lease, now_ns, m->seq, m->cap_mw,
			     (int64_t)m->lease_ms * 1000000);
	/* the same cap renewed: written again only if the knobs' draws
	 * moved its split (pcap_node_split_moved) */
	if (act == PCAP_ACT_NONE && a->lease.capped && a->lease.enforced &&
	    pcap_node_split_moved(a->knobs, a->lease.cap_mw))
		act = PCAP_ACT_APPLY;
	ret = _act(a, act);
	_note_cap(a, now_ns);
	return ret;
}

int pcap_agent_tick(pcap_agent_t *a, int64_t now_ns)
{
	int ret = _act(a, pcap_lease_tick(&a->lease, now_ns));

	_note_cap(a, now_ns);
	return ret;
}

void pcap_agent_report(pcap_agent_t *a, uint32_t power_mw,
		       uint32_t window_ms, int64_t window_end_ns,
		       pcap_report_msg_t *out)
{
	char err[PCAP_WIRE_ERR_MAX];

	memset(out, 0, sizeof(*out));
	snprintf(out->node, sizeof(out->node), "%s", a->node);
	out->seq = a->lease.seq;
	out->power_mw = power_mw;
	out->window_ms = window_ms;
	if (window_ms && window_end_ns)
		out->window_cap_mw = pcap_agent_window_cap(
			a, window_end_ns - (int64_t)window_ms * 1000000,
			window_end_ns);
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
