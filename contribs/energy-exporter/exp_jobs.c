/*
 * exp_jobs.c - the labels of the jobs running on the node (user, account,
 * partition), which slurmd's energy split does not know.
 *
 * The cheapest honest source is slurmctld, asked once per job: a job's
 * user, account and partition do not change while it runs on the node
 * (scontrol update can move a pending job, not a running one's
 * allocation).  So each new job costs one lookup (exp_slurm.c:
 * slurm_load_job(), an RPC to slurmctld, and the uid's name from the
 * node's own passwd), kept until the job leaves slurmd's answer.  A failed
 * lookup (slurmctld unreachable) is tried again after retry_ns.  A job's
 * series are absent until its labels are known, never shown with labels
 * that would change.
 *
 * Two ways to look up.  Inline (the unit tests): in the scrape, at most
 * budget_ns of lookups a scrape, the rest over the next scrapes.  In a
 * thread of its own (exp_jobs_start(), the daemon): the scrape only
 * queues a new job and goes on, so that a slurmctld that does not answer
 * (an RPC waits up to MessageTimeout, 10 s by default) never holds a
 * scrape; the job's series appear at the first scrape after its lookup.
 *
 * Locking: lock guards the table and each entry; the lookup itself runs
 * unlocked (the thread finds its entry again by job id afterwards).  The
 * strings of a known entry are freed only by exp_jobs_keep_only(), which
 * the scrape calls, the only reader of them: exp_jobs_labels()'s pointers
 * stay good for the scrape's rendering.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "exporter.h"
#include "se_time.h"

typedef struct {
	uint32_t job_id;
	bool known;
	bool queued;		/* the thread has it to look up */
	char *user, *account, *partition;
	uint64_t retry_at_ns;	/* !known: not before */
} exp_job_t;

struct exp_jobs {
	exp_job_lookup_fn lookup;
	void *arg;
	uint64_t retry_ns, budget_ns;
	uint64_t scrape_start_ns;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool threaded, stopping;
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
	pthread_mutex_init(&j->lock, NULL);
	pthread_cond_init(&j->wake, NULL);
	return j;
}

static void _job_clear(exp_job_t *e)
{
	free(e->user);
	free(e->account);
	free(e->partition);
	e->user = e->account = e->partition = NULL;
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

/* A lookup's result into job_id's entry (lock held), if it is still
 * there; the strings are taken over or freed. */
static void _store(exp_jobs_t *j, uint32_t job_id, int rc, char *user,
		   char *account, char *partition)
{
	exp_job_t *e = _find(j, job_id, false);

	if (e && !rc && user && account && partition) {
		_job_clear(e);
		e->user = user;
		e->account = account;
		e->partition = partition;
		e->known = true;
		e->queued = false;
		return;
	}
	free(user);
	free(account);
	free(partition);
	if (e) {
		e->queued = false;
		e->retry_at_ns = se_mono_ns() + j->retry_ns;
	}
}

/* One lookup, unlocked (lock held on entry and on return). */
static void _lookup_unlocked(exp_jobs_t *j, uint32_t job_id)
{
	char *user = NULL, *account = NULL, *partition = NULL;
	int rc;

	j->lookups++;
	pthread_mutex_unlock(&j->lock);
	rc = j->lookup(j->arg, job_id, &user, &account, &partition);
	pthread_mutex_lock(&j->lock);
	_store(j, job_id, rc, user, account, partition);
}

/* ------------------------------------------------------------ thread */

static void *_resolver(void *arg)
{
	exp_jobs_t *j = arg;

	pthread_mutex_lock(&j->lock);
	while (!j->stopping) {
		exp_job_t *e = NULL;

		for (size_t i = 0; i < j->n && !e; i++)
			if (j->jobs[i].queued)
				e = &j->jobs[i];
		if (!e) {
			pthread_cond_wait(&j->wake, &j->lock);
			continue;
		}
		_lookup_unlocked(j, e->job_id);
	}
	pthread_mutex_unlock(&j->lock);
	return NULL;
}

int exp_jobs_start(exp_jobs_t *j)
{
	sigset_t all, old;
	int rc;

	/* the daemon's signals go to its main thread's sigwait */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&j->thread, NULL, _resolver, j);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	j->threaded = true;
	return 0;
}

void exp_jobs_free(exp_jobs_t *j)
{
	if (!j)
		return;
	if (j->threaded) {
		/* a lookup under way finishes first (at most slurmctld's
		 * MessageTimeout): the daemon is stopping anyway */
		pthread_mutex_lock(&j->lock);
		j->stopping = true;
		pthread_cond_signal(&j->wake);
		pthread_mutex_unlock(&j->lock);
		pthread_join(j->thread, NULL);
	}
	for (size_t i = 0; i < j->n; i++)
		_job_clear(&j->jobs[i]);
	free(j->jobs);
	pthread_mutex_destroy(&j->lock);
	pthread_cond_destroy(&j->wake);
	free(j);
}

/* ------------------------------------------------------------ scrape */

void exp_jobs_begin(exp_jobs_t *j, uint64_t now_ns)
{
	j->scrape_start_ns = now_ns;
}

/* An unknown entry: queued for the thread, or looked up now if the
 * scrape's budget allows (lock held). */
static void _want(exp_jobs_t *j, exp_job_t *e)
{
	uint64_t now = se_mono_ns();

	if (e->queued || now < e->retry_at_ns)
		return;
	if (j->threaded) {
		e->queued = true;
		pthread_cond_signal(&j->wake);
		return;
	}
	if (now > j->scrape_start_ns &&
	    now - j->scrape_start_ns > j->budget_ns)
		return;
	_lookup_unlocked(j, e->job_id);
}

bool exp_jobs_labels(void *arg, uint32_t job_id, exp_job_labels_t *out)
{
	exp_jobs_t *j = arg;
	exp_job_t *e;
	bool known;

	pthread_mutex_lock(&j->lock);
	e = _find(j, job_id, true);
	if (e && !e->known)
		_want(j, e);
	e = _find(j, job_id, false);	/* a lookup may have moved it */
	known = e && e->known;
	if (known) {
		out->user = e->user;
		out->account = e->account;
		out->partition = e->partition;
	}
	pthread_mutex_unlock(&j->lock);
	return known;
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
	pthread_mutex_lock(&j->lock);
	for (size_t i = 0; i < j->n;) {
		if (_listed(s, j->jobs[i].job_id)) {
			i++;
			continue;
		}
		_job_clear(&j->jobs[i]);
		j->jobs[i] = j->jobs[--j->n];
	}
	pthread_mutex_unlock(&j->lock);
}

size_t exp_jobs_count(const exp_jobs_t *j)
{
	return j->n;
}

unsigned long exp_jobs_lookups(const exp_jobs_t *j)
{
	return j->lookups;
}
