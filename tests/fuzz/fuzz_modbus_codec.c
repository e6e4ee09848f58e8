/*
 * fuzz_modbus_codec - register words to values and back
 * (src/meters/modbus/modbus_codec.c), for every type and word order.
 *
 * Input: type byte, order byte, 4 register words (8 bytes, as on the
 * wire), then 8 bytes of a double for the encoder.  Invariants:
 *  - a decoded value is finite; a float32 decodes to the float the bits
 *    hold, or is refused as NaN/Inf;
 *  - registers -> raw counter -> registers gives the same words;
 *  - an energy count is never negative-as-huge: signed registers refuse
 *    their negative half, a float count is the value x 2^24 (truncated);
 *  - encode(v) then decode gives v rounded and saturated to the type.
 */
#include "fuzz_common.h"

#include <errno.h>
#include <float.h>
#include <math.h>

#include "modbus_codec.h"

/* What mb_encode() promises for a finite v, as the decoder reads it. */
static double expected(double v, mb_type_t type)
{
	static const double lo[] = { -32768.0, 0, -2147483648.0, 0, 0, 0,
				     -9223372036854775808.0 };
	static const double hi[] = { 32767.0, 65535.0, 2147483647.0,
				     4294967295.0, 0, 18446744073709551615.0,
				     9223372036854775807.0 };
	double r;

	if (type == MB_FLOAT32)
		return (float) fmax(fmin(v, FLT_MAX), -FLT_MAX);
	r = round(v);
	return r < lo[type] ? lo[type] : r > hi[type] ? hi[type] : r;
}

static void check_decode(const uint16_t *regs, mb_type_t type,
			 mb_order_t order)
{
	unsigned words = mb_type_words(type);
	uint16_t again[4] = { 0 };
	uint64_t raw, count;
	double v;
	int rc;

	rc = mb_decode(regs, type, order, &v);
	FUZZ_CHECK(rc == 0 || (rc == -ERANGE && type == MB_FLOAT32),
		   "decode rc %d", rc);
	if (!rc)
		FUZZ_CHECK(isfinite(v), "decoded %g", v);

	if (!mb_decode_counter(regs, type, order, &raw)) {
		mb_encode_raw(raw, type, order, again);
		FUZZ_CHECK(!memcmp(again, regs, words * 2),
			   "raw %llu does not re-encode to its registers",
			   (unsigned long long) raw);
		FUZZ_CHECK(words == 4 || raw >> (16 * words) == 0,
			   "raw %llu wider than %u words",
			   (unsigned long long) raw, words);
	} else {
		FUZZ_CHECK(!mb_type_counter_bits(type), "counter refused");
	}

	rc = mb_decode_energy(regs, type, order, &count);
	if (rc) {
		FUZZ_CHECK(rc == -ERANGE, "energy rc %d", rc);
		FUZZ_CHECK(type != MB_UINT16 && type != MB_UINT32 &&
			   type != MB_UINT64, "unsigned energy refused");
		return;
	}
	if (type == MB_FLOAT32) {
		/* fixed point: the count is v x 2^24, truncated (exact but
		 * for parts of a count, below the register's resolution) */
		FUZZ_CHECK(!mb_decode(regs, type, order, &v) && v >= 0 &&
			   (double) count ==
			   floor(ldexp(v, MB_FLOAT_COUNTER_FRAC_BITS)),
			   "float count %llu for %g",
			   (unsigned long long) count, v);
	} else if (type == MB_INT16 || type == MB_INT32 || type == MB_INT64) {
		FUZZ_CHECK(!mb_decode(regs, type, order, &v) && v >= 0 &&
			   (double) count == v, "signed count %llu for %g",
			   (unsigned long long) count, v);
	}
}

static void check_encode(double v, mb_type_t type, mb_order_t order)
{
	uint16_t regs[4] = { 0 };
	double got, want;
	int rc;

	mb_encode(v, type, order, regs);
	rc = mb_decode(regs, type, order, &got);
	if (isnan(v)) {
		FUZZ_CHECK(type == MB_FLOAT32 ? rc == -ERANGE :
			   (rc == 0 && got == 0), "NaN encoded as %g", got);
		return;
	}
	FUZZ_CHECK(rc == 0, "encode(%.17g) does not decode: %d", v, rc);
	want = expected(v, type);
	/* 64-bit integers above 2^53 are as exact as a double allows */
	FUZZ_CHECK(got == want || fabs(got - want) <= fabs(want) * 0x1p-52,
		   "%s: encode(%.17g) decodes to %.17g, not %.17g",
		   mb_type_names[type], v, got, want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint16_t regs[4];
	mb_type_t type;
	mb_order_t order;
	double v;

	if (size < 2 + sizeof(regs) + sizeof(v))
		return 0;
	type = (mb_type_t) (data[0] % 7);
	order = (mb_order_t) (data[1] % 4);
	for (int i = 0; i < 4; i++)	/* wire bytes are big-endian */
		regs[i] = (uint16_t) (data[2 + 2 * i] << 8 | data[3 + 2 * i]);
	memcpy(&v, data + 2 + sizeof(regs), sizeof(v));

	check_decode(regs, type, order);
	check_encode(v, type, order);
	return 0;
}
