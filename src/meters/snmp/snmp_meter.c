/*
 * snmp_meter.c - a node's PDU outlets over SNMP behind meter_ops_t
 * (snmp_meter.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counter.h"
#include "snmp_meter.h"
#include "se_log.h"
#include "se_time.h"

/* ------------------------------------------------------- private types */

/* One PDU of this node: its session and the OIDs of one GET. */
typedef struct {
	snmp_pdu_t cfg;
	void *ctx;			/* the transport's session; NULL: closed */
	snmp_oid_t *oids;		/* power and energy of its outlets */
	snmp_value_t *vals;
	size_t n_oids;
} pdu_state_t;

/* One outlet: where its values are in its PDU's GET, its counter. */
typedef struct {
	snmp_outlet_t cfg;
	size_t power_at, energy_at;	/* into its PDU's oids */
	bool has_energy;
	bool have_prev;			/* of the counter below */
	uint64_t prev_raw, prev_t_ns;
} outlet_state_t;

struct snmp_meter {
	char node[SNMP_NAME_MAX];
	const snmp_transport_t *tp;
	uint64_t timeout_ns;
	pdu_state_t *pdus;
	size_t n_pdus;
	outlet_state_t *outlets;
	size_t n_outlets;
	bool counter;			/* readings carry the summed count */
	double counter_mj;		/* mJ per count (unit x share) */
	uint64_t count;			/* the sum, unwrapped */
	unsigned long requests;
	se_ratelimit_t rl;		/* counter anomalies in the log */
	char label[256];
};

/* -------------------------------------------------- private prototypes */

static int _open(void *dev, uint64_t deadline_ns);
static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len);
static void _close(void *dev);

/* --------------------------------------------------- public variables */

const meter_ops_t snmp_meter_ops = {
	.name = "snmp",
	.open = _open,
	.read = _read,
	.close = _close,
};

/* ---------------------------------------------------- private functions */

/* OID = PREFIX.INDEX[.SUFFIX] into o. */
static int _outlet_oid(const char *prefix, const char *index,
		       const char *suffix, snmp_oid_t *o)
{
	o->len = 0;
	if (snmp_oid_append(o, prefix) || snmp_oid_append(o, index))
		return -EINVAL;
	if (suffix && *suffix && snmp_oid_append(o, suffix))
		return -EINVAL;
	return 0;
}

static int _add_oid(pdu_state_t *p, const char *prefix, const char *index,
		    const char *suffix, size_t *at, char *err, size_t len)
{
	snmp_oid_t *grown = realloc(p->oids, (p->n_oids + 1) *
					     sizeof(*p->oids));

	if (!grown)
		return -ENOMEM;
	p->oids = grown;
	if (_outlet_oid(prefix, index, suffix, &p->oids[p->n_oids])) {
		snprintf(err, len, "PDU %s: outlet %s: OID %s.%s%s%s does not parse",
			 p->cfg.name, index, prefix, index,
			 suffix && *suffix ? "." : "", suffix ? suffix : "");
		return -EINVAL;
	}
	*at = p->n_oids++;
	return 0;
}

/* The summed counter: every outlet counts, in units of the same size. */
static void _choose_path(snmp_meter_t *m)
{
	m->counter = m->n_outlets > 0;
	for (size_t i = 0; i < m->n_outlets; i++) {
		const outlet_state_t *o = &m->outlets[i];
		double mj = o->cfg.model->energy_j * o->cfg.share * 1000.0;

		if (!o->has_energy) {
			m->counter = false;
			return;
		}
		if (i == 0)
			m->counter_mj = mj;
		else if (fabs(mj - m->counter_mj) > 1e-9 * m->counter_mj)
			m->counter = false;
	}
}

static void _make_label(snmp_meter_t *m)
{
	size_t n = 0;

	m->label[0] = '\0';
	for (size_t i = 0; i < m->n_outlets && n < sizeof(m->label); i++) {
		const outlet_state_t *o = &m->outlets[i];

		n += snprintf(m->label + n, sizeof(m->label) - n, "%s%s %s",
			      i ? " + " : "", m->pdus[o->cfg.pdu].cfg.name,
			      o->cfg.index);
	}
}

static int _build(snmp_meter_t *m, const snmp_meter_config_t *cfg,
		  char *err, size_t len)
{
	int rc;

	for (size_t i = 0; i < cfg->n_pdus; i++)
		m->pdus[i].cfg = cfg->pdus[i];
	for (size_t i = 0; i < cfg->n_outlets; i++) {
		outlet_state_t *o = &m->outlets[i];
		const snmp_model_t *md = cfg->outlets[i].model;
		pdu_state_t *p;

		o->cfg = cfg->outlets[i];
		if (o->cfg.pdu >= cfg->n_pdus || !md) {
			snprintf(err, len, "outlet %s: no PDU or model",
				 o->cfg.index);
			return -EINVAL;
		}
		p = &m->pdus[o->cfg.pdu];
		if ((rc = _add_oid(p, md->power_oid, o->cfg.index,
				   md->power_suffix, &o->power_at, err, len)))
			return rc;
		o->has_energy = md->energy_oid != NULL;
		if (o->has_energy &&
		    (rc = _add_oid(p, md->energy_oid, o->cfg.index,
				   md->energy_suffix, &o->energy_at, err,
				   len)))
			return rc;
	}
	for (size_t i = 0; i < cfg->n_pdus; i++) {
		pdu_state_t *p = &m->pdus[i];

		if (!(p->vals = calloc(p->n_oids ? p->n_oids : 1,
				       sizeof(*p->vals))))
			return -ENOMEM;
	}
	_choose_path(m);
	_make_label(m);
	return 0;
}

static uint64_t _min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* "node n1: PDU pdua (10.0.0.5): " before a transport's reason. */
static void _where(const snmp_meter_t *m, const pdu_state_t *p, char *msg,
		   size_t len, const char *why)
{
	snprintf(msg, len, "node %s: PDU %s (%s): %s", m->node, p->cfg.name,
		 p->cfg.host, why);
}

static int _pdu_open(snmp_meter_t *m, pdu_state_t *p, uint64_t deadline_ns,
		     char *msg, size_t len)
{
	snmp_peer_t peer = { p->cfg.name, p->cfg.host, &p->cfg.secret,
			     p->cfg.context };
	char why[512] = "";
	int rc;

	if (p->ctx)
		return 0;
	rc = m->tp->open(&peer, &p->ctx, _min(deadline_ns, se_mono_ns() +
					      m->timeout_ns), why,
			 sizeof(why));
	if (rc) {
		p->ctx = NULL;
		if (msg)
			_where(m, p, msg, len, why);
	}
	return rc;
}

static void _pdu_close(snmp_meter_t *m, pdu_state_t *p)
{
	if (p->ctx)
		m->tp->close(p->ctx);
	p->ctx = NULL;
}

/* One GET for all this node's OIDs on p. */
static int _pdu_get(snmp_meter_t *m, pdu_state_t *p, uint64_t deadline_ns,
		    char *msg, size_t len)
{
	char why[512] = "";
	int rc;

	if (!p->n_oids)
		return 0;
	if ((rc = _pdu_open(m, p, deadline_ns, msg, len)))
		return rc;
	m->requests++;
	rc = m->tp->get(p->ctx, p->oids, p->n_oids, p->vals,
			_min(deadline_ns, se_mono_ns() + m->timeout_ns), why,
			sizeof(why));
	if (rc) {
		_where(m, p, msg, len, why);
		if (rc != -EAGAIN)
			_pdu_close(m, p);
	}
	return rc;
}

/* A value of outlet o checked: 0, or -errno with msg. */
static int _value(const snmp_meter_t *m, const outlet_state_t *o,
		  size_t at, const char *what, char *msg, size_t len)
{
	const pdu_state_t *p = &m->pdus[o->cfg.pdu];
	const snmp_value_t *v = &p->vals[at];
	char oid[SNMP_OID_MAX * 11], why[SNMP_OID_MAX * 11 + 160];

	if (!v->status)
		return 0;
	snmp_oid_format(&p->oids[at], oid, sizeof(oid));
	snprintf(why, sizeof(why), "outlet %s: %s %s: %s", o->cfg.index,
		 what, oid, v->status == -ENOENT ?
		 "no such instance (outlet absent or renumbered? check the map)" :
		 "not a number");
	_where(m, p, msg, len, why);
	return v->status;
}

/* The node's share of outlet o's power, mW. */
static int _outlet_power(const snmp_meter_t *m, const outlet_state_t *o,
			 double *mw, char *msg, size_t len)
{
	const snmp_value_t *v = &m->pdus[o->cfg.pdu].vals[o->power_at];
	double w = (double) v->value * o->cfg.model->power_w;
	char why[128];
	int rc;

	if ((rc = _value(m, o, o->power_at, "power", msg, len)))
		return rc;
	if (v->negative && o->cfg.model->negative_is_absent) {
		/* a failed read, not 0 W: the interval is then filled
		 * from the counter or the next good power */
		snprintf(why, sizeof(why),
			 "outlet %s: power -%.0f: no reading (%s: negative is not available)",
			 o->cfg.index, w, o->cfg.model->mib);
		_where(m, &m->pdus[o->cfg.pdu], msg, len, why);
		return -ENODATA;
	}
	if (v->negative) {
		if (w > SNMP_NEGATIVE_NOISE_W) {
			snprintf(why, sizeof(why), "outlet %s: power -%.0f W",
				 o->cfg.index, w);
			_where(m, &m->pdus[o->cfg.pdu], msg, len, why);
			return -ERANGE;
		}
		w = 0;
	}
	*mw = w * o->cfg.share * 1000.0;
	return 0;
}

/*
 * Outlet o's counter at t_ns: its counted delta in *delta, or false when it
 * went back or jumped (the reading then carries power only).
 */
static bool _outlet_step(snmp_meter_t *m, outlet_state_t *o, uint64_t raw,
			 uint64_t t_ns, uint64_t *delta)
{
	const snmp_model_t *md = o->cfg.model;
	uint64_t max_delta;
	counter_event_t ev;
	bool had = o->have_prev;
	uint64_t prev = o->prev_raw, dt = t_ns - o->prev_t_ns;

	o->have_prev = true;
	o->prev_raw = raw;
	o->prev_t_ns = t_ns;
	*delta = 0;
	if (!had) {
		/* the sum starts at the registers' own sum (for the eye) */
		*delta = raw;
		return true;
	}
	max_delta = counter_max_delta(md->energy_j * 1000.0,
				      (uint64_t) (o->cfg.max_power_w * 1000.0),
				      dt, 1, 1);
	ev = counter_step(prev, raw, md->energy_width, max_delta, delta);
	if (ev == COUNTER_RESET)
		se_log_limited(&m->rl, t_ns, SE_LOG_INFO,
			       "snmp: node %s: PDU %s outlet %s: energy counter went from %llu to %llu in %.1f s (reset, or a jump MaxPower does not allow): this interval is filled from power",
			       m->node, m->pdus[o->cfg.pdu].cfg.name,
			       o->cfg.index, (unsigned long long) prev,
			       (unsigned long long) raw, (double) dt / 1e9);
	return ev != COUNTER_RESET;
}

/* The summed counter into out, unless an outlet restarted. */
static int _counters(snmp_meter_t *m, uint64_t t_ns, meter_reading_t *out,
		     char *msg, size_t len)
{
	uint64_t sum = 0, d;
	bool counted = true;
	int rc;

	for (size_t i = 0; i < m->n_outlets; i++) {
		outlet_state_t *o = &m->outlets[i];
		const snmp_value_t *v = &m->pdus[o->cfg.pdu].vals[o->energy_at];

		if ((rc = _value(m, o, o->energy_at, "energy", msg, len)))
			return rc;
		if (v->negative) {	/* Sentry4: -1, no reading */
			counted = false;
			continue;
		}
		if (!_outlet_step(m, o, v->value, t_ns, &d))
			counted = false;
		sum += d;
	}
	m->count += sum;
	if (!counted)
		return 0;
	out->has_counter = true;
	out->counter_raw = m->count;
	return 0;
}

/* ------------------------------------------------------- the meter ops */

static int _open(void *dev, uint64_t deadline_ns)
{
	snmp_meter_t *m = dev;
	int rc;

	for (size_t i = 0; i < m->n_pdus; i++)
		if (m->pdus[i].n_oids &&
		    (rc = _pdu_open(m, &m->pdus[i], deadline_ns, NULL, 0)))
			return rc;
	return 0;
}

static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len)
{
	snmp_meter_t *m = dev;
	uint64_t t0 = se_mono_ns();
	int rc;

	for (size_t i = 0; i < m->n_pdus; i++)
		if ((rc = _pdu_get(m, &m->pdus[i], deadline_ns, msg,
				   msg_len)))
			return rc;
	/* the instant of the reading: the middle of the GETs */
	return snmp_meter_reading(m, t0 + (se_mono_ns() - t0) / 2, out, msg,
				  msg_len);
}

static void _close(void *dev)
{
	snmp_meter_t *m = dev;

	for (size_t i = 0; i < m->n_pdus; i++)
		_pdu_close(m, &m->pdus[i]);
}

/* ---------------------------------------------------- public functions */

int snmp_meter_create(const snmp_meter_config_t *cfg, snmp_meter_t **out,
		      char *err, size_t err_len)
{
	snmp_meter_t *m;
	int rc;

	*out = NULL;
	if (!cfg->n_outlets || !cfg->n_pdus) {
		snprintf(err, err_len, "node %s: no outlets",
			 cfg->node ? cfg->node : "?");
		return -EINVAL;
	}
	if (!(m = calloc(1, sizeof(*m))) ||
	    !(m->pdus = calloc(cfg->n_pdus, sizeof(*m->pdus))) ||
	    !(m->outlets = calloc(cfg->n_outlets, sizeof(*m->outlets)))) {
		snmp_meter_destroy(m);
		return -ENOMEM;
	}
	snprintf(m->node, sizeof(m->node), "%s", cfg->node ? cfg->node : "?");
	m->tp = cfg->transport ? cfg->transport : &snmp_net_transport;
	m->timeout_ns = cfg->timeout_ns;
	m->rl = (se_ratelimit_t) { .interval_ns = 60 * SE_NS_PER_SEC,
				   .burst = 3 };
	m->n_pdus = cfg->n_pdus;
	m->n_outlets = cfg->n_outlets;
	if ((rc = _build(m, cfg, err, err_len))) {
		snmp_meter_destroy(m);
		return rc;
	}
	*out = m;
	return 0;
}

void snmp_meter_destroy(snmp_meter_t *m)
{
	if (!m)
		return;
	if (m->pdus) {
		_close(m);
		for (size_t i = 0; i < m->n_pdus; i++) {
			free(m->pdus[i].oids);
			free(m->pdus[i].vals);
		}
		/* the secrets leave no copy behind */
		for (size_t i = 0; i < m->n_pdus; i++)
			memset(&m->pdus[i].cfg.secret, 0,
			       sizeof(m->pdus[i].cfg.secret));
	}
	free(m->pdus);
	free(m->outlets);
	free(m);
}

bool snmp_meter_counter_spec(const snmp_meter_t *m, counter_spec_t *spec)
{
	memset(spec, 0, sizeof(*spec));
	if (!m->counter)
		return false;
	spec->width_bits = 64;		/* unwrapped here */
	spec->mj_per_unit = m->counter_mj;
	spec->registers = (unsigned) m->n_outlets;
	return true;
}

double snmp_meter_max_power_w(const snmp_meter_t *m)
{
	double w = 0;

	for (size_t i = 0; i < m->n_outlets; i++)
		w += m->outlets[i].cfg.max_power_w * m->outlets[i].cfg.share;
	return w;
}

const char *snmp_meter_label(const snmp_meter_t *m)
{
	return m->label;
}

unsigned long snmp_meter_requests(const snmp_meter_t *m)
{
	return m->requests;
}

size_t snmp_meter_n_pdus(const snmp_meter_t *m)
{
	return m->n_pdus;
}

const snmp_pdu_t *snmp_meter_pdu(const snmp_meter_t *m, size_t pdu,
				 const snmp_oid_t **oids, size_t *n_oids)
{
	*oids = m->pdus[pdu].oids;
	*n_oids = m->pdus[pdu].n_oids;
	return &m->pdus[pdu].cfg;
}

void snmp_meter_put_values(snmp_meter_t *m, size_t pdu,
			   const snmp_value_t *vals)
{
	memcpy(m->pdus[pdu].vals, vals,
	       m->pdus[pdu].n_oids * sizeof(*vals));
}

int snmp_meter_reading(snmp_meter_t *m, uint64_t t_ns, meter_reading_t *out,
		       char *msg, size_t msg_len)
{
	double mw = 0, one;
	int rc;

	out->t_ns = t_ns;
	for (size_t i = 0; i < m->n_outlets; i++) {
		if ((rc = _outlet_power(m, &m->outlets[i], &one, msg,
					msg_len)))
			return rc;
		mw += one;
	}
	out->has_power = true;
	out->power_mw = (uint64_t) llround(mw);
	if (m->counter)
		return _counters(m, t_ns, out, msg, msg_len);
	return 0;
}

void snmp_meter_describe(const snmp_meter_t *m, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < m->n_outlets && n < len; i++) {
		const outlet_state_t *o = &m->outlets[i];
		const pdu_state_t *p = &m->pdus[o->cfg.pdu];

		n += snprintf(buf + n, len - n,
			      "%sPDU %s (%s, %s, SNMP %s) outlet %s share %g",
			      i ? "; " : "", p->cfg.name, p->cfg.host,
			      o->cfg.model->name,
			      p->cfg.secret.version == SNMP_V3 ? "v3" : "v2c",
			      o->cfg.index, o->cfg.share);
	}
	if (n < len)
		snprintf(buf + n, len - n, m->counter ?
			 ", energy counters (%g J a count, %zu summed) shaped by power" :
			 ", power integrated (no counter on every outlet, or unequal units)",
			 m->counter_mj / 1000.0, m->n_outlets);
}
