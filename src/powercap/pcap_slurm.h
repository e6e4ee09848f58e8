/*
 * pcap_slurm.h - slurm-energy-powercapd's libslurm side (issue #45,
 * PowerCapJobRecords=yes): the running jobs on the cap group's nodes
 * (slurm_load_jobs, one RPC) and each capped job's record written into
 * its AdminComment (slurm_update_job2, as SlurmUser or root) while it
 * runs, and its final one into its accounting record in slurmdbd after it
 * ended (pcap_slurm_record_final), where sacct -o AdminComment shows it.
 * The records themselves: pcap_jobrec.h.
 */
#ifndef SE_PCAP_SLURM_H
#define SE_PCAP_SLURM_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "pcap_jobrec.h"

/* A node's index in the group, or -1 (not one of its nodes). */
typedef long (*pcap_node_find_fn)(void *arg, const char *name);

typedef struct {
	size_t n;
	pcap_job_t *jobs;	/* the running jobs with a node in the group */
	size_t *nodes;		/* their node indexes (jobs[].nodes point in) */
	char **comments;	/* each job's AdminComment (NULL: none) */
} pcap_slurm_jobs_t;

/* libslurm set up (slurm_init: slurm.conf, and the hash and auth plugins
 * its RPCs need from 23.02 on, where an RPC without it is fatal: "No hash
 * plugins loaded"), once, before the first call below; slurm.conf is
 * SLURM_CONF's or the default. */
void pcap_slurm_init(void);

/* The running jobs now, if any job changed since *last (0: ask for all;
 * set to the answer's time): 0, 1 when nothing changed (j untouched:
 * slurmctld answers that cheaply, as to squeue -i), or -1 with err. */
int pcap_slurm_jobs_load(pcap_slurm_jobs_t *j, time_t *last,
			 pcap_node_find_fn find, void *arg, char *err,
			 size_t err_len);
void pcap_slurm_jobs_free(pcap_slurm_jobs_t *j);

/* The job's AdminComment set to old (may be NULL) with token in it: 0, or
 * -1 with err. */
int pcap_slurm_record(uint32_t job_id, const char *old, const char *token,
		      char *err, size_t err_len);

/*
 * The job's final record into its accounting record, once the job has
 * ended: slurmctld refuses to update a finished job, so the record is
 * set in slurmdbd (slurmdb_job_modify, as sacctmgr modify job does;
 * SlurmUser, root or an accounting operator), with the token in the
 * AdminComment slurmctld wrote there at the job's end.  Only after that
 * end is in slurmdbd (the job's record shows it ended), since slurmctld's
 * end record sets the AdminComment it holds.  Written on the cluster
 * slurm.conf names (ClusterName), judged on the job's newest record (a
 * requeued job has one a run; slurmdbd sets every one of them).  0 written (or the comment already so), 1 not yet (the job's
 * end not in slurmdbd; err says which), -1 with err (tried again by the
 * caller).
 */
int pcap_slurm_record_final(uint32_t job_id, const char *token, char *err,
			    size_t err_len);

/* slurmdbd's connection, if one was opened, closed. */
void pcap_slurm_fini(void);

#endif /* SE_PCAP_SLURM_H */
