/*
 * test_cpufreq_policy.c - energy_policy.conf parsing, rule matching, the
 * history file, and the whole decision for a job (rules, policies, budget).
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "freq_decide.h"
#include "freq_history.h"
#include "freq_policy.h"
#include "tmp_file.h"

static char tmpl_dir[] = "/tmp/test_cpufreq_XXXXXX";
static char *dir;

static const char *_write(const char *name, const char *text)
{
	static char path[512];

	if (!dir)
		ck_assert_ptr_nonnull(dir = mkdtemp(tmpl_dir));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	tmp_file_write(path, text);
	return path;
}

/* Load text as a policy; returns rc, err filled. */
static int _load(freq_policy_t *p, const char *text, char *err, size_t len)
{
	freq_policy_init(p);
	return freq_policy_load(p, _write("energy_policy.conf", text), err,
				len);
}

static const char *conf_text =
	"# site policy\n"
	"DefaultPolicy=none MaxSlowdown=5%\n"
	"HistoryFile=/var/lib/slurm-energy/history\n"
	"PowerBudget=4000 BudgetCeiling=1.6GHz\n"
	"Frequencies=2400000,1200000,2000000,1600000\n"
	"Rule=debug Partition=debug DefaultFreq=2000000 "
	"AllowedMin=1200MHz AllowedMax=2000000 OutOfRange=reject\n"
	"Rule=green Partition=batch Account=climate,ocean Policy=min_energy "
	"MaxSlowdown=10 DefaultGovernor=ondemand "
	"AllowedGovernors=ondemand,userspace OutOfRange=clamp\n"
	"Rule=fast Partition=batch QOS=high Policy=min_time PowerCap=200\n"
	"Rule=rest Partition=* DefaultFreq=high\n";

START_TEST(test_parse_all)
{
	freq_policy_t p;
	char err[256];
	const freq_rule_t *r;

	ck_assert_msg(!_load(&p, conf_text, err, sizeof(err)), "%s", err);
	ck_assert_int_eq(p.default_policy, FREQ_POLICY_NONE);
	ck_assert(fabs(p.max_slowdown - 0.05) < 1e-12);
	ck_assert_str_eq(p.history_file, "/var/lib/slurm-energy/history");
	ck_assert(p.power_budget_w == 4000);
	ck_assert_uint_eq(p.budget_ceiling_khz, 1600000);
	ck_assert_uint_eq(p.n_freqs, 4);
	ck_assert_uint_eq(p.freqs_khz[0], 1200000);
	ck_assert_uint_eq(p.freqs_khz[3], 2400000);
	ck_assert_uint_eq(p.n_rules, 4);
	r = &p.rules[0];
	ck_assert_str_eq(r->name, "debug");
	ck_assert_uint_eq(r->line, 6);
	ck_assert_uint_eq(r->default_khz, 2000000);
	ck_assert_uint_eq(r->allowed_min_khz, 1200000);
	ck_assert_uint_eq(r->allowed_max_khz, 2000000);
	ck_assert_int_eq(r->out_of_range, FREQ_OOR_REJECT);
	r = &p.rules[1];
	ck_assert_int_eq(r->policy, FREQ_POLICY_MIN_ENERGY);
	ck_assert(fabs(freq_rule_max_slowdown(&p, r) - 0.10) < 1e-12);
	ck_assert_uint_eq(r->default_gov, FREQ_GOV_ONDEMAND);
	ck_assert_uint_eq(r->allowed_govs,
			  FREQ_GOV_ONDEMAND | FREQ_GOV_USERSPACE);
	ck_assert_int_eq(r->out_of_range, FREQ_OOR_CLAMP);
	ck_assert(fabs(freq_rule_max_slowdown(&p, &p.rules[2]) - 0.05) < 1e-12);
	ck_assert_int_eq(p.rules[3].default_kw, FREQ_KW_HIGH);

	/* matching: first rule wins; NULL only matches "any" */
	ck_assert_str_eq(freq_policy_match(&p, "debug", NULL, NULL, "u")->name,
			 "debug");
	ck_assert_str_eq(freq_policy_match(&p, "batch", "normal", "ocean",
					   "u")->name, "green");
	ck_assert_str_eq(freq_policy_match(&p, "batch", "high", "physics",
					   "u")->name, "fast");
	ck_assert_str_eq(freq_policy_match(&p, "batch", "normal", NULL,
					   "u")->name, "rest");
	ck_assert_str_eq(freq_policy_match(&p, NULL, NULL, NULL, NULL)->name,
			 "rest");
	freq_policy_free(&p);
}
END_TEST

/* Each bad line is named by file, line, key and value. */
START_TEST(test_parse_errors)
{
	static const struct {
		const char *text, *want;
	} c[] = {
		{ "Rule=a AllowedMax=fast\n",
		  "energy_policy.conf:1: AllowedMax=fast: not a frequency" },
		{ "\nFoo=1\n", "energy_policy.conf:2: Foo=1: unknown key" },
		{ "Partition=x\n",
		  "energy_policy.conf:1: Partition=x: only valid in a Rule" },
		{ "Rule=a HistoryFile=/x\n",
		  "energy_policy.conf:1: HistoryFile=/x: not valid in a Rule" },
		{ "Rule=a OutOfRange=drop\n",
		  "energy_policy.conf:1: OutOfRange=drop: must be one of" },
		{ "Rule=a DefaultGovernor=turbo\n",
		  "DefaultGovernor=turbo: must be one of: conservative" },
		{ "Rule=a AllowedMin=2GHz AllowedMax=1GHz\n",
		  ":1: AllowedMin=2000000: greater than AllowedMax" },
		{ "Rule=a AllowedMax=2GHz DefaultFreq=2.4GHz\n",
		  ":1: DefaultFreq=2400000: outside AllowedMin..AllowedMax" },
		{ "Rule=a AllowedGovernors=userspace DefaultGovernor=ondemand\n",
		  "DefaultGovernor=ondemand: not in AllowedGovernors" },
		{ "Rule=a\nRule=a\n", ":2: Rule=a: rule name used twice" },
		{ "Rule=\n", ":1: Rule=: a rule needs a name" },
		{ "MaxSlowdown=-3\n", "MaxSlowdown=-3: not a percentage" },
		{ "DefaultPolicy=fastest\n",
		  "DefaultPolicy=fastest: must be one of: none, performance" },
		{ "HistoryFile=rel/path\n", "must be an absolute path" },
		{ "Frequencies=1GHz,,x\n",
		  "Frequencies=1GHz,,x: 'x' is not a frequency" },
		/* tests/fuzz: corpus/fuzz_freq_policy/crash-ecc10130... */
		{ "Frequencies=1.2GHz,1800000,2.4GHz,1.8GHz\n",
		  ":1: Frequencies=1.2GHz,1800000,2.4GHz,1.8GHz: 1800000 kHz listed twice" },
		{ "PowerBudget=lots\n", "PowerBudget=lots: not a number" },
		{ "Rule=a User=\n", "User=: expected a comma list" },
		{ "Rule=a QOS=x Rule=b\n", "Rule=b: Rule= must come first" },
	};
	freq_policy_t p;
	char err[256];

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		ck_assert_int_eq(_load(&p, c[i].text, err, sizeof(err)),
				 -EINVAL);
		ck_assert_msg(strstr(err, c[i].want), "case %zu: '%s' lacks "
			      "'%s'", i, err, c[i].want);
		freq_policy_free(&p);
	}
	/* a missing file is -ENOENT, named */
	freq_policy_init(&p);
	ck_assert_int_eq(freq_policy_load(&p, "/nonexistent/ep.conf", err,
					  sizeof(err)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/ep.conf"));
	freq_policy_free(&p);
}
END_TEST

START_TEST(test_parse_khz)
{
	uint32_t k;

	ck_assert_int_eq(freq_parse_khz("2400000", &k), 0);
	ck_assert_uint_eq(k, 2400000);
	ck_assert_int_eq(freq_parse_khz("2.4GHz", &k), 0);
	ck_assert_uint_eq(k, 2400000);
	ck_assert_int_eq(freq_parse_khz("1600mhz", &k), 0);
	ck_assert_uint_eq(k, 1600000);
	ck_assert_int_eq(freq_parse_khz("800000kHz", &k), 0);
	ck_assert_uint_eq(k, 800000);
	ck_assert_int_eq(freq_parse_khz("-1", &k), -EINVAL);
	ck_assert_int_eq(freq_parse_khz("0", &k), -EINVAL);
	ck_assert_int_eq(freq_parse_khz("1.5", &k), -EINVAL);
	ck_assert_int_eq(freq_parse_khz("2GHzz", &k), -EINVAL);
	ck_assert_int_eq(freq_parse_khz("", &k), -EINVAL);
}
END_TEST

START_TEST(test_history_file)
{
	freq_history_t h;
	freq_run_t r[8];
	char err[256], key[64];
	const char *path = _write("history",
		"# se-cpufreq-history 1\n"
		"alice/lulesh 2400000 100.0 25000 11\n"
		"alice/lulesh 1200000 104 15600\n"
		"bob/lulesh   1200000 50 1000 12\n"
		"alice/lulesh zero 1 1\n"
		"alice/lulesh 1600000 -3 1\n"
		"\n"
		"alice/lulesh 1600000\n");

	freq_history_init(&h);
	ck_assert_msg(!freq_history_load(&h, path, err, sizeof(err)), "%s",
		      err);
	ck_assert_uint_eq(h.n, 3);
	ck_assert_uint_eq(h.bad_lines, 3);
	ck_assert_uint_eq(freq_history_runs(&h, "alice/lulesh", r, 8), 2);
	ck_assert_uint_eq(r[1].khz, 1200000);
	ck_assert(r[1].energy_j == 15600);
	ck_assert_uint_eq(freq_history_runs(&h, "carol/x", r, 8), 0);
	/* unchanged file: no reload */
	ck_assert_int_eq(freq_history_refresh(&h, path, err, sizeof(err)), 0);
	ck_assert_int_eq(freq_history_refresh(&h, "/nonexistent/h", err,
					      sizeof(err)), -ENOENT);
	ck_assert_uint_eq(h.n, 3);	/* kept */
	freq_history_free(&h);

	freq_history_key("alice", NULL, "my job/1", key, sizeof(key));
	ck_assert_str_eq(key, "alice/my_job_1");
	freq_history_key("alice", "lulesh", "my job", key, sizeof(key));
	ck_assert_str_eq(key, "alice/lulesh");
	freq_history_key("alice", "", "", key, sizeof(key));
	ck_assert_str_eq(key, "alice/-");
}
END_TEST

/* ---------------------------------------------------------- decisions */

static freq_policy_t pol;
static freq_history_t hist;

static void _setup(void)
{
	char err[256];

	ck_assert_msg(!_load(&pol, conf_text, err, sizeof(err)), "%s", err);
	freq_history_init(&hist);
	ck_assert_msg(!freq_history_load(&hist, _write("h2",
		"carol/app 1200000 104 15600\n"
		"carol/app 1600000 102 18400\n"
		"carol/app 2000000 101 21200\n"
		"carol/app 2400000 100 25000\n"
		"carol/tagged 1200000 200 16000\n"
		"carol/tagged 2000000 100 19000\n"), err, sizeof(err)),
		"%s", err);
}

static void _teardown(void)
{
	freq_policy_free(&pol);
	freq_history_free(&hist);
}

static freq_job_t _job(const char *part)
{
	freq_job_t j = { .partition = part, .qos = "normal",
			 .account = "ocean", .user = "carol",
			 .job_name = "app", .measured_w = -1 };
	return j;
}

START_TEST(test_decide_default)
{
	freq_job_t j = _job("debug");
	freq_decision_t d;

	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_int_eq(d.action, FREQ_DECIDE_SET);
	ck_assert_str_eq(d.rule->name, "debug");
	ck_assert_uint_eq(d.req.max_khz, 2000000);
	ck_assert_uint_eq(d.req.min_khz, 0);
	ck_assert_uint_eq(d.req.gov, 0);
	ck_assert_str_eq(d.msg, "");
}
END_TEST

START_TEST(test_decide_explicit_allowed)
{
	freq_job_t j = _job("debug");
	freq_decision_t d;

	j.req.max_khz = 1600000;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_int_eq(d.action, FREQ_DECIDE_KEEP);
	j.req.max_khz = 0;
	j.req.max_kw = FREQ_KW_MEDIUM;	/* 1.6 GHz with Frequencies= */
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_int_eq(d.action, FREQ_DECIDE_KEEP);
}
END_TEST

START_TEST(test_decide_reject)
{
	freq_job_t j = _job("debug");
	freq_decision_t d;

	j.req.max_khz = 2400000;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_int_eq(d.action, FREQ_DECIDE_REJECT);
	ck_assert_str_eq(d.msg, "energy_policy: --cpu-freq=2400000 is not "
			 "allowed here: rule 'debug' allows 1200000-2000000 "
			 "kHz");
	memset(&j.req, 0, sizeof(j.req));
	j.req.max_kw = FREQ_KW_HIGH;	/* resolves to 2.4 GHz */
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_int_eq(d.action, FREQ_DECIDE_REJECT);
	ck_assert_ptr_nonnull(strstr(d.msg, "--cpu-freq=high is not"));
}
END_TEST

START_TEST(test_decide_clamp)
{
	freq_job_t j = _job("batch");
	freq_decision_t d;

	/* green: governors ondemand,userspace; clamp */
	j.req.gov = FREQ_GOV_PERFORMANCE;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_int_eq(d.action, FREQ_DECIDE_SET);
	ck_assert_uint_eq(d.req.gov, FREQ_GOV_ONDEMAND);
	ck_assert_ptr_nonnull(strstr(d.msg, "--cpu-freq=performance clamped "
				     "to ondemand (rule 'green' allows any "
				     "frequency, governors ondemand,"
				     "userspace)"));
}
END_TEST

START_TEST(test_decide_min_energy)
{
	freq_job_t j = _job("batch");
	freq_decision_t d;

	/* rule green: Policy=min_energy MaxSlowdown=10 */
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_int_eq(d.action, FREQ_DECIDE_SET);
	ck_assert_int_eq(d.policy, FREQ_POLICY_MIN_ENERGY);
	ck_assert_str_eq(d.key, "carol/app");
	ck_assert_uint_eq(d.req.max_khz, 1200000);
	ck_assert_ptr_nonnull(strstr(d.msg, "min_energy chose 1200000 kHz"));
	/* --energy-tag: another history; 1.2 GHz is 100 % slower */
	j.tag = "tagged";
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_uint_eq(d.req.max_khz, 2000000);
	/* --energy-policy=performance overrides the rule's */
	j.policy_name = "performance";
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_uint_eq(d.req.max_khz, 0);
	ck_assert_uint_eq(d.req.gov, 0);
	ck_assert_int_eq(d.req.max_kw, FREQ_KW_HIGH);
	j.policy_name = "greenest";
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), -EINVAL);
	ck_assert_int_eq(d.action, FREQ_DECIDE_REJECT);
	ck_assert_ptr_nonnull(strstr(d.msg, "--energy-policy=greenest: must "
				     "be one of"));
}
END_TEST

START_TEST(test_decide_no_history)
{
	freq_job_t j = _job("batch");
	freq_decision_t d;

	j.job_name = "newapp";
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	/* the rule's default governor, and a note */
	ck_assert_int_eq(d.action, FREQ_DECIDE_SET);
	ck_assert_uint_eq(d.req.gov, FREQ_GOV_ONDEMAND);
	ck_assert_str_eq(d.msg, "energy_policy: min_energy: too little "
			 "history for carol/newapp (0 runs; need 2 "
			 "frequencies): running at ondemand, this run is "
			 "recorded");
	/* no history file at all is the same */
	ck_assert_int_eq(freq_decide(&pol, NULL, &j, &d), 0);
	ck_assert_uint_eq(d.req.gov, FREQ_GOV_ONDEMAND);
}
END_TEST

START_TEST(test_decide_min_time)
{
	freq_job_t j = _job("batch");
	freq_decision_t d;

	/* rule fast: PowerCap=200 W; carol/app: 156 183 210 250 W */
	j.qos = "high";
	j.account = "physics";
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_uint_eq(d.req.max_khz, 1600000);
}
END_TEST

START_TEST(test_decide_budget)
{
	freq_job_t j = _job("debug");
	freq_decision_t d;

	/* under the budget: the rule default */
	j.measured_w = 3999;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_uint_eq(d.req.max_khz, 2000000);
	ck_assert(!d.over_budget);
	/* over: ceiling 1.6 GHz, said so */
	j.measured_w = 4500;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert(d.over_budget);
	ck_assert_int_eq(d.action, FREQ_DECIDE_SET);
	ck_assert_uint_eq(d.req.max_khz, 1600000);
	ck_assert_str_eq(d.msg, "energy_policy: cluster power 4500 W is above "
			 "the budget 4000 W: frequency ceiling 1600000 kHz "
			 "for new jobs");
	/* an explicit allowed request above the ceiling is lowered too */
	j.req.max_khz = 2000000;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_uint_eq(d.req.max_khz, 1600000);
	/* one below it is kept */
	j.req.max_khz = 1200000;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_int_eq(d.action, FREQ_DECIDE_KEEP);
	/* a governor alone gets min-ceiling:gov */
	memset(&j.req, 0, sizeof(j.req));
	j.req.gov = FREQ_GOV_ONDEMAND;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_uint_eq(d.req.min_khz, 1200000);
	ck_assert_uint_eq(d.req.max_khz, 1600000);
	ck_assert_uint_eq(d.req.gov, FREQ_GOV_ONDEMAND);
	/* unknown power (no meter): no ceiling */
	memset(&j.req, 0, sizeof(j.req));
	j.measured_w = -1;
	ck_assert_int_eq(freq_decide(&pol, &hist, &j, &d), 0);
	ck_assert_uint_eq(d.req.max_khz, 2000000);
}
END_TEST

START_TEST(test_request_str)
{
	freq_request_t r = { 1200000, 2000000, 0, 0, FREQ_GOV_ONDEMAND };
	char b[64];

	ck_assert_str_eq(freq_request_str(&r, b, sizeof(b)),
			 "1200000-2000000:ondemand");
	r.min_khz = 0;
	r.gov = 0;
	ck_assert_str_eq(freq_request_str(&r, b, sizeof(b)), "2000000");
	r.max_khz = 0;
	r.max_kw = FREQ_KW_HIGHM1;
	ck_assert_str_eq(freq_request_str(&r, b, sizeof(b)), "highm1");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpufreq_policy");
	TCase *tp = tcase_create("parse"), *td = tcase_create("decide");
	SRunner *sr;
	int failed;

	tcase_add_test(tp, test_parse_all);
	tcase_add_test(tp, test_parse_errors);
	tcase_add_test(tp, test_parse_khz);
	tcase_add_test(tp, test_history_file);
	tcase_add_test(tp, test_request_str);
	tcase_add_checked_fixture(td, _setup, _teardown);
	tcase_add_test(td, test_decide_default);
	tcase_add_test(td, test_decide_explicit_allowed);
	tcase_add_test(td, test_decide_reject);
	tcase_add_test(td, test_decide_clamp);
	tcase_add_test(td, test_decide_min_energy);
	tcase_add_test(td, test_decide_no_history);
	tcase_add_test(td, test_decide_min_time);
	tcase_add_test(td, test_decide_budget);
	suite_add_tcase(s, tp);
	suite_add_tcase(s, td);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	if (dir) {
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd)) {
			/* leave it */
		}
	}
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
