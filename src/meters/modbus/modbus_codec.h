/*
 * modbus_codec.h - meter values <-> Modbus registers, and named meter maps.
 *
 * Slurm-free; shared by the acct_gather_energy/modbus plugin (decode) and
 * the meter simulator in contribs/modbus-sim (encode), so both agree on
 * every type and word order by construction and by test.
 *
 * Word order names the order of the bytes A B C D (A most significant) as
 * they appear on the wire in consecutive registers:
 *   abcd  big-endian words, big-endian bytes (Modbus default, "high word first")
 *   cdab  word-swapped (low word first; many meters, e.g. Carlo Gavazzi)
 *   badc  byte-swapped within each word
 *   dcba  little-endian
 * For 64-bit values the same rule extends to A..H.
 */
#ifndef SE_MODBUS_CODEC_H
#define SE_MODBUS_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
	MB_INT16 = 0,
	MB_UINT16,
	MB_INT32,
	MB_UINT32,
	MB_FLOAT32,
	MB_UINT64,
	MB_INT64,
} mb_type_t;

typedef enum {
	MB_ORDER_ABCD = 0,
	MB_ORDER_CDAB,
	MB_ORDER_BADC,
	MB_ORDER_DCBA,
} mb_order_t;

typedef enum {
	MB_KIND_INPUT = 0,	/* function 0x04 */
	MB_KIND_HOLDING,	/* function 0x03 */
} mb_kind_t;

/* Names as used in acct_gather.conf (NULL-terminated, index = enum). */
extern const char *const mb_type_names[];	/* "int16", ... "int64" */
extern const char *const mb_order_names[];	/* "abcd", ... */
extern const char *const mb_kind_names[];	/* "input", "holding" */

/*
 * Index of name in one of the NULL-terminated name tables above, compared
 * case-insensitively (so it is the enum value); -1 if absent or NULL.
 */
int mb_name_index(const char *const names[], const char *name);

/* Registers (16-bit words) a type occupies: 1, 2 or 4. */
unsigned mb_type_words(mb_type_t type);

/* Width in bits of an unsigned energy counter of this type (16/32/64);
 * 0 for types that are not counters (float32, signed). */
unsigned mb_type_counter_bits(mb_type_t type);

/*
 * Decode the value at regs[0..words-1] as type/order into a double.
 * Returns 0, or -ERANGE for a NaN/Inf float (value untouched), -EINVAL for
 * an unknown type or order.
 */
int mb_decode(const uint16_t *regs, mb_type_t type, mb_order_t order,
	      double *value);

/* Decode an unsigned counter exactly (uint16/32/64 only); -EINVAL otherwise. */
int mb_decode_counter(const uint16_t *regs, mb_type_t type, mb_order_t order,
		      uint64_t *raw);

/*
 * An energy register as a counter of its own steps (acct_gather_energy/
 * modbus reads every energy register this way):
 *  - integer types count their own unit; unsigned ones wrap at 2^16/32/64,
 *    signed ones count the non-negative half (15/31/63 bits: a negative
 *    reading is refused, not energy);
 *  - float32 is carried in fixed point, 2^MB_FLOAT_COUNTER_FRAC_BITS counts
 *    per register unit (exact for every float32 below 2^40 units), never
 *    wraps, and steps by its ulp at the reading: significand_bits 24
 *    (counter_resolution() in src/common/counter.h).
 */
#define MB_FLOAT_COUNTER_FRAC_BITS	24
void mb_energy_counter(mb_type_t type, unsigned *width_bits,
		       unsigned *significand_bits);

/*
 * Decode an energy register into its count (above).  0; -ERANGE for a
 * negative, NaN, infinite or too large value; -EINVAL for a bad type or
 * order.
 */
int mb_decode_energy(const uint16_t *regs, mb_type_t type, mb_order_t order,
		     uint64_t *count);

/*
 * Encode value into regs[0..words-1] (rounded to nearest for integer types,
 * saturated to the type's range).  For the simulator and tests.
 * NaN encodes as 0 in integer types and stays NaN in float32; floats beyond
 * +/-FLT_MAX saturate to +/-FLT_MAX.
 */
void mb_encode(double value, mb_type_t type, mb_order_t order, uint16_t *regs);

/*
 * Encode the low 16/32/64 bits of raw as-is (no rounding or saturation):
 * a counter that has wrapped, or a float32's bit pattern.  For the
 * simulator and tests.
 */
void mb_encode_raw(uint64_t raw, mb_type_t type, mb_order_t order,
		   uint16_t *regs);

/* One value on a meter: where it lives and how to read it. */
typedef struct {
	bool present;
	uint16_t address;	/* 0-based protocol address (PDU address) */
	mb_type_t type;
	mb_order_t order;
	double scale;		/* register value x scale = watts or joules */
} mb_point_t;

/* A meter model's register map, from its manufacturer's published map. */
typedef struct {
	const char *name;	/* acct_gather.conf EnergyModbusModel= value */
	const char *description; /* "Eastron SDM630 3-phase meter" */
	const char *source;	/* the document the map was taken from */
	mb_kind_t kind;		/* register kind of both points */
	mb_point_t power;	/* total active power, to watts */
	mb_point_t energy;	/* total import active energy, to joules */
	uint16_t max_regs_per_read; /* device limit for one request */
} mb_model_t;

/* The built-in models (terminated by an entry with name NULL). */
extern const mb_model_t mb_models[];

/* Find a model by name (case-insensitive); NULL if unknown. */
const mb_model_t *mb_model_find(const char *name);

#endif
