/*
 * snmp_poller.c - one GET per PDU a round for every node on it
 * (snmp_poller.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_log.h"
#include "se_time.h"
#include "snmp_meter.h"
#include "snmp_poller.h"

/* ------------------------------------------------------- private types */

/* One PDU: its session, the union of its nodes' OIDs, the last answer. */
typedef struct {
	snmp_pdu_t cfg;			/* with its secret */
	void *ctx;			/* the transport's session */
	snmp_oid_t *oids;
	snmp_value_t *vals;
	size_t n_oids;
	size_t chunk;			/* OIDs in one GET */
	int rc;				/* of the last round */
	char why[512];
	uint64_t t_ns;			/* the GETs' middle */
	se_ratelimit_t rl;
} poll_pdu_t;

/* One node: its meter, where its values are in the PDUs' answers, and its
 * latest reading (under the poller's lock). */
typedef struct {
	char name[PDU_POLL_NAME_MAX];
	snmp_meter_t *meter;
	size_t n_pdus;
	size_t *pdu_of;			/* the meter's PDU k: ours */
	size_t **at;			/* its OID j: in our PDU's oids */
	pdu_poll_latest_t latest;	/* under the poller's lock */
	counter_spec_t spec;
	bool has_spec;
	uint64_t answered;		/* the seq last answered */
	bool wanted;			/* asked again: an early read */
} poll_node_t;

struct snmp_poller {
	const snmp_transport_t *tp;
	uint64_t timeout_ns;
	char map_path[256];
	poll_pdu_t *pdus;
	size_t n_pdus;
	poll_node_t *nodes;
	size_t n_nodes;
	snmp_value_t *scratch;		/* a node's values for one PDU */
	size_t scratch_len;
	pthread_mutex_t lock;
	unsigned long rounds, gets, failed, early;
	bool wanted;			/* a node wants an early read */
};

/* An early read of a node's PDUs (asked again at a step's boundary) no
 * sooner than this after their last GET: rf_poller.c's gap too. */
#define POLL_EARLY_GAP_NS	(500 * SE_NS_PER_MS)

/* ---------------------------------------------------- private functions */

static uint64_t _min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

static bool _same_oid(const snmp_oid_t *a, const snmp_oid_t *b)
{
	return a->len == b->len &&
	       !memcmp(a->sub, b->sub, a->len * sizeof(a->sub[0]));
}

/* The index of o in pdu's union, added if new: >= 0, or -ENOMEM. */
static long _union_oid(poll_pdu_t *pdu, const snmp_oid_t *o)
{
	snmp_oid_t *grown;

	for (size_t i = 0; i < pdu->n_oids; i++)
		if (_same_oid(&pdu->oids[i], o))
			return (long)i;
	if (!(grown = realloc(pdu->oids, (pdu->n_oids + 1) * sizeof(*grown))))
		return -ENOMEM;
	pdu->oids = grown;
	pdu->oids[pdu->n_oids] = *o;
	return (long)pdu->n_oids++;
}

static long _pdu_index(const snmp_poller_t *p, const char *name)
{
	for (size_t i = 0; i < p->n_pdus; i++)
		if (!strcmp(p->pdus[i].cfg.name, name))
			return (long)i;
	return -1;
}

/* Node n's meter's OIDs located in (and added to) the PDUs' unions. */
static int _place(snmp_poller_t *p, poll_node_t *n)
{
	n->n_pdus = snmp_meter_n_pdus(n->meter);
	if (!(n->pdu_of = calloc(n->n_pdus, sizeof(*n->pdu_of))) ||
	    !(n->at = calloc(n->n_pdus, sizeof(*n->at))))
		return -ENOMEM;
	for (size_t k = 0; k < n->n_pdus; k++) {
		const snmp_oid_t *oids;
		size_t n_oids;
		const snmp_pdu_t *mp = snmp_meter_pdu(n->meter, k, &oids,
						      &n_oids);
		long at = _pdu_index(p, mp->name);

		if (at < 0)
			return -EINVAL;		/* the map resolved it */
		n->pdu_of[k] = (size_t)at;
		if (!(n->at[k] = calloc(n_oids ? n_oids : 1,
					sizeof(*n->at[k]))))
			return -ENOMEM;
		for (size_t j = 0; j < n_oids; j++) {
			long u = _union_oid(&p->pdus[at], &oids[j]);

			if (u < 0)
				return (int)u;
			n->at[k][j] = (size_t)u;
		}
		if (n_oids > p->scratch_len)
			p->scratch_len = n_oids;
	}
	return 0;
}

/* Node i of cfg: its meter, as its slurmd would build it. */
static int _node(snmp_poller_t *p, const snmp_poller_config_t *cfg,
		 size_t i, char *err, size_t len)
{
	poll_node_t *n = &p->nodes[i];
	snmp_target_t *t = calloc(1, sizeof(*t));
	snmp_meter_config_t mc;
	int rc;

	if (!t)
		return -ENOMEM;
	snprintf(n->name, sizeof(n->name), "%s", cfg->nodes[i]);
	rc = snmp_conf_resolve(cfg->conf, cfg->nodes[i], cfg->hl, t, err,
			       len);
	if (!rc) {
		mc = (snmp_meter_config_t) {
			.node = n->name, .pdus = t->pdus,
			.n_pdus = t->n_pdus, .outlets = t->outlets,
			.n_outlets = t->n_outlets, .transport = p->tp,
			.timeout_ns = p->timeout_ns };
		rc = snmp_meter_create(&mc, &n->meter, err, len);
	}
	memset(t, 0, sizeof(*t));	/* its secrets */
	free(t);
	if (rc)
		return rc;
	n->has_spec = snmp_meter_counter_spec(n->meter, &n->spec);
	n->latest.rc = -EAGAIN;
	snprintf(n->latest.why, sizeof(n->latest.why), "node %s: no round "
		 "yet (the poller just started)", n->name);
	if ((rc = _place(p, n)) == -EINVAL)
		snprintf(err, len, "node %s: a PDU not in the map", n->name);
	return rc;
}

static int _pdus(snmp_poller_t *p, const snmp_poller_config_t *cfg)
{
	p->n_pdus = cfg->conf->n_pdus;
	if (!(p->pdus = calloc(p->n_pdus, sizeof(*p->pdus))))
		return -ENOMEM;
	for (size_t i = 0; i < p->n_pdus; i++) {
		p->pdus[i].cfg = cfg->conf->pdus[i].pdu;
		p->pdus[i].chunk = cfg->max_oids ? cfg->max_oids :
						   SNMP_POLLER_MAX_OIDS;
		p->pdus[i].rl = (se_ratelimit_t) {
			.interval_ns = 60 * SE_NS_PER_SEC, .burst = 1 };
	}
	return 0;
}

static void _close(snmp_poller_t *p, poll_pdu_t *pdu)
{
	if (pdu->ctx)
		p->tp->close(pdu->ctx);
	pdu->ctx = NULL;
}

/* One slice of pdu's union in one GET, halving the slice on tooBig. */
static int _get_slice(snmp_poller_t *p, poll_pdu_t *pdu, size_t off,
		      size_t *done)
{
	int rc;

	for (;;) {
		size_t n = _min(pdu->chunk, pdu->n_oids - off);

		p->gets++;
		rc = p->tp->get(pdu->ctx, pdu->oids + off, n, pdu->vals + off,
				se_mono_ns() + p->timeout_ns, pdu->why,
				sizeof(pdu->why));
		if (rc != -E2BIG || pdu->chunk == 1) {
			*done = n;
			return rc;
		}
		pdu->chunk = (n + 1) / 2;
		se_log(SE_LOG_INFO, "PDU %s (%s): tooBig for %zu OIDs: %zu "
		       "a GET from now on", pdu->cfg.name, pdu->cfg.host, n,
		       pdu->chunk);
	}
}

/* pdu's union in one GET (or its slices): 0 or -errno, why set. */
static int _poll_pdu(snmp_poller_t *p, poll_pdu_t *pdu)
{
	snmp_peer_t peer = { pdu->cfg.name, pdu->cfg.host, &pdu->cfg.secret,
			     pdu->cfg.context };
	uint64_t t0 = se_mono_ns();
	size_t off = 0, done;
	int rc = 0;

	if (!pdu->ctx && (rc = p->tp->open(&peer, &pdu->ctx,
					   t0 + p->timeout_ns, pdu->why,
					   sizeof(pdu->why)))) {
		pdu->ctx = NULL;
		return rc;
	}
	while (off < pdu->n_oids && !rc) {
		rc = _get_slice(p, pdu, off, &done);
		off += done;
	}
	if (rc && rc != -EAGAIN)
		_close(p, pdu);
	pdu->t_ns = t0 + (se_mono_ns() - t0) / 2;
	return rc;
}

/* Node n's reading from this round's answers, kept as its latest. */
static void _node_reading(snmp_poller_t *p, poll_node_t *n)
{
	meter_reading_t r = { 0 };
	char why[1024] = "";
	uint64_t t_sum = 0;
	int rc = 0;

	for (size_t k = 0; k < n->n_pdus && !rc; k++) {
		const poll_pdu_t *pdu = &p->pdus[n->pdu_of[k]];
		const snmp_oid_t *oids;
		size_t n_oids;

		if ((rc = pdu->rc)) {
			snprintf(why, sizeof(why), "node %s: PDU %s (%s): %s",
				 n->name, pdu->cfg.name, pdu->cfg.host,
				 pdu->why);
			break;
		}
		snmp_meter_pdu(n->meter, k, &oids, &n_oids);
		for (size_t j = 0; j < n_oids; j++)
			p->scratch[j] = pdu->vals[n->at[k][j]];
		snmp_meter_put_values(n->meter, k, p->scratch);
		t_sum += pdu->t_ns;
	}
	if (!rc)
		rc = snmp_meter_reading(n->meter, t_sum / n->n_pdus, &r, why,
					sizeof(why));
	pthread_mutex_lock(&p->lock);
	pdu_poll_latest_set(&n->latest, p->rounds, rc, &r, why);
	pthread_mutex_unlock(&p->lock);
}

/* ----------------------------------------------------- public functions */

int snmp_poller_create(const snmp_poller_config_t *cfg, snmp_poller_t **out,
		       char *err, size_t err_len)
{
	snmp_poller_t *p = calloc(1, sizeof(*p));
	int rc = -ENOMEM;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->tp = cfg->transport ? cfg->transport : &snmp_net_transport;
	p->timeout_ns = cfg->conf->timeout_ns;
	snprintf(p->map_path, sizeof(p->map_path), "%s",
		 cfg->conf->map_path ? cfg->conf->map_path : "the map");
	if (_pdus(p, cfg) ||
	    !(p->nodes = calloc(cfg->n_nodes ? cfg->n_nodes : 1,
				sizeof(*p->nodes))))
		goto fail;
	for (size_t i = 0; i < cfg->n_nodes; i++) {
		p->n_nodes = i + 1;
		if ((rc = _node(p, cfg, i, err, err_len)))
			goto fail;
	}
	rc = -ENOMEM;
	for (size_t i = 0; i < p->n_pdus; i++)
		if (!(p->pdus[i].vals = calloc(p->pdus[i].n_oids + 1,
					       sizeof(snmp_value_t))))
			goto fail;
	if (!(p->scratch = calloc(p->scratch_len + 1, sizeof(*p->scratch))))
		goto fail;
	*out = p;
	return 0;
fail:
	snmp_poller_destroy(p);
	return rc;
}

void snmp_poller_destroy(snmp_poller_t *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_nodes; i++) {
		poll_node_t *n = &p->nodes[i];

		for (size_t k = 0; n->at && k < n->n_pdus; k++)
			free(n->at[k]);
		free(n->at);
		free(n->pdu_of);
		snmp_meter_destroy(n->meter);
	}
	for (size_t i = 0; i < p->n_pdus; i++) {
		_close(p, &p->pdus[i]);
		free(p->pdus[i].oids);
		free(p->pdus[i].vals);
		memset(&p->pdus[i].cfg.secret, 0,
		       sizeof(p->pdus[i].cfg.secret));
	}
	free(p->pdus);
	free(p->nodes);
	free(p->scratch);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

unsigned snmp_poller_round(snmp_poller_t *p)
{
	unsigned failed = 0;

	for (size_t i = 0; i < p->n_pdus; i++) {
		poll_pdu_t *pdu = &p->pdus[i];

		if (!pdu->n_oids)
			continue;
		if ((pdu->rc = _poll_pdu(p, pdu))) {
			failed++;
			se_log_limited(&pdu->rl, se_mono_ns(), SE_LOG_ERROR,
				       "PDU %s (%s): %s", pdu->cfg.name,
				       pdu->cfg.host, pdu->why);
		}
	}
	p->failed += failed;
	p->rounds++;
	for (size_t i = 0; i < p->n_nodes; i++)
		_node_reading(p, &p->nodes[i]);
	return failed;
}

bool snmp_poller_wanted(snmp_poller_t *p)
{
	return pdu_poll_wanted(&p->lock, &p->wanted);
}

/* The wanted nodes whose PDUs are all due (their last GET at least the
 * gap ago) taken, their PDUs marked; the others stay wanted. */
static bool _mark_early(snmp_poller_t *p, bool *take, bool *poll)
{
	uint64_t now = se_mono_ns();
	bool any = false;

	pthread_mutex_lock(&p->lock);
	p->wanted = false;
	for (size_t i = 0; i < p->n_nodes; i++) {
		poll_node_t *n = &p->nodes[i];
		bool due = n->wanted;

		for (size_t k = 0; due && k < n->n_pdus; k++)
			due = now - p->pdus[n->pdu_of[k]].t_ns >=
			      POLL_EARLY_GAP_NS;
		take[i] = pdu_poll_take(&n->wanted, due, &p->wanted);
		for (size_t k = 0; due && k < n->n_pdus; k++)
			poll[n->pdu_of[k]] = true;
		any = any || due;
	}
	pthread_mutex_unlock(&p->lock);
	return any;
}

unsigned snmp_poller_round_wanted(snmp_poller_t *p)
{
	bool *take = calloc(p->n_nodes + 1, sizeof(*take));
	bool *poll = calloc(p->n_pdus + 1, sizeof(*poll));
	unsigned failed = 0;

	if (take && poll && _mark_early(p, take, poll)) {
		for (size_t i = 0; i < p->n_pdus; i++)
			if (poll[i] && p->pdus[i].n_oids &&
			    (p->pdus[i].rc = _poll_pdu(p, &p->pdus[i])))
				failed++;
		p->failed += failed;
		p->rounds++;
		p->early++;
		for (size_t i = 0; i < p->n_nodes; i++)
			if (take[i])
				_node_reading(p, &p->nodes[i]);
	}
	free(take);
	free(poll);
	return failed;
}

int snmp_poller_answer(snmp_poller_t *p, const char *node, uint64_t now_ns,
		       pdu_poll_reading_t *out)
{
	poll_node_t *n = NULL;

	snprintf(out->node, sizeof(out->node), "%s", node);
	for (size_t i = 0; i < p->n_nodes && !n; i++)
		if (!strcmp(p->nodes[i].name, node))
			n = &p->nodes[i];
	if (!n) {
		out->status = -ENOENT;
		snprintf(out->error, sizeof(out->error),
			 "node %s: no Nodes= line of %s names it", node,
			 p->map_path);
		return -ENOENT;
	}
	pthread_mutex_lock(&p->lock);
	/* asked again for the reading it has: a newer one is wanted (the
	 * node's sampler kicked at a step's boundary) */
	if (pdu_poll_asked_again(&n->latest, &n->answered))
		n->wanted = p->wanted = true;
	/* the map's spec: a counter without one is not carried */
	pdu_poll_answer_from(out, &n->latest, n->has_spec ? &n->spec :
			     &(counter_spec_t){ 0 }, now_ns);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void snmp_poller_stats(const snmp_poller_t *p, snmp_poller_stats_t *s)
{
	s->pdus = p->n_pdus;
	s->nodes = p->n_nodes;
	s->oids = 0;
	for (size_t i = 0; i < p->n_pdus; i++)
		s->oids += p->pdus[i].n_oids;
	s->rounds = p->rounds;
	s->gets = p->gets;
	s->failed = p->failed;
	s->early = p->early;
}
