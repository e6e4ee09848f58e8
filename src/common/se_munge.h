/*
 * se_munge.h - messages between our programs over TCP, each the payload of
 * a MUNGE credential sent as the credential's text and a newline: the
 * power cap's daemon and agents (issue #45) and the PDU poller and the
 * nodes' meters that ask it (issue #44, pdu_poll_meter.h).  MUNGE says
 * who sent a message (its uid) and refuses a replayed or expired
 * credential, so a forged or replayed message is never taken.
 *
 * The line reader (se_lines.h) is munge-free; the seal/open pair wraps
 * libmunge (a context per program, its socket configurable, as Slurm's
 * AuthInfo=socket=).  se_sealer_t puts seal/open behind a small interface
 * so that a unit test can talk to a peer without munged.  Slurm-free; this
 * file alone links libmunge (libsemunge.la, with the PDU poller's wire and
 * node meter that use it), the rest of the core does not.
 */
#ifndef SE_MUNGE_H
#define SE_MUNGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "se_lines.h"

/* A context over the socket at path (NULL: MUNGE's default), or NULL with
 * err. */
void *se_munge_new(const char *socket, char *err, size_t err_len);
void se_munge_free(void *ctx);

/* All of buf written to fd (EINTR retried): 0 or -errno. */
int se_write_all(int fd, const void *buf, size_t len);

/* buf[0..len) sealed in a credential, written to fd with its newline (a
 * blocking write of a few hundred bytes).  0, or -errno with err. */
int se_munge_send(void *ctx, int fd, const uint8_t *buf, size_t len,
		  char *err, size_t err_len);

/* A credential's payload into buf (at most *len bytes; *len set to its
 * length) and its uid: 0, or -EACCES (MUNGE refused it: err says why,
 * replayed, expired, bad key) / -EMSGSIZE. */
int se_munge_open(void *ctx, const char *cred, uint8_t *buf, size_t *len,
		  uid_t *uid, char *err, size_t err_len);

/*
 * Who sealed a message, behind two calls: MUNGE (se_munge_sealer) in the
 * programs and plugins, a clear one in unit tests.
 */
typedef struct {
	/* buf[0..len) sealed into *text (malloc'd, NUL-terminated, no
	 * newline): 0, or -errno with err. */
	int (*seal)(void *ctx, const uint8_t *buf, size_t len, char **text,
		    char *err, size_t err_len);
	/* As se_munge_open. */
	int (*open)(void *ctx, const char *text, uint8_t *buf, size_t *len,
		    uid_t *uid, char *err, size_t err_len);
	void *ctx;
} se_sealer_t;

/* The MUNGE sealer over ctx (se_munge_new's). */
se_sealer_t se_munge_sealer(void *ctx);

#endif /* SE_MUNGE_H */
