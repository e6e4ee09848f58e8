/*
 * test_snmp.c - the SNMP meter (src/meters/snmp/) against a fake agent
 * behind its transport interface: the models' OIDs and units, one GET per
 * PDU per read, outlets summed and shared, counters unwrapped, a reset
 * giving power only, errors that name node and PDU, and the coarse APC
 * counter (tenths of kWh) shaped by power through the shared accumulator.
 * The real agent (snmpsim, net-snmp) is in
 * tests/integration/test_snmp_meter.py.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "energy_acc.h"
#include "snmp_conf.h"
#include "snmp_meter.h"
#include "snmp_models.h"
#include "snmp_transport.h"
#include "comma_hostlist.h"

#define NS		1000000000ULL
#define KWH		3.6e6
#define MAX_VARS	64

/* ------------------------------------------------------ the fake agent */

typedef struct {
	char oid[256];
	int64_t value;		/* < 0: a negative INTEGER */
	bool absent;		/* noSuchInstance */
} fake_var_t;

typedef struct {
	const char *name;
	fake_var_t vars[MAX_VARS];
	size_t n;
	int fail;		/* get returns this when not 0 */
	unsigned long gets;
	size_t last_n;		/* OIDs in the last GET */
	bool opened;
} fake_agent_t;

static fake_agent_t agents[2] = { { .name = "pdua" }, { .name = "pdub" } };

static fake_var_t *_var(fake_agent_t *a, const char *oid)
{
	for (size_t i = 0; i < a->n; i++)
		if (!strcmp(a->vars[i].oid, oid))
			return &a->vars[i];
	ck_assert_uint_lt(a->n, MAX_VARS);
	snprintf(a->vars[a->n].oid, sizeof(a->vars[0].oid), "%s", oid);
	return &a->vars[a->n++];
}

static void _set(fake_agent_t *a, const char *oid, int64_t v)
{
	fake_var_t *x = _var(a, oid);

	x->value = v;
	x->absent = false;
}

static int _f_open(const snmp_peer_t *peer, void **ctx, uint64_t dl,
		   char *err, size_t len)
{
	(void) dl;
	(void) err;
	(void) len;
	for (size_t i = 0; i < 2; i++)
		if (!strcmp(agents[i].name, peer->name)) {
			agents[i].opened = true;
			*ctx = &agents[i];
			return 0;
		}
	return -ENOENT;
}

static int _f_get(void *ctx, const snmp_oid_t *oids, size_t n,
		  snmp_value_t *out, uint64_t dl, char *msg, size_t len)
{
	fake_agent_t *a = ctx;
	char oid[1024];

	(void) dl;
	a->gets++;
	a->last_n = n;
	if (a->fail) {
		snprintf(msg, len, a->fail == -EACCES ?
			 "authentication refused (wrong AuthKey)" :
			 "no answer by the deadline");
		return a->fail;
	}
	for (size_t i = 0; i < n; i++) {
		fake_var_t *v;

		snmp_oid_format(&oids[i], oid, sizeof(oid));
		v = _var(a, oid);
		memset(&out[i], 0, sizeof(out[i]));
		if (v->absent) {
			out[i].status = -ENOENT;
		} else if (v->value < 0) {
			out[i].negative = true;
			out[i].value = (uint64_t) -v->value;
		} else {
			out[i].value = (uint64_t) v->value;
		}
	}
	return 0;
}

static void _f_close(void *ctx)
{
	((fake_agent_t *) ctx)->opened = false;
}

static const snmp_transport_t fake_tp = {
	.name = "fake", .open = _f_open, .get = _f_get, .close = _f_close,
};

/* ------------------------------------------------------------- helpers */

static snmp_pdu_t pdus[2];

static void _setup(void)
{
	memset(agents, 0, sizeof(agents));
	agents[0].name = "pdua";
	agents[1].name = "pdub";
	memset(pdus, 0, sizeof(pdus));
	snprintf(pdus[0].name, sizeof(pdus[0].name), "pdua");
	snprintf(pdus[0].host, sizeof(pdus[0].host), "10.0.0.5");
	snprintf(pdus[1].name, sizeof(pdus[1].name), "pdub");
	snprintf(pdus[1].host, sizeof(pdus[1].host), "10.0.0.6:1161");
}

static snmp_outlet_t _outlet(size_t pdu, const char *model,
			     const char *index, double share)
{
	snmp_outlet_t o = { .pdu = pdu, .share = share, .max_power_w = 5000 };

	o.model = snmp_model_find(model);
	ck_assert_ptr_nonnull(o.model);
	snprintf(o.index, sizeof(o.index), "%s", index);
	return o;
}

static snmp_meter_t *_meter(const snmp_outlet_t *o, size_t n)
{
	snmp_meter_config_t cfg = {
		.node = "n1", .pdus = pdus, .n_pdus = 2, .outlets = o,
		.n_outlets = n, .transport = &fake_tp, .timeout_ns = NS,
	};
	snmp_meter_t *m;
	char err[256] = "";

	ck_assert_msg(snmp_meter_create(&cfg, &m, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(snmp_meter_ops.open(m, UINT64_MAX), 0);
	return m;
}

static int _read(snmp_meter_t *m, meter_reading_t *r, char *msg,
		 size_t len)
{
	memset(r, 0, sizeof(*r));
	return snmp_meter_ops.read(m, r, UINT64_MAX, msg, len);
}

#define APC_P	"1.3.6.1.4.1.318.1.1.26.9.4.3.1.7."
#define APC_E	"1.3.6.1.4.1.318.1.1.26.9.4.3.1.11."
#define RAR	"1.3.6.1.4.1.13742.6.5.4.3.1.4."

/* --------------------------------------------------------------- tests */

START_TEST(test_model_oids)
{
	snmp_outlet_t o[4] = {
		_outlet(0, "apc-rpdu2", "7", 1),
		_outlet(1, "raritan-px", "1.3", 1),
		_outlet(1, "servertech-sentry4", "1.1.4", 1),
		_outlet(1, "eaton-epdu", "0.5", 1),
	};
	snmp_meter_t *m;
	meter_reading_t r;
	char msg[512];

	_setup();
	_set(&agents[0], APC_P "7", 230);
	_set(&agents[0], APC_E "7", 1234);
	_set(&agents[1], RAR "1.3.5", 120);
	_set(&agents[1], RAR "1.3.8", 5000);
	_set(&agents[1], "1.3.6.1.4.1.1718.4.1.8.3.1.7.1.1.4", 80);
	_set(&agents[1], "1.3.6.1.4.1.1718.4.1.8.3.1.14.1.1.4", 10);
	_set(&agents[1], "1.3.6.1.4.1.534.6.6.7.6.5.1.3.0.5", 70);
	_set(&agents[1], "1.3.6.1.4.1.534.6.6.7.6.5.1.4.0.5", 10);
	m = _meter(o, 4);
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
	ck_assert(r.has_power);
	ck_assert_uint_eq(r.power_mw, (230 + 120 + 80 + 70) * 1000);
	/* the units differ (0.1 kWh and Wh): power alone is integrated */
	ck_assert(!r.has_counter);
	/* one GET per PDU, all its OIDs in it */
	ck_assert_uint_eq(agents[0].gets, 1);
	ck_assert_uint_eq(agents[0].last_n, 2);
	ck_assert_uint_eq(agents[1].gets, 1);
	ck_assert_uint_eq(agents[1].last_n, 6);
	ck_assert_uint_eq(snmp_meter_requests(m), 2);
	snmp_meter_destroy(m);
}
END_TEST

/*
 * Each model's units, counter width and default unit index as the vendor's
 * MIB states them (snmp_models.c cites the MIB texts): a row edited from
 * memory fails here.
 */
START_TEST(test_model_units)
{
	static const struct {
		const char *name;
		double power_w, energy_j;
		unsigned width;
		const char *unit;
	} mib[] = {
		/* rPDU2OutletMeteredStatusEnergy: INTEGER, tenths of kWh */
		{ "apc-rpdu2", 1, 360000, 31, NULL },
		/* measurementsOutletSensorValue: Unsigned32, W / Wh, pduId 1 */
		{ "raritan-px", 1, 3600, 32, "1" },
		/* st4OutletEnergy: Integer32(-1..2147483647) Wh, unit A, cord 1 */
		{ "servertech-sentry4", 1, 3600, 31, "1.1" },
		/* outletWh: Unsigned32 Wh, strappingIndex 0 */
		{ "eaton-epdu", 1, 3600, 32, "0" },
	};

	for (size_t i = 0; i < sizeof(mib) / sizeof(mib[0]); i++) {
		const snmp_model_t *md = snmp_model_find(mib[i].name);

		ck_assert_ptr_nonnull(md);
		ck_assert_double_eq(md->power_w, mib[i].power_w);
		ck_assert_double_eq(md->energy_j, mib[i].energy_j);
		ck_assert_uint_eq(md->energy_width, mib[i].width);
		if (mib[i].unit)
			ck_assert_str_eq(md->unit_default, mib[i].unit);
		else
			ck_assert_ptr_null(md->unit_default);
	}
	ck_assert_ptr_null(snmp_model_at(4));
}
END_TEST

/* The mutant "tenths of kWh read as kWh" must fail here. */
START_TEST(test_apc_tenths_of_kwh)
{
	snmp_outlet_t o = _outlet(0, "apc-rpdu2", "3", 1);
	counter_spec_t spec;
	snmp_meter_t *m;

	_setup();
	m = _meter(&o, 1);
	ck_assert(snmp_meter_counter_spec(m, &spec));
	/* one count is 0.1 kWh = 360 kJ = 3.6e8 mJ */
	ck_assert_double_eq_tol(spec.mj_per_unit, 0.1 * KWH * 1000, 1);
	ck_assert_uint_eq(spec.registers, 1);
	snmp_meter_destroy(m);
}
END_TEST

/*
 * Two hours at 1800 W on an APC outlet whose power reads 10 % low: the
 * counter (floor of the tenths of kWh) disciplines the integrated power, so
 * the total is the truth within one count (3.6 %), where the biased power
 * alone would be 10 % short; read as kWh, the count would claim ten times
 * the truth.  The meter's own readings are fed to the accumulator on
 * simulated time, once every 10 s.
 */
START_TEST(test_apc_counter_disciplines_power)
{
	snmp_outlet_t o = _outlet(0, "apc-rpdu2", "3", 1);
	energy_acc_config_t cfg = { .history = 1024, .max_power_mw = 5000000 };
	energy_acc_t *acc = energy_acc_create(&cfg);
	const double watts = 1800, start_kwh = 4321.05;
	counter_spec_t spec;
	meter_reading_t r;
	snmp_meter_t *m;
	uint64_t e_mj;
	char msg[512];
	double truth = 0;

	_setup();
	m = _meter(&o, 1);
	ck_assert(snmp_meter_counter_spec(m, &spec));
	for (int s = 0; s <= 7200; s += 10) {
		double kwh = start_kwh + watts * s / KWH;

		truth = watts * s;
		_set(&agents[0], APC_P "3", (int64_t) (watts * 0.9));
		_set(&agents[0], APC_E "3", (int64_t) floor(kwh * 10));
		ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
		ck_assert(r.has_counter);
		ck_assert_int_ge(energy_acc_add_counter(acc, (s + 1) * NS,
							r.counter_raw, &spec,
							(int64_t) r.power_mw),
				 0);
	}
	ck_assert_int_eq(energy_acc_energy_at(acc, 7201 * NS, &e_mj), 0);
	ck_assert_double_eq_tol(e_mj / 1000.0, truth, 0.1 * KWH * 1.01);
	energy_acc_destroy(acc);
	snmp_meter_destroy(m);
}
END_TEST

/*
 * A node on two APC outlets (two supplies, two PDUs): one counter, the sum,
 * of step 2 counts.  60 s windows all through two hours at 600 + 500 W,
 * power exact: each within 0.5 % of the truth (a pull by one count, 360
 * kJ, would be 550 % of such a window).
 */
START_TEST(test_two_outlets_summed)
{
	snmp_outlet_t o[2] = { _outlet(0, "apc-rpdu2", "3", 1),
			       _outlet(1, "apc-rpdu2", "3", 1) };
	energy_acc_config_t cfg = { .history = 2048, .max_power_mw = 20000000 };
	energy_acc_t *acc = energy_acc_create(&cfg);
	/* both counts a hair below their next step at the base: the sum lags
	 * the truth by almost two counts there, by none a moment later */
	double w[2] = { 600, 500 }, kwh0[2] = { 100.0999, 2000.0998 };
	counter_spec_t spec;
	meter_reading_t r;
	snmp_meter_t *m;
	char msg[512];

	_setup();
	m = _meter(o, 2);
	ck_assert(snmp_meter_counter_spec(m, &spec));
	ck_assert_uint_eq(spec.registers, 2);
	for (int s = 0; s <= 7200; s++) {
		for (int k = 0; k < 2; k++) {
			_set(&agents[k], APC_P "3", (int64_t) w[k]);
			_set(&agents[k], APC_E "3", (int64_t) floor(
				(kwh0[k] + w[k] * s / KWH) * 10));
		}
		ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
		ck_assert_uint_eq(r.power_mw, 1100000);
		ck_assert(r.has_counter);
		ck_assert_int_eq(energy_acc_add_counter(acc, (s + 1) * NS,
							r.counter_raw, &spec,
							(int64_t) r.power_mw),
				 0);
		if (s >= 61) {
			uint64_t e0, e1;

			ck_assert_int_eq(energy_acc_energy_at(acc, (s - 59) * NS, &e0), 0);
			ck_assert_int_eq(energy_acc_energy_at(acc, (s + 1) * NS, &e1), 0);
			ck_assert_double_eq_tol((e1 - e0) / 1000.0, 1100 * 60,
						1100 * 60 * 0.005);
		}
	}
	ck_assert_uint_eq(agents[0].gets, 7201);
	ck_assert_uint_eq(agents[1].gets, 7201);
	energy_acc_destroy(acc);
	snmp_meter_destroy(m);
}
END_TEST

/* A chassis on one Raritan outlet, this node a quarter of it. */
START_TEST(test_share)
{
	snmp_outlet_t o = _outlet(0, "raritan-px", "1.9", 0.25);
	counter_spec_t spec;
	meter_reading_t r;
	snmp_meter_t *m;
	char msg[512];

	_setup();
	_set(&agents[0], RAR "1.9.5", 2000);
	_set(&agents[0], RAR "1.9.8", 77);
	m = _meter(&o, 1);
	ck_assert(snmp_meter_counter_spec(m, &spec));
	ck_assert_double_eq_tol(spec.mj_per_unit, 3.6e6 * 0.25, 1e-3);
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(r.power_mw, 500000);
	snmp_meter_destroy(m);
}
END_TEST

/* Raritan's Unsigned32 Wh wraps: the delta across it counts. */
START_TEST(test_wrap_and_reset)
{
	snmp_outlet_t o = _outlet(0, "raritan-px", "1.2", 1);
	meter_reading_t r;
	snmp_meter_t *m;
	uint64_t c0;
	char msg[512];

	_setup();
	_set(&agents[0], RAR "1.2.5", 300);
	_set(&agents[0], RAR "1.2.8", 4294967295LL);
	m = _meter(&o, 1);
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
	ck_assert(r.has_counter);
	c0 = r.counter_raw;
	_set(&agents[0], RAR "1.2.8", 1);	/* wrapped: +2 Wh */
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
	ck_assert(r.has_counter);
	ck_assert_uint_eq(r.counter_raw - c0, 2);
	/* an operator resets the outlet's counter well above 0: power only */
	_set(&agents[0], RAR "1.2.8", 100000);
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
	ck_assert(r.has_power);
	ck_assert(!r.has_counter);
	/* then it counts again from there */
	_set(&agents[0], RAR "1.2.8", 100001);
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
	ck_assert(r.has_counter);
	snmp_meter_destroy(m);
}
END_TEST

START_TEST(test_errors_name_node_and_pdu)
{
	snmp_outlet_t o[2] = { _outlet(0, "apc-rpdu2", "3", 1),
			       _outlet(1, "apc-rpdu2", "4", 1) };
	meter_reading_t r;
	snmp_meter_t *m;
	char msg[512];

	_setup();
	for (int k = 0; k < 2; k++) {
		_set(&agents[k], APC_P "3", 100);
		_set(&agents[k], APC_E "3", 100);
		_set(&agents[k], APC_P "4", 100);
		_set(&agents[k], APC_E "4", 100);
	}
	m = _meter(o, 2);
	agents[1].fail = -EACCES;
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), -EACCES);
	ck_assert_ptr_nonnull(strstr(msg, "node n1: PDU pdub (10.0.0.6:1161): authentication refused"));
	/* the failed session was closed, the next read reopens it */
	ck_assert(!agents[1].opened);
	agents[1].fail = -ETIMEDOUT;
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), -ETIMEDOUT);
	ck_assert_ptr_nonnull(strstr(msg, "PDU pdub"));
	agents[1].fail = 0;
	/* outlet 4 renumbered away */
	_var(&agents[1], APC_E "4")->absent = true;
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), -ENOENT);
	ck_assert_ptr_nonnull(strstr(msg, "node n1: PDU pdub"));
	ck_assert_ptr_nonnull(strstr(msg, "outlet 4: energy " APC_E "4"));
	ck_assert_ptr_nonnull(strstr(msg, "renumbered"));
	_var(&agents[1], APC_E "4")->absent = false;
	/* idle noise below 0 W reads 0; far below is a fault */
	_set(&agents[1], APC_P "4", -3);
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(r.power_mw, 100000);
	_set(&agents[1], APC_P "4", -500);
	ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), -ERANGE);
	snmp_meter_destroy(m);
}
END_TEST

/* Sentry4 and Eaton say -1 W (any negative) when they have no reading: a
 * failed read naming the outlet, never 0 W (which would under-count). */
START_TEST(test_negative_power_is_no_reading)
{
	/* the index as the map resolves it: the model's unit, the outlet */
	static const struct { const char *model, *index, *p, *e; } rows[] = {
		{ "servertech-sentry4", "1.1.7",
		  "1.3.6.1.4.1.1718.4.1.8.3.1.7.1.1.7",
		  "1.3.6.1.4.1.1718.4.1.8.3.1.14.1.1.7" },
		{ "eaton-epdu", "0.7", "1.3.6.1.4.1.534.6.6.7.6.5.1.3.0.7",
		  "1.3.6.1.4.1.534.6.6.7.6.5.1.4.0.7" },
	};

	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		snmp_outlet_t o = _outlet(0, rows[k].model, rows[k].index, 1);
		const char *p = rows[k].p, *e = rows[k].e;
		char msg[512] = "", want[64];
		meter_reading_t r;
		snmp_meter_t *m;

		_setup();
		_set(&agents[0], p, 250);
		_set(&agents[0], e, 1000);
		m = _meter(&o, 1);
		ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), 0);
		ck_assert_uint_eq(r.power_mw, 250000);
		_set(&agents[0], p, -1);
		ck_assert_int_eq(_read(m, &r, msg, sizeof(msg)), -ENODATA);
		snprintf(want, sizeof(want), "outlet %s: power -1: no reading",
			 rows[k].index);
		ck_assert_msg(strstr(msg, want), "%s: '%s'", rows[k].model,
			      msg);
		snmp_meter_destroy(m);
	}
}
END_TEST

START_TEST(test_oid_parse)
{
	snmp_oid_t o = { .len = 0 };
	char buf[64];

	ck_assert_int_eq(snmp_oid_append(&o, ".1.3.6"), 0);
	ck_assert_int_eq(snmp_oid_append(&o, "4294967295"), 0);
	snmp_oid_format(&o, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1.3.6.4294967295");
	o.len = 0;
	ck_assert_int_eq(snmp_oid_append(&o, "1..3"), -EINVAL);
	o.len = 0;
	ck_assert_int_eq(snmp_oid_append(&o, "1.3."), -EINVAL);
	o.len = 0;
	ck_assert_int_eq(snmp_oid_append(&o, "1.x"), -EINVAL);
	o.len = 0;
	ck_assert_int_eq(snmp_oid_append(&o, "4294967296"), -EINVAL);
	o.len = 0;
	ck_assert_int_eq(snmp_oid_append(&o, ""), -EINVAL);
}
END_TEST


/* ------------------------------------------------------ configuration */

/* Hostlists here: a comma list of names, or "c[1-4]" written out. */
static const snmp_hostlist_ops_t hl = { comma_hostlist_contains,
					comma_hostlist_count, NULL };

static char *_write(const char *text, mode_t mode)
{
	char *path = strdup("/tmp/test_snmp_XXXXXX");
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text));
	close(fd);
	chmod(path, mode);
	return path;
}

static int _load(snmp_conf_t *c, const char *map, const char *secrets,
		 mode_t mode, char *err, size_t len)
{
	int rc;

	snmp_conf_init(c);
	c->map_path = _write(map, 0644);
	c->secrets_path = _write(secrets, mode);
	rc = snmp_conf_read_files(c, err, len);
	unlink(c->map_path);
	unlink(c->secrets_path);
	return rc;
}

#define MAP \
	"PDU=pdua Host=127.0.0.1:1161 Model=apc-rpdu2\n" \
	"PDU=pdub Host=127.0.0.1:1162 Model=raritan-px Unit=2\n" \
	"Nodes=n1 Outlets=pdua:1,pdub:1\n" \
	"Nodes=c1,c2,c3 Outlets=pdua:5\n" \
	"Nodes=c4 Outlets=pdua:5 Share=0.4\n"
#define SECRETS \
	"PDU=pdub User=slurm AuthKey=authpass123 PrivKey=privpass123\n" \
	"PDU=* Community=public\n"

START_TEST(test_conf_resolve)
{
	snmp_conf_t c;
	snmp_target_t t;
	char err[512] = "";

	ck_assert_msg(_load(&c, MAP, SECRETS, 0600, err, sizeof(err)) == 0,
		      "%s", err);
	ck_assert_int_eq(snmp_conf_resolve(&c, "n1", &hl, &t, err,
					   sizeof(err)), 0);
	ck_assert_uint_eq(t.n_outlets, 2);
	ck_assert_uint_eq(t.n_pdus, 2);
	ck_assert_str_eq(t.outlets[0].index, "1");
	ck_assert_str_eq(t.outlets[1].index, "2.1");	/* Unit=2 */
	ck_assert_int_eq(t.pdus[0].secret.version, SNMP_V2C);
	ck_assert_str_eq(t.pdus[0].secret.community, "public");
	ck_assert_int_eq(t.pdus[1].secret.version, SNMP_V3);
	ck_assert_int_eq(t.pdus[1].secret.priv, SNMP_PRIV_AES);
	/* c4 takes 0.4 of outlet 5, c1-c3 0.2 each */
	ck_assert_int_eq(snmp_conf_resolve(&c, "c2", &hl, &t, err,
					   sizeof(err)), 0);
	ck_assert_double_eq_tol(t.outlets[0].share, 0.2, 1e-12);
	ck_assert_int_eq(snmp_conf_resolve(&c, "c4", &hl, &t, err,
					   sizeof(err)), 0);
	ck_assert_double_eq_tol(t.outlets[0].share, 0.4, 1e-12);
	ck_assert_int_eq(snmp_conf_resolve(&c, "zz", &hl, &t, err,
					   sizeof(err)), -ENOENT);
	snmp_conf_free(&c);
}
END_TEST

START_TEST(test_conf_errors)
{
	snmp_conf_t c;
	char err[512] = "";

	/* a group-readable secrets file is refused */
	ck_assert_int_eq(_load(&c, MAP, SECRETS, 0640, err, sizeof(err)),
			 -EPERM);
	ck_assert_ptr_nonnull(strstr(err, "EnergySNMPSecrets"));
	snmp_conf_free(&c);
	/* a short key: named, its value never written */
	ck_assert_int_eq(_load(&c, MAP,
			       "PDU=pdub User=u AuthKey=short7x PrivKey=privpass123\nPDU=* Community=public\n",
			       0600, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "AuthKey"));
	ck_assert_ptr_null(strstr(err, "short7x"));
	snmp_conf_free(&c);
	/* a typo'd key: named, not its value */
	ck_assert_int_eq(_load(&c, MAP,
			       "PDU=pdub User=u AuthKye=topsecret99 PrivKey=privpass123\n",
			       0600, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(strstr(err, "topsecret99"));
	snmp_conf_free(&c);
	/* a word without '=': not shown */
	ck_assert_int_eq(_load(&c, MAP, "PDU=* Community=x hunter2hunter\n",
			       0600, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_null(strstr(err, "hunter2"));
	snmp_conf_free(&c);
	/* an outlet on a PDU not defined */
	ck_assert_int_eq(_load(&c, "PDU=pdua Host=h Model=apc-rpdu2\nNodes=n1 Outlets=pdux:1\n",
			       SECRETS, 0600, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":2: Outlets: PDU pdux is not defined"));
	snmp_conf_free(&c);
	/* an unknown model, with the known ones */
	ck_assert_int_eq(_load(&c, "PDU=pdua Host=h Model=acme\nNodes=n1 Outlets=pdua:1\n",
			       SECRETS, 0600, err, sizeof(err)), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":1: Model=acme: unknown model (known: apc-rpdu2"));
	snmp_conf_free(&c);
}
END_TEST

static Suite *_suite(void)
{
	Suite *s = suite_create("snmp");
	TCase *tc = tcase_create("meter");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_model_oids);
	tcase_add_test(tc, test_model_units);
	tcase_add_test(tc, test_apc_tenths_of_kwh);
	tcase_add_test(tc, test_apc_counter_disciplines_power);
	tcase_add_test(tc, test_two_outlets_summed);
	tcase_add_test(tc, test_share);
	tcase_add_test(tc, test_wrap_and_reset);
	tcase_add_test(tc, test_errors_name_node_and_pdu);
	tcase_add_test(tc, test_negative_power_is_no_reading);
	tcase_add_test(tc, test_oid_parse);
	tcase_add_test(tc, test_conf_resolve);
	tcase_add_test(tc, test_conf_errors);
	suite_add_tcase(s, tc);
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
