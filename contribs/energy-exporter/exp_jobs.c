/*
 * exp_jobs.c - the labels of the jobs running on the node (user, account,
 * partition), which slurmd's energy split does not know.
 *
 * The cheapest honest source is slurmctld, asked once per job: a job's
 * user, account and partition do not change while it runs on the node
 * (scontrol update can move a pending job, not a running one's
 * allocation).  So each new job costs one lookup (exp_slurm.c:
 * slurm_load_job(), an RPC to slurmctld, and the uid's name from the
 * node's own passwd), kept until the job leaves slurmd's answer.  A
 * scrape spends at most its budget on lookups: a burst of new jobs is
 * looked up over the next scrapes, their series absent until then (never
 * shown with labels that would change).  A failed lookup (slurmctld
 * unreachable) is tried again after retry_ns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"
#include "se_time.h"

typedef struct {
	uint32_t job_id;
	bool known;
	char *user, *account, *partition;
	uint64_t retry_at_ns;	/* !known: not before */
} exp_job_t;

struct exp_jobs {
	exp_job_lookup_fn lookup;
	void *arg;
	uint64_t retry_ns, budget_ns;
	uint64_t scrape_start_ns;
	exp_job_t *jobs;
	size_t n, cap;
	unsigned long lookups;
};

exp_jobs_t *exp_jobs_new(exp_job_lookup_fn lookup, void *arg,
			 uint64_t retry_ns, uint64_t budget_ns)
{
	exp_jobs_t *j = calloc(1, sizeof(*j));

	if (!j)
		return NULL;
	j->lookup = lookup;
	j->arg = arg;
	j->retry_ns = retry_ns;
	j->budget_ns = budget_ns;
	return j;
}

static void _job_clear(exp_job_t *e)
{
	free(e->user);
	free(e->account);
	free(e->partition);
	e->user = e->account = e->partition = NULL;
}

void exp_jobs_free(exp_jobs_t *j)
{
	if (!j)
		return;
	for (size_t i = 0; i < j->n; i++)
		_job_clear(&j->jobs[i]);
	free(j->jobs);
	free(j);
}

void exp_jobs_begin(exp_jobs_t *j, uint64_t now_ns)
{
	j->scrape_start_ns = now_ns;
}

static exp_job_t *_find(exp_jobs_t *j, uint32_t job_id, bool create)
{
	exp_job_t *e;

	for (size_t i = 0; i < j->n; i++)
		if (j->jobs[i].job_id == job_id)
			return &j->jobs[i];
	if (!create)
		return NULL;
	if (j->n == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 64;
		exp_job_t *n = realloc(j->jobs, cap * sizeof(*n));

		if (!n)
			return NULL;
		j->jobs = n;
		j->cap = cap;
	}
	e = &j->jobs[j->n++];
	memset(e, 0, sizeof(*e));
	e->job_id = job_id;
	return e;
}

/* Look e up now, if the scrape's budget and its retry time allow. */
static void _lookup(exp_jobs_t *j, exp_job_t *e)
{
	uint64_t now = se_mono_ns();
	int rc;

	if (now < e->retry_at_ns ||
	    (now > j->scrape_start_ns &&
	     now - j->scrape_start_ns > j->budget_ns))
		return;
	j->lookups++;
	rc = j->lookup(j->arg, e->job_id, &e->user, &e->account,
		       &e->partition);
	if (!rc && e->user && e->account && e->partition) {
		e->known = true;
		return;
	}
	_job_clear(e);
	e->retry_at_ns = now + j->retry_ns;
}

bool exp_jobs_labels(void *arg, uint32_t job_id, exp_job_labels_t *out)
{
	exp_jobs_t *j = arg;
	exp_job_t *e = _find(j, job_id, true);

	if (!e)
		return false;
	if (!e->known)
		_lookup(j, e);
	if (!e->known)
		return false;
	out->user = e->user;
	out->account = e->account;
	out->partition = e->partition;
	return true;
}

static bool _listed(const energy_snapshot_t *s, uint32_t job_id)
{
	for (uint32_t i = 0; i < s->n_steps && i < ENERGY_SNAPSHOT_STEPS_MAX;
	     i++)
		if (s->steps[i].job_id == job_id)
			return true;
	return false;
}

void exp_jobs_keep_only(exp_jobs_t *j, const energy_snapshot_t *s)
{
	for (size_t i = 0; i < j->n;) {
		if (_listed(s, j->jobs[i].job_id)) {
			i++;
			continue;
		}
		_job_clear(&j->jobs[i]);
		j->jobs[i] = j->jobs[--j->n];
	}
}

size_t exp_jobs_count(const exp_jobs_t *j)
{
	return j->n;
}

unsigned long exp_jobs_lookups(const exp_jobs_t *j)
{
	return j->lookups;
}
