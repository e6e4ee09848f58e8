/*
 * pcap_jobrec.h - each running job's power cap record (issue #45;
 * doc/design-powercap.md, "Records"): the time any of its nodes ran
 * capped (cap below the node's PowerCapMaxWatts) and the lowest cap any of
 * its nodes had, kept by slurm-energy-powercapd round by round and written
 * at the job's end into its AdminComment as one token,
 *
 *   powercap=capped:340s,min:280W
 *
 * where scontrol show job and sacct -o AdminComment show it.  slurmctld
 * refuses to update a finished job ("Job has already finished", measured
 * on 22.05), so the record is written while the job runs: when its lowest
 * cap goes down, else at most every every_ns (pcap_jobrec_due); at the
 * job's end the daemon logs the final one and sets it in the job's
 * accounting record (pcap_slurm_record_final).  A job never capped gets no
 * token (and costs no RPC).  Slurm-free: the daemon
 * learns the jobs' nodes through libslurm and hands them here by index.
 *
 * Time accounting: between two rounds a node holds the cap sent at the
 * first (pcap_ctl: a cap sent counts as the node's cap), so the interval
 * (prev, now] is charged to a job when it was capped at prev.  A job first
 * seen at now is charged from now on; the interval is charged once per
 * job however many of its nodes were capped.
 */
#ifndef SE_PCAP_JOBREC_H
#define SE_PCAP_JOBREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
	uint32_t job_id;
	int64_t capped_ns;	/* time any of its nodes was capped */
	uint32_t min_cap_mw;	/* its nodes' lowest cap; 0: never capped */
	int64_t last_ns;	/* the round it was last seen */
	bool capped;		/* at that round */
	bool seen;		/* in the round being made */
	bool written;		/* its AdminComment written once */
	int64_t written_ns;	/* last written at */
	uint32_t written_min_mw;	/* the lowest cap then */
	int64_t written_capped_ns;	/* the time capped then */
} pcap_jobrec_t;

typedef struct {
	pcap_jobrec_t *v;	/* sorted by job_id */
	size_t n, cap;
} pcap_jobrecs_t;

/* A running job of this round: its nodes as indexes into the group's. */
typedef struct {
	uint32_t job_id;
	const size_t *nodes;
	size_t n_nodes;
} pcap_job_t;

/* A job gone since the last round (ended, or no longer on the group's
 * nodes): its final record. */
typedef void (*pcap_jobrec_end_fn)(void *arg, const pcap_jobrec_t *r);

void pcap_jobrecs_init(pcap_jobrecs_t *j);
void pcap_jobrecs_free(pcap_jobrecs_t *j);

/* One round at now_ns: jobs[] are running; cap_mw[i] is the cap in force
 * on node i from now on, max_mw[i] its maximum.  Each job gone since the
 * last round is handed to end (before the new ones are added) and
 * dropped.  0, or -ENOMEM (the records kept as they were). */
int pcap_jobrecs_round(pcap_jobrecs_t *j, int64_t now_ns,
		       const pcap_job_t *jobs, size_t n_jobs,
		       const uint32_t *cap_mw, const uint32_t *max_mw,
		       size_t n_nodes, pcap_jobrec_end_fn end, void *arg);

/* The record's token ("powercap=capped:340s,min:280W") into buf: its
 * length; 0 for a job never capped (nothing to write). */
int pcap_jobrec_token(const pcap_jobrec_t *r, char *buf, size_t len);

/* Whether r's AdminComment is to be written now: capped, and never
 * written, or its lowest cap lower than written, or its time capped grown
 * and every_ns passed since the last write. */
bool pcap_jobrec_due(const pcap_jobrec_t *r, int64_t now_ns,
		     int64_t every_ns);

/* r's record written at now_ns. */
void pcap_jobrec_written(pcap_jobrec_t *r, int64_t now_ns);

/* An AdminComment with the token in it: old's "powercap=..." word
 * replaced, or the token appended after a blank (old may be NULL or
 * empty).  A malloc'ed string, or NULL (no memory). */
char *pcap_jobrec_comment(const char *old, const char *token);

#endif /* SE_PCAP_JOBREC_H */
