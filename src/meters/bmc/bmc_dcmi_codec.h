/*
 * bmc_dcmi_codec.h - DCMI power commands as bytes: build requests, parse
 * responses.
 *
 * Pure functions, no I/O: the transport (libfreeipmi's ipmi_cmd_raw) sends
 * the bytes, this file knows what they mean.  References are to the DCMI
 * Specification 1.5 (netfn 0x2C "Group Extension", group extension
 * identification 0xDC):
 *   §6.1.1  Get DCMI Capabilities Info (cmd 0x01), parameters 1 (supported
 *           capabilities) and 5 (enhanced system power statistics attributes)
 *   §6.6.1  Get Power Reading (cmd 0x02)
 * Multi-byte fields are little-endian (LS byte first), as everywhere in IPMI.
 */
#ifndef SE_BMC_DCMI_CODEC_H
#define SE_BMC_DCMI_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DCMI_NETFN			0x2c
#define DCMI_GROUP_EXT			0xdc
#define DCMI_CMD_GET_CAPABILITIES	0x01
#define DCMI_CMD_GET_POWER_READING	0x02

/* Get Power Reading request byte 2, "mode" (§6.6.1) */
#define DCMI_MODE_SYSTEM_POWER_STATS	0x01
#define DCMI_MODE_ENHANCED_POWER_STATS	0x02

/* Get DCMI Capabilities Info parameter selectors (§6.1.1) */
#define DCMI_CAP_PARAM_SUPPORTED	0x01
#define DCMI_CAP_PARAM_ENHANCED_STATS	0x05

/* Completion codes the backend treats specially (IPMI 2.0 §5.2) */
#define IPMI_CC_OK			0x00
#define IPMI_CC_INVALID_COMMAND		0xc1
#define IPMI_CC_INVALID_DATA_FIELD	0xcc
#define IPMI_CC_INSUFFICIENT_PRIVILEGE	0xd4
#define IPMI_CC_PARAM_NOT_SUPPORTED	0x80	/* DCMI: "not supported" */

/* Request lengths (including the command byte, as ipmi_cmd_raw wants) */
#define DCMI_POWER_READING_RQ_LEN	5
#define DCMI_CAPABILITIES_RQ_LEN	3

/* Most rolling-average periods a BMC can list in parameter 5 */
#define DCMI_MAX_ROLLING_PERIODS	64

/* A decoded Get Power Reading response. */
typedef struct {
	uint16_t current_w;	/* bytes 3:4  current power */
	uint16_t min_w;		/* bytes 5:6  minimum over the period */
	uint16_t max_w;		/* bytes 7:8  maximum over the period */
	uint16_t avg_w;		/* bytes 9:10 average over the period */
	uint32_t timestamp_s;	/* bytes 11:14 IPMI time stamp (s) */
	uint32_t period_ms;	/* bytes 15:18 statistics reporting period */
	bool active;		/* byte 19 bit 6: power measurement active */
} dcmi_power_reading_t;

/*
 * Fill rq (at least DCMI_POWER_READING_RQ_LEN bytes) with a Get Power
 * Reading request: cmd, 0xDC, mode, mode attributes, reserved.  For the
 * enhanced mode, attr is a rolling-average period byte (see below);
 * otherwise it must be 0.  Returns the request length.
 */
size_t dcmi_power_reading_rq(uint8_t *rq, uint8_t mode, uint8_t attr);

/*
 * Fill rq (at least DCMI_CAPABILITIES_RQ_LEN bytes) with a Get DCMI
 * Capabilities Info request for parameter selector param.  Returns the
 * request length.
 */
size_t dcmi_capabilities_rq(uint8_t *rq, uint8_t param);

/*
 * Check the common head of a DCMI response rs[0..len-1] as returned by
 * ipmi_cmd_raw (byte 0 the command echoed, byte 1 the completion code,
 * byte 2 the group extension 0xDC).
 * Returns 0; -EOPNOTSUPP for "invalid command" or "parameter not
 * supported" (no DCMI, or not this part of it); -EINVAL for another
 * completion code (*cc set when cc is not NULL); -EPROTO for a short or
 * foreign response.
 */
int dcmi_check_head(const uint8_t *rs, size_t len, uint8_t cmd, uint8_t *cc);

/*
 * Parse a Get Power Reading response (ipmi_cmd_raw layout, see above).
 * Returns 0, or the errors of dcmi_check_head().  A response whose state
 * says "no power measurement available" parses (active = false): the
 * caller decides.
 */
int dcmi_parse_power_reading(const uint8_t *rs, size_t len,
			     dcmi_power_reading_t *out);

/*
 * Parse parameter 5 of Get DCMI Capabilities Info: the rolling-average
 * periods the BMC offers for the enhanced mode.  Each period byte is
 * bits 7:6 the unit (0 s, 1 min, 2 h, 3 days), bits 5:0 the count.
 * Writes up to max period bytes into periods and their lengths in ms into
 * period_ms (either may be NULL); *n the count written.
 * Returns 0 or the errors of dcmi_check_head().
 */
int dcmi_parse_rolling_periods(const uint8_t *rs, size_t len,
			       uint8_t *periods, uint64_t *period_ms,
			       size_t max, size_t *n);

/* Length in ms of a rolling-average period byte (0 for a count of 0). */
uint64_t dcmi_period_ms(uint8_t period);

/*
 * Choose the enhanced-mode period for a sampler reading every
 * sample_period_ms: the shortest offered period, provided it is at most
 * twice the sampling period (a longer average would lag the job's start
 * and end).  Returns its index in period_ms[0..n-1], or -1 when none fits.
 */
int dcmi_choose_period(const uint64_t *period_ms, size_t n,
		       uint64_t sample_period_ms);

#endif
