/*
 * pcap_state.h - the cluster power cap's state file (issue #45;
 * doc/design-powercap.md, "Users told at submit"): slurm-energy-powercapd
 * publishes it at PowerCapStateFile, cli_filter/energy_policy reads it at
 * submit and tells the user one line while the cluster is capping.
 *
 * The file is a few key=value lines (under 512 bytes), written to a
 * temporary file and renamed over the path, so a reader sees the old file
 * or the new one, never half of one:
 *
 *   slurm-energy-powercap-state 1
 *   time=1764417600          written at (wall clock, s)
 *   valid_until=1764417615   after this the state is stale: ignored
 *   capping=yes              some node's cap is below its maximum
 *   since=1764417480         capping since (0: not capping)
 *   cap_w=1000.0             the group's PowerCapWatts
 *   power_w=962.5            the group's draw in the last round
 *   nodes=4 capped_nodes=3
 *
 * A reader on a submit host must never hang: pcap_state_read_bounded reads
 * in a child process and gives up after a timeout (a hard NFS mount that
 * stops answering leaves the child blocked, not the caller).  Slurm-free,
 * libc only (cli_filter/energy_policy compiles this file in).
 */
#ifndef SE_PCAP_STATE_H
#define SE_PCAP_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PCAP_STATE_MAGIC	"slurm-energy-powercap-state 1"
#define PCAP_STATE_MAX_LEN	1024	/* a longer file is refused */

typedef struct {
	int64_t time_s;
	int64_t valid_until_s;
	int64_t since_s;	/* 0: not capping */
	bool capping;
	double cap_w, power_w;
	unsigned nodes, capped_nodes;
} pcap_state_t;

/* The file's text into buf: its length, or -ENOSPC. */
int pcap_state_format(const pcap_state_t *s, char *buf, size_t len);

/* Parse the text (len bytes): 0, or -EINVAL with err saying what is
 * wrong (magic, key, value).  Unknown keys are ignored (newer daemons). */
int pcap_state_parse(const char *text, size_t len, pcap_state_t *s,
		     char *err, size_t err_len);

/* Write s to path through path.tmp and rename (mode 0644): 0, or -errno
 * with err naming the file. */
int pcap_state_write(const char *path, const pcap_state_t *s, char *err,
		     size_t err_len);

/* Read and parse path within timeout_ms (read in a child process; the
 * caller never blocks longer): 0, or -errno (-ETIMEDOUT, -ENOENT, ...)
 * with err naming the file. */
int pcap_state_read_bounded(const char *path, int timeout_ms,
			    pcap_state_t *s, char *err, size_t err_len);

/* The line a user is told at submit, into buf: its length; 0 when there
 * is nothing to tell (not capping, or stale: now_s after valid_until, or
 * written more than a minute in the future, a clock gone wrong). */
int pcap_state_notice(const pcap_state_t *s, int64_t now_s, char *buf,
		      size_t len);

/* PowerCapStateFile's value from a powercap.conf (the other keys are not
 * read: a submit host needs only this one): 0 and path set, -ENOENT when
 * the file or the key is absent, -errno on a read error. */
int pcap_state_conf_path(const char *conf, char *path, size_t len);

#endif /* SE_PCAP_STATE_H */
