/*
 * rf_poller.c - each Redfish service read once a round for every node it
 * feeds (rf_poller.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rf_http.h"
#include "rf_poller.h"
#include "rf_source.h"
#include "rf_tick.h"
#include "se_array.h"
#include "se_log.h"
#include "se_time.h"

#define POLL_LOG_NS	(60 * SE_NS_PER_SEC)
#define POLL_MAX_GETS	1024	/* documents of one service a round */
#define POLL_MAX_DISC	256	/* documents discovery reads a round */
/* A service read again for a node that asked for a newer reading (a step
 * boundary's kick) no sooner than this after its last round began: kicks
 * of many nodes, or of one node many times, coalesce into one read. */
#define POLL_EARLY_GAP_NS	(500 * SE_NS_PER_MS)

/* ------------------------------------------------------- private types */

/* One document a service's round GETs: an outlet, or a collection
 * expanded for several (batch), in each of the watch's slots. */
typedef struct {
	char url[RF_URL_MAX];
	bool batch;
	json_object *doc[RF_TICK_SLOTS];
} poll_get_t;

typedef struct {
	char base[RF_URI_MAX];		/* "https://pdu1:443" */
	rf_http_t *http;
	rf_tick_t tick;
	poll_get_t *gets;
	size_t n_gets, gets_cap;
	bool stale;			/* its nodes' URLs changed: list again */
	int disc_rc;			/* discovery's GET failed this round */
	char disc_why[256];
	bool no_expand;			/* a batch came without its members */
	int cur;			/* the slot of this round's reading */
	uint64_t start_ns;		/* of its last round */
	bool early;			/* in the early round being made */
	int rc;				/* of this round */
	char why[512];
	uint64_t t_ns;			/* this round's stamp */
	se_ratelimit_t rl;
} poll_svc_t;

typedef struct {
	char name[PDU_POLL_NAME_MAX];
	rf_meter_t *meter;
	size_t svc[RF_MAX_PROBES + 1];	/* the services its URLs are on */
	size_t n_svc;
	pdu_poll_latest_t latest;	/* under the poller's lock */
	uint64_t answered;		/* the round last answered it */
	bool wanted;			/* it asked again: a newer one wanted */
} poll_node_t;

/* A document discovery read in this round (or its failure), so that
 * every node on a service costs it one GET of each, not one each. */
typedef struct {
	char *url;
	json_object *doc;
	int rc;
	char msg[256];
} poll_disc_t;

struct rf_poller {
	poll_svc_t *svcs;
	size_t n_svcs, svcs_cap;
	poll_node_t *nodes;
	size_t n_nodes;
	uint64_t period_ns, timeout_ns;
	char map_path[256];
	/* the documents the node meters are given (_doc) */
	bool discovering;
	uint64_t deadline_ns;
	poll_disc_t disc[POLL_MAX_DISC];
	size_t n_disc;
	pthread_mutex_t lock;
	bool wanted;			/* some node's wanted (under lock) */
	unsigned long rounds, failed, unwatched, early;
	se_ratelimit_t budget_rl;
};

/* ---------------------------------------------------- private functions */

/* src into dst, cut to fit. */
static void _copy(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* The service whose base is url's "scheme://host[:port]", or -1. */
static long _svc_of(const rf_poller_t *p, const char *url)
{
	size_t blen = (size_t) (rf_uri_path(url) - url);

	for (size_t i = 0; i < p->n_svcs; i++)
		if (strlen(p->svcs[i].base) == blen &&
		    !strncmp(p->svcs[i].base, url, blen))
			return (long) i;
	return -1;
}

/* url's service, made if new (the node's credentials): its index or
 * -errno. */
static long _svc_add(rf_poller_t *p, const char *url,
		     const rf_meter_conf_t *mc)
{
	size_t blen = (size_t) (rf_uri_path(url) - url);
	long at = _svc_of(p, url);
	poll_svc_t *s;
	rf_http_conf_t hc = {
		.user = mc->user, .password = mc->password,
		.ca_file = mc->ca_file, .tls_verify = mc->tls_verify,
		.auth = mc->auth, .timeout_ns = mc->timeout_ns,
	};

	if (at >= 0)
		return at;
	if (!blen || blen >= RF_URI_MAX || !strstr(url, "://"))
		return -EINVAL;
	if (se_array_room(&p->svcs, p->n_svcs, &p->svcs_cap,
			  sizeof(*p->svcs), 4))
		return -ENOMEM;
	s = &p->svcs[p->n_svcs];
	memset(s, 0, sizeof(*s));
	memcpy(s->base, url, blen);
	s->base[blen] = '\0';
	s->rl = (se_ratelimit_t) SE_RATELIMIT_INIT(POLL_LOG_NS, 1);
	hc.base = s->base;
	if (!(s->http = rf_http_create(&hc)))
		return -ENOMEM;
	return (long) p->n_svcs++;
}

static void _gets_free(poll_svc_t *s)
{
	for (size_t i = 0; i < s->n_gets; i++)
		for (int k = 0; k < RF_TICK_SLOTS; k++)
			json_object_put(s->gets[i].doc[k]);
	free(s->gets);
	s->gets = NULL;
	s->n_gets = s->gets_cap = 0;
}

static void _disc_free(rf_poller_t *p)
{
	for (size_t i = 0; i < p->n_disc; i++) {
		free(p->disc[i].url);
		json_object_put(p->disc[i].doc);
	}
	p->n_disc = 0;
}

/* ----------------------------------------- the documents node meters read */

/* In discovery: from this round's documents, else GET (and keep). */
static int _disc_doc(rf_poller_t *p, const char *url, json_object **doc,
		     char *msg, size_t len)
{
	long s = _svc_of(p, url);
	poll_disc_t *d;
	int rc;

	for (size_t i = 0; i < p->n_disc; i++)
		if (!strcmp(p->disc[i].url, url)) {
			if (p->disc[i].rc) {
				_copy(msg, len, p->disc[i].msg);
				return p->disc[i].rc;
			}
			*doc = json_object_get(p->disc[i].doc);
			return 0;
		}
	if (s < 0) {
		snprintf(msg, len, "%s: on no service of the map", url);
		return -EINVAL;
	}
	/* a service that did not answer costs one timeout a round, not one
	 * for each node it feeds */
	if (p->svcs[s].disc_rc) {
		_copy(msg, len, p->svcs[s].disc_why);
		return p->svcs[s].disc_rc;
	}
	rc = rf_http_get(p->svcs[s].http, rf_uri_path(url), p->deadline_ns,
			 doc, msg, len);
	if (rc == -ETIMEDOUT || rc == -ECONNREFUSED || rc == -EIO ||
	    rc == -EPROTO || rc == -EACCES) {
		p->svcs[s].disc_rc = rc;
		_copy(p->svcs[s].disc_why, sizeof(p->svcs[s].disc_why), msg);
	}
	if (p->n_disc == POLL_MAX_DISC)
		return rc;
	d = &p->disc[p->n_disc];
	if (!(d->url = strdup(url)))
		return rc;
	d->rc = rc;
	d->doc = rc ? NULL : json_object_get(*doc);
	_copy(d->msg, sizeof(d->msg), rc ? msg : "");
	p->n_disc++;
	return rc;
}

/* In a reading: the round's document, or the member of a batch. */
static int _round_doc(rf_poller_t *p, const char *url, json_object **doc,
		      char *msg, size_t len)
{
	long at = _svc_of(p, url);
	poll_svc_t *s = at >= 0 ? &p->svcs[at] : NULL;
	json_object *m;

	for (size_t i = 0; s && i < s->n_gets; i++)
		if (!strcmp(s->gets[i].url, url)) {
			*doc = json_object_get(s->gets[i].doc[s->cur]);
			return 0;
		}
	for (size_t i = 0; s && i < s->n_gets; i++)
		if (s->gets[i].batch &&
		    (m = rf_batch_member(s->gets[i].doc[s->cur], url))) {
			*doc = json_object_get(m);
			return 0;
		}
	if (s && !s->no_expand) {	/* read one by one from now on */
		s->no_expand = s->stale = true;
		snprintf(msg, len, "%s: not in its collection, expanded: "
			 "read alone from the next round", url);
		return -EAGAIN;
	}
	snprintf(msg, len, "%s: not read this round", url);
	return -EAGAIN;
}

/* rf_fetch_fn given to every node's meter. */
static int _doc(void *arg, const char *url, json_object **doc, char *msg,
		size_t len)
{
	rf_poller_t *p = arg;

	return p->discovering ? _disc_doc(p, url, doc, msg, len) :
				_round_doc(p, url, doc, msg, len);
}

/* -------------------------------------------------- a service's GET list */

static int _list_add(poll_svc_t *s, const char *url, bool batch)
{
	for (size_t i = 0; i < s->n_gets; i++)
		if (!strcmp(s->gets[i].url, url))
			return 0;
	if (s->n_gets == POLL_MAX_GETS)
		return -E2BIG;
	if (se_array_room(&s->gets, s->n_gets, &s->gets_cap,
			  sizeof(*s->gets), 8))
		return -ENOMEM;
	memset(&s->gets[s->n_gets], 0, sizeof(*s->gets));
	_copy(s->gets[s->n_gets].url, RF_URL_MAX, url);
	s->gets[s->n_gets++].batch = batch;
	return 0;
}

/* Members of url's collection among the urls of service s: 0 when url
 * is itself a collection's GET (it has a query) or has no parent. */
static size_t _siblings(char (*urls)[RF_URL_MAX], size_t n, const char *url)
{
	char q[RF_URL_MAX], q2[RF_URL_MAX];
	size_t k = 0;

	if (strchr(url, '?'))
		return 0;
	rf_batch_uri(url, q, sizeof(q));
	for (size_t i = 0; q[0] && i < n; i++) {
		if (strchr(urls[i], '?')) {	/* a node's own batch of it */
			k += strcmp(urls[i], q) ? 0 : 2;
			continue;
		}
		rf_batch_uri(urls[i], q2, sizeof(q2));
		k += !strcmp(q, q2);
	}
	return k;
}

/* Service si's GETs from its discovered nodes' URLs: the outlets of one
 * collection, two or more, through it expanded (unless the service did
 * not expand it), every other document alone. */
static int _relist(rf_poller_t *p, size_t si)
{
	poll_svc_t *s = &p->svcs[si];
	char (*urls)[RF_URL_MAX] = NULL;
	char node_urls[2 * RF_MAX_PROBES][RF_URL_MAX], q[RF_URL_MAX];
	size_t n = 0, cap = 0;
	int rc = 0;

	for (size_t i = 0; i < p->n_nodes && !rc; i++) {
		size_t k = rf_meter_urls(p->nodes[i].meter, node_urls,
					 2 * RF_MAX_PROBES);

		for (size_t j = 0; j < k && !rc; j++) {
			if (_svc_of(p, node_urls[j]) != (long) si)
				continue;
			if (!(rc = se_array_room(&urls, n, &cap, sizeof(*urls),
						 16)))
				memcpy(urls[n++], node_urls[j], RF_URL_MAX);
		}
	}
	_gets_free(s);
	for (size_t i = 0; i < n && !rc; i++) {
		if (!s->no_expand && _siblings(urls, n, urls[i]) >= 2) {
			rf_batch_uri(urls[i], q, sizeof(q));
			rc = _list_add(s, q, true);
		} else {
			rc = _list_add(s, urls[i], !!strchr(urls[i], '?'));
		}
	}
	free(urls);
	s->stale = false;
	return rc;
}

/* --------------------------------------------------- a service's rounds */

/* rf_tick_ops_t: every GET of the service into slot. */
static int _svc_round(void *ctx, int slot, uint64_t deadline_ns,
		      uint64_t *start_ns, uint64_t *end_ns)
{
	poll_svc_t *s = ctx;
	int rc = 0;

	*start_ns = se_mono_ns();
	for (size_t i = 0; i < s->n_gets && !rc; i++) {
		json_object_put(s->gets[i].doc[slot]);
		s->gets[i].doc[slot] = NULL;
		rc = rf_http_get(s->http, rf_uri_path(s->gets[i].url),
				 deadline_ns, &s->gets[i].doc[slot], s->why,
				 sizeof(s->why));
	}
	*end_ns = se_mono_ns();
	return rc;
}

/* rf_tick_ops_t: any reading in the documents changed (every reading
 * refreshes at the service's tick; nothing else is looked at). */
static bool _svc_changed(void *ctx, int a, int b)
{
	poll_svc_t *s = ctx;

	for (size_t i = 0; i < s->n_gets; i++)
		if (!rf_readings_same(s->gets[i].doc[a], s->gets[i].doc[b]))
			return true;
	return false;
}

static const rf_tick_ops_t svc_tick_ops = { _svc_round, _svc_changed };

/* Service s's round, watched for its tick when watch. */
static void _poll_svc(rf_poller_t *p, poll_svc_t *s, bool watch)
{
	uint64_t t0 = se_mono_ns(), start, end, tick = 0;
	uint64_t deadline = t0 + p->timeout_ns + RF_TICK_MAX_NS;
	bool off = s->tick.off;

	s->why[0] = '\0';
	s->cur = 0;
	s->start_ns = t0;
	if ((s->rc = _svc_round(s, 0, t0 + p->timeout_ns, &start, &end))) {
		if (s->rc != -EAGAIN)
			rf_http_close(s->http);
		return;
	}
	s->tick.off = off || !watch;
	s->cur = rf_tick_watch(&s->tick, &svc_tick_ops, s, 0, &start, &end,
			       deadline, false, &tick);
	s->tick.off = off;
	s->t_ns = tick ? tick : start + (end - start) / 2;
}

/* ------------------------------------------------------------ the nodes */

/* Node n's meter (its conf with the poller's documents) and services. */
static int _node(rf_poller_t *p, poll_node_t *n, const rf_poller_node_t *c,
		 char *err, size_t len)
{
	rf_fetcher_t docs = { _doc, p };
	rf_meter_conf_t mc = c->meter;
	char items[RF_MAX_PROBES][RF_URI_MAX];
	size_t k = mc.source_uri ? rf_uri_list_split(mc.source_uri, items) : 0;
	long s;

	_copy(n->name, sizeof(n->name), c->name);
	if ((s = _svc_add(p, mc.base, &mc)) < 0)
		goto bad;
	n->svc[n->n_svc++] = (size_t) s;
	for (size_t i = 0; i < k; i++) {
		size_t j = 0;

		if (items[i][0] == '/')
			continue;	/* on base */
		if ((s = _svc_add(p, items[i], &mc)) < 0)
			goto bad;
		while (j < n->n_svc && n->svc[j] != (size_t) s)
			j++;
		if (j == n->n_svc)	/* each of its services once */
			n->svc[n->n_svc++] = (size_t) s;
	}
	mc.docs = &docs;
	if (!(n->meter = rf_meter_create(&mc)))
		return -ENOMEM;
	n->latest.rc = -EAGAIN;
	snprintf(n->latest.why, sizeof(n->latest.why), "node %s: no round "
		 "yet (the poller just started)", n->name);
	return 0;
bad:
	if (s == -EINVAL)
		snprintf(err, len, "node %s: %s: not a URL of a Redfish "
			 "service (https://HOST[:PORT]/...)", n->name,
			 n->n_svc ? mc.source_uri : mc.base);
	return (int) s;
}

/* Discovery for the nodes that have no source yet (each service's
 * documents read once for all of them). */
static void _discover(rf_poller_t *p)
{
	for (size_t i = 0; i < p->n_svcs; i++)
		p->svcs[i].disc_rc = 0;
	p->discovering = true;
	for (size_t i = 0; i < p->n_nodes; i++) {
		poll_node_t *n = &p->nodes[i];

		if (rf_meter_discovered(n->meter))
			continue;
		p->deadline_ns = se_mono_ns() + p->timeout_ns;
		if (rf_meter_ops.open(n->meter, p->deadline_ns))
			continue;	/* said in the log, tried next round */
		for (size_t k = 0; k < n->n_svc; k++)
			p->svcs[n->svc[k]].stale = true;
	}
	p->discovering = false;
	_disc_free(p);
}

/* Node n's reading from this round's documents, kept as its latest. */
static void _node_reading(rf_poller_t *p, poll_node_t *n)
{
	meter_reading_t r = { 0 };
	char why[1024] = "", msg[512] = "";	/* cut to the wire's room */
	uint64_t t_sum = 0;
	size_t read = 0;
	int rc = 0;

	/* its services read this round (base may hold none of its docs) */
	for (size_t k = 0; k < n->n_svc && !rc; k++) {
		const poll_svc_t *s = &p->svcs[n->svc[k]];

		if (!s->n_gets)
			continue;
		if ((rc = s->rc))
			snprintf(why, sizeof(why), "node %s: %s", n->name,
				 s->why);
		t_sum += s->t_ns;
		read++;
	}
	if (!rc && !rf_meter_discovered(n->meter)) {
		rc = -EAGAIN;
		snprintf(why, sizeof(why), "node %s: no source yet on %s "
			 "(the poller's log says why)", n->name,
			 p->svcs[n->svc[0]].base);
	} else if (!rc) {
		rc = rf_meter_read_at(n->meter, read ? t_sum / read :
				      se_mono_ns(), &r, msg,
				      sizeof(msg));
		if (rc)
			snprintf(why, sizeof(why), "node %s: %s", n->name,
				 msg);
		if (rc == -ENODEV)	/* a 404: its source found again */
			for (size_t k = 0; k < n->n_svc; k++)
				p->svcs[n->svc[k]].stale = true;
	}
	pthread_mutex_lock(&p->lock);
	pdu_poll_latest_set(&n->latest, p->rounds, rc, &r, why);
	pthread_mutex_unlock(&p->lock);
}

/* ----------------------------------------------------- public functions */

int rf_poller_create(const rf_poller_config_t *cfg, rf_poller_t **out,
		     char *err, size_t err_len)
{
	rf_poller_t *p = calloc(1, sizeof(*p));
	int rc = -ENOMEM;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	p->period_ns = cfg->period_ns;
	p->timeout_ns = cfg->n_nodes ? cfg->nodes[0].meter.timeout_ns : 0;
	p->budget_rl = (se_ratelimit_t) SE_RATELIMIT_INIT(POLL_LOG_NS, 1);
	_copy(p->map_path, sizeof(p->map_path),
	      cfg->map_path ? cfg->map_path : "the map");
	if (!(p->nodes = calloc(cfg->n_nodes ? cfg->n_nodes : 1,
				sizeof(*p->nodes))))
		goto fail;
	for (size_t i = 0; i < cfg->n_nodes; i++) {
		for (size_t j = 0; j < i; j++)
			if (!strcmp(cfg->nodes[i].name, cfg->nodes[j].name)) {
				snprintf(err, err_len, "node %s: twice in %s",
					 cfg->nodes[i].name, p->map_path);
				rc = -EINVAL;
				goto fail;
			}
		p->n_nodes = i + 1;
		if ((rc = _node(p, &p->nodes[i], &cfg->nodes[i], err,
				err_len)))
			goto fail;
	}
	for (size_t i = 0; i < p->n_svcs; i++)
		p->svcs[i].tick.off = !cfg->tick_watch;
	*out = p;
	return 0;
fail:
	rf_poller_destroy(p);
	return rc;
}

void rf_poller_destroy(rf_poller_t *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_nodes; i++)
		rf_meter_destroy(p->nodes[i].meter);
	for (size_t i = 0; i < p->n_svcs; i++) {
		_gets_free(&p->svcs[i]);
		rf_http_destroy(p->svcs[i].http);	/* session deleted */
	}
	_disc_free(p);
	free(p->svcs);
	free(p->nodes);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* The services of this round (all, or the early ones) read one after the
 * other; the number that failed. */
static unsigned _read_services(rf_poller_t *p, bool early_only)
{
	uint64_t t0 = se_mono_ns();
	unsigned failed = 0, unwatched = 0;

	for (size_t i = 0; i < p->n_svcs; i++) {
		poll_svc_t *s = &p->svcs[i];
		/* the services are read one after the other: past half the
		 * period, the rest are stamped at their GETs' middle */
		bool watch = se_mono_ns() - t0 < p->period_ns / 2;

		if (early_only && !s->early)
			continue;
		if (s->stale && _relist(p, i))
			se_log_limited(&s->rl, se_mono_ns(), SE_LOG_ERROR,
				       "%s: more than %d documents a round: "
				       "some nodes not read", s->base,
				       POLL_MAX_GETS);
		if (!s->n_gets)
			continue;
		unwatched += !watch && !s->tick.off;
		_poll_svc(p, s, watch);
		if (s->rc) {
			failed++;
			se_log_limited(&s->rl, se_mono_ns(), SE_LOG_ERROR,
				       "%s", s->why);
		}
	}
	if (unwatched)
		se_log_limited(&p->budget_rl, se_mono_ns(), SE_LOG_INFO,
			       "%u Redfish services read past half the "
			       "period: stamped at their GETs, not their "
			       "ticks (split the map among pollers)",
			       unwatched);
	p->failed += failed;
	p->unwatched += unwatched;
	return failed;
}

unsigned rf_poller_round(rf_poller_t *p)
{
	unsigned failed;

	_discover(p);
	failed = _read_services(p, false);
	p->rounds++;
	for (size_t i = 0; i < p->n_nodes; i++)
		_node_reading(p, &p->nodes[i]);
	/* every node has a newer reading now: no early round owed */
	pthread_mutex_lock(&p->lock);
	for (size_t i = 0; i < p->n_nodes; i++)
		p->nodes[i].wanted = false;
	p->wanted = false;
	pthread_mutex_unlock(&p->lock);
	return failed;
}

bool rf_poller_wanted(rf_poller_t *p)
{
	return pdu_poll_wanted(&p->lock, &p->wanted);
}

/* The wanted nodes' services due for an early read marked (a node whose
 * services are not all due stays wanted): whether any is. */
static bool _mark_early(rf_poller_t *p, bool *take)
{
	uint64_t now = se_mono_ns();
	bool any = false;

	pthread_mutex_lock(&p->lock);
	p->wanted = false;
	for (size_t i = 0; i < p->n_nodes; i++) {
		poll_node_t *n = &p->nodes[i];
		bool due = n->wanted && rf_meter_discovered(n->meter);

		for (size_t k = 0; due && k < n->n_svc; k++)
			due = now - p->svcs[n->svc[k]].start_ns >=
			      POLL_EARLY_GAP_NS;
		take[i] = pdu_poll_take(&n->wanted, due, &p->wanted);
		for (size_t k = 0; due && k < n->n_svc; k++)
			p->svcs[n->svc[k]].early = any = true;
	}
	pthread_mutex_unlock(&p->lock);
	return any;
}

unsigned rf_poller_round_wanted(rf_poller_t *p)
{
	bool *take = calloc(p->n_nodes ? p->n_nodes : 1, sizeof(*take));
	unsigned failed = 0;

	if (!take)
		return 0;
	if (_mark_early(p, take)) {
		failed = _read_services(p, true);
		p->rounds++;
		p->early++;
		for (size_t i = 0; i < p->n_nodes; i++)
			if (take[i])
				_node_reading(p, &p->nodes[i]);
		for (size_t i = 0; i < p->n_svcs; i++)
			p->svcs[i].early = false;
	}
	free(take);
	return failed;
}

int rf_poller_answer(rf_poller_t *p, const char *node, uint64_t now_ns,
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
			 "node %s: no line of %s names it", node,
			 p->map_path);
		return -ENOENT;
	}
	pthread_mutex_lock(&p->lock);
	/* asked again for the reading it has: a newer one is wanted (the
	 * node's sampler kicked at a step's boundary) */
	if (pdu_poll_asked_again(&n->latest, &n->answered))
		n->wanted = p->wanted = true;
	/* each Redfish reading brings its counter's spec */
	pdu_poll_answer_from(out, &n->latest, NULL, now_ns);
	pthread_mutex_unlock(&p->lock);
	return 0;
}

void rf_poller_stats(const rf_poller_t *p, rf_poller_stats_t *s)
{
	memset(s, 0, sizeof(*s));
	s->services = p->n_svcs;
	s->nodes = p->n_nodes;
	for (size_t i = 0; i < p->n_svcs; i++) {
		s->gets_a_round += p->svcs[i].n_gets;
		s->requests += rf_http_requests(p->svcs[i].http);
	}
	s->rounds = p->rounds;
	s->failed = p->failed;
	s->unwatched = p->unwatched;
	s->early = p->early;
}
