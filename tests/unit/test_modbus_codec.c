/*
 * test_modbus_codec.c - Check tests of the Modbus codec and meter models.
 *
 * Wire words below were worked out by hand from the byte layouts, never by
 * calling the encoder, so an encoder and decoder wrong in the same way
 * still fail.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <check.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "modbus_codec.h"

#define N_TYPES		(MB_INT64 + 1)
#define N_ORDERS	(MB_ORDER_DCBA + 1)

static void _expect_words(const uint16_t *got, const uint16_t *want,
			  unsigned n, const char *what)
{
	unsigned i;

	for (i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i],
			      "%s: word %u is 0x%04x, want 0x%04x", what, i,
			      got[i], want[i]);
}

/* Encode v and compare with the expected wire words; decode them back. */
static void _check_wire(double v, mb_type_t t, mb_order_t o,
			const uint16_t *want)
{
	uint16_t regs[4] = { 0xdead, 0xdead, 0xdead, 0xdead };
	double back = -12345.0;
	char what[64];

	snprintf(what, sizeof(what), "%s/%s", mb_type_names[t],
		 mb_order_names[o]);
	mb_encode(v, t, o, regs);
	_expect_words(regs, want, mb_type_words(t), what);
	ck_assert_int_eq(mb_decode(want, t, o, &back), 0);
	ck_assert_msg(back == v, "%s decodes %.17g, want %.17g", what, back, v);
}

START_TEST(test_float32_230_5)
{
	/* 230.5f = 0x43668000 */
	const uint16_t abcd[] = { 0x4366, 0x8000 };
	const uint16_t cdab[] = { 0x8000, 0x4366 };
	const uint16_t badc[] = { 0x6643, 0x0080 };
	const uint16_t dcba[] = { 0x0080, 0x6643 };

	_check_wire(230.5, MB_FLOAT32, MB_ORDER_ABCD, abcd);
	_check_wire(230.5, MB_FLOAT32, MB_ORDER_CDAB, cdab);
	_check_wire(230.5, MB_FLOAT32, MB_ORDER_BADC, badc);
	_check_wire(230.5, MB_FLOAT32, MB_ORDER_DCBA, dcba);
}
END_TEST

START_TEST(test_uint32_orders)
{
	const uint16_t abcd[] = { 0x1234, 0x5678 };
	const uint16_t cdab[] = { 0x5678, 0x1234 };
	const uint16_t badc[] = { 0x3412, 0x7856 };
	const uint16_t dcba[] = { 0x7856, 0x3412 };
	double v = (double)0x12345678u;

	_check_wire(v, MB_UINT32, MB_ORDER_ABCD, abcd);
	_check_wire(v, MB_UINT32, MB_ORDER_CDAB, cdab);
	_check_wire(v, MB_UINT32, MB_ORDER_BADC, badc);
	_check_wire(v, MB_UINT32, MB_ORDER_DCBA, dcba);
}
END_TEST

START_TEST(test_int32_negative)
{
	/* -100000 = 0xFFFE7960 */
	const uint16_t abcd[] = { 0xFFFE, 0x7960 };
	const uint16_t cdab[] = { 0x7960, 0xFFFE };
	const uint16_t badc[] = { 0xFEFF, 0x6079 };
	const uint16_t dcba[] = { 0x6079, 0xFEFF };

	_check_wire(-100000.0, MB_INT32, MB_ORDER_ABCD, abcd);
	_check_wire(-100000.0, MB_INT32, MB_ORDER_CDAB, cdab);
	_check_wire(-100000.0, MB_INT32, MB_ORDER_BADC, badc);
	_check_wire(-100000.0, MB_INT32, MB_ORDER_DCBA, dcba);
}
END_TEST

START_TEST(test_16bit_orders)
{
	const uint16_t be[] = { 0x1234 };
	const uint16_t le[] = { 0x3412 };
	const uint16_t m2_be[] = { 0xFFFE };
	const uint16_t m2_le[] = { 0xFEFF };

	/* One word: word swapping is a no-op, byte swapping is not. */
	_check_wire(0x1234, MB_UINT16, MB_ORDER_ABCD, be);
	_check_wire(0x1234, MB_UINT16, MB_ORDER_CDAB, be);
	_check_wire(0x1234, MB_UINT16, MB_ORDER_BADC, le);
	_check_wire(0x1234, MB_UINT16, MB_ORDER_DCBA, le);
	_check_wire(-2, MB_INT16, MB_ORDER_ABCD, m2_be);
	_check_wire(-2, MB_INT16, MB_ORDER_DCBA, m2_le);
}
END_TEST

START_TEST(test_64bit_orders)
{
	/* 0x0001020304050607: distinct bytes, and exact in a double */
	const uint16_t abcd[] = { 0x0001, 0x0203, 0x0405, 0x0607 };
	const uint16_t cdab[] = { 0x0607, 0x0405, 0x0203, 0x0001 };
	const uint16_t badc[] = { 0x0100, 0x0302, 0x0504, 0x0706 };
	const uint16_t dcba[] = { 0x0706, 0x0504, 0x0302, 0x0100 };
	/* -2 as int64 */
	const uint16_t m2[] = { 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFE };
	const uint16_t m2_cdab[] = { 0xFFFE, 0xFFFF, 0xFFFF, 0xFFFF };
	double v = (double)0x0001020304050607ull;

	_check_wire(v, MB_UINT64, MB_ORDER_ABCD, abcd);
	_check_wire(v, MB_UINT64, MB_ORDER_CDAB, cdab);
	_check_wire(v, MB_UINT64, MB_ORDER_BADC, badc);
	_check_wire(v, MB_UINT64, MB_ORDER_DCBA, dcba);
	_check_wire(v, MB_INT64, MB_ORDER_ABCD, abcd);
	_check_wire(-2.0, MB_INT64, MB_ORDER_ABCD, m2);
	_check_wire(-2.0, MB_INT64, MB_ORDER_CDAB, m2_cdab);
}
END_TEST

/* Values each type holds exactly (float32 ones are exact floats). */
static const double _samples[N_TYPES][5] = {
	[MB_INT16] = { 0, 1, -1, 32767, -32768 },
	[MB_UINT16] = { 0, 1, 255, 256, 65535 },
	[MB_INT32] = { 0, -1, 65536, 2147483647.0, -2147483648.0 },
	[MB_UINT32] = { 0, 1, 65535, 65536, 4294967295.0 },
	[MB_FLOAT32] = { 0, -1.5, 230.5, 3.0e38, 1.0e-30f },
	[MB_UINT64] = { 0, 1, 4294967296.0, 9007199254740992.0, 1e19 },
	[MB_INT64] = { 0, -1, -4294967296.0, 9007199254740992.0, -1e18 },
};

START_TEST(test_roundtrip_all)
{
	int t = _i / N_ORDERS, o = _i % N_ORDERS;
	unsigned k;

	for (k = 0; k < 5; k++) {
		uint16_t regs[4];
		double want = _samples[t][k], got = NAN;

		if (t == MB_FLOAT32)
			want = (float)want;
		mb_encode(want, t, o, regs);
		ck_assert_int_eq(mb_decode(regs, t, o, &got), 0);
		ck_assert_msg(got == want, "%s/%s: %.17g -> %.17g",
			      mb_type_names[t], mb_order_names[o], want, got);
	}
}
END_TEST

START_TEST(test_orders_differ)
{
	/* A word order that did nothing would pass the round trip; make
	 * sure each order puts different words on the wire. */
	static const double distinct[N_TYPES] = {
		[MB_INT32] = 16909060.0,	/* 0x01020304 */
		[MB_UINT32] = 16909060.0,
		[MB_FLOAT32] = 230.5,		/* 0x43668000 */
		[MB_UINT64] = 283686952306183.0, /* 0x0001020304050607 */
		[MB_INT64] = 283686952306183.0,
	};
	int t = _i, a, b;
	uint16_t regs[N_ORDERS][4];

	if (mb_type_words(t) == 1)
		return;
	for (a = 0; a < N_ORDERS; a++)
		mb_encode(distinct[t], t, a, regs[a]);
	for (a = 0; a < N_ORDERS; a++)
		for (b = a + 1; b < N_ORDERS; b++)
			ck_assert_msg(memcmp(regs[a], regs[b],
					     2 * mb_type_words(t)),
				      "%s: %s == %s", mb_type_names[t],
				      mb_order_names[a], mb_order_names[b]);
}
END_TEST

static double _enc_dec(double v, mb_type_t t)
{
	uint16_t regs[4];
	double out = -777.0;

	mb_encode(v, t, MB_ORDER_CDAB, regs);
	ck_assert_int_eq(mb_decode(regs, t, MB_ORDER_CDAB, &out), 0);
	return out;
}

START_TEST(test_saturation_rounding)
{
	uint16_t regs[4];
	uint64_t raw = 0;

	ck_assert(_enc_dec(70000, MB_UINT16) == 65535);
	ck_assert(_enc_dec(-5, MB_UINT16) == 0);
	ck_assert(_enc_dec(40000, MB_INT16) == 32767);
	ck_assert(_enc_dec(-40000, MB_INT16) == -32768);
	ck_assert(_enc_dec(3e9, MB_INT32) == 2147483647.0);
	ck_assert(_enc_dec(-3e9, MB_INT32) == -2147483648.0);
	ck_assert(_enc_dec(-1, MB_UINT32) == 0);
	ck_assert(_enc_dec(5e9, MB_UINT32) == 4294967295.0);
	ck_assert(_enc_dec(-1e30, MB_INT64) == -9223372036854775808.0);
	ck_assert(_enc_dec(1e40, MB_FLOAT32) == FLT_MAX);
	ck_assert(_enc_dec(-1e40, MB_FLOAT32) == -FLT_MAX);
	ck_assert(_enc_dec(2.5, MB_UINT16) == 3);
	ck_assert(_enc_dec(2.4999, MB_UINT16) == 2);
	ck_assert(_enc_dec(-2.5, MB_INT16) == -3);
	ck_assert(_enc_dec(NAN, MB_INT32) == 0);

	/* 64-bit ends, checked exactly (a double cannot show them). */
	mb_encode(1e30, MB_UINT64, MB_ORDER_ABCD, regs);
	ck_assert_int_eq(mb_decode_counter(regs, MB_UINT64, MB_ORDER_ABCD,
					   &raw), 0);
	ck_assert(raw == UINT64_MAX);
	mb_encode(1e30, MB_INT64, MB_ORDER_ABCD, regs);
	ck_assert(regs[0] == 0x7FFF && regs[1] == 0xFFFF &&
		  regs[2] == 0xFFFF && regs[3] == 0xFFFF);
}
END_TEST

START_TEST(test_nan_inf_rejected)
{
	const uint16_t inf[] = { 0x7F80, 0x0000 };
	const uint16_t ninf_cdab[] = { 0x0000, 0xFF80 };
	const uint16_t qnan[] = { 0x7FC0, 0x0000 };
	uint16_t regs[2];
	double v = 42.0;

	ck_assert_int_eq(mb_decode(inf, MB_FLOAT32, MB_ORDER_ABCD, &v),
			 -ERANGE);
	ck_assert_int_eq(mb_decode(ninf_cdab, MB_FLOAT32, MB_ORDER_CDAB, &v),
			 -ERANGE);
	ck_assert_int_eq(mb_decode(qnan, MB_FLOAT32, MB_ORDER_ABCD, &v),
			 -ERANGE);
	mb_encode(NAN, MB_FLOAT32, MB_ORDER_DCBA, regs);
	ck_assert_int_eq(mb_decode(regs, MB_FLOAT32, MB_ORDER_DCBA, &v),
			 -ERANGE);
	ck_assert(v == 42.0);	/* untouched on error */
	/* The same bits as an integer type are a valid number. */
	ck_assert_int_eq(mb_decode(inf, MB_UINT32, MB_ORDER_ABCD, &v), 0);
	ck_assert(v == 2139095040.0);
}
END_TEST

START_TEST(test_counter_decode)
{
	const uint16_t c32[] = { 0xFFFF, 0x0001 };	/* cdab: 0x0001FFFF */
	const uint16_t c16[] = { 0xFFFE };
	const uint16_t c64[] = { 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF };
	const uint16_t c64b[] = { 0x0020, 0x0000, 0x0000, 0x0001 };
	uint64_t raw = 0;

	ck_assert_int_eq(mb_decode_counter(c32, MB_UINT32, MB_ORDER_CDAB,
					   &raw), 0);
	ck_assert(raw == 0x0001FFFFull);
	ck_assert_int_eq(mb_decode_counter(c16, MB_UINT16, MB_ORDER_ABCD,
					   &raw), 0);
	ck_assert(raw == 0xFFFEull);
	ck_assert_int_eq(mb_decode_counter(c64, MB_UINT64, MB_ORDER_ABCD,
					   &raw), 0);
	ck_assert(raw == UINT64_MAX);
	/* 2^53 + 1: beyond a double's exact range, exact here. */
	ck_assert_int_eq(mb_decode_counter(c64b, MB_UINT64, MB_ORDER_ABCD,
					   &raw), 0);
	ck_assert(raw == 9007199254740993ull);

	ck_assert_int_eq(mb_decode_counter(c32, MB_FLOAT32, MB_ORDER_ABCD,
					   &raw), -EINVAL);
	ck_assert_int_eq(mb_decode_counter(c32, MB_INT32, MB_ORDER_ABCD,
					   &raw), -EINVAL);
	ck_assert_int_eq(mb_decode_counter(c32, MB_UINT32, (mb_order_t)7,
					   &raw), -EINVAL);
}
END_TEST

START_TEST(test_encode_raw_wraps)
{
	uint16_t regs[4];
	uint64_t raw = 0;

	/* The simulator's wrapped counters: only the low bits go out. */
	mb_encode_raw(0x100000005ull, MB_UINT32, MB_ORDER_CDAB, regs);
	ck_assert(regs[0] == 0x0005 && regs[1] == 0x0000);
	mb_encode_raw(0x12345ull, MB_UINT16, MB_ORDER_BADC, regs);
	ck_assert(regs[0] == 0x4523);
	mb_encode_raw(0x43668000ull, MB_FLOAT32, MB_ORDER_ABCD, regs);
	ck_assert(regs[0] == 0x4366 && regs[1] == 0x8000);
	mb_encode_raw(UINT64_MAX - 1, MB_UINT64, MB_ORDER_DCBA, regs);
	ck_assert_int_eq(mb_decode_counter(regs, MB_UINT64, MB_ORDER_DCBA,
					   &raw), 0);
	ck_assert(raw == UINT64_MAX - 1);
}
END_TEST

START_TEST(test_sizes_names)
{
	double v;
	const uint16_t r[4] = { 0 };

	ck_assert_uint_eq(mb_type_words(MB_INT16), 1);
	ck_assert_uint_eq(mb_type_words(MB_UINT16), 1);
	ck_assert_uint_eq(mb_type_words(MB_INT32), 2);
	ck_assert_uint_eq(mb_type_words(MB_UINT32), 2);
	ck_assert_uint_eq(mb_type_words(MB_FLOAT32), 2);
	ck_assert_uint_eq(mb_type_words(MB_UINT64), 4);
	ck_assert_uint_eq(mb_type_words(MB_INT64), 4);
	ck_assert_uint_eq(mb_type_counter_bits(MB_UINT16), 16);
	ck_assert_uint_eq(mb_type_counter_bits(MB_UINT32), 32);
	ck_assert_uint_eq(mb_type_counter_bits(MB_UINT64), 64);
	ck_assert_uint_eq(mb_type_counter_bits(MB_INT32), 0);
	ck_assert_uint_eq(mb_type_counter_bits(MB_INT64), 0);
	ck_assert_uint_eq(mb_type_counter_bits(MB_FLOAT32), 0);

	ck_assert_int_eq(mb_name_index(mb_type_names, "FLOAT32"), MB_FLOAT32);
	ck_assert_int_eq(mb_name_index(mb_type_names, "uint64"), MB_UINT64);
	ck_assert_int_eq(mb_name_index(mb_type_names, "int64"), MB_INT64);
	ck_assert_int_eq(mb_name_index(mb_order_names, "CdAb"), MB_ORDER_CDAB);
	ck_assert_int_eq(mb_name_index(mb_order_names, "dcba"), MB_ORDER_DCBA);
	ck_assert_int_eq(mb_name_index(mb_kind_names, "Holding"),
			 MB_KIND_HOLDING);
	ck_assert_int_eq(mb_name_index(mb_type_names, "float"), -1);
	ck_assert_int_eq(mb_name_index(mb_type_names, NULL), -1);
	ck_assert_ptr_null(mb_type_names[N_TYPES]);
	ck_assert_ptr_null(mb_order_names[N_ORDERS]);
	ck_assert_ptr_null(mb_kind_names[MB_KIND_HOLDING + 1]);

	ck_assert_int_eq(mb_decode(r, (mb_type_t)99, MB_ORDER_ABCD, &v),
			 -EINVAL);
	ck_assert_int_eq(mb_decode(r, MB_UINT16, (mb_order_t)4, &v), -EINVAL);
}
END_TEST

START_TEST(test_model_find)
{
	const mb_model_t *m = mb_model_find("SDM630");

	ck_assert_ptr_nonnull(m);
	ck_assert_str_eq(m->name, "sdm630");
	ck_assert_ptr_eq(mb_model_find("sdm630"), m);
	ck_assert_ptr_eq(mb_model_find("Sdm630"), m);
	ck_assert_ptr_nonnull(mb_model_find("EM24"));
	ck_assert_ptr_nonnull(mb_model_find("pm5300"));
	ck_assert_ptr_null(mb_model_find("sdm63"));
	ck_assert_ptr_null(mb_model_find("sdm6300"));
	ck_assert_ptr_null(mb_model_find(""));
	ck_assert_ptr_null(mb_model_find("custom"));
	ck_assert_ptr_null(mb_model_find(NULL));
}
END_TEST

static void _check_point(const mb_model_t *m, const mb_point_t *p,
			 const char *what)
{
	unsigned words = mb_type_words(p->type);

	ck_assert_msg(p->present, "%s %s missing", m->name, what);
	ck_assert_msg(words >= 1 && words <= m->max_regs_per_read,
		      "%s %s: %u words, max %u", m->name, what, words,
		      m->max_regs_per_read);
	ck_assert_msg((unsigned)p->address + words <= 65536u,
		      "%s %s runs past 0xFFFF", m->name, what);
	ck_assert_msg(p->order <= MB_ORDER_DCBA, "%s %s order", m->name, what);
	ck_assert_msg(isfinite(p->scale) && p->scale > 0, "%s %s scale",
		      m->name, what);
}

START_TEST(test_models_sane)
{
	const mb_model_t *m, *n;
	int count = 0;

	for (m = mb_models; m->name; m++, count++) {
		ck_assert_msg(m->name[0] && !strpbrk(m->name, " \t="),
			      "bad model name '%s'", m->name);
		ck_assert_msg(m->description && m->description[0],
			      "%s: no description", m->name);
		ck_assert_msg(m->source && strlen(m->source) > 10,
			      "%s: no source", m->name);
		ck_assert(m->kind == MB_KIND_INPUT ||
			  m->kind == MB_KIND_HOLDING);
		ck_assert_msg(m->max_regs_per_read >= 1 &&
			      m->max_regs_per_read <= 125,
			      "%s: max_regs %u", m->name,
			      m->max_regs_per_read);
		_check_point(m, &m->power, "power");
		_check_point(m, &m->energy, "energy");
		/* The two points must not overlap. */
		ck_assert(m->power.address + mb_type_words(m->power.type) <=
			  m->energy.address ||
			  m->energy.address + mb_type_words(m->energy.type) <=
			  m->power.address);
		for (n = m + 1; n->name; n++)
			ck_assert_msg(strcasecmp(m->name, n->name),
				      "duplicate model %s", m->name);
	}
	ck_assert_int_ge(count, 3);
}
END_TEST

/* Decode a point's wire words and scale, as the plugin does. */
static double _model_value(const mb_point_t *p, const uint16_t *regs)
{
	double v = -1.0;

	ck_assert_int_eq(mb_decode(regs, p->type, p->order, &v), 0);
	return v * p->scale;
}

START_TEST(test_model_maps)
{
	const mb_model_t *sdm = mb_model_find("sdm630");
	const mb_model_t *em24 = mb_model_find("em24");
	const mb_model_t *pm = mb_model_find("pm5300");
	/* SDM630 30053 -> 52, 30073 -> 72; float 1234.5 W, 1.5 kWh */
	const uint16_t sdm_p[] = { 0x449A, 0x5000 };
	const uint16_t sdm_e[] = { 0x3FC0, 0x0000 };
	/* EM24: 12345 (W*10), low word first; 100 (kWh*10) */
	const uint16_t em_p[] = { 0x3039, 0x0000 };
	const uint16_t em_e[] = { 0x0064, 0x0000 };
	/* PM5300: 2.5 kW = 0x40200000; 100000 Wh, high register first */
	const uint16_t pm_p[] = { 0x4020, 0x0000 };
	const uint16_t pm_e[] = { 0x0000, 0x0000, 0x0001, 0x86A0 };

	ck_assert_int_eq(sdm->power.address, 52);
	ck_assert_int_eq(sdm->energy.address, 72);
	ck_assert_int_eq(sdm->kind, MB_KIND_INPUT);
	ck_assert(fabs(_model_value(&sdm->power, sdm_p) - 1234.5) < 1e-9);
	ck_assert(fabs(_model_value(&sdm->energy, sdm_e) - 5.4e6) < 1e-6);

	ck_assert_int_eq(em24->power.address, 0x28);
	ck_assert_int_eq(em24->energy.address, 0x3E);
	ck_assert(fabs(_model_value(&em24->power, em_p) - 1234.5) < 1e-9);
	ck_assert(fabs(_model_value(&em24->energy, em_e) - 3.6e7) < 1e-6);

	ck_assert_int_eq(pm->power.address, 3059);
	ck_assert_int_eq(pm->energy.address, 3203);
	ck_assert_int_eq(pm->kind, MB_KIND_HOLDING);
	ck_assert(fabs(_model_value(&pm->power, pm_p) - 2500.0) < 1e-9);
	ck_assert(fabs(_model_value(&pm->energy, pm_e) - 3.6e8) < 1e-3);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("modbus_codec");
	TCase *tc = tcase_create("codec");
	TCase *tm = tcase_create("models");

	tcase_add_test(tc, test_float32_230_5);
	tcase_add_test(tc, test_uint32_orders);
	tcase_add_test(tc, test_int32_negative);
	tcase_add_test(tc, test_16bit_orders);
	tcase_add_test(tc, test_64bit_orders);
	tcase_add_loop_test(tc, test_roundtrip_all, 0, N_TYPES * N_ORDERS);
	tcase_add_loop_test(tc, test_orders_differ, 0, N_TYPES);
	tcase_add_test(tc, test_saturation_rounding);
	tcase_add_test(tc, test_nan_inf_rejected);
	tcase_add_test(tc, test_counter_decode);
	tcase_add_test(tc, test_encode_raw_wraps);
	tcase_add_test(tc, test_sizes_names);
	suite_add_tcase(s, tc);

	tcase_add_test(tm, test_model_find);
	tcase_add_test(tm, test_models_sane);
	tcase_add_test(tm, test_model_maps);
	suite_add_tcase(s, tm);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
