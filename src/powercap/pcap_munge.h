/*
 * pcap_munge.h - the transport of pcap_wire's messages between
 * slurm-energy-powercapd and its agents (issue #45): each message is the
 * payload of a MUNGE credential, sent as the credential's text and a
 * newline over the agent's TCP connection.  MUNGE says who sent it (its
 * uid: an agent takes caps only from root or the daemon's user, the daemon
 * reports only from root or the agents' user) and refuses a replayed or
 * expired credential, so a forged or replayed cap is never applied.
 *
 * The line reader (pcap_lines_t) is Slurm-free and munge-free; the
 * seal/open pair wraps libmunge (a context per program, its socket
 * configurable: --munge-socket, as Slurm's AuthInfo=socket=).
 */
#ifndef SE_PCAP_MUNGE_H
#define SE_PCAP_MUNGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pcap_wire.h"

/* A MUNGE credential of PCAP_WIRE_MAX_LEN bytes is well under this. */
#define PCAP_LINE_MAX	4096

typedef struct {
	char buf[2 * PCAP_LINE_MAX];
	size_t len;
} pcap_lines_t;

/* Read what fd has (non-blocking).  1 while open, 0 at EOF, -errno. */
int pcap_lines_fill(pcap_lines_t *l, int fd);

/* The next whole line (its newline cut) into line: 1, 0 none yet, or
 * -EMSGSIZE for a line longer than PCAP_LINE_MAX (the peer is broken). */
int pcap_lines_next(pcap_lines_t *l, char *line, size_t len);

/* A context over the socket at path (NULL: MUNGE's default), or NULL with
 * err. */
void *pcap_munge_new(const char *socket, char *err, size_t err_len);
void pcap_munge_free(void *ctx);

/* buf[0..len) sealed in a credential, written to fd with its newline (a
 * blocking write of a few hundred bytes).  0, or -errno with err. */
int pcap_munge_send(void *ctx, int fd, const uint8_t *buf, size_t len,
		    char *err, size_t err_len);

/* A credential's payload into buf (at most *len bytes; *len set to its
 * length) and its uid: 0, or -EACCES (MUNGE refused it: err says why,
 * replayed, expired, bad key) / -EMSGSIZE. */
int pcap_munge_open(void *ctx, const char *cred, uint8_t *buf, size_t *len,
		    uid_t *uid, char *err, size_t err_len);

#endif /* SE_PCAP_MUNGE_H */
