/*
 * freq_policy.h - energy_policy.conf: site rules for CPU frequency (DVFS).
 *
 * Slurm-free: the job_submit glue hands over the job's partition, QOS,
 * account and user and gets back the matching rule.  File format (see
 * energy_policy.conf(5)): one "key=value ..." line per global setting or
 * rule; a line whose first key is Rule=NAME is a rule, and rules are tried
 * in file order (first match wins).  Every error names file, line, key and
 * value, e.g.
 *   energy_policy.conf:7: AllowedMax=fast: not a frequency (kHz, or a number
 *   with kHz/MHz/GHz)
 */
#ifndef SE_FREQ_POLICY_H
#define SE_FREQ_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Governors as a bit mask (our own bits; the glue maps Slurm's). */
enum {
	FREQ_GOV_CONSERVATIVE = 1 << 0,
	FREQ_GOV_ONDEMAND = 1 << 1,
	FREQ_GOV_PERFORMANCE = 1 << 2,
	FREQ_GOV_POWERSAVE = 1 << 3,
	FREQ_GOV_USERSPACE = 1 << 4,
	FREQ_GOV_SCHEDUTIL = 1 << 5,
	FREQ_GOV_ALL = (1 << 6) - 1,
};

/* Slurm's symbolic frequencies (--cpu-freq=low ...), resolved per node. */
typedef enum {
	FREQ_KW_NONE = 0,	/* a number of kHz */
	FREQ_KW_LOW,
	FREQ_KW_MEDIUM,
	FREQ_KW_HIGH,
	FREQ_KW_HIGHM1,
} freq_kw_t;

/* What a rule does with a request outside its allowed range. */
typedef enum {
	FREQ_OOR_REJECT = 0,
	FREQ_OOR_CLAMP,
} freq_oor_t;

/* Policies a user may name with --energy-policy (or a rule's default). */
typedef enum {
	FREQ_POLICY_NONE = 0,		/* rule default only */
	FREQ_POLICY_PERFORMANCE,	/* highest allowed frequency */
	FREQ_POLICY_MIN_ENERGY,
	FREQ_POLICY_MIN_TIME,
	FREQ_POLICY_COUNT
} freq_policy_kind_t;

#define FREQ_MAX_LIST 64

typedef struct {
	char *name;			/* Rule=NAME */
	unsigned line;			/* where it was defined */
	/* matchers: NULL = any; otherwise a comma list, "*" = any */
	char *partitions, *qos, *accounts, *users;
	/* what jobs that ask for nothing get */
	uint32_t default_khz;		/* 0: none */
	freq_kw_t default_kw;		/* or a keyword */
	unsigned default_gov;		/* one FREQ_GOV_* bit, 0: none */
	/* what a job may ask for */
	uint32_t allowed_min_khz;	/* 0: no lower limit */
	uint32_t allowed_max_khz;	/* 0: no upper limit */
	unsigned allowed_govs;		/* FREQ_GOV_* mask, FREQ_GOV_ALL */
	freq_oor_t out_of_range;
	freq_policy_kind_t policy;	/* default policy (-1 via has_policy) */
	bool has_policy;
	double max_slowdown;		/* fraction: 0.05 = 5 % */
	bool has_max_slowdown;
	double energy_cap_j;		/* min_time: 0 = none */
	double power_cap_w;		/* min_time: 0 = none */
	uint32_t budget_ceiling_khz;	/* 0: the global one */
} freq_rule_t;

typedef struct {
	char *path;			/* the file read, for messages */
	freq_policy_kind_t default_policy;
	double max_slowdown;		/* default 0.05 */
	double energy_tolerance;	/* equal energies: default 0.02 */
	unsigned min_history_freqs;	/* default 2 */
	char *history_file;		/* NULL: none */
	double power_budget_w;		/* 0: no budget */
	uint32_t budget_ceiling_khz;	/* 0: no ceiling */
	uint32_t freqs_khz[FREQ_MAX_LIST];	/* Frequencies=, ascending */
	size_t n_freqs;
	freq_rule_t *rules;
	size_t n_rules;
} freq_policy_t;

/* The i-th key of the file (Rule= aside; NULL past the last), and where
 * it may stand: a Rule=NAME line (*in_rule), a global line (*global).
 * Either pointer may be NULL. */
const char *freq_policy_key(size_t i, bool *in_rule, bool *global);

/* Defaults, no rules. */
void freq_policy_init(freq_policy_t *p);

/* Free what freq_policy_init/_load allocated (p stays initialised). */
void freq_policy_free(freq_policy_t *p);

/*
 * Read and check a policy file into p (initialised by the caller; on error
 * p holds whatever was read before the error, so free it).  Returns 0,
 * -EINVAL with "FILE:LINE: KEY=VALUE: reason" in err, or -errno.
 */
int freq_policy_load(freq_policy_t *p, const char *path, char *err,
		     size_t err_len);

/* Is path a valid policy file?  freq_policy_load()'s answer, nothing kept
 * (se-conf-check, tests). */
int freq_policy_check_file(const char *path, char *err, size_t err_len);

/* The first rule matching the job (NULL strings match only "any"), or
 * NULL.  user is a user name. */
const freq_rule_t *freq_policy_match(const freq_policy_t *p,
				     const char *partition, const char *qos,
				     const char *account, const char *user);

/* Parse a frequency: "2400000" (kHz), "2400MHz", "2.4GHz", "2400000kHz".
 * Returns 0 or -EINVAL. */
int freq_parse_khz(const char *s, uint32_t *khz);

/* "performance" -> FREQ_GOV_PERFORMANCE ...; 0 when unknown. */
unsigned freq_gov_from_name(const char *s);
/* Name of one governor bit ("performance"), or "?". */
const char *freq_gov_name(unsigned gov);
/* A mask as "ondemand,performance" into buf. */
const char *freq_govs_str(unsigned mask, char *buf, size_t len);

/* Policy names (case-insensitive); returns 0 or -EINVAL. */
int freq_policy_kind_from_name(const char *s, freq_policy_kind_t *out);
const char *freq_policy_kind_name(freq_policy_kind_t k);

/* The effective max slowdown of a rule (rule's, else the global one). */
double freq_rule_max_slowdown(const freq_policy_t *p, const freq_rule_t *r);

#endif
