/*
 * fuzz_freq_policy - energy_policy.conf (src/cpufreq/freq_policy.c over
 * conf_read_pairs_file()), as job_submit/energy_policy loads it in
 * slurmctld.
 *
 * Input: the policy file.  Invariants:
 *  - a refused file has "FILE:LINE: KEY=VALUE: reason" (at least the file
 *    and a line number) and frees cleanly;
 *  - a loaded file's rules each have a name, AllowedMin <= AllowedMax,
 *    a DefaultFreq inside them and a DefaultGovernor among the allowed;
 *    Frequencies= is strictly ascending; fractions are finite and >= 0;
 *  - matching returns one of the rules (the first that matches).
 */
#include "fuzz_common.h"

#include <errno.h>
#include <math.h>

#include "freq_policy.h"

static void check_rule(const freq_rule_t *r)
{
	FUZZ_CHECK(r->name && r->name[0], "rule of line %u has no name",
		   r->line);
	FUZZ_CHECK(!r->allowed_min_khz || !r->allowed_max_khz ||
		   r->allowed_min_khz <= r->allowed_max_khz,
		   "%s: AllowedMin %u > AllowedMax %u", r->name,
		   r->allowed_min_khz, r->allowed_max_khz);
	FUZZ_CHECK(!r->default_khz ||
		   ((!r->allowed_min_khz ||
		     r->default_khz >= r->allowed_min_khz) &&
		    (!r->allowed_max_khz ||
		     r->default_khz <= r->allowed_max_khz)),
		   "%s: DefaultFreq %u outside", r->name, r->default_khz);
	FUZZ_CHECK(!r->default_gov || (r->default_gov & r->allowed_govs),
		   "%s: DefaultGovernor not allowed", r->name);
	FUZZ_CHECK(!r->has_max_slowdown || (isfinite(r->max_slowdown) &&
					    r->max_slowdown >= 0),
		   "%s: MaxSlowdown %g", r->name, r->max_slowdown);
	FUZZ_CHECK(isfinite(r->energy_cap_j) && r->energy_cap_j >= 0 &&
		   isfinite(r->power_cap_w) && r->power_cap_w >= 0,
		   "%s: caps %g J %g W", r->name, r->energy_cap_j,
		   r->power_cap_w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const who[][4] = {
		{ NULL, NULL, NULL, NULL },
		{ "batch", "normal", "physics", "alice" },
		{ "gpu", "high", "*", "bob" },
	};
	freq_policy_t p;
	char err[1024];
	const char *path = fuzz_file(data, size);
	int rc;

	freq_policy_init(&p);
	err[0] = '\0';
	rc = freq_policy_load(&p, path, err, sizeof(err));
	if (rc) {
		FUZZ_CHECK(rc < 0 && strstr(err, path) == err &&
			   (rc != -EINVAL || err[strlen(path)] == ':'),
			   "refused (%d) with '%s'", rc, err);
		freq_policy_free(&p);
		return 0;
	}
	for (size_t i = 0; i < p.n_rules; i++)
		check_rule(&p.rules[i]);
	for (size_t i = 1; i < p.n_freqs; i++)
		FUZZ_CHECK(p.freqs_khz[i - 1] < p.freqs_khz[i],
			   "Frequencies not ascending at %zu", i);
	FUZZ_CHECK(isfinite(p.max_slowdown) && p.max_slowdown >= 0 &&
		   isfinite(p.energy_tolerance) && p.energy_tolerance >= 0 &&
		   isfinite(p.power_budget_w) && p.power_budget_w >= 0,
		   "globals %g %g %g", p.max_slowdown, p.energy_tolerance,
		   p.power_budget_w);
	for (size_t k = 0; k < sizeof(who) / sizeof(who[0]); k++) {
		const freq_rule_t *r = freq_policy_match(&p, who[k][0],
							 who[k][1], who[k][2],
							 who[k][3]);

		FUZZ_CHECK(!r || (r >= p.rules && r < p.rules + p.n_rules),
			   "match returned a stray rule");
		if (r)
			FUZZ_CHECK(isfinite(freq_rule_max_slowdown(&p, r)),
				   "slowdown of %s", r->name);
	}
	freq_policy_free(&p);
	return 0;
}
