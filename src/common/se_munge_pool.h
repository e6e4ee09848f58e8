/*
 * se_munge_pool.h - many messages sealed or opened at once, by several
 * threads each with a MUNGE context of its own (se_munge.h seals and opens
 * one at a time).
 *
 * Why: every seal and open is a round trip to munged over its socket, about
 * 0.1 ms, and one at a time they add up: the power cap's daemon seals a CAP
 * and opens a REPORT per node per round, 20,000 round trips a round at
 * 10,000 nodes, 2 s in a row, more than its period.  munged answers several
 * at a time (its --num-threads), so the daemon hands a round's messages to
 * a pool and waits for them all (bench/powercap/daemon_scale.py measures
 * it).  The calling thread works too; with one thread nothing is started.
 * Slurm-free; links libmunge (libsemunge.la).
 */
#ifndef SE_MUNGE_POOL_H
#define SE_MUNGE_POOL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SE_MUNGE_POOL_MAX_THREADS 64
#define SE_MUNGE_ITEM_MAX 512	/* a message's payload, at most */

/* One message: seal reads buf[0..len) and fills sealed; open reads text
 * and fills payload, payload_len and uid.  rc 0, or -errno with err. */
typedef struct {
	uint8_t buf[SE_MUNGE_ITEM_MAX];
	size_t len;
	char *sealed;		/* seal: the credential and its newline,
				 * malloc'd (the caller frees it) */
	size_t sealed_len;
	const char *text;	/* open: a credential (its line) */
	uint8_t payload[SE_MUNGE_ITEM_MAX];
	size_t payload_len;
	uid_t uid;
	int rc;
	char err[200];
} se_munge_item_t;

typedef struct se_munge_pool se_munge_pool_t;

/* n_threads (1..SE_MUNGE_POOL_MAX_THREADS, the caller's counted) with a
 * context each over the munged socket (NULL: MUNGE's default); NULL with
 * err. */
se_munge_pool_t *se_munge_pool_new(const char *socket, unsigned n_threads,
				   char *err, size_t err_len);
void se_munge_pool_free(se_munge_pool_t *p);

/* Every item sealed (or opened), returning when all are done. */
void se_munge_pool_seal(se_munge_pool_t *p, se_munge_item_t *items,
			size_t n);
void se_munge_pool_open(se_munge_pool_t *p, se_munge_item_t *items,
			size_t n);

#endif /* SE_MUNGE_POOL_H */
