/*
 * freq_policy.c - reading energy_policy.conf (see freq_policy.h and
 * energy_policy.conf(5)).  Its keys are rows (conf_desc.h) in two tables:
 * a global line's over freq_policy_t, a Rule=NAME line's over freq_rule_t
 * (MaxSlowdown and BudgetCeiling are in both, each over its own field).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_desc.h"
#include "freq_policy.h"

/* ------------------------------------------------------- private types */

typedef struct {
	freq_policy_t *p;
	freq_rule_t *r;		/* the rule being read, NULL on a global line */
} ctx_t;

/* ---------------------------------------------------- private variables */

static const char *const gov_names[] = {
	"conservative", "ondemand", "performance", "powersave", "userspace",
	"schedutil", NULL
};

static const char *const policy_names[] = {
	"none", "performance", "min_energy", "min_time", NULL
};

/* ------------------------------------------------------ public helpers */

int freq_parse_khz(const char *s, uint32_t *khz)
{
	char *end;
	double v, mult = 1.0;

	if (!s || !*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !isfinite(v) || v <= 0)
		return -EINVAL;
	if (!*end || !strcasecmp(end, "kHz"))
		mult = 1.0;
	else if (!strcasecmp(end, "MHz"))
		mult = 1e3;
	else if (!strcasecmp(end, "GHz"))
		mult = 1e6;
	else
		return -EINVAL;
	v *= mult;
	if (v < 1 || v > 4e9 || fabs(v - llround(v)) > 1e-6)
		return -EINVAL;
	*khz = (uint32_t) llround(v);
	return 0;
}

unsigned freq_gov_from_name(const char *s)
{
	for (int i = 0; s && gov_names[i]; i++)
		if (!strcasecmp(s, gov_names[i]))
			return 1u << i;
	return 0;
}

const char *freq_gov_name(unsigned gov)
{
	for (int i = 0; gov_names[i]; i++)
		if (gov == (1u << i))
			return gov_names[i];
	return "?";
}

const char *freq_govs_str(unsigned mask, char *buf, size_t len)
{
	size_t o = 0;

	if (len)
		buf[0] = '\0';
	for (int i = 0; gov_names[i]; i++) {
		if (!(mask & (1u << i)))
			continue;
		int n = snprintf(buf + o, len > o ? len - o : 0, "%s%s",
				 o ? "," : "", gov_names[i]);
		if (n < 0 || (size_t) n >= (len > o ? len - o : 0))
			break;
		o += (size_t) n;
	}
	return buf;
}

int freq_policy_kind_from_name(const char *s, freq_policy_kind_t *out)
{
	for (int i = 0; s && policy_names[i]; i++)
		if (!strcasecmp(s, policy_names[i])) {
			*out = (freq_policy_kind_t) i;
			return 0;
		}
	return -EINVAL;
}

const char *freq_policy_kind_name(freq_policy_kind_t k)
{
	if ((int) k < 0 || k >= FREQ_POLICY_COUNT)
		return "?";
	return policy_names[k];
}

double freq_rule_max_slowdown(const freq_policy_t *p, const freq_rule_t *r)
{
	return (r && r->has_max_slowdown) ? r->max_slowdown : p->max_slowdown;
}

/* ------------------------------------------------------ value parsers */

static int _err(const conf_where_t *w, const char *v, char *err,
		size_t err_len, const char *why)
{
	return conf_fail(w, v, err, err_len, -EINVAL, "%s", why);
}

/* se_conf_convert_fn: a frequency into a uint32_t of kHz. */
static int _khz(void *field, const conf_where_t *w, const char *v,
		char *err, size_t err_len)
{
	if (freq_parse_khz(v, field))
		return _err(w, v, err, err_len,
			    "not a frequency (kHz, or a number with kHz/MHz/GHz)");
	return 0;
}

/* se_conf_convert_fn: "5" and "5%" both mean 5 %, kept as 0.05. */
static int _percent(void *field, const conf_where_t *w, const char *v,
		    char *err, size_t err_len)
{
	char buf[64];
	size_t n = strlen(v);
	double d;

	if (n && n < sizeof(buf) && v[n - 1] == '%') {
		memcpy(buf, v, n - 1);
		buf[n - 1] = '\0';
	} else {
		snprintf(buf, sizeof(buf), "%s", v);
	}
	if (conf_double(w, buf, 0, 1000, &d, err, err_len))
		return _err(w, v, err, err_len,
			    "not a percentage between 0 and 1000");
	*(double *) field = d / 100.0;
	return 0;
}

/* se_conf_convert_fn: one governor's name into its FREQ_GOV_* bit. */
static int _gov(void *field, const conf_where_t *w, const char *v,
		char *err, size_t err_len)
{
	unsigned g = freq_gov_from_name(v);

	if (!g)
		return _err(w, v, err, err_len,
			    "must be one of: conservative, ondemand, "
			    "performance, powersave, userspace, schedutil");
	*(unsigned *) field = g;
	return 0;
}

/* se_conf_convert_fn: a comma list of governors ("*": all) into a mask. */
static int _govs(void *field, const conf_where_t *w, const char *v,
		 char *err, size_t err_len)
{
	char *dup = strdup(v), *save = NULL, *tok, why[200];
	unsigned mask = 0, g;
	int rc = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok && !rc;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "*"))
			mask = FREQ_GOV_ALL;
		else if (!(g = freq_gov_from_name(tok))) {
			/* the whole value, and the item that is wrong */
			snprintf(why, sizeof(why),
				 "'%s' is not a governor (known: conservative, ondemand, performance, powersave, userspace, schedutil)",
				 tok);
			rc = _err(w, v, err, err_len, why);
		} else
			mask |= g;
	}
	free(dup);
	if (!rc && !mask)
		rc = _err(w, v, err, err_len, "empty list");
	if (!rc)
		*(unsigned *) field = mask;
	return rc;
}

/* se_conf_check_fn: a comma list of names, or "*". */
static int _names(const conf_where_t *w, const char *v, char *err,
		  size_t err_len)
{
	if (!*v || strchr(v, ' ') || strstr(v, ",,") || v[0] == ',' ||
	    v[strlen(v) - 1] == ',')
		return _err(w, v, err, err_len,
			    "expected a comma list of names, or *");
	return 0;
}

static int _cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

	return (x > y) - (x < y);
}

/* Frequencies=: the list, ascending, no frequency twice. */
static int _freqs(void *conf, const conf_where_t *w, const char *v,
		  char *err, size_t err_len)
{
	freq_policy_t *p = conf;
	char *dup = strdup(v), *save = NULL, *tok, why[160];
	uint32_t khz[FREQ_MAX_LIST];
	size_t n = 0;
	int rc = 0;

	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == FREQ_MAX_LIST) {
			rc = _err(w, v, err, err_len, "too many frequencies");
			break;
		}
		if (freq_parse_khz(tok, &khz[n])) {
			/* the whole value, and the item that is wrong */
			snprintf(why, sizeof(why),
				 "'%s' is not a frequency (kHz, or a number with kHz/MHz/GHz)",
				 tok);
			rc = _err(w, v, err, err_len, why);
			break;
		}
		n++;
	}
	free(dup);
	if (!rc && !n)
		rc = _err(w, v, err, err_len, "empty list");
	if (rc)
		return rc;	/* the list it had stays */
	qsort(khz, n, sizeof(uint32_t), _cmp_u32);
	/* a frequency twice is a typo, and kept it made highm1 (the
	 * second highest) resolve to the highest (found by tests/fuzz) */
	for (size_t i = 1; i < n; i++)
		if (khz[i] == khz[i - 1]) {
			snprintf(why, sizeof(why), "%u kHz listed twice",
				 khz[i]);
			return _err(w, v, err, err_len, why);
		}
	memcpy(p->freqs_khz, khz, n * sizeof(khz[0]));
	p->n_freqs = n;
	return 0;
}

/* A rule's Policy=: the kind, and that the rule has one. */
static int _rule_policy(void *conf, const conf_where_t *w, const char *v,
			char *err, size_t err_len)
{
	freq_rule_t *r = conf;
	int i, rc = conf_enum(w, v, policy_names, &i, err, err_len);

	if (!rc) {
		r->policy = (freq_policy_kind_t) i;
		r->has_policy = true;
	}
	return rc;
}

/* A rule's MaxSlowdown=: the fraction, and that the rule has one. */
static int _rule_slowdown(void *conf, const conf_where_t *w, const char *v,
			  char *err, size_t err_len)
{
	freq_rule_t *r = conf;
	int rc = _percent(&r->max_slowdown, w, v, err, err_len);

	if (!rc)
		r->has_max_slowdown = true;
	return rc;
}

/* DefaultFreq=: a frequency, or low, medium, high, highm1. */
static int _rule_default_freq(void *conf, const conf_where_t *w,
			      const char *v, char *err, size_t err_len)
{
	static const char *const kw[] = { "low", "medium", "high", "highm1",
					  NULL };
	freq_rule_t *r = conf;

	for (int i = 0; kw[i]; i++)
		if (!strcasecmp(v, kw[i])) {
			r->default_kw = (freq_kw_t) (FREQ_KW_LOW + i);
			r->default_khz = 0;
			return 0;
		}
	r->default_kw = FREQ_KW_NONE;
	if (freq_parse_khz(v, &r->default_khz))
		return _err(w, v, err, err_len,
			    "not a frequency (kHz, a number with kHz/MHz/GHz, "
			    "or low, medium, high, highm1)");
	return 0;
}

/* ---------------------------------------------------------- the keys */

static const char *const oor_names[] = { "reject", "clamp", NULL };

/* The keys of a global line, over freq_policy_t. */
static const se_conf_key_t global_keys[] = {
	SE_KEY_ENUM("DefaultPolicy", freq_policy_t, default_policy,
		    policy_names),
	SE_KEY_CUSTOM("MaxSlowdown", freq_policy_t, max_slowdown, double,
		      _percent),
	SE_KEY_CUSTOM("EnergyTolerance", freq_policy_t, energy_tolerance,
		      double, _percent),
	SE_KEY_UINT("MinHistoryFrequencies", freq_policy_t,
		    min_history_freqs, 1, FREQ_MAX_LIST),
	SE_KEY_PATH("HistoryFile", freq_policy_t, history_file, NULL, NULL),
	SE_KEY_REAL("PowerBudget", freq_policy_t, power_budget_w, 0, 1e12),
	SE_KEY_CUSTOM("BudgetCeiling", freq_policy_t, budget_ceiling_khz,
		      uint32_t, _khz),
	SE_KEY_FN("Frequencies", _freqs, NULL),
};

/* The keys of a Rule=NAME line, over freq_rule_t. */
static const se_conf_key_t rule_keys[] = {
	SE_KEY_FN("Policy", _rule_policy, NULL),
	SE_KEY_FN("MaxSlowdown", _rule_slowdown, NULL),
	SE_KEY_CUSTOM("BudgetCeiling", freq_rule_t, budget_ceiling_khz,
		      uint32_t, _khz),
	SE_KEY_STR("Partition", freq_rule_t, partitions, _names, NULL),
	SE_KEY_STR("QOS", freq_rule_t, qos, _names, NULL),
	SE_KEY_STR("Account", freq_rule_t, accounts, _names, NULL),
	SE_KEY_STR("User", freq_rule_t, users, _names, NULL),
	SE_KEY_FN("DefaultFreq", _rule_default_freq, NULL),
	SE_KEY_CUSTOM("DefaultGovernor", freq_rule_t, default_gov, unsigned,
		      _gov),
	SE_KEY_CUSTOM("AllowedMin", freq_rule_t, allowed_min_khz, uint32_t,
		      _khz),
	SE_KEY_CUSTOM("AllowedMax", freq_rule_t, allowed_max_khz, uint32_t,
		      _khz),
	SE_KEY_CUSTOM("AllowedGovernors", freq_rule_t, allowed_govs,
		      unsigned, _govs),
	SE_KEY_ENUM("OutOfRange", freq_rule_t, out_of_range, oor_names),
	SE_KEY_REAL("EnergyCap", freq_rule_t, energy_cap_j, 0, 1e15),
	SE_KEY_REAL("PowerCap", freq_rule_t, power_cap_w, 0, 1e12),
};

#define N_GLOBAL_KEYS	(sizeof(global_keys) / sizeof(global_keys[0]))
#define N_RULE_KEYS	(sizeof(rule_keys) / sizeof(rule_keys[0]))

static const se_conf_key_t *_row(const se_conf_key_t *keys, size_t n,
				 const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (!strcasecmp(keys[i].name, key))
			return &keys[i];
	return NULL;
}

/* ------------------------------------------------------ public functions */

const char *freq_policy_key(size_t i, bool *in_rule, bool *global)
{
	const se_conf_key_t *k;

	/* the global keys, then the rule keys not already named */
	if (i < N_GLOBAL_KEYS) {
		k = &global_keys[i];
	} else {
		size_t j;

		i -= N_GLOBAL_KEYS;
		for (j = 0; j < N_RULE_KEYS; j++) {
			if (_row(global_keys, N_GLOBAL_KEYS,
				 rule_keys[j].name))
				continue;
			if (!i--)
				break;
		}
		if (j == N_RULE_KEYS)
			return NULL;
		k = &rule_keys[j];
	}
	if (in_rule)
		*in_rule = _row(rule_keys, N_RULE_KEYS, k->name) != NULL;
	if (global)
		*global = _row(global_keys, N_GLOBAL_KEYS, k->name) != NULL;
	return k->name;
}

void freq_policy_init(freq_policy_t *p)
{
	memset(p, 0, sizeof(*p));
	p->default_policy = FREQ_POLICY_NONE;
	p->max_slowdown = 0.05;
	p->energy_tolerance = 0.02;
	p->min_history_freqs = 2;
}

static void _rule_free(freq_rule_t *r)
{
	free(r->name);
	free(r->partitions);
	free(r->qos);
	free(r->accounts);
	free(r->users);
}

void freq_policy_free(freq_policy_t *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		_rule_free(&p->rules[i]);
	free(p->rules);
	free(p->path);
	free(p->history_file);
	freq_policy_init(p);
}

static int _line(void *arg, const char *path, unsigned line,
		 const conf_pair_t *pairs, size_t n_pairs, char *err,
		 size_t err_len)
{
	ctx_t *c = arg;
	size_t first = 0;
	int rc;

	c->r = NULL;
	if (n_pairs && !strcasecmp(pairs[0].key, "Rule")) {
		freq_rule_t *nr = realloc(c->p->rules, (c->p->n_rules + 1) *
					  sizeof(*nr));
		conf_where_t w = { path, "Rule", line };

		if (!nr)
			return -ENOMEM;
		c->p->rules = nr;
		c->r = &nr[c->p->n_rules];
		memset(c->r, 0, sizeof(*c->r));
		c->r->line = line;
		c->r->allowed_govs = FREQ_GOV_ALL;
		if (!*pairs[0].value)
			return _err(&w, "", err, err_len, "a rule needs a name");
		for (size_t i = 0; i < c->p->n_rules; i++)
			if (!strcmp(c->p->rules[i].name, pairs[0].value))
				return _err(&w, pairs[0].value, err, err_len,
					    "rule name used twice");
		c->p->n_rules++;
		if ((rc = conf_set_str(&c->r->name, pairs[0].value)))
			return rc;
		first = 1;
	}
	for (size_t i = first; i < n_pairs; i++) {
		conf_where_t w = { path, pairs[i].key, line };
		const se_conf_key_t *k = c->r ?
			_row(rule_keys, N_RULE_KEYS, pairs[i].key) :
			_row(global_keys, N_GLOBAL_KEYS, pairs[i].key);

		if (!strcasecmp(pairs[i].key, "Rule"))
			return _err(&w, pairs[i].value, err, err_len,
				    "Rule= must come first on its line");
		if (!k && (_row(rule_keys, N_RULE_KEYS, pairs[i].key) ||
			   _row(global_keys, N_GLOBAL_KEYS, pairs[i].key)))
			return _err(&w, pairs[i].value, err, err_len,
				    c->r ? "not valid in a Rule line" :
				    "only valid in a Rule=NAME line");
		if (!k)
			return _err(&w, pairs[i].value, err, err_len,
				    "unknown key");
		w.key = k->name;
		if ((rc = se_conf_key_parse(k, c->r ? (void *) c->r :
					    (void *) c->p, &w,
					    pairs[i].value, err, err_len)))
			return rc;
	}
	if (c->r) {
		conf_where_t w = { path, "AllowedMin", line };
		freq_rule_t *r = c->r;
		char v[64];

		if (r->allowed_min_khz && r->allowed_max_khz &&
		    r->allowed_min_khz > r->allowed_max_khz) {
			snprintf(v, sizeof(v), "%u", r->allowed_min_khz);
			return _err(&w, v, err, err_len,
				    "greater than AllowedMax");
		}
		w.key = "DefaultFreq";
		snprintf(v, sizeof(v), "%u", r->default_khz);
		if (r->default_khz &&
		    ((r->allowed_min_khz && r->default_khz < r->allowed_min_khz) ||
		     (r->allowed_max_khz && r->default_khz > r->allowed_max_khz)))
			return _err(&w, v, err, err_len,
				    "outside AllowedMin..AllowedMax");
		w.key = "DefaultGovernor";
		if (r->default_gov && !(r->default_gov & r->allowed_govs))
			return _err(&w, freq_gov_name(r->default_gov), err,
				    err_len, "not in AllowedGovernors");
	}
	return 0;
}

int freq_policy_load(freq_policy_t *p, const char *path, char *err,
		     size_t err_len)
{
	ctx_t c = { .p = p };

	free(p->path);
	if (!(p->path = strdup(path)))
		return -ENOMEM;
	return conf_read_pairs_file(path, _line, &c, err, err_len);
}

int freq_policy_check_file(const char *path, char *err, size_t err_len)
{
	freq_policy_t p;
	int rc;

	freq_policy_init(&p);
	rc = freq_policy_load(&p, path, err, err_len);
	freq_policy_free(&p);
	return rc;
}

/* Is name in the comma list (NULL or "*" matches anything)? */
static bool _in_list(const char *list, const char *name)
{
	return !list || conf_in_list(list, "*") ||
	       (name && conf_in_list(list, name));
}

const freq_rule_t *freq_policy_match(const freq_policy_t *p,
				     const char *partition, const char *qos,
				     const char *account, const char *user)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const freq_rule_t *r = &p->rules[i];

		if (_in_list(r->partitions, partition) &&
		    _in_list(r->qos, qos) && _in_list(r->accounts, account) &&
		    _in_list(r->users, user))
			return r;
	}
	return NULL;
}
