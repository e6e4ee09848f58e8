/*
 * pcap_wire.h - the messages between slurm-energy-powercapd and the node
 * agents (issue #45), as bytes: encode and decode, Slurm-free, no I/O.
 *
 * Two fixed-size messages, little-endian, each opened by a header
 * (magic "SEPC", version, type, total length):
 *   CAP     controller -> agent: the node it is meant for, a sequence
 *           number, the cap (mW), the lease (ms), flags (RESTORE: restore
 *           the defaults now, the controller letting the node go).
 *   REPORT  agent -> controller: the node, the last sequence applied, the
 *           node's mean power (mW) over window_ms, the node cap its knobs
 *           read back, the node cap in force over that window (its time
 *           mean: what the power is judged against, 0 unknown; version
 *           2), flags (ENFORCED: the last apply succeeded; JOB: a job
 *           runs on the node), and the knob's error text when not
 *           enforced.
 * The transport carries each message inside a MUNGE credential (payload),
 * so that an agent takes caps only from SlurmUser or root; that layer is
 * not here.  A decoder refuses anything it does not fully understand and
 * says what: bad magic, another version, an unknown type, a length that
 * is not the type's, a node name or error text without its NUL.  So a
 * daemon and its agents are upgraded together: a peer of another version
 * is refused by name, its node charged its maximum (the daemon) or left
 * to its lease (the agent).
 */
#ifndef SE_PCAP_WIRE_H
#define SE_PCAP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define PCAP_WIRE_MAGIC		0x43504553u	/* "SEPC" little-endian */
#define PCAP_WIRE_VERSION	2	/* 2: REPORT's window_cap_mw */
#define PCAP_WIRE_CAP		1
#define PCAP_WIRE_REPORT	2
#define PCAP_WIRE_NAME_MAX	64	/* with its NUL */
#define PCAP_WIRE_ERR_MAX	200	/* with its NUL */

#define PCAP_CAP_RESTORE	0x1
#define PCAP_REPORT_ENFORCED	0x1
#define PCAP_REPORT_JOB		0x2

#define PCAP_WIRE_HDR_LEN	12
#define PCAP_WIRE_CAP_LEN	(PCAP_WIRE_HDR_LEN + 8 + 4 + 4 + 4 + \
				 PCAP_WIRE_NAME_MAX)
#define PCAP_WIRE_REPORT_LEN	(PCAP_WIRE_HDR_LEN + 8 + 4 + 4 + 4 + 4 + 4 + \
				 PCAP_WIRE_NAME_MAX + PCAP_WIRE_ERR_MAX)
#define PCAP_WIRE_MAX_LEN	PCAP_WIRE_REPORT_LEN

typedef struct {
	char node[PCAP_WIRE_NAME_MAX];
	uint64_t seq;
	uint32_t cap_mw, lease_ms, flags;
} pcap_cap_msg_t;

typedef struct {
	char node[PCAP_WIRE_NAME_MAX];
	uint64_t seq;
	uint32_t power_mw, window_ms, cap_mw, window_cap_mw, flags;
	char error[PCAP_WIRE_ERR_MAX];
} pcap_report_msg_t;

/* Encode into buf (at least PCAP_WIRE_*_LEN bytes): the length, or
 * -EINVAL for a node name or error text too long (the message names it). */
int pcap_wire_cap(const pcap_cap_msg_t *m, uint8_t *buf, size_t len);
int pcap_wire_report(const pcap_report_msg_t *m, uint8_t *buf, size_t len);

/* The type of a whole message in buf (PCAP_WIRE_CAP or _REPORT), or a
 * negative errno with err saying what is wrong with it. */
int pcap_wire_type(const uint8_t *buf, size_t len, char *err,
		   size_t err_len);

/* Decode a message of that type: 0, or -EBADMSG with err. */
int pcap_wire_read_cap(const uint8_t *buf, size_t len, pcap_cap_msg_t *m,
		       char *err, size_t err_len);
int pcap_wire_read_report(const uint8_t *buf, size_t len,
			  pcap_report_msg_t *m, char *err, size_t err_len);

#endif /* SE_PCAP_WIRE_H */
