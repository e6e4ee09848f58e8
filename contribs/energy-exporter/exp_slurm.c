/*
 * exp_slurm.c - the one question the exporter asks Slurm: a running job's
 * user, account and partition (exp_jobs.c says why here and how often).
 *
 * slurm_load_job() is one RPC to slurmctld (munge-authenticated, as any
 * squeue); the uid's name comes from the node's own passwd (NSS), as
 * slurmd's own lookups do, so the exporter needs no slurmdbd.  The caller
 * ran slurm_init() once.
 */
#define _GNU_SOURCE	/* strcasestr, asprintf */
#include "config.h"	/* Slurm's: slurm_compat.h's headers depend on it */

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"

#include "exporter.h"
#include "slurm_compat.h"

static char *_user_name(uint32_t uid)
{
	struct passwd pw, *res = NULL;
	char buf[4096], *name;

	if (!getpwuid_r((uid_t) uid, &pw, buf, sizeof(buf), &res) && res)
		return strdup(res->pw_name);
	/* no name on this node: the uid, as squeue shows it then */
	if (asprintf(&name, "%u", uid) < 0)
		return NULL;
	return name;
}

/* One line a minute at most: why jobs' series are missing (the lookup
 * thread only calls this). */
static void _say_failed(uint32_t job_id, int err)
{
	static time_t said;
	time_t now = time(NULL);

	if (now - said < 60)
		return;
	said = now;
	fprintf(stderr, "slurm-energy-exporter: cannot look up job %u's user, account and partition in slurmctld: %s; its series wait (asked again every 30 s)\n",
		job_id, slurm_strerror(err));
}

int exp_slurm_lookup(void *arg, uint32_t job_id, char **user,
		     char **account, char **partition)
{
	job_info_msg_t *msg = NULL;
	const slurm_job_info_t *ji;
	int rc;

	(void) arg;
	if (se_slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS) {
		int err = se_slurm_errno();

		rc = err == ESLURM_INVALID_JOB_ID ? -ENOENT : -EAGAIN;
		_say_failed(job_id, err);
		return rc;
	}
	if (!msg || msg->record_count < 1) {
		slurm_free_job_info_msg(msg);
		return -ENOENT;
	}
	ji = &msg->job_array[0];
	*user = _user_name(ji->user_id);
	*account = strdup(ji->account ? ji->account : "");
	*partition = strdup(ji->partition ? ji->partition : "");
	slurm_free_job_info_msg(msg);
	if (!*user || !*account || !*partition)
		return -ENOMEM;
	return 0;
}
