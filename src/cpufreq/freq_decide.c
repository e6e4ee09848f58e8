/*
 * freq_decide.c - rules, policies and the power budget for one job (see
 * freq_decide.h for the order in which they apply).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "freq_decide.h"
#include "freq_model.h"

#define MAX_RUNS 4096

/* ---------------------------------------------------- private functions */

/* Append "; "-separated text to out->msg. */
static void _say(freq_decision_t *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void _say(freq_decision_t *out, const char *fmt, ...)
{
	size_t o = strlen(out->msg);
	va_list ap;

	if (o && o + 2 < sizeof(out->msg)) {
		memcpy(out->msg + o, "; ", 3);
		o += 2;
	}
	if (o >= sizeof(out->msg) - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(out->msg + o, sizeof(out->msg) - o, fmt, ap);
	va_end(ap);
}

static bool _has_req(const freq_request_t *r)
{
	return r->min_khz || r->max_khz || r->min_kw || r->max_kw || r->gov;
}

/* A keyword as kHz from the Frequencies= list (as Slurm resolves it on a
 * node with those frequencies); 0 when the list is not configured. */
static uint32_t _kw_khz(const freq_policy_t *p, freq_kw_t kw)
{
	size_t n = p->n_freqs;

	if (!n)
		return 0;
	switch (kw) {
	case FREQ_KW_LOW:
		return p->freqs_khz[0];
	case FREQ_KW_MEDIUM:
		return p->freqs_khz[(n - 1) / 2];
	case FREQ_KW_HIGH:
		return p->freqs_khz[n - 1];
	case FREQ_KW_HIGHM1:
		return p->freqs_khz[n > 1 ? n - 2 : 0];
	default:
		return 0;
	}
}

static uint32_t _eff(const freq_policy_t *p, uint32_t khz, freq_kw_t kw)
{
	return kw ? _kw_khz(p, kw) : khz;
}

static const char *_kw_name(freq_kw_t kw)
{
	static const char *const n[] = { "", "low", "medium", "high",
					 "highm1" };

	return ((unsigned) kw < 5) ? n[kw] : "?";
}

static void _range_str(const freq_rule_t *r, char *buf, size_t len)
{
	char g[128];

	if (r->allowed_min_khz && r->allowed_max_khz)
		snprintf(buf, len, "%u-%u kHz", r->allowed_min_khz,
			 r->allowed_max_khz);
	else if (r->allowed_min_khz)
		snprintf(buf, len, "%u kHz and above", r->allowed_min_khz);
	else if (r->allowed_max_khz)
		snprintf(buf, len, "up to %u kHz", r->allowed_max_khz);
	else
		snprintf(buf, len, "any frequency");
	if (r->allowed_govs != FREQ_GOV_ALL) {
		size_t o = strlen(buf);

		snprintf(buf + o, len - o, ", governors %s",
			 freq_govs_str(r->allowed_govs, g, sizeof(g)));
	}
}

/* Is one frequency (kHz, or keyword resolved) inside the rule's range? */
static bool _in_range(const freq_policy_t *p, const freq_rule_t *r,
		      uint32_t khz, freq_kw_t kw)
{
	uint32_t f = _eff(p, khz, kw);

	if (!khz && !kw)
		return true;
	if (!f)		/* a keyword we cannot resolve: the node decides */
		return true;
	return !((r->allowed_min_khz && f < r->allowed_min_khz) ||
		 (r->allowed_max_khz && f > r->allowed_max_khz));
}

static void _clamp_one(const freq_policy_t *p, const freq_rule_t *r,
		       uint32_t *khz, freq_kw_t *kw)
{
	uint32_t f = _eff(p, *khz, *kw);

	if (!f)
		return;
	if (r->allowed_min_khz && f < r->allowed_min_khz)
		f = r->allowed_min_khz;
	if (r->allowed_max_khz && f > r->allowed_max_khz)
		f = r->allowed_max_khz;
	*khz = f;
	*kw = FREQ_KW_NONE;
}

/* The rule's default request (may be empty). */
static void _rule_default(const freq_rule_t *r, freq_request_t *q)
{
	memset(q, 0, sizeof(*q));
	q->max_khz = r->default_khz;
	q->max_kw = r->default_kw;
	q->gov = r->default_gov;
	/* a governor with a frequency: Slurm wants min-max:gov */
	if (q->gov && (q->max_khz || q->max_kw)) {
		q->min_khz = q->max_khz;
		q->min_kw = q->max_kw;
	}
}

/* Step 2: an explicit request.  Returns 0, or 1 when rejected. */
static int _check_request(const freq_policy_t *p, const freq_rule_t *r,
			  const freq_request_t *req, freq_decision_t *out)
{
	bool ok_min = _in_range(p, r, req->min_khz, req->min_kw);
	bool ok_max = _in_range(p, r, req->max_khz, req->max_kw);
	bool ok_gov = !req->gov || (req->gov & r->allowed_govs);
	char rs[192], qs[96];

	out->req = *req;
	if (ok_min && ok_max && ok_gov)
		return 0;
	_range_str(r, rs, sizeof(rs));
	freq_request_str(req, qs, sizeof(qs));
	if (r->out_of_range == FREQ_OOR_REJECT) {
		out->action = FREQ_DECIDE_REJECT;
		_say(out, "energy_policy: --cpu-freq=%s is not allowed here: "
		     "rule '%s' allows %s", qs, r->name ? r->name : "-", rs);
		return 1;
	}
	_clamp_one(p, r, &out->req.min_khz, &out->req.min_kw);
	_clamp_one(p, r, &out->req.max_khz, &out->req.max_kw);
	if (!ok_gov) {
		out->req.gov = (r->default_gov & r->allowed_govs) ?
			r->default_gov : 0;
		if (!out->req.gov && !out->req.max_khz && !out->req.max_kw)
			_rule_default(r, &out->req);
	}
	{
		char ns[96];

		_say(out, "energy_policy: --cpu-freq=%s clamped to %s "
		     "(rule '%s' allows %s)", qs,
		     freq_request_str(&out->req, ns, sizeof(ns)),
		     r->name ? r->name : "-", rs);
	}
	return 0;
}

/* Step 3: no request. */
static int _apply_policy(const freq_policy_t *p, const freq_history_t *hist,
			 const freq_rule_t *r, const freq_job_t *job,
			 freq_decision_t *out)
{
	freq_model_params_t prm = { 0 };
	freq_run_t *runs = NULL;
	freq_choice_t ch;
	size_t n = 0;
	int rc;

	out->policy = r->has_policy ? r->policy : p->default_policy;
	if (job->policy_name && *job->policy_name &&
	    freq_policy_kind_from_name(job->policy_name, &out->policy)) {
		out->action = FREQ_DECIDE_REJECT;
		_say(out, "energy_policy: --energy-policy=%s: must be one of: "
		     "none, performance, min_energy, min_time",
		     job->policy_name);
		return -EINVAL;
	}
	_rule_default(r, &out->req);
	switch (out->policy) {
	case FREQ_POLICY_NONE:
		return 0;
	case FREQ_POLICY_PERFORMANCE:
		memset(&out->req, 0, sizeof(out->req));
		if (r->allowed_max_khz)
			out->req.max_khz = r->allowed_max_khz;
		else if (r->allowed_govs & FREQ_GOV_PERFORMANCE)
			out->req.gov = FREQ_GOV_PERFORMANCE;
		else
			out->req.max_kw = FREQ_KW_HIGH;
		return 0;
	default:
		break;
	}
	freq_history_key(job->user, job->tag, job->job_name, out->key,
			 sizeof(out->key));
	if (hist && hist->n) {
		size_t max = hist->n < MAX_RUNS ? hist->n : MAX_RUNS;

		if (!(runs = malloc(max * sizeof(*runs))))
			return -ENOMEM;
		n = freq_history_runs(hist, out->key, runs, max);
	}
	prm.max_slowdown = freq_rule_max_slowdown(p, r);
	prm.energy_tolerance = p->energy_tolerance;
	prm.energy_cap_j = r->energy_cap_j;
	prm.power_cap_w = r->power_cap_w;
	prm.min_khz = r->allowed_min_khz;
	prm.max_khz = r->allowed_max_khz;
	prm.min_freqs = p->min_history_freqs;
	if (out->policy == FREQ_POLICY_MIN_ENERGY)
		rc = freq_model_min_energy(runs, n, &prm, &ch);
	else
		rc = freq_model_min_time(runs, n, &prm, &ch);
	free(runs);
	if (rc) {
		char qs[96];

		_say(out, "energy_policy: %s: too little history for %s "
		     "(%zu runs; need %u frequencies): running at %s, "
		     "this run is recorded",
		     freq_policy_kind_name(out->policy), out->key, n,
		     prm.min_freqs, _has_req(&out->req) ?
		     freq_request_str(&out->req, qs, sizeof(qs)) :
		     "the node's default");
		return 0;
	}
	memset(&out->req, 0, sizeof(out->req));
	out->req.max_khz = ch.khz;
	if (ch.status == FREQ_CHOICE_CAP_UNMET)
		_say(out, "energy_policy: min_time: no frequency meets the "
		     "cap; %u kHz has the least power", ch.khz);
	_say(out, "energy_policy: %s chose %u kHz for %s (predicted %.1f s, "
	     "%.0f J)", freq_policy_kind_name(out->policy), ch.khz, out->key,
	     ch.time_s, ch.energy_j);
	return 0;
}

/* Step 4: the power budget. */
static void _apply_budget(const freq_policy_t *p, const freq_rule_t *r,
			  const freq_job_t *job, freq_decision_t *out)
{
	uint32_t ceil = r->budget_ceiling_khz ? r->budget_ceiling_khz :
		p->budget_ceiling_khz;
	freq_request_t *q = &out->req;
	uint32_t fmax, fmin;

	if (p->power_budget_w <= 0 || job->measured_w <= p->power_budget_w ||
	    !ceil)
		return;
	out->over_budget = true;
	fmax = _eff(p, q->max_khz, q->max_kw);
	fmin = _eff(p, q->min_khz, q->min_kw);
	if ((q->max_khz || q->max_kw) && fmax && fmax <= ceil)
		return;		/* already below the ceiling */
	if (q->gov && !(q->max_khz || q->max_kw)) {
		/* a governor alone: bound it by min-ceiling:gov */
		q->min_khz = p->n_freqs ? p->freqs_khz[0] : ceil;
		q->min_kw = FREQ_KW_NONE;
	}
	q->max_khz = ceil;
	q->max_kw = FREQ_KW_NONE;
	fmin = _eff(p, q->min_khz, q->min_kw);
	if ((q->min_khz || q->min_kw) && (!fmin || fmin > ceil)) {
		q->min_khz = ceil;
		q->min_kw = FREQ_KW_NONE;
	}
	if (q->min_khz > ceil)
		q->min_khz = ceil;
	_say(out, "energy_policy: cluster power %.0f W is above the budget "
	     "%.0f W: frequency ceiling %u kHz for new jobs",
	     job->measured_w, p->power_budget_w, ceil);
}

/* ------------------------------------------------------ public functions */

const char *freq_request_str(const freq_request_t *r, char *buf, size_t len)
{
	char a[24] = "", b[24] = "";

	if (r->min_kw)
		snprintf(a, sizeof(a), "%s", _kw_name(r->min_kw));
	else if (r->min_khz)
		snprintf(a, sizeof(a), "%u", r->min_khz);
	if (r->max_kw)
		snprintf(b, sizeof(b), "%s", _kw_name(r->max_kw));
	else if (r->max_khz)
		snprintf(b, sizeof(b), "%u", r->max_khz);
	if (*a && *b)
		snprintf(buf, len, "%s-%s%s%s", a, b, r->gov ? ":" : "",
			 r->gov ? freq_gov_name(r->gov) : "");
	else if (*a || *b)
		snprintf(buf, len, "%s%s%s", *b ? b : a, r->gov ? ":" : "",
			 r->gov ? freq_gov_name(r->gov) : "");
	else if (r->gov)
		snprintf(buf, len, "%s", freq_gov_name(r->gov));
	else
		snprintf(buf, len, "(none)");
	return buf;
}

int freq_decide(const freq_policy_t *p, const freq_history_t *hist,
		const freq_job_t *job, freq_decision_t *out)
{
	static const freq_rule_t open_rule = { .name = NULL,
					       .allowed_govs = FREQ_GOV_ALL };
	const freq_rule_t *r;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	r = freq_policy_match(p, job->partition, job->qos, job->account,
			      job->user);
	out->rule = r;
	if (!r)
		r = &open_rule;
	if (_has_req(&job->req)) {
		if (_check_request(p, r, &job->req, out))
			return 0;
	} else if ((rc = _apply_policy(p, hist, r, job, out))) {
		return rc;
	}
	_apply_budget(p, r, job, out);
	if (memcmp(&out->req, &job->req, sizeof(out->req)))
		out->action = FREQ_DECIDE_SET;
	return 0;
}
