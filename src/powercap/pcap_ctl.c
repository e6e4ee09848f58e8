/*
 * pcap_ctl.c - the controller's side of a cap group over time (pcap_ctl.h
 * says what each event does and why).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdlib.h>

#include "pcap_ctl.h"

/* A lowered node is settled under its cap + 1 % + 1 W. */
static bool _under(uint32_t power_mw, uint32_t cap_mw)
{
	return (uint64_t)power_mw * 100 <= (uint64_t)cap_mw * 101 + 100000;
}

static void _send(pcap_ctl_t *c, size_t i, uint32_t cap_mw,
		  pcap_send_fn send, void *arg)
{
	c->st[i].sent_cap_mw = cap_mw;
	c->st[i].sent_seq = ++c->seq;
	send(arg, i, cap_mw, c->st[i].sent_seq);
}

int pcap_ctl_init(pcap_ctl_t *c, const pcap_params_t *p, pcap_node_t *nodes,
		  size_t n, int64_t gate_ns, int64_t silent_ns)
{
	*c = (pcap_ctl_t){ .params = *p, .gate_ns = gate_ns,
			   .silent_ns = silent_ns, .n = n, .nodes = nodes };
	if (!(c->st = calloc(n ? n : 1, sizeof(*c->st))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		c->st[i].sent_cap_mw = nodes[i].max_mw;
		c->st[i].last_answer_ns = INT64_MIN;
	}
	return 0;
}

void pcap_ctl_free(pcap_ctl_t *c)
{
	free(c->st);
	c->st = NULL;
}

/* The uniform baseline: cap/n each, clamped to the node's range (one node
 * class: the floors' sum <= the cap is checked at load, so the sum holds).
 * The same out flags as pcap_round's, so the lowers still go first. */
static void _uniform_round(pcap_ctl_t *c)
{
	uint64_t share = c->n ? c->params.cap_mw / c->n : 0;

	c->last = (pcap_stats_t){ .budget_mw = c->params.cap_mw, .level = 0 };
	for (size_t i = 0; i < c->n; i++) {
		pcap_node_t *nd = &c->nodes[i];
		uint64_t cap = share;

		if (cap < nd->floor_mw)
			cap = nd->floor_mw;
		if (cap > nd->max_mw)
			cap = nd->max_mw;
		nd->new_cap_mw = (uint32_t)cap;
		nd->out = 0;
		if (nd->new_cap_mw != nd->cap_mw) {
			nd->out |= PCAP_CHANGED;
			c->last.n_changed++;
		}
		if (nd->new_cap_mw < nd->cap_mw) {
			nd->out |= PCAP_LOWER;
			c->last.n_lower++;
		}
		c->last.sum_caps_mw += nd->new_cap_mw;
		c->last.sum_power_mw += nd->power_mw;
	}
}

int pcap_ctl_round(pcap_ctl_t *c, int64_t now_ns, pcap_send_fn send,
		   void *arg)
{
	int ret = 0;

	for (size_t i = 0; i < c->n; i++) {
		pcap_ctl_node_t *s = &c->st[i];
		pcap_node_t *nd = &c->nodes[i];
		bool alive = s->last_answer_ns != INT64_MIN &&
			     now_ns - s->last_answer_ns < c->silent_ns;

		s->held_mw = 0;		/* this round decides again */
		nd->cap_mw = s->sent_cap_mw;
		nd->power_mw = s->power_mw;
		nd->window_cap_mw = s->answered ? s->window_cap_mw : 0;
		nd->flags = (s->answered ? PCAP_MEASURED : 0) |
			    (alive && s->enforced ? PCAP_ENFORCED : 0) |
			    (s->idle ? PCAP_IDLE : 0);
		s->answered = false;
	}
	if (c->uniform)
		_uniform_round(c);
	else if ((ret = pcap_round(&c->params, c->nodes, c->n, &c->last)))
		return ret;
	c->round_ns = now_ns;
	c->round_seq = c->seq;
	c->holding = false;
	for (size_t i = 0; i < c->n; i++) {
		pcap_node_t *nd = &c->nodes[i];

		c->st[i].released = !!(nd->out & PCAP_RELEASED);
		if (!(nd->out & PCAP_CHANGED))
			continue;
		if (nd->out & PCAP_LOWER) {
			c->st[i].settling = true;
			_send(c, i, nd->new_cap_mw, send, arg);
		} else {
			c->st[i].held_mw = nd->new_cap_mw;
			c->holding = true;
		}
	}
	return 0;
}

void pcap_ctl_idle(pcap_ctl_t *c, size_t i, bool idle)
{
	c->st[i].idle = idle;
}

void pcap_ctl_window_cap(pcap_ctl_t *c, size_t i, uint32_t window_cap_mw)
{
	c->st[i].window_cap_mw = window_cap_mw;
}

void pcap_ctl_answer(pcap_ctl_t *c, size_t i, int64_t now_ns, uint64_t seq,
		     uint32_t power_mw, bool enforced)
{
	pcap_ctl_node_t *s = &c->st[i];

	s->last_answer_ns = now_ns;
	s->power_mw = power_mw;
	s->enforced = enforced;
	s->answered = true;
	if (s->settling && seq >= s->sent_seq &&
	    (_under(power_mw, s->sent_cap_mw) || !enforced))
		s->settling = false;
}

bool pcap_ctl_tick(pcap_ctl_t *c, int64_t now_ns, pcap_send_fn send,
		   void *arg)
{
	bool settling = false;

	if (!c->holding)
		return false;
	for (size_t i = 0; i < c->n && !settling; i++)
		settling = c->st[i].settling;
	if (settling && now_ns - c->round_ns < c->gate_ns)
		return true;
	for (size_t i = 0; i < c->n; i++)
		if (c->st[i].held_mw) {
			_send(c, i, c->st[i].held_mw, send, arg);
			c->st[i].held_mw = 0;
		}
	c->holding = false;
	return false;
}

void pcap_ctl_renew(pcap_ctl_t *c, pcap_send_fn send, void *arg)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->st[i].sent_seq <= c->round_seq)
			_send(c, i, c->st[i].sent_cap_mw, send, arg);
}
