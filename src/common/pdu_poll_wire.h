/*
 * pdu_poll_wire.h - the messages between a node's meter and the PDU poller
 * (slurm-energy-pdu-poller(8), issue #44), as bytes: encode and decode,
 * Slurm-free, no I/O.  They serve any PDU family the poller reads (SNMP
 * today, Redfish next): nothing in them is any family's own.  Each
 * travels as the payload of a MUNGE credential, one a line (se_munge.h),
 * so that a node takes readings only from the poller's user (readings
 * drive billing).
 *
 * Two fixed-size messages, little-endian, each opened by se_wire.h's
 * header (magic "SEPP", version, type, total length):
 *   ASK      node -> poller: the node, a nonce.
 *   READING  poller -> node: the nonce echoed, the node, the poller's
 *            round number (seq) of the reading, its age at the answer (ns
 *            since the PDUs were read; the node stamps it at receive time
 *            - age), the node's power (mW) and summed energy count with its
 *            spec (mJ a count, width, registers), flags (which are
 *            carried), and when the round failed for this node its -errno
 *            (status) and why (the PDU, its host, the reason).
 * A decoder refuses anything it does not fully understand and says what.
 * The bytes are those of the first poller (then src/meters/snmp/): an old
 * node and a new poller still talk.
 */
#ifndef SE_PDU_POLL_WIRE_H
#define SE_PDU_POLL_WIRE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "meter.h"

#define PDU_POLL_MAGIC		0x50504553u	/* "SEPP" little-endian */
#define PDU_POLL_VERSION	1
#define PDU_POLL_ASK		1
#define PDU_POLL_READING	2
#define PDU_POLL_NAME_MAX	64	/* with its NUL */
#define PDU_POLL_ERR_MAX	320	/* with its NUL */

#define PDU_POLL_POWER		0x1	/* power_mw carried */
#define PDU_POLL_COUNTER	0x2	/* counter_raw and its spec carried */

#define PDU_POLL_ASK_LEN	(12 + 8 + PDU_POLL_NAME_MAX)
#define PDU_POLL_READING_LEN	(12 + 6 * 8 + 4 * 4 + PDU_POLL_NAME_MAX + \
				 PDU_POLL_ERR_MAX)
#define PDU_POLL_MAX_LEN	PDU_POLL_READING_LEN

typedef struct {
	char node[PDU_POLL_NAME_MAX];
	uint64_t nonce;
} pdu_poll_ask_t;

typedef struct {
	char node[PDU_POLL_NAME_MAX];
	uint64_t nonce;
	uint64_t seq;		/* the poller's round; 0: none yet */
	uint64_t age_ns;
	uint64_t power_mw;
	uint64_t counter_raw;
	double mj_per_unit;	/* of counter_raw */
	uint32_t width_bits, registers;
	uint32_t flags;
	int32_t status;		/* 0, or the round's -errno */
	char error[PDU_POLL_ERR_MAX];
} pdu_poll_reading_t;

/* Encode into buf (at least PDU_POLL_*_LEN bytes): the length, -ENOSPC,
 * or -EINVAL for a node name or error text too long. */
int pdu_poll_wire_ask(const pdu_poll_ask_t *m, uint8_t *buf, size_t len);
int pdu_poll_wire_reading(const pdu_poll_reading_t *m, uint8_t *buf,
			  size_t len);

/* Decode a whole message of that type: 0, or -EBADMSG /
 * -EPROTONOSUPPORT with err saying what is wrong. */
int pdu_poll_wire_read_ask(const uint8_t *buf, size_t len,
			   pdu_poll_ask_t *m, char *err, size_t err_len);
int pdu_poll_wire_read_reading(const uint8_t *buf, size_t len,
			       pdu_poll_reading_t *m, char *err,
			       size_t err_len);

/*
 * A poller's latest reading of one node, as both pollers (SNMP, Redfish)
 * keep it and answer from it: the round that made it, its outcome (0, or
 * -errno and why), the reading.
 */
typedef struct {
	uint64_t seq;
	int rc;
	meter_reading_t reading;
	char why[PDU_POLL_ERR_MAX];
} pdu_poll_latest_t;

/* Keep round seq's outcome as l (why cut to fit). */
void pdu_poll_latest_set(pdu_poll_latest_t *l, uint64_t seq, int rc,
			 const meter_reading_t *r, const char *why);

/* The answer out (its node and nonce left as they are) from l at now_ns:
 * the reading's age, power, counter with spec (NULL: the reading's own),
 * or the round's failure. */
void pdu_poll_answer_from(pdu_poll_reading_t *out,
			  const pdu_poll_latest_t *l,
			  const counter_spec_t *spec, uint64_t now_ns);

/* A node asks for its reading (under the poller's lock): true when it
 * asks again for the one it was last answered (its sampler kicked at a
 * step's boundary: the poller reads early for it); answered then holds
 * latest's seq. */
bool pdu_poll_asked_again(const pdu_poll_latest_t *latest,
			  uint64_t *answered);

/* *wanted read under lock (a poller's "a node wants an early read"). */
bool pdu_poll_wanted(pthread_mutex_t *lock, const bool *wanted);

/* Under the poller's lock, for a node that may want an early read: due
 * (its sources' last reads at least the gap ago) takes it (true, its
 * wanted cleared); not due leaves it wanted and sets *poller_wanted, to
 * try again. */
bool pdu_poll_take(bool *node_wanted, bool due, bool *poller_wanted);

#endif /* SE_PDU_POLL_WIRE_H */
