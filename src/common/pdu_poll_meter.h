/*
 * pdu_poll_meter.h - a node's PDU outlets read through the PDU poller
 * (slurm-energy-pdu-poller(8), issue #44) instead of the PDUs, behind the
 * meter_ops_t interface (src/common/meter.h).  Slurm-free, and the same
 * for any PDU family the poller reads (SNMP today, Redfish next): the
 * reading brings its counter's spec, so nothing here knows the PDUs.
 *
 * Each read asks the poller (one TCP connection, kept) for this node's
 * latest reading: an ASK in a sealed message, a READING back
 * (pdu_poll_wire.h), taken only from root or the poller's uid, with this
 * read's nonce and node.  The reading is stamped at its receipt minus its
 * age, so that its instant stays the PDUs' reading's.  The whole exchange,
 * connection included, is bounded by min(the read's deadline, the
 * timeout); nothing here waits past it.
 *
 * A reading of a round already taken: -EALREADY (nothing newer).  The
 * poller down or silent: a failed read naming it ("poller h:p: connect:
 * Connection refused"), the connection closed and made again at the next
 * read.  The poller's round failed for this node (a PDU down, an outlet
 * absent): a failed read with the poller's reason, the connection kept
 * (-EAGAIN).  A reading older than max_age (the poller's rounds late):
 * failed too.
 */
#ifndef SE_PDU_POLL_METER_H
#define SE_PDU_POLL_METER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "meter.h"
#include "se_munge.h"

typedef struct {
	const char *node;
	const char *poller;	/* "HOST:PORT", "[V6ADDR]:PORT" */
	const char *key;	/* the key that set it, for messages
				 * ("EnergySNMPPoller"); NULL: "poller" */
	se_sealer_t sealer;	/* MUNGE (se_munge_sealer) */
	void (*sealer_free)(void *ctx);	/* NULL, or the meter owns
					 * sealer.ctx: freed with it */
	uid_t poller_uid;	/* answers from root or this uid */
	uint64_t timeout_ns;	/* the longest exchange */
	uint64_t max_age_ns;	/* an older reading fails */
} pdu_poll_meter_config_t;

typedef struct pdu_poll_meter pdu_poll_meter_t;

extern const meter_ops_t pdu_poll_meter_ops;

/* A meter (config copied; no I/O): 0, -EINVAL with err (the poller's
 * address is not HOST:PORT: "KEY=ADDR: not HOST:PORT"), or -ENOMEM. */
int pdu_poll_meter_create(const pdu_poll_meter_config_t *cfg,
			  pdu_poll_meter_t **out, char *err,
			  size_t err_len);
void pdu_poll_meter_destroy(pdu_poll_meter_t *m);

/* Asks sent, for tests and the bench. */
unsigned long pdu_poll_meter_asks(const pdu_poll_meter_t *m);

#endif /* SE_PDU_POLL_METER_H */
