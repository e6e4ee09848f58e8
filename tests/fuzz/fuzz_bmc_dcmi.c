/*
 * fuzz_bmc_dcmi - DCMI responses as a BMC returns them
 * (src/meters/bmc/bmc_dcmi_codec.c): Get Power Reading and Get DCMI
 * Capabilities Info parameter 5, then the choice of a rolling average.
 *
 * Input: one byte of sampling period (in 100 ms), then the response bytes
 * exactly as ipmi_cmd_raw() hands them over (command, completion code,
 * group extension, data).  Both parsers see the same bytes.  Invariants:
 *  - a power reading parses only from a complete, successful response and
 *    its fields are the little-endian bytes of DCMI 1.5 table 6-16;
 *  - the periods parsed are at most what the response holds and what the
 *    caller has room for, each period's length its unit x count;
 *  - the chosen period is one offered, non-zero, at most twice the
 *    sampling period and the shortest such; none is chosen only when none
 *    fits.
 */
#include "fuzz_common.h"

#include <errno.h>

#include "bmc_dcmi_codec.h"

static void check_power_reading(const uint8_t *rs, size_t len)
{
	dcmi_power_reading_t pr;
	int rc = dcmi_parse_power_reading(rs, len, &pr);

	if (rc) {
		FUZZ_CHECK(rc == -EPROTO || rc == -EINVAL || rc == -EOPNOTSUPP,
			   "rc %d", rc);
		return;
	}
	FUZZ_CHECK(len >= 20 && rs[0] == DCMI_CMD_GET_POWER_READING &&
		   rs[1] == IPMI_CC_OK && rs[2] == DCMI_GROUP_EXT,
		   "accepted a response of %zu bytes, head %02x %02x", len,
		   rs[0], len > 1 ? rs[1] : 0);
	FUZZ_CHECK(pr.current_w == (rs[3] | rs[4] << 8), "current %u",
		   pr.current_w);
	FUZZ_CHECK(pr.avg_w == (rs[9] | rs[10] << 8), "average %u", pr.avg_w);
	FUZZ_CHECK(pr.period_ms == ((uint32_t) rs[15] | (uint32_t) rs[16] << 8 |
				    (uint32_t) rs[17] << 16 |
				    (uint32_t) rs[18] << 24), "period %u",
		   pr.period_ms);
	FUZZ_CHECK(pr.active == !!(rs[19] & 0x40), "active %d", pr.active);
}

static void check_periods(const uint8_t *rs, size_t len, size_t max,
			  uint64_t sample_ms)
{
	uint8_t periods[DCMI_MAX_ROLLING_PERIODS];
	uint64_t ms[DCMI_MAX_ROLLING_PERIODS];
	size_t n = 99, i;
	int rc, best;

	rc = dcmi_parse_rolling_periods(rs, len, periods, ms, max, &n);
	if (rc) {
		FUZZ_CHECK(n == 0, "%zu periods on error %d", n, rc);
		return;
	}
	FUZZ_CHECK(len > 6 && n <= max && n <= rs[6] && len >= 7 + rs[6],
		   "%zu periods from %zu bytes (count %u, room %zu)", n, len,
		   len > 6 ? rs[6] : 0, max);
	for (i = 0; i < n; i++) {
		static const uint64_t unit[] = { 1000, 60000, 3600000,
						 86400000 };

		FUZZ_CHECK(periods[i] == rs[7 + i], "period byte %zu", i);
		FUZZ_CHECK(ms[i] == (periods[i] & 0x3f) * unit[periods[i] >> 6]
			   && ms[i] == dcmi_period_ms(periods[i]),
			   "period 0x%02x is %llu ms", periods[i],
			   (unsigned long long) ms[i]);
	}
	best = dcmi_choose_period(ms, n, sample_ms);
	for (i = 0; i < n; i++) {
		bool fits = ms[i] && ms[i] <= 2 * sample_ms;

		FUZZ_CHECK(!fits || (best >= 0 && ms[best] <= ms[i]),
			   "period %zu (%llu ms) fits but %d was chosen", i,
			   (unsigned long long) ms[i], best);
	}
	if (best >= 0)
		FUZZ_CHECK((size_t) best < n && ms[best] &&
			   ms[best] <= 2 * sample_ms, "chose %d of %zu", best,
			   n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *rs;
	size_t len;
	uint64_t sample_ms;

	if (size < 1)
		return 0;
	sample_ms = 100ULL * data[0];
	len = size - 1;
	/* an exact-size copy, so ASan sees any read past the response */
	rs = malloc(len ? len : 1);
	if (!rs)
		return 0;
	memcpy(rs, data + 1, len);
	check_power_reading(rs, len);
	check_periods(rs, len, DCMI_MAX_ROLLING_PERIODS, sample_ms);
	check_periods(rs, len, data[0] % 8, sample_ms);
	free(rs);
	return 0;
}
