/*
 * bmc_dcmi_codec.c - DCMI 1.5 power commands as bytes (see
 * bmc_dcmi_codec.h); the session that carries them is bmc_meter_dcmi.c.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "bmc_dcmi_codec.h"

/*
 * Response offsets in the ipmi_cmd_raw layout: [0] command, [1] completion
 * code, then the DCMI response bytes numbered from 2 in the spec (byte 1
 * of the spec's table is the completion code).
 */
#define RS_CMD		0
#define RS_CC		1
#define RS_GROUP	2

/* Get Power Reading response, DCMI 1.5 §6.6.1 */
#define PR_CURRENT	3
#define PR_MIN		5
#define PR_MAX		7
#define PR_AVG		9
#define PR_TIMESTAMP	11
#define PR_PERIOD	15
#define PR_STATE	19
#define PR_LEN		20
#define PR_STATE_ACTIVE	0x40	/* bit 6: power measurement active */

/* Get DCMI Capabilities Info response, DCMI 1.5 §6.1.1: conformance
 * major/minor and parameter revision, then the parameter data. */
#define CAP_DATA	6
#define CAP_P5_COUNT	CAP_DATA	/* number of rolling periods */
#define CAP_P5_PERIODS	(CAP_DATA + 1)

#define PERIOD_UNIT(b)	(((b) >> 6) & 0x3)
#define PERIOD_COUNT(b)	((b) & 0x3f)

static uint16_t _le16(const uint8_t *p)
{
	return (uint16_t) (p[0] | p[1] << 8);
}

static uint32_t _le32(const uint8_t *p)
{
	return (uint32_t) p[0] | (uint32_t) p[1] << 8 |
	       (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

size_t dcmi_power_reading_rq(uint8_t *rq, uint8_t mode, uint8_t attr)
{
	rq[0] = DCMI_CMD_GET_POWER_READING;
	rq[1] = DCMI_GROUP_EXT;
	rq[2] = mode;
	rq[3] = mode == DCMI_MODE_ENHANCED_POWER_STATS ? attr : 0;
	rq[4] = 0;	/* reserved */
	return DCMI_POWER_READING_RQ_LEN;
}

size_t dcmi_capabilities_rq(uint8_t *rq, uint8_t param)
{
	rq[0] = DCMI_CMD_GET_CAPABILITIES;
	rq[1] = DCMI_GROUP_EXT;
	rq[2] = param;
	return DCMI_CAPABILITIES_RQ_LEN;
}

int dcmi_check_head(const uint8_t *rs, size_t len, uint8_t cmd, uint8_t *cc)
{
	if (len < 2 || rs[RS_CMD] != cmd)
		return -EPROTO;
	if (cc)
		*cc = rs[RS_CC];
	switch (rs[RS_CC]) {
	case IPMI_CC_OK:
		break;
	case IPMI_CC_INVALID_COMMAND:
	case IPMI_CC_PARAM_NOT_SUPPORTED:
		return -EOPNOTSUPP;
	default:
		return -EINVAL;
	}
	if (len < 3 || rs[RS_GROUP] != DCMI_GROUP_EXT)
		return -EPROTO;
	return 0;
}

int dcmi_parse_power_reading(const uint8_t *rs, size_t len,
			     dcmi_power_reading_t *out)
{
	int rc;

	rc = dcmi_check_head(rs, len, DCMI_CMD_GET_POWER_READING, NULL);
	if (rc)
		return rc;
	if (len < PR_LEN)
		return -EPROTO;

	out->current_w = _le16(rs + PR_CURRENT);
	out->min_w = _le16(rs + PR_MIN);
	out->max_w = _le16(rs + PR_MAX);
	out->avg_w = _le16(rs + PR_AVG);
	out->timestamp_s = _le32(rs + PR_TIMESTAMP);
	out->period_ms = _le32(rs + PR_PERIOD);
	out->active = rs[PR_STATE] & PR_STATE_ACTIVE;
	return 0;
}

uint64_t dcmi_period_ms(uint8_t period)
{
	static const uint64_t unit_ms[] = {
		1000ULL, 60 * 1000ULL, 3600 * 1000ULL, 86400 * 1000ULL,
	};

	return PERIOD_COUNT(period) * unit_ms[PERIOD_UNIT(period)];
}

int dcmi_parse_rolling_periods(const uint8_t *rs, size_t len,
			       uint8_t *periods, uint64_t *period_ms,
			       size_t max, size_t *n)
{
	size_t count, i;
	int rc;

	*n = 0;
	rc = dcmi_check_head(rs, len, DCMI_CMD_GET_CAPABILITIES, NULL);
	if (rc)
		return rc;
	if (len <= CAP_P5_COUNT)
		return -EPROTO;

	count = rs[CAP_P5_COUNT];
	if (len < CAP_P5_PERIODS + count)
		return -EPROTO;
	if (count > max)
		count = max;
	for (i = 0; i < count; i++) {
		uint8_t b = rs[CAP_P5_PERIODS + i];

		if (periods)
			periods[i] = b;
		if (period_ms)
			period_ms[i] = dcmi_period_ms(b);
	}
	*n = count;
	return 0;
}

int dcmi_choose_period(const uint64_t *period_ms, size_t n,
		       uint64_t sample_period_ms)
{
	int best = -1;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!period_ms[i] || period_ms[i] > 2 * sample_period_ms)
			continue;
		if (best < 0 || period_ms[i] < period_ms[best])
			best = (int) i;
	}
	return best;
}
