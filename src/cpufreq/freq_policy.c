/*
 * freq_policy.c - reading energy_policy.conf (see freq_policy.h and
 * energy_policy.conf(5)).  Table-driven: one entry per key, each with the
 * scope it is valid in (global line, rule line) and its parser.
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
#include "freq_policy.h"

/* ------------------------------------------------------- private types */

enum { SC_GLOBAL = 1, SC_RULE = 2 };

typedef struct {
	freq_policy_t *p;
	freq_rule_t *r;		/* the rule being read, NULL on a global line */
} ctx_t;

typedef int (*set_fn)(ctx_t *c, const conf_where_t *w, const char *v,
		      char *err, size_t err_len);

typedef struct {
	const char *key;
	int scope;
	set_fn set;
} key_def_t;

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

static int _khz(const conf_where_t *w, const char *v, uint32_t *out,
		char *err, size_t err_len)
{
	if (freq_parse_khz(v, out))
		return _err(w, v, err, err_len,
			    "not a frequency (kHz, or a number with kHz/MHz/GHz)");
	return 0;
}

static int _percent(const conf_where_t *w, const char *v, double *out,
		    char *err, size_t err_len)
{
	char buf[64];
	size_t n = strlen(v);
	double d;
	int rc;

	/* "5" and "5%" both mean 5 % */
	if (n && n < sizeof(buf) && v[n - 1] == '%') {
		memcpy(buf, v, n - 1);
		buf[n - 1] = '\0';
	} else {
		snprintf(buf, sizeof(buf), "%s", v);
	}
	if ((rc = conf_double(w, buf, 0, 1000, &d, err, err_len)))
		return _err(w, v, err, err_len,
			    "not a percentage between 0 and 1000");
	*out = d / 100.0;
	return 0;
}

/* ---------------------------------------------------- global settings */

static int _g_policy(ctx_t *c, const conf_where_t *w, const char *v,
		     char *err, size_t err_len)
{
	int i;
	int rc = conf_enum(w, v, policy_names, &i, err, err_len);

	if (!rc) {
		if (c->r) {
			c->r->policy = (freq_policy_kind_t) i;
			c->r->has_policy = true;
		} else {
			c->p->default_policy = (freq_policy_kind_t) i;
		}
	}
	return rc;
}

static int _g_slowdown(ctx_t *c, const conf_where_t *w, const char *v,
		       char *err, size_t err_len)
{
	double d;
	int rc = _percent(w, v, &d, err, err_len);

	if (rc)
		return rc;
	if (c->r) {
		c->r->max_slowdown = d;
		c->r->has_max_slowdown = true;
	} else {
		c->p->max_slowdown = d;
	}
	return 0;
}

static int _g_tolerance(ctx_t *c, const conf_where_t *w, const char *v,
			char *err, size_t err_len)
{
	return _percent(w, v, &c->p->energy_tolerance, err, err_len);
}

static int _g_min_hist(ctx_t *c, const conf_where_t *w, const char *v,
		       char *err, size_t err_len)
{
	uint64_t u;
	int rc = conf_uint(w, v, 1, FREQ_MAX_LIST, &u, err, err_len);

	if (!rc)
		c->p->min_history_freqs = (unsigned) u;
	return rc;
}

static int _g_history(ctx_t *c, const conf_where_t *w, const char *v,
		      char *err, size_t err_len)
{
	int rc = conf_abs_path(w, v, err, err_len);

	return rc ? rc : conf_set_str(&c->p->history_file, v);
}

static int _g_budget(ctx_t *c, const conf_where_t *w, const char *v,
		     char *err, size_t err_len)
{
	return conf_double(w, v, 0, 1e12, &c->p->power_budget_w, err,
			   err_len);
}

static int _g_ceiling(ctx_t *c, const conf_where_t *w, const char *v,
		      char *err, size_t err_len)
{
	return _khz(w, v, c->r ? &c->r->budget_ceiling_khz :
			&c->p->budget_ceiling_khz, err, err_len);
}

static int _cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

	return (x > y) - (x < y);
}

static int _g_freqs(ctx_t *c, const conf_where_t *w, const char *v,
		    char *err, size_t err_len)
{
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
	memcpy(c->p->freqs_khz, khz, n * sizeof(khz[0]));
	c->p->n_freqs = n;
	return 0;
}

/* -------------------------------------------------------- rule settings */

static int _r_match(char **dst, const conf_where_t *w, const char *v,
		    char *err, size_t err_len)
{
	if (!*v || strchr(v, ' ') || strstr(v, ",,") || v[0] == ',' ||
	    v[strlen(v) - 1] == ',')
		return _err(w, v, err, err_len,
			    "expected a comma list of names, or *");
	return conf_set_str(dst, v);
}

static int _r_partition(ctx_t *c, const conf_where_t *w, const char *v,
			char *err, size_t err_len)
{
	return _r_match(&c->r->partitions, w, v, err, err_len);
}

static int _r_qos(ctx_t *c, const conf_where_t *w, const char *v,
		  char *err, size_t err_len)
{
	return _r_match(&c->r->qos, w, v, err, err_len);
}

static int _r_account(ctx_t *c, const conf_where_t *w, const char *v,
		      char *err, size_t err_len)
{
	return _r_match(&c->r->accounts, w, v, err, err_len);
}

static int _r_user(ctx_t *c, const conf_where_t *w, const char *v,
		   char *err, size_t err_len)
{
	return _r_match(&c->r->users, w, v, err, err_len);
}

static int _r_default_freq(ctx_t *c, const conf_where_t *w, const char *v,
			   char *err, size_t err_len)
{
	static const char *const kw[] = { "low", "medium", "high", "highm1",
					  NULL };

	for (int i = 0; kw[i]; i++)
		if (!strcasecmp(v, kw[i])) {
			c->r->default_kw = (freq_kw_t) (FREQ_KW_LOW + i);
			c->r->default_khz = 0;
			return 0;
		}
	c->r->default_kw = FREQ_KW_NONE;
	if (freq_parse_khz(v, &c->r->default_khz))
		return _err(w, v, err, err_len,
			    "not a frequency (kHz, a number with kHz/MHz/GHz, "
			    "or low, medium, high, highm1)");
	return 0;
}

static int _gov(const conf_where_t *w, const char *v, unsigned *out,
		char *err, size_t err_len)
{
	if (!(*out = freq_gov_from_name(v)))
		return _err(w, v, err, err_len,
			    "must be one of: conservative, ondemand, "
			    "performance, powersave, userspace, schedutil");
	return 0;
}

static int _r_default_gov(ctx_t *c, const conf_where_t *w, const char *v,
			  char *err, size_t err_len)
{
	return _gov(w, v, &c->r->default_gov, err, err_len);
}

static int _r_allowed_min(ctx_t *c, const conf_where_t *w, const char *v,
			  char *err, size_t err_len)
{
	return _khz(w, v, &c->r->allowed_min_khz, err, err_len);
}

static int _r_allowed_max(ctx_t *c, const conf_where_t *w, const char *v,
			  char *err, size_t err_len)
{
	return _khz(w, v, &c->r->allowed_max_khz, err, err_len);
}

static int _r_allowed_govs(ctx_t *c, const conf_where_t *w, const char *v,
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
		c->r->allowed_govs = mask;
	return rc;
}

static int _r_oor(ctx_t *c, const conf_where_t *w, const char *v,
		  char *err, size_t err_len)
{
	static const char *const names[] = { "reject", "clamp", NULL };
	int i;
	int rc = conf_enum(w, v, names, &i, err, err_len);

	if (!rc)
		c->r->out_of_range = (freq_oor_t) i;
	return rc;
}

static int _r_energy_cap(ctx_t *c, const conf_where_t *w, const char *v,
			 char *err, size_t err_len)
{
	return conf_double(w, v, 0, 1e15, &c->r->energy_cap_j, err, err_len);
}

static int _r_power_cap(ctx_t *c, const conf_where_t *w, const char *v,
			char *err, size_t err_len)
{
	return conf_double(w, v, 0, 1e12, &c->r->power_cap_w, err, err_len);
}

static const key_def_t keys[] = {
	{ "DefaultPolicy", SC_GLOBAL, _g_policy },
	{ "Policy", SC_RULE, _g_policy },
	{ "MaxSlowdown", SC_GLOBAL | SC_RULE, _g_slowdown },
	{ "EnergyTolerance", SC_GLOBAL, _g_tolerance },
	{ "MinHistoryFrequencies", SC_GLOBAL, _g_min_hist },
	{ "HistoryFile", SC_GLOBAL, _g_history },
	{ "PowerBudget", SC_GLOBAL, _g_budget },
	{ "BudgetCeiling", SC_GLOBAL | SC_RULE, _g_ceiling },
	{ "Frequencies", SC_GLOBAL, _g_freqs },
	{ "Partition", SC_RULE, _r_partition },
	{ "QOS", SC_RULE, _r_qos },
	{ "Account", SC_RULE, _r_account },
	{ "User", SC_RULE, _r_user },
	{ "DefaultFreq", SC_RULE, _r_default_freq },
	{ "DefaultGovernor", SC_RULE, _r_default_gov },
	{ "AllowedMin", SC_RULE, _r_allowed_min },
	{ "AllowedMax", SC_RULE, _r_allowed_max },
	{ "AllowedGovernors", SC_RULE, _r_allowed_govs },
	{ "OutOfRange", SC_RULE, _r_oor },
	{ "EnergyCap", SC_RULE, _r_energy_cap },
	{ "PowerCap", SC_RULE, _r_power_cap },
	{ NULL, 0, NULL }
};

/* ------------------------------------------------------ public functions */

const char *freq_policy_key(size_t i, bool *in_rule, bool *global)
{
	if (i >= sizeof(keys) / sizeof(keys[0]) - 1)
		return NULL;
	if (in_rule)
		*in_rule = keys[i].scope & SC_RULE;
	if (global)
		*global = keys[i].scope & SC_GLOBAL;
	return keys[i].key;
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
		const key_def_t *k;

		if (!strcasecmp(pairs[i].key, "Rule"))
			return _err(&w, pairs[i].value, err, err_len,
				    "Rule= must come first on its line");
		for (k = keys; k->key; k++)
			if (!strcasecmp(k->key, pairs[i].key))
				break;
		if (!k->key)
			return _err(&w, pairs[i].value, err, err_len,
				    "unknown key");
		if (!(k->scope & (c->r ? SC_RULE : SC_GLOBAL)))
			return _err(&w, pairs[i].value, err, err_len,
				    c->r ? "not valid in a Rule line" :
				    "only valid in a Rule=NAME line");
		w.key = k->key;
		if ((rc = k->set(c, &w, pairs[i].value, err, err_len)))
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

/* Is name in the comma list (NULL or "*" matches anything)? */
static bool _in_list(const char *list, const char *name)
{
	const char *s = list;
	size_t n;

	if (!list)
		return true;
	while (*s) {
		n = strcspn(s, ",");
		if (n == 1 && s[0] == '*')
			return true;
		if (name && strlen(name) == n && !strncmp(s, name, n))
			return true;
		s += n;
		if (*s == ',')
			s++;
	}
	return false;
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
