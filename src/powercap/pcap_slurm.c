/*
 * pcap_slurm.c - slurm-energy-powercapd's libslurm side (pcap_slurm.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "slurm/slurmdb.h"

#include "pcap_slurm.h"

static pthread_once_t _slurm_once = PTHREAD_ONCE_INIT;

static void _slurm_init_once(void)
{
	slurm_init(NULL);
}

void pcap_slurm_init(void)
{
	pthread_once(&_slurm_once, _slurm_init_once);
}

void pcap_slurm_jobs_free(pcap_slurm_jobs_t *j)
{
	for (size_t i = 0; i < j->n; i++)
		free(j->comments[i]);
	free(j->comments);
	free(j->jobs);
	free(j->nodes);
	memset(j, 0, sizeof(*j));
}

/* The group's nodes of one job appended to j->nodes from *used on: their
 * count. */
static size_t _job_nodes(pcap_slurm_jobs_t *j, size_t *used,
			 const char *list, pcap_node_find_fn find, void *arg)
{
	/* hostlist_t is the pointer up to 23.05 and the struct from 23.11:
	 * struct hostlist * is the pointer in every release */
	struct hostlist *hl = slurm_hostlist_create(list);
	size_t n = 0;
	char *h;

	if (!hl)
		return 0;
	while ((h = slurm_hostlist_shift(hl))) {
		long i = find(arg, h);

		if (i >= 0)
			j->nodes[(*used)++] = (size_t)i, n++;
		free(h);
	}
	slurm_hostlist_destroy(hl);
	return n;
}

static bool _running(const slurm_job_info_t *ji)
{
	return (ji->job_state & JOB_STATE_BASE) == JOB_RUNNING;
}

int pcap_slurm_jobs_load(pcap_slurm_jobs_t *j, time_t *last,
			 pcap_node_find_fn find, void *arg, char *err,
			 size_t err_len)
{
	job_info_msg_t *msg = NULL;
	size_t n_nodes = 0, used = 0, *starts;

	if (slurm_load_jobs(*last, &msg, SHOW_ALL) != SLURM_SUCCESS) {
		/* errno, which slurm_get_errno() returned until 24.11
		 * removed it */
		int e = errno;

		if (e == SLURM_NO_CHANGE_IN_DATA)
			return 1;
		snprintf(err, err_len, "slurm_load_jobs: %s",
			 slurm_strerror(e));
		return -1;
	}
	*last = msg->last_update;
	memset(j, 0, sizeof(*j));
	for (uint32_t k = 0; k < msg->record_count; k++)
		if (_running(&msg->job_array[k]))
			n_nodes += msg->job_array[k].num_nodes;
	j->jobs = calloc(msg->record_count + 1, sizeof(*j->jobs));
	j->comments = calloc(msg->record_count + 1, sizeof(*j->comments));
	j->nodes = calloc(n_nodes + 1, sizeof(*j->nodes));
	starts = calloc(msg->record_count + 1, sizeof(*starts));
	if (!j->jobs || !j->comments || !j->nodes || !starts) {
		free(starts);
		pcap_slurm_jobs_free(j);
		slurm_free_job_info_msg(msg);
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	for (uint32_t k = 0; k < msg->record_count; k++) {
		slurm_job_info_t *ji = &msg->job_array[k];
		size_t start = used, n;

		/* (used + the job's num_nodes stays within n_nodes) */
		if (!_running(ji) || !ji->nodes ||
		    used + ji->num_nodes > n_nodes)
			continue;
		if (!(n = _job_nodes(j, &used, ji->nodes, find, arg)))
			continue;
		starts[j->n] = start;
		j->comments[j->n] = ji->admin_comment ?
				    strdup(ji->admin_comment) : NULL;
		j->jobs[j->n++] = (pcap_job_t){ .job_id = ji->job_id,
						.n_nodes = n };
	}
	/* j->nodes is complete: point the jobs into it */
	for (size_t i = 0; i < j->n; i++)
		j->jobs[i].nodes = &j->nodes[starts[i]];
	free(starts);
	slurm_free_job_info_msg(msg);
	return 0;
}

int pcap_slurm_record(uint32_t job_id, const char *old, const char *token,
		      char *err, size_t err_len)
{
	job_desc_msg_t d;
	job_array_resp_msg_t *resp = NULL;
	char *comment = pcap_jobrec_comment(old, token), id[16];
	int rc, code = 0;

	if (!comment) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	slurm_init_job_desc_msg(&d);
	/* job_id_str: job_desc_msg_t has no job_id in 24.11 */
	snprintf(id, sizeof(id), "%u", job_id);
	d.job_id_str = id;
	d.admin_comment = comment;
	/* slurm_update_job2: with job_id_str, slurm_update_job logs an
	 * error line ("Use slurm_update_job2() ...") on every call */
	rc = slurm_update_job2(&d, &resp);
	if (rc != SLURM_SUCCESS)
		code = errno ? errno : SLURM_ERROR;
	for (uint32_t i = 0; resp && i < resp->job_array_count; i++)
		if (resp->error_code[i] && !code)
			code = resp->error_code[i];
	if (code)
		snprintf(err, err_len, "job %u: AdminComment=%s: %s", job_id,
			 comment, slurm_strerror(code));
	if (resp)
		slurm_free_job_array_resp(resp);
	free(comment);
	return code ? -1 : 0;
}

/* ------------------------------------------------ the final record */

/* slurmdbd's connection and the cluster's name (records thread only) */
static void *_db;
static char *_cluster;

/* slurmdbd's connection closed: opened again at the next final record */
static void _db_close(void)
{
	if (_db)
		slurmdb_connection_close(&_db);
	_db = NULL;
}

void pcap_slurm_fini(void)
{
	_db_close();
	free(_cluster);
	_cluster = NULL;
}

/* ClusterName, as slurmctld has it (slurm.conf through libslurm). */
static int _cluster_name(char *err, size_t err_len)
{
	slurm_conf_t *conf = NULL;

	if (_cluster)
		return 0;
	if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS) {
		snprintf(err, err_len, "slurm_load_ctl_conf: %s",
			 slurm_strerror(errno));
		return -1;
	}
	_cluster = conf->cluster_name ? strdup(conf->cluster_name) : NULL;
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	slurm_free_conf(conf);		/* renamed in 26.05 */
#else
	slurm_free_ctl_conf(conf);
#endif
	if (!_cluster) {
		snprintf(err, err_len, "slurm.conf names no ClusterName");
		return -1;
	}
	return 0;
}

static int _db_connect(char *err, size_t err_len)
{
	uint16_t flags = 0;

	if (_db)
		return 0;
	if (!(_db = slurmdb_connection_get(&flags))) {
		snprintf(err, err_len, "slurmdbd: no connection: %s",
			 slurm_strerror(errno));
		return -1;
	}
	return 0;
}

/* The job's records on the cluster (no steps, any time): a condition to
 * free with _job_cond_free. */
static int _job_cond(slurmdb_job_cond_t *cond, uint32_t job_id)
{
	slurm_selected_step_t *step = calloc(1, sizeof(*step));
	char *cluster = strdup(_cluster);

	memset(cond, 0, sizeof(*cond));
	if (!step || !cluster) {
		free(step);
		free(cluster);
		return -1;
	}
	step->array_task_id = NO_VAL;
	step->het_job_offset = NO_VAL;
	step->step_id.job_id = job_id;
	step->step_id.step_id = NO_VAL;
	step->step_id.step_het_comp = NO_VAL;
	cond->step_list = slurm_list_create(free);
	cond->cluster_list = slurm_list_create(free);
	slurm_list_append(cond->step_list, step);
	slurm_list_append(cond->cluster_list, cluster);
	cond->flags = JOBCOND_FLAG_NO_STEP | JOBCOND_FLAG_NO_DEFAULT_USAGE;
	/* any scheduling flags (0 would ask for jobs with none) */
	cond->db_flags = SLURMDB_JOB_FLAG_NOTSET;
	return 0;
}

static void _job_cond_free(slurmdb_job_cond_t *cond)
{
	slurm_list_destroy(cond->step_list);
	slurm_list_destroy(cond->cluster_list);
}

/* The job's newest record (a requeued job has one per run), or NULL. */
static slurmdb_job_rec_t *_newest(void *jobs)
{
	slurmdb_job_rec_t *rec, *newest = NULL;
	void *it = slurm_list_iterator_create(jobs);

	while ((rec = slurm_list_next(it)))
		if (!newest || rec->submit > newest->submit ||
		    (rec->submit == newest->submit &&
		     rec->start > newest->start))
			newest = rec;
	slurm_list_iterator_destroy(it);
	return newest;
}

static bool _ended(const slurmdb_job_rec_t *rec)
{
	uint32_t base = rec->state & JOB_STATE_BASE;

	return rec->end && base != JOB_PENDING && base != JOB_RUNNING &&
	       base != JOB_SUSPENDED;
}

/* The new AdminComment into the job's record (an accounting operator's
 * change, as sacctmgr modify job AdminComment=...). */
static int _modify(slurmdb_job_cond_t *cond, char *comment, char *err,
		   size_t err_len)
{
	slurmdb_job_rec_t change;
	void *changed;

	memset(&change, 0, sizeof(change));
	change.derived_ec = NO_VAL;	/* left as it is */
	change.admin_comment = comment;
	changed = slurmdb_job_modify(_db, cond, &change);
	if (!changed || !slurm_list_count(changed)) {
		snprintf(err, err_len, "slurmdb_job_modify: %s",
			 slurm_strerror(errno));
		if (changed)
			slurm_list_destroy(changed);
		return -1;
	}
	slurm_list_destroy(changed);
	/* slurmdbd holds a change in its transaction until it is committed
	 * (sacctmgr asks before it does) */
	if (slurmdb_connection_commit(_db, true) != SLURM_SUCCESS) {
		snprintf(err, err_len, "slurmdb_connection_commit: %s",
			 slurm_strerror(errno));
		return -1;
	}
	return 0;
}

int pcap_slurm_record_final(uint32_t job_id, const char *token, char *err,
			    size_t err_len)
{
	slurmdb_job_cond_t cond;
	slurmdb_job_rec_t *rec;
	char *comment = NULL;
	void *jobs;
	int rc = -1;

	if (_cluster_name(err, err_len) || _db_connect(err, err_len))
		return -1;
	if (_job_cond(&cond, job_id)) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	if (!(jobs = slurmdb_jobs_get(_db, &cond))) {
		snprintf(err, err_len, "job %u: slurmdb_jobs_get: %s", job_id,
			 slurm_strerror(errno));
		_db_close();	/* slurmdbd may have closed it */
		_job_cond_free(&cond);
		return -1;
	}
	rec = _newest(jobs);
	if (!rec || !_ended(rec)) {
		rc = 1;		/* its end not in slurmdbd yet */
		snprintf(err, err_len, "job %u: %s", job_id, !rec ?
			 "no record in slurmdbd yet" :
			 "its end not in slurmdbd yet");
	} else if (!(comment = pcap_jobrec_comment(rec->admin_comment, token)))
		snprintf(err, err_len, "out of memory");
	else if (rec->admin_comment && !strcmp(comment, rec->admin_comment))
		rc = 0;
	else if (strpbrk(comment, "'\\"))
		/* slurmdbd puts the value in its SQL as it is */
		snprintf(err, err_len, "job %u: its AdminComment has a quote or a backslash: final record %s not written",
			 job_id, token);
	else if (!_modify(&cond, comment, err, err_len))
		rc = 0;
	free(comment);
	slurm_list_destroy(jobs);
	_job_cond_free(&cond);
	return rc;
}
