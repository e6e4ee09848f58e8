/*
 * se_prog.h - what the suite's daemons (slurm-energy-powercapd, its
 * agent, slurm-energy-pdu-poller) share around their cores: their log
 * (stderr, which systemd's journal keeps; debug lines with -v), the
 * signals that stop them or make a daemon reload, and the uid a --user
 * names.
 */
#ifndef SE_PROG_H
#define SE_PROG_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

extern volatile sig_atomic_t se_prog_stop;	/* the signal, 0: none */
extern volatile sig_atomic_t se_prog_reload;	/* SIGHUP seen */

/* se_log to stderr as "PROG: LEVEL: msg"; debug lines when verbose. */
void se_prog_log(const char *prog, bool verbose);

/* SIGTERM, SIGINT set se_prog_stop, SIGHUP se_prog_reload (a daemon that
 * does not reload ignores it); SIGPIPE
 * ignored (a peer gone is a write's EPIPE). */
void se_prog_signals(void);

/* The uid of user (a name or a number): 0, or -ENOENT with err. */
int se_prog_uid(const char *user, uid_t *uid, char *err, size_t err_len);

#endif /* SE_PROG_H */
