/*
 * snmp_transport.h - the small interface the SNMP meter talks through: one
 * GET of many OIDs to one agent, bounded by a deadline.  net-snmp is one
 * implementation (snmp_net.c); the unit tests put a fake behind it.
 * Slurm-free.
 *
 * Secrets (a v2c community, v3 keys) travel in snmp_secret_t only; no call
 * here writes them into a message.
 */
#ifndef SE_SNMP_TRANSPORT_H
#define SE_SNMP_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNMP_OID_MAX		64	/* sub-identifiers */
#define SNMP_SECRET_MAX		128

typedef enum {
	SNMP_V2C = 0,
	SNMP_V3,
} snmp_version_t;

typedef enum {
	SNMP_AUTH_SHA = 0,	/* HMAC-SHA-96 */
	SNMP_AUTH_SHA256,	/* HMAC-SHA-256-192 */
} snmp_auth_t;

typedef enum {
	SNMP_PRIV_AES = 0,	/* AES-128 CFB */
	SNMP_PRIV_NONE,		/* authNoPriv */
} snmp_priv_t;

typedef struct {
	snmp_version_t version;
	char community[SNMP_SECRET_MAX];	/* v2c */
	char user[SNMP_SECRET_MAX];		/* v3 */
	snmp_auth_t auth;
	char auth_key[SNMP_SECRET_MAX];		/* passphrase, >= 8 chars */
	snmp_priv_t priv;
	char priv_key[SNMP_SECRET_MAX];
} snmp_secret_t;

/* One agent. */
typedef struct {
	const char *name;	/* the PDU's name in the map, for messages */
	const char *host;	/* "HOST[:PORT]" or net-snmp's
				 * "udp:HOST:PORT" */
	const snmp_secret_t *secret;
	const char *context;	/* v3 context name; NULL or "": none */
} snmp_peer_t;

typedef struct {
	uint32_t sub[SNMP_OID_MAX];
	size_t len;
} snmp_oid_t;

/* One variable of an answer. */
typedef struct {
	int status;		/* 0; -ENOENT: noSuchInstance/noSuchObject;
				 * -EPROTO: not a number */
	bool negative;		/* an INTEGER below 0: value is its
				 * magnitude */
	uint64_t value;
} snmp_value_t;

typedef struct {
	const char *name;	/* "net-snmp", "fake" */
	/* A session to peer (v3: engine discovery, bounded by deadline).
	 * 0 or -errno, the reason in err (never a secret). */
	int (*open)(const snmp_peer_t *peer, void **ctx, uint64_t deadline_ns,
		    char *err, size_t err_len);
	/* GET the n OIDs in one request; out[i] answers oids[i].  0 (each
	 * out[i].status says its own), -ETIMEDOUT (no answer by deadline),
	 * -EACCES (authentication or decryption refused), other -errno;
	 * the reason in msg. */
	int (*get)(void *ctx, const snmp_oid_t *oids, size_t n,
		   snmp_value_t *out, uint64_t deadline_ns, char *msg,
		   size_t msg_len);
	void (*close)(void *ctx);
} snmp_transport_t;

/* Parse "1.3.6.1..." (a leading dot allowed) and append it to o:
 * 0, or -EINVAL (not digits and dots, a sub-id over 2^32 - 1, too long). */
int snmp_oid_append(snmp_oid_t *o, const char *dotted);

/* "1.3.6.1.4..." into buf. */
void snmp_oid_format(const snmp_oid_t *o, char *buf, size_t len);

/* net-snmp's transport (snmp_net.c). */
extern const snmp_transport_t snmp_net_transport;

#endif
