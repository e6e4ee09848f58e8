/*
 * freq_decide.h - what a submitted job's CPU frequency should be.
 *
 * Everything job_submit/energy_policy decides, free of Slurm types: the glue
 * converts the job's --cpu-freq request (Slurm's cpu_freq_min/max/gov
 * encoding) into a freq_request_t, calls freq_decide(), and writes the
 * result back.  Order:
 *   1. the first matching rule (none: the job is left alone, budget aside);
 *   2. an explicit request is checked against the rule's allowed range and
 *      governors: rejected with a message naming the range, or clamped;
 *   3. no request: the policy (--energy-policy, else the rule's, else the
 *      file's DefaultPolicy) picks from the history, falling back to the
 *      rule's default frequency/governor with a "recorded" note;
 *   4. power budget: when measured power exceeds PowerBudget, the frequency
 *      is capped at the budget ceiling.
 */
#ifndef SE_FREQ_DECIDE_H
#define SE_FREQ_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "freq_history.h"
#include "freq_policy.h"

typedef struct {
	/* 0 / FREQ_KW_NONE / 0 when not given */
	uint32_t min_khz, max_khz;
	freq_kw_t min_kw, max_kw;
	unsigned gov;			/* one FREQ_GOV_* bit */
} freq_request_t;

typedef struct {
	const char *partition, *qos, *account, *user, *job_name;
	const char *policy_name;	/* --energy-policy, NULL: none */
	const char *tag;		/* --energy-tag, NULL: none */
	freq_request_t req;
	double measured_w;		/* cluster power now; < 0: unknown */
} freq_job_t;

typedef enum {
	FREQ_DECIDE_KEEP = 0,	/* leave the job as submitted */
	FREQ_DECIDE_SET,	/* replace the request by out->req */
	FREQ_DECIDE_REJECT,	/* refuse the job, out->msg says why */
} freq_action_t;

typedef struct {
	freq_action_t action;
	freq_request_t req;	/* when SET */
	const freq_rule_t *rule;
	freq_policy_kind_t policy;
	char key[256];		/* history key used */
	bool over_budget;
	char msg[512];		/* for the user (err_msg / comment); "" none */
} freq_decision_t;

/*
 * Decide for one job.  hist may be NULL (no history file).  Returns 0,
 * -EINVAL for an unknown policy name (action REJECT, msg lists the names),
 * or -ENOMEM.  Reentrant: p and hist are only read.
 */
int freq_decide(const freq_policy_t *p, const freq_history_t *hist,
		const freq_job_t *job, freq_decision_t *out);

/* The request as --cpu-freq syntax ("1200000-2000000:userspace") into buf. */
const char *freq_request_str(const freq_request_t *r, char *buf, size_t len);

#endif
