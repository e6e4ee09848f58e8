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
#include "se_log.h"
#include "se_time.h"

#define RF_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define RF_LOG_BURST		3
#define RF_MAX_DOCS		(2 * RF_MAX_PROBES)
/* Documents discovery keeps between attempts (a chassis, its sensors) */
#define RF_DISC_CACHE		(RF_MAX_MEMBERS + 32)
/*
 * The BMC's sensing ticks.  A BMC refreshes its readings once a
 * SensingInterval and answers from that cache: a reading is up to one
 * interval old when read, and EnvironmentMetrics and Outlets say nothing
 * of when it was taken (no ReadingTime; a BMC's clock is not the node's
 * anyway).  So a read watches for the reading to change: the tick lies
 * between the last GET that saw the old values and the first that saw the
 * new ones, and the reading is stamped there.  GETs are a fiftieth of the
 * interval apart (at least RF_SYNC_PACE_NS), so a tick is known to a few
 * ms and a read costs some 25-40 GETs whatever the interval; the interval is
 * learned from two changes in a row on the first reads.  No prediction of
 * the next tick: a BMC's clock drifts from the node's, a tick seen does
 * not.  Watching stops after an interval and a quarter, at RF_SYNC_MAX_NS,
 * or at the read's deadline, and is not tried when a round of GETs takes
 * over half the interval (a 3 s BMC) or the readings stand still (a flat
 * power with a kWh counter: 10 reads in a row with no change seen, then
 * tried again one read in 20; a loaded host misses a few): the reading is
 * then stamped at its GET's midpoint, as before, up to one interval late.
 */
#define RF_SYNC_MAX_NS		(1500 * SE_NS_PER_MS)
#define RF_SYNC_MAX_GETS	1000
#define RF_SYNC_PACE_NS		(2 * SE_NS_PER_MS)	/* GETs apart, at least */
#define RF_SYNC_LEARN_PACE_NS	(10 * SE_NS_PER_MS)	/* 150 GETs at most */
#define RF_SYNC_GUARD_NS	(10 * SE_NS_PER_MS)	/* headroom to the limit */

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

struct rf_meter {
	rf_http_t *http;		/* base's */
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

	/* the BMC's sensing ticks (RF_SYNC_MAX_NS) */
	uint64_t sense_ns;		/* their interval; 0: not learned */
	unsigned sync_misses;		/* reads in a row with no tick seen */
	unsigned learn_fails;		/* reads that saw one tick, not two */
	unsigned learn_reads;		/* reads while the interval is unknown */
	bool no_tick_sync;
	unsigned long rounds;
};

/* One round of GETs: the source's values and when they were read. */
typedef struct {
	bool has_power, has_energy;
	rf_value_t pv, ev;
	uint64_t start_ns, end_ns;
} rf_round_t;

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
	unsigned long n = count(m->http);
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
	m->no_tick_sync = !on;
}

/* GET uri, a path on base or a URL of another service of the list. */
static int _get(rf_meter_t *m, const char *uri, uint64_t deadline_ns,
		json_object **doc, char *msg, size_t msg_len)
{
	const char *path = rf_uri_path(uri);
	rf_service_t *o = _other(m, uri, path - uri);

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

/*
 * Watch the source until its reading changes (RF_SYNC_MAX_NS): *cur
 * becomes the first round with the new values and *tick_ns the instant
 * between it and the round before (0: no change seen in the budget, *cur
 * the last good round).
 */
static void _sync_to_tick(rf_meter_t *m, rf_round_t *cur, uint64_t deadline_ns,
			  uint64_t *tick_ns)
{
	uint64_t get_ns = cur->end_ns - cur->start_ns;
	uint64_t limit = cur->end_ns + RF_SYNC_MAX_NS;
	rf_round_t prev, next;
	char msg[256];
	unsigned gets = 0;
	uint64_t tick;
	/* a tick to a fiftieth of the interval, a few ms: some 25-40 GETs a
	 * read on average, whatever the interval */
	uint64_t pace = !m->sense_ns ? RF_SYNC_LEARN_PACE_NS :
			m->sense_ns / 50 > RF_SYNC_PACE_NS ?
			m->sense_ns / 50 : RF_SYNC_PACE_NS;

	*tick_ns = 0;
	if (m->no_tick_sync)
		return;
	if (deadline_ns < limit)
		limit = deadline_ns;
	/* too slow to bracket a tick to a small part of an interval (a
	 * bracket of half an interval is still better than a midpoint) */
	if (m->sense_ns && get_ns > m->sense_ns / 2)
		return;
	/* readings that stand still, or change too seldom for the interval
	 * to be learned (a flat power, a kWh counter alone): tried again on
	 * one read in 20, not watched for RF_SYNC_MAX_NS on every read */
	if (m->sync_misses >= 10 && m->sync_misses % 20)
		goto missed;
	if (!m->sense_ns && ++m->learn_reads > 3 && m->learn_reads % 20)
		return;
	/* an interval and a bit: a reading that does not change (flat
	 * power, a kWh counter between steps) is not watched for longer */
	if (m->sense_ns && cur->end_ns + m->sense_ns + m->sense_ns / 4 +
			   2 * get_ns < limit)
		limit = cur->end_ns + m->sense_ns + m->sense_ns / 4 + 2 * get_ns;
	prev = *cur;
	for (;;) {
		/* a few ms apart: as fine as a tick needs, light on the BMC;
		 * the wait counts against the limit as the rounds do */
		uint64_t now = se_mono_ns();
		uint64_t at = prev.start_ns + pace > now ?
			      prev.start_ns + pace : now;

		if (gets++ >= RF_SYNC_MAX_GETS ||
		    at + 2 * get_ns + RF_SYNC_GUARD_NS >= limit)
			break;
		if (at > now)
			se_sleep_ns(at - now);
		if (_round(m, &next, deadline_ns, msg, sizeof(msg)))
			break;
		if (next.end_ns - next.start_ns > get_ns)
			get_ns = next.end_ns - next.start_ns;
		if (!_round_changed(&prev, &next)) {
			prev = next;
			continue;
		}
		/* the BMC looked at its cache when each request arrived */
		tick = prev.start_ns + (next.start_ns - prev.start_ns) / 2;
		/* a second change in this watch: the interval, two ticks in
		 * a row (it bounds how long and how finely a read watches;
		 * the stamp comes from the tick seen) */
		if (*tick_ns && !m->sense_ns)
			m->sense_ns = tick - *tick_ns;
		*tick_ns = tick;
		*cur = next;
		/* several services (a node's two PDUs), read one after the
		 * other: the change may be the last one's alone; a round more
		 * reads every one after the tick (services that tick
		 * together; independent ones: acct_gather_energy_bmc(5)) */
		if (m->n_others && !_round(m, &next, deadline_ns, msg,
					   sizeof(msg)))
			*cur = next;
		if (m->sense_ns || m->learn_fails >= 3)
			break;
		/* the interval: watch for a second change, from the last
		 * good round (not a failed extra one's zeroed values) */
		prev = *cur;
	}
	if (*tick_ns) {
		m->sync_misses = 0;
		m->learn_fails += !m->sense_ns;
		return;
	}
	*cur = prev;
missed:
	m->sync_misses++;
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

static void _close(void *dev)
{
	rf_meter_t *m = dev;
	size_t i;

	rf_http_close(m->http);
	for (i = 0; i < m->n_others; i++)
		rf_http_close(m->others[i].http);
}
