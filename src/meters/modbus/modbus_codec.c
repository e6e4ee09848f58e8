/*
 * modbus_codec.c - meter values <-> Modbus registers.
 *
 * A value of N words is first written as its big-endian bytes A B C D ...
 * (A most significant), i.e. N big-endian words W0..W(N-1).  The word
 * orders of modbus_codec.h then permute them on the wire:
 *   abcd  W0 W1 .. as is
 *   cdab  words reversed (low word first), bytes inside a word kept
 *   badc  words kept, bytes inside each word swapped
 *   dcba  both (fully little-endian)
 * For one-word types only the byte swap applies (cdab == abcd).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "modbus_codec.h"

/* 2^63 and 2^64 as doubles (exact), for saturating 64-bit conversions. */
#define FLT_MAX_D	((double)FLT_MAX)
#define TWO_POW_63	9223372036854775808.0
#define TWO_POW_64	18446744073709551616.0

const char *const mb_type_names[] = {
	[MB_INT16] = "int16",
	[MB_UINT16] = "uint16",
	[MB_INT32] = "int32",
	[MB_UINT32] = "uint32",
	[MB_FLOAT32] = "float32",
	[MB_UINT64] = "uint64",
	[MB_INT64] = "int64",
	NULL,
};

const char *const mb_order_names[] = {
	[MB_ORDER_ABCD] = "abcd",
	[MB_ORDER_CDAB] = "cdab",
	[MB_ORDER_BADC] = "badc",
	[MB_ORDER_DCBA] = "dcba",
	NULL,
};

const char *const mb_kind_names[] = {
	[MB_KIND_INPUT] = "input",
	[MB_KIND_HOLDING] = "holding",
	NULL,
};

static bool _valid(mb_type_t type, mb_order_t order);
static bool _swap_words(mb_order_t order);
static bool _swap_bytes(mb_order_t order);
static uint64_t _regs_to_raw(const uint16_t *regs, unsigned words,
			     mb_order_t order);
static void _raw_to_regs(uint64_t raw, unsigned words, mb_order_t order,
			 uint16_t *regs);
static uint64_t _encode_unsigned(double value, double max);
static int64_t _encode_signed(double value, double min, double max);
static uint64_t _encode_raw(double value, mb_type_t type);

unsigned mb_type_words(mb_type_t type)
{
	switch (type) {
	case MB_INT16:
	case MB_UINT16:
		return 1;
	case MB_INT32:
	case MB_UINT32:
	case MB_FLOAT32:
		return 2;
	case MB_UINT64:
	case MB_INT64:
		return 4;
	}
	return 0;
}

unsigned mb_type_counter_bits(mb_type_t type)
{
	switch (type) {
	case MB_UINT16:
		return 16;
	case MB_UINT32:
		return 32;
	case MB_UINT64:
		return 64;
	default:
		return 0;
	}
}

int mb_name_index(const char *const names[], const char *name)
{
	int i;

	if (!name)
		return -1;
	for (i = 0; names[i]; i++) {
		if (!strcasecmp(names[i], name))
			return i;
	}
	return -1;
}

/* The registers as the type's raw bits: 0, or -EINVAL (bad type or order). */
static int _raw_of(const uint16_t *regs, mb_type_t type, mb_order_t order,
		   uint64_t *raw)
{
	if (!_valid(type, order))
		return -EINVAL;
	*raw = _regs_to_raw(regs, mb_type_words(type), order);
	return 0;
}

/* A FLOAT32's raw bits as the float they are. */
static float _float_of(uint64_t raw)
{
	uint32_t bits = (uint32_t) raw;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

int mb_decode(const uint16_t *regs, mb_type_t type, mb_order_t order,
	      double *value)
{
	uint64_t raw;
	float f;

	if (_raw_of(regs, type, order, &raw))
		return -EINVAL;
	switch (type) {
	case MB_INT16:
		*value = (int16_t)raw;
		break;
	case MB_UINT16:
	case MB_UINT32:
	case MB_UINT64:
		*value = (double)raw;
		break;
	case MB_INT32:
		*value = (int32_t)(uint32_t)raw;
		break;
	case MB_INT64:
		*value = (double)(int64_t)raw;
		break;
	case MB_FLOAT32:
		f = _float_of(raw);
		if (!isfinite(f))
			return -ERANGE;
		*value = f;
		break;
	}
	return 0;
}

int mb_decode_counter(const uint16_t *regs, mb_type_t type, mb_order_t order,
		      uint64_t *raw)
{
	if (!mb_type_counter_bits(type))
		return -EINVAL;
	return _raw_of(regs, type, order, raw);
}

void mb_energy_counter(mb_type_t type, unsigned *width_bits,
		       unsigned *significand_bits)
{
	*significand_bits = 0;
	switch (type) {
	case MB_INT16:
		*width_bits = 15;
		break;
	case MB_UINT16:
		*width_bits = 16;
		break;
	case MB_INT32:
		*width_bits = 31;
		break;
	case MB_UINT32:
		*width_bits = 32;
		break;
	case MB_INT64:
		*width_bits = 63;
		break;
	case MB_FLOAT32:
		/* a float never wraps; it only loses resolution */
		*significand_bits = FLT_MANT_DIG;
		*width_bits = 64;
		break;
	case MB_UINT64:
	default:
		*width_bits = 64;
		break;
	}
}

int mb_decode_energy(const uint16_t *regs, mb_type_t type, mb_order_t order,
		     uint64_t *count)
{
	uint64_t raw;
	float f;

	if (_raw_of(regs, type, order, &raw))
		return -EINVAL;
	switch (type) {
	case MB_INT16:
	case MB_INT32:
	case MB_INT64:
		/* the sign bit of the register's own width */
		if (raw >> (16 * mb_type_words(type) - 1))
			return -ERANGE;
		*count = raw;
		return 0;
	case MB_FLOAT32:
		f = _float_of(raw);
		if (!isfinite(f) || f < 0.0f ||
		    f >= ldexpf(1.0f, 64 - MB_FLOAT_COUNTER_FRAC_BITS))
			return -ERANGE;
		/* exact: a float times a power of two */
		*count = (uint64_t) ldexp((double) f,
					  MB_FLOAT_COUNTER_FRAC_BITS);
		return 0;
	default:
		*count = raw;
		return 0;
	}
}

void mb_encode(double value, mb_type_t type, mb_order_t order, uint16_t *regs)
{
	if (!_valid(type, order))
		return;
	_raw_to_regs(_encode_raw(value, type), mb_type_words(type), order,
		     regs);
}

void mb_encode_raw(uint64_t raw, mb_type_t type, mb_order_t order,
		   uint16_t *regs)
{
	if (!_valid(type, order))
		return;
	_raw_to_regs(raw, mb_type_words(type), order, regs);
}

/*
 * Private functions
 */

static bool _valid(mb_type_t type, mb_order_t order)
{
	return type >= MB_INT16 && type <= MB_INT64 &&
	       order >= MB_ORDER_ABCD && order <= MB_ORDER_DCBA;
}

static bool _swap_words(mb_order_t order)
{
	return order == MB_ORDER_CDAB || order == MB_ORDER_DCBA;
}

static bool _swap_bytes(mb_order_t order)
{
	return order == MB_ORDER_BADC || order == MB_ORDER_DCBA;
}

static uint16_t _bswap16(uint16_t w)
{
	return (uint16_t)((w << 8) | (w >> 8));
}

/* Assemble the big-endian value from the wire words. */
static uint64_t _regs_to_raw(const uint16_t *regs, unsigned words,
			     mb_order_t order)
{
	uint64_t raw = 0;
	unsigned i;

	for (i = 0; i < words; i++) {
		uint16_t w = regs[_swap_words(order) ? words - 1 - i : i];

		if (_swap_bytes(order))
			w = _bswap16(w);
		raw = (raw << 16) | w;
	}
	return raw;
}

/* Spread a value (low `words` x 16 bits of raw) into wire words. */
static void _raw_to_regs(uint64_t raw, unsigned words, mb_order_t order,
			 uint16_t *regs)
{
	unsigned i;

	for (i = 0; i < words; i++) {
		uint16_t w = (uint16_t)(raw >> (16 * (words - 1 - i)));

		if (_swap_bytes(order))
			w = _bswap16(w);
		regs[_swap_words(order) ? words - 1 - i : i] = w;
	}
}

/* Round to nearest and saturate to [0, max]; NaN encodes as 0. */
static uint64_t _encode_unsigned(double value, double max)
{
	double r = round(value);

	if (isnan(r) || r <= 0.0)
		return 0;
	if (r >= max)
		return max >= TWO_POW_64 ? UINT64_MAX : (uint64_t)max;
	return (uint64_t)r;
}

/* Round to nearest and saturate to [min, max]; NaN encodes as 0. */
static int64_t _encode_signed(double value, double min, double max)
{
	double r = round(value);

	if (isnan(r))
		return 0;
	if (r <= min)
		return (int64_t)min;
	if (r >= max)
		return max >= TWO_POW_63 ? INT64_MAX : (int64_t)max;
	return (int64_t)r;
}

static uint64_t _encode_float(double value)
{
	float f;
	uint32_t bits;

	if (isnan(value))
		f = NAN;
	else if (value > FLT_MAX_D)
		f = (float)FLT_MAX_D;
	else if (value < -FLT_MAX_D)
		f = (float)-FLT_MAX_D;
	else
		f = (float)value;
	memcpy(&bits, &f, sizeof(bits));
	return bits;
}

static uint64_t _encode_raw(double value, mb_type_t type)
{
	switch (type) {
	case MB_INT16:
		return (uint16_t)_encode_signed(value, -32768.0, 32767.0);
	case MB_UINT16:
		return _encode_unsigned(value, 65535.0);
	case MB_INT32:
		return (uint32_t)_encode_signed(value, -2147483648.0,
						2147483647.0);
	case MB_UINT32:
		return _encode_unsigned(value, 4294967295.0);
	case MB_FLOAT32:
		return _encode_float(value);
	case MB_UINT64:
		return _encode_unsigned(value, TWO_POW_64);
	case MB_INT64:
		return (uint64_t)_encode_signed(value, -TWO_POW_63,
						TWO_POW_63);
	}
	return 0;
}
