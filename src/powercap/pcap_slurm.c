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
	char *comment = pcap_jobrec_comment(old, token), id[16];
	int rc;

	if (!comment) {
		snprintf(err, err_len, "out of memory");
		return -1;
	}
	slurm_init_job_desc_msg(&d);
	/* job_id_str: job_desc_msg_t has no job_id in 24.11 */
	snprintf(id, sizeof(id), "%u", job_id);
	d.job_id_str = id;
	d.admin_comment = comment;
	rc = slurm_update_job(&d);
	if (rc != SLURM_SUCCESS)
		snprintf(err, err_len, "job %u: AdminComment=%s: %s", job_id,
			 comment, slurm_strerror(errno));
	free(comment);
	return rc == SLURM_SUCCESS ? 0 : -1;
}
