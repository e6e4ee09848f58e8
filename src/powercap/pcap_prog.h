/*
 * pcap_prog.h - what slurm-energy-powercapd and slurm-energy-powercap-agent
 * share around their cores (issue #45): their log (stderr, which systemd's
 * journal keeps; debug lines with -v), the signals that stop them or make
 * the daemon reload, and the uid a --user names.
 */
#ifndef SE_PCAP_PROG_H
#define SE_PCAP_PROG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

extern volatile sig_atomic_t pcap_prog_stop;	/* the signal, 0: none */
extern volatile sig_atomic_t pcap_prog_reload;	/* SIGHUP seen */

/* se_log to stderr as "PROG: LEVEL: msg"; debug lines when verbose. */
void pcap_prog_log(const char *prog, bool verbose);

/* SIGTERM, SIGINT set pcap_prog_stop, SIGHUP pcap_prog_reload; SIGPIPE
 * ignored (a peer gone is a write's EPIPE). */
void pcap_prog_signals(void);

/* The uid of user (a name or a number): 0, or -ENOENT with err. */
int pcap_prog_uid(const char *user, uid_t *uid, char *err, size_t err_len);

#endif /* SE_PCAP_PROG_H */
