/*
 * rf_meter.c - the Redfish meter behind meter_ops_t (rf_meter.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rf_meter.h"
#include "rf_tick.h"
#include "se_log.h"
#include "se_time.h"

#define RF_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define RF_LOG_BURST		3
#define RF_MAX_DOCS		(2 * RF_MAX_PROBES)
/* Documents discovery keeps between attempts (a chassis, its sensors) */
#define RF_DISC_CACHE		(RF_MAX_MEMBERS + 32)
/* The BMC's sensing ticks: rf_tick.h says how a read watches for them. */

/* A document discovery read: kept until discovery is over, so that an
 * attempt cut by its deadline (a BMC answering in 3 s) is resumed by the
 * next open, not begun again. */
typedef struct {
	char *uri;
	json_object *doc;	/* NULL: the resource is absent (404) */
} rf_cached_t;

/* A service named by a URL in EnergyBMCRedfishSource (a node's second
 * PDU): its own connection and session, the same credentials. */
typedef struct {
	char base[RF_URI_MAX];		/* "https://pdu2:443" */
	rf_http_t *http;
} rf_service_t;

/* One round of GETs: the source's values and when they were read. */
typedef struct {
	bool has_power, has_energy;
	rf_value_t pv, ev;
	uint64_t start_ns, end_ns;
} rf_round_t;

struct rf_meter {
	rf_http_t *http;		/* base's; NULL with docs */
	rf_fetcher_t docs;		/* the poller's documents (fetch NULL:
					 * HTTP) */
	rf_service_t others[RF_MAX_PROBES];
	size_t n_others;
	char *base, *user, *chassis, *source_uri, *ca_file;
	bool tls_verify;
	rf_auth_t auth;
	rf_pick_t pick;
	uint64_t max_power_mw;
	uint64_t deadline_ns;		/* of the call in progress */
	se_ratelimit_t rl;

	bool discovered;
	rf_cached_t cache[RF_DISC_CACHE];
	size_t n_cached;
	rf_source_t src;
	char describe[512];

	/* the counter's last reading */
	bool have_prev;
	double prev_value;
	char prev_reset[RF_RESET_TIMES_MAX];
	uint64_t prev_t_ns;
	unsigned decimals;		/* finest seen: the counter's step */
	uint64_t derived_mw;		/* the counter's own power */

	rf_tick_t tick;			/* the BMC's sensing ticks */
	rf_round_t slots[RF_TICK_SLOTS];	/* the rounds a watch makes */
	unsigned long rounds;
};

static int _open(void *dev, uint64_t deadline_ns);
static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len);
static void _close(void *dev);

const meter_ops_t rf_meter_ops = {
	.name = "redfish",
	.open = _open,
	.read = _read,
	.close = _close,
};

static int _dup(char **dst, const char *src)
{
	*dst = NULL;
	return !src || (*dst = strdup(src)) ? 0 : -1;
}

/* The other service whose "https://host:port" is uri's first blen
 * characters, or NULL (base's, or a path). */
static rf_service_t *_other(rf_meter_t *m, const char *uri, size_t blen)
{
	size_t i;

	for (i = 0; blen && i < m->n_others; i++)
		if (strlen(m->others[i].base) == blen &&
		    !strncmp(m->others[i].base, uri, blen))
			return &m->others[i];
	return NULL;
}

/* The services other than base that the source list names by URL, each
 * with a client made now (the password is not kept here).  A list
 * discovery refuses gets none: it is never read. */
static int _make_others(rf_meter_t *m, const rf_http_conf_t *hc,
			const char *list)
{
	char items[RF_MAX_PROBES][RF_URI_MAX];
	rf_http_conf_t oc = *hc;
	size_t n = list ? rf_uri_list_split(list, items) : 0, i;

	for (i = 0; i < n; i++) {
		const char *path = rf_uri_path(items[i]);
		size_t blen = path - items[i];
		rf_service_t *o = &m->others[m->n_others];

		if (!blen || *path != '/' || _other(m, items[i], blen) ||
		    (blen == strlen(m->base) &&
		     !strncmp(m->base, items[i], blen)))
			continue;
		memcpy(o->base, items[i], blen);
		o->base[blen] = '\0';
		oc.base = o->base;
		if (!(o->http = rf_http_create(&oc)))
			return -1;
		m->n_others++;
	}
	return 0;
}

rf_meter_t *rf_meter_create(const rf_meter_conf_t *conf)
{
	rf_meter_t *m = calloc(1, sizeof(*m));
	rf_http_conf_t hc = {
		.base = conf->base, .user = conf->user,
		.password = conf->password, .ca_file = conf->ca_file,
		.tls_verify = conf->tls_verify, .auth = conf->auth,
		.timeout_ns = conf->timeout_ns,
	};

	if (!m)
		return NULL;
	m->rl = (se_ratelimit_t) SE_RATELIMIT_INIT(RF_LOG_INTERVAL_NS,
						   RF_LOG_BURST);
	m->tls_verify = conf->tls_verify;
	m->auth = conf->auth;
	m->pick = conf->pick;
	m->max_power_mw = conf->max_power_mw;
	if (conf->docs) {	/* the poller reads: no client here */
		m->docs = *conf->docs;
		m->tick.off = true;
		if (_dup(&m->base, conf->base) ||
		    _dup(&m->user, conf->user) ||
		    _dup(&m->chassis, conf->chassis) ||
		    _dup(&m->source_uri, conf->source_uri) ||
		    _dup(&m->ca_file, conf->ca_file)) {
			rf_meter_destroy(m);
			errno = ENOMEM;
			return NULL;
		}
		return m;
	}
	if (!(m->http = rf_http_create(&hc)) ||
	    _dup(&m->base, conf->base) || _dup(&m->user, conf->user) ||
	    _dup(&m->chassis, conf->chassis) ||
	    _dup(&m->source_uri, conf->source_uri) ||
	    _dup(&m->ca_file, conf->ca_file) ||
	    _make_others(m, &hc, conf->source_uri)) {
		rf_meter_destroy(m);
		errno = ENOMEM;
		return NULL;
	}
	return m;
}

static void _cache_free(rf_meter_t *m)
{
	size_t i;

	for (i = 0; i < m->n_cached; i++) {
		free(m->cache[i].uri);
		json_object_put(m->cache[i].doc);
	}
	m->n_cached = 0;
}

void rf_meter_destroy(rf_meter_t *m)
{
	size_t i;

	if (!m)
		return;
	_cache_free(m);
	rf_http_destroy(m->http);
	for (i = 0; i < m->n_others; i++)
		rf_http_destroy(m->others[i].http);
	free(m->base);
	free(m->user);
	free(m->chassis);
	free(m->source_uri);
	free(m->ca_file);
	free(m);
}

void rf_meter_describe(const rf_meter_t *m, char *buf, size_t len)
{
	snprintf(buf, len, "redfish %s as %s (%s, TLS %s%s)", m->base,
		 m->user ? m->user : "<no user>",
		 !m->user ? "no authentication" :
		 m->auth == RF_AUTH_BASIC ? "basic auth" : "session",
		 !strncmp(m->base, "http://", 7) ? "off: plain HTTP" :
		 !m->tls_verify ? "NOT verified (EnergyBMCTLSVerify=no)" :
		 m->ca_file ? "verified against " : "verified against the system's CAs",
		 m->tls_verify && m->ca_file &&
		 strncmp(m->base, "http://", 7) ? m->ca_file : "");
}

const char *rf_meter_source(const rf_meter_t *m)
{
	return m->discovered ? m->describe : "";
}

/* count summed over every service's client: base's and the others' */
static unsigned long _sum_clients(const rf_meter_t *m,
				  unsigned long (*count)(const rf_http_t *))
{
	unsigned long n = m->http ? count(m->http) : 0;
	size_t i;

	for (i = 0; i < m->n_others; i++)
		n += count(m->others[i].http);
	return n;
}

unsigned long rf_meter_requests(const rf_meter_t *m)
{
	return _sum_clients(m, rf_http_requests);
}

unsigned long rf_meter_logins(const rf_meter_t *m)
{
	return _sum_clients(m, rf_http_logins);
}

unsigned long rf_meter_rounds(const rf_meter_t *m)
{
	return m->rounds;
}

void rf_meter_set_tick_sync(rf_meter_t *m, bool on)
{
	m->tick.off = !on;
}

/* uri as an absolute URL: a path on base, or a URL as written. */
static void _url(const rf_meter_t *m, const char *uri, char *url,
		 size_t len)
{
	snprintf(url, len, "%s%s", uri[0] == '/' ? m->base : "", uri);
}

/* GET uri, a path on base or a URL of another service of the list (or
 * ask the poller's documents for it). */
static int _get(rf_meter_t *m, const char *uri, uint64_t deadline_ns,
		json_object **doc, char *msg, size_t msg_len)
{
	const char *path = rf_uri_path(uri);
	rf_service_t *o = _other(m, uri, path - uri);

	if (m->docs.fetch) {
		char url[RF_URL_MAX];

		(void) deadline_ns;	/* the poller's round has its own */
		_url(m, uri, url, sizeof(url));
		return m->docs.fetch(m->docs.arg, url, doc, msg, msg_len);
	}

	return rf_http_get(o ? o->http : m->http, path, deadline_ns, doc, msg,
			   msg_len);
}

/* ------------------------------------------------------------ discovery */

static void _cache_put(rf_meter_t *m, const char *uri, json_object *doc)
{
	rf_cached_t *c = &m->cache[m->n_cached];

	if (m->n_cached == RF_DISC_CACHE || !(c->uri = strdup(uri)))
		return;
	c->doc = json_object_get(doc);
	m->n_cached++;
}

/* rf_fetch_fn for discovery: from the cache, else GET (and keep). */
static int _fetch(void *arg, const char *uri, json_object **doc, char *msg,
		  size_t msg_len)
{
	rf_meter_t *m = arg;
	size_t i;
	int rc;

	for (i = 0; i < m->n_cached; i++)
		if (!strcmp(m->cache[i].uri, uri)) {
			*doc = json_object_get(m->cache[i].doc);
			if (*doc)
				return 0;
			snprintf(msg, msg_len, "GET %s%s: HTTP 404", m->base,
				 uri);
			return -ENOENT;
		}
	rc = _get(m, uri, m->deadline_ns, doc, msg, msg_len);
	if (!rc || rc == -ENOENT)
		_cache_put(m, uri, rc ? NULL : *doc);
	return rc;
}

static int _open(void *dev, uint64_t deadline_ns)
{
	rf_meter_t *m = dev;
	rf_fetcher_t f = { _fetch, m };
	char msg[512];
	int rc;

	if (m->discovered)
		return 0;	/* the session is made by the first GET */
	m->deadline_ns = deadline_ns;
	rc = rf_discover(&f, m->chassis, m->pick, m->source_uri, &m->src,
			 msg, sizeof(msg));
	if (rc) {
		se_log_limited(&m->rl, se_mono_ns(), SE_LOG_ERROR,
			       "Redfish %s: no source yet (%zu documents read, kept for the next attempt): %s",
			       m->base, m->n_cached, msg);
		if (rc == -ENOENT || rc == -EINVAL)	/* the answer itself */
			_cache_free(m);
		return rc;
	}
	_cache_free(m);		/* the readings GET their own */
	m->discovered = true;
	m->have_prev = false;
	rf_source_describe(&m->src, m->describe, sizeof(m->describe));
	se_log(SE_LOG_INFO, "Redfish %s: energy and power read from %s%s%s",
	       m->base,
	       m->describe, m->src.notes[0] ? "; passed over: " : "",
	       m->src.notes);
	return 0;
}

/* ------------------------------------------------------------ reading */

/* The counter's own average power since its last reading (mW). */
static void _derive_power(rf_meter_t *m, double value, uint64_t now)
{
	double j_per = m->src.energy.q == RF_Q_KWH ? 3.6e6 :
		       m->src.energy.q == RF_Q_WH ? 3.6e3 : 1.0;

	if (m->have_prev && now > m->prev_t_ns && value >= m->prev_value)
		m->derived_mw = (uint64_t) llround(
			(value - m->prev_value) * j_per * 1e12 /
			(double) (now - m->prev_t_ns));
}

/*
 * The counter part of a reading: raw and spec, or, when it restarted, no
 * counter (and power, read or the counter's own, so that the accumulator
 * fills the interval).
 */
static int _counter(rf_meter_t *m, const rf_value_t *v, meter_reading_t *out,
		    char *msg, size_t msg_len)
{
	uint64_t now = out->t_ns;
	bool restarted = m->have_prev &&
		rf_counter_restarted(m->prev_value, m->prev_reset, v->value,
				     v->reset_time);
	int rc;

	if (v->decimals > m->decimals)
		m->decimals = v->decimals;
	if (restarted) {
		se_log_limited(&m->rl, now, SE_LOG_INFO,
			       "Redfish %s: %s restarted (%.6g to %.6g%s%s): the interval is filled from power",
			       m->base, m->src.energy.what, m->prev_value,
			       v->value, v->reset_time[0] ?
			       ", SensorResetTime " : "", v->reset_time);
		if (!out->has_power) {
			out->has_power = m->derived_mw > 0;
			out->power_mw = m->derived_mw;
		}
	} else {
		_derive_power(m, v->value, now);
		rc = rf_counter_raw(m->src.energy.q, v->value, m->decimals,
				    &out->counter_raw, &out->counter_spec);
		/* a sum of counters (outlets, supplies), each truncating by
		 * its own step, lags by up to one step each */
		out->counter_spec.registers = (unsigned) m->src.energy.n;
		if (rc) {
			snprintf(msg, msg_len, "%s: %s %.6g out of range",
				 m->src.energy.probes[0].uri,
				 m->src.energy.what, v->value);
			return -EAGAIN;
		}
		out->has_counter = true;
	}
	m->have_prev = true;
	m->prev_value = v->value;
	m->prev_t_ns = now;
	snprintf(m->prev_reset, sizeof(m->prev_reset), "%s", v->reset_time);
	if (!out->has_power && !out->has_counter) {
		snprintf(msg, msg_len,
			 "%s: %s restarted before its power was known",
			 m->src.energy.probes[0].uri, m->src.energy.what);
		return -EAGAIN;
	}
	return 0;
}

static int _power(rf_meter_t *m, const rf_value_t *v, meter_reading_t *out,
		  char *msg, size_t msg_len)
{
	if (!(v->value >= 0) || v->value > 1e9) {
		snprintf(msg, msg_len, "%s: %s of %g W", m->src.power.what,
			 m->src.power.probes[0].uri, v->value);
		return -EAGAIN;
	}
	out->power_mw = (uint64_t) llround(v->value * 1000.0);
	if (m->max_power_mw && out->power_mw > m->max_power_mw) {
		snprintf(msg, msg_len,
			 "%s: %.3f W is above EnergyBMCMaxWatts=%llu: reading dropped",
			 m->src.power.probes[0].uri, v->value,
			 (unsigned long long) (m->max_power_mw / 1000));
		return -EAGAIN;
	}
	out->has_power = true;
	return 0;
}

/* GET every document of the source: a batch's collection once for all
 * its members, the others one by one. */
static int _get_docs(rf_meter_t *m, const char *uris[], json_object *docs[],
		     size_t n, uint64_t deadline_ns, char *msg,
		     size_t msg_len)
{
	json_object *colls[RF_MAX_PROBES] = { NULL };
	size_t i;
	int b, rc = 0;

	for (i = 0; !rc && i < n; i++) {
		b = rf_source_batch_of(&m->src, uris[i]);
		if (b < 0) {
			rc = _get(m, uris[i], deadline_ns, &docs[i], msg,
				  msg_len);
			continue;
		}
		if (!colls[b] &&
		    (rc = _get(m, m->src.batches[b].uri, deadline_ns,
			       &colls[b], msg, msg_len)))
			continue;
		docs[i] = json_object_get(rf_batch_member(colls[b], uris[i]));
		if (!docs[i]) {
			snprintf(msg, msg_len, "%s: %s not in it, expanded",
				 m->src.batches[b].uri, uris[i]);
			rc = -EAGAIN;
		}
	}
	for (i = 0; i < RF_MAX_PROBES; i++)
		json_object_put(colls[i]);
	if (rc == -ENOENT) {	/* gone: find the source again */
		m->discovered = false;
		return -ENODEV;
	}
	return rc;
}

/* One round: every document of the source, read into r.  0 or -errno
 * (-EAGAIN: a value missing; -ENODEV: the source is gone). */
static int _round(rf_meter_t *m, rf_round_t *r, uint64_t deadline_ns,
		  char *msg, size_t msg_len)
{
	const char *uris[RF_MAX_DOCS];
	json_object *docs[RF_MAX_DOCS] = { NULL };
	size_t n, i;
	int rc;

	memset(r, 0, sizeof(*r));
	m->rounds++;
	n = rf_source_uris(&m->src, uris, RF_MAX_DOCS);
	r->start_ns = se_mono_ns();
	rc = _get_docs(m, uris, docs, n, deadline_ns, msg, msg_len);
	r->end_ns = se_mono_ns();
	if (!rc && m->src.has_power) {
		rc = rf_series_read(&m->src.power, uris, docs, n, &r->pv,
				    msg, msg_len);
		r->has_power = !rc;
	}
	if (!rc && m->src.has_energy) {
		rc = rf_series_read(&m->src.energy, uris, docs, n, &r->ev,
				    msg, msg_len);
		r->has_energy = !rc;
	}
	if (rc == -ENODATA)
		rc = -EAGAIN;
	for (i = 0; i < n; i++)
		json_object_put(docs[i]);
	return rc;
}

static bool _round_changed(const rf_round_t *a, const rf_round_t *b)
{
	return (a->has_power && a->pv.value != b->pv.value) ||
	       (a->has_energy && a->ev.value != b->ev.value) ||
	       strcmp(a->ev.reset_time, b->ev.reset_time);
}

/* rf_tick_ops_t over the meter's own rounds */
static int _tick_round(void *ctx, int slot, uint64_t deadline_ns,
		       uint64_t *start_ns, uint64_t *end_ns)
{
	rf_meter_t *m = ctx;
	rf_round_t *r = &m->slots[slot];
	char msg[256];
	int rc = _round(m, r, deadline_ns, msg, sizeof(msg));

	*start_ns = r->start_ns;
	*end_ns = r->end_ns;
	return rc;
}

static bool _tick_changed(void *ctx, int a, int b)
{
	rf_meter_t *m = ctx;

	return _round_changed(&m->slots[a], &m->slots[b]);
}

static const rf_tick_ops_t tick_ops = { _tick_round, _tick_changed };

/*
 * Watch the source until its reading changes (rf_tick.h): *r becomes the
 * first round with the new values and *tick_ns the instant between it and
 * the round before (0: no change seen in the budget, *r the last good
 * round).  Several services (a node's two PDUs) take a round more after a
 * change.
 */
static void _sync_to_tick(rf_meter_t *m, rf_round_t *r, uint64_t deadline_ns,
			  uint64_t *tick_ns)
{
	int got;

	m->slots[0] = *r;
	got = rf_tick_watch(&m->tick, &tick_ops, m, 0, &r->start_ns,
			    &r->end_ns, deadline_ns, m->n_others > 0,
			    tick_ns);
	*r = m->slots[got];
}

static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len)
{
	rf_meter_t *m = dev;
	rf_round_t r;
	uint64_t tick = 0;
	int rc;

	if (!m->discovered)
		return -ENODEV;
	rc = _round(m, &r, deadline_ns, msg, msg_len);
	if (rc)
		return rc;
	_sync_to_tick(m, &r, deadline_ns, &tick);
	out->t_ns = tick ? tick : r.start_ns + (r.end_ns - r.start_ns) / 2;
	if (r.has_power)
		rc = _power(m, &r.pv, out, msg, msg_len);
	if (!rc && r.has_energy)
		rc = _counter(m, &r.ev, out, msg, msg_len);
	return rc;
}

bool rf_meter_discovered(const rf_meter_t *m)
{
	return m->discovered;
}

size_t rf_meter_urls(const rf_meter_t *m, char (*urls)[RF_URL_MAX],
		     size_t max)
{
	const char *uris[RF_MAX_DOCS];
	size_t n, i, k, got = 0;

	if (!m->discovered)
		return 0;
	n = rf_source_uris(&m->src, uris, RF_MAX_DOCS);
	for (i = 0; i < n && got < max; i++) {
		int b = rf_source_batch_of(&m->src, uris[i]);
		char url[RF_URL_MAX];

		_url(m, b < 0 ? uris[i] : m->src.batches[b].uri, url,
		     sizeof(url));
		for (k = 0; k < got && strcmp(urls[k], url); k++)
			;
		if (k == got)
			snprintf(urls[got++], RF_URL_MAX, "%s", url);
	}
	return got;
}

int rf_meter_read_at(rf_meter_t *m, uint64_t t_ns, meter_reading_t *out,
		     char *msg, size_t msg_len)
{
	rf_round_t r;
	int rc;

	if (!m->discovered)
		return -ENODEV;
	if ((rc = _round(m, &r, 0, msg, msg_len)))
		return rc;
	out->t_ns = t_ns;
	if (r.has_power)
		rc = _power(m, &r.pv, out, msg, msg_len);
	if (!rc && r.has_energy)
		rc = _counter(m, &r.ev, out, msg, msg_len);
	return rc;
}

static void _close(void *dev)
{
	rf_meter_t *m = dev;
	size_t i;

	if (!m->http)
		return;
	rf_http_close(m->http);
	for (i = 0; i < m->n_others; i++)
		rf_http_close(m->others[i].http);
}
