/*
 * modbus_keys.c - the acct_gather.conf keys of acct_gather_energy/modbus
 * (see modbus_conf.h), one row per key (conf_desc.h), with their parsers,
 * printers and the checks of single values that the map file's lines share
 * (modbus_conf_priv.h).  Below both modbus_conf.c, which ties keys together
 * and reads the map, and modbus_map.c, which checks each map line with
 * these rows: so neither calls the other back (tests/check_layering.py).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_desc.h"
#include "counter.h"
#include "modbus_conf.h"
#include "modbus_conf_priv.h"

/* -------------------------------------------------- private prototypes */

static int _p_parity(void *, const conf_where_t *, const char *, char *,
		     size_t);
static int _p_preg(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_ereg(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_model(void *, const conf_where_t *, const char *, char *, size_t);

static void _s_parity(const void *, char *, size_t);
static void _s_preg(const void *, char *, size_t);
static void _s_ereg(const void *, char *, size_t);
static void _s_order(const void *, char *, size_t);
static void _s_model(const void *, char *, size_t);

/* --------------------------------------------------- private variables */

/* Scales: positive; 1e-9 (nW/nJ per unit) to 1e12 (TJ per unit). */
#define SCALE_MIN	1e-9
#define SCALE_MAX	1e12

/* Order = the K_* enum. */
const se_conf_key_t modbus_conf_keys[K_COUNT] = {
	SE_KEY_STR("EnergyModbusDevice", modbus_conf_t, device,
		   modbus_check_device, "(null)"),
	SE_KEY_UINT("EnergyModbusBaud", modbus_conf_t, serial.baud, 300,
		    4000000),
	SE_KEY_FN("EnergyModbusParity", _p_parity, _s_parity),
	SE_KEY_UINT("EnergyModbusDataBits", modbus_conf_t, serial.data_bits,
		    5, 8),
	SE_KEY_UINT("EnergyModbusStopBits", modbus_conf_t, serial.stop_bits,
		    1, 2),
	SE_KEY_UINT("EnergyModbusUnit", modbus_conf_t, unit, 0, 255),
	SE_KEY_ENUM("EnergyModbusRegisterKind", modbus_conf_t, kind,
		    mb_kind_names),
	SE_KEY_FN("EnergyModbusPowerRegister", _p_preg, _s_preg),
	SE_KEY_ENUM("EnergyModbusPowerType", modbus_conf_t, power.type,
		    mb_type_names),
	{ .name = "EnergyModbusWordOrder", .type = SE_CONF_ENUM,
	  .offset = SE_CONF_FIELD(modbus_conf_t, order, int),
	  .names = mb_order_names, .show = _s_order },
	SE_KEY_REAL("EnergyModbusPowerScale", modbus_conf_t, power.scale,
		    SCALE_MIN, SCALE_MAX),
	SE_KEY_FN("EnergyModbusEnergyRegister", _p_ereg, _s_ereg),
	SE_KEY_ENUM("EnergyModbusEnergyType", modbus_conf_t, energy.type,
		    mb_type_names),
	SE_KEY_REAL("EnergyModbusEnergyScale", modbus_conf_t, energy.scale,
		    SCALE_MIN, SCALE_MAX),
	SE_KEY_FN("EnergyModbusModel", _p_model, _s_model),
	/* 0.1 s: a 12-register RTU read at 9600 b/s takes ~44 ms. */
	SE_KEY_SECONDS("EnergyModbusFrequency", modbus_conf_t, period_ns,
		       100000000ULL, 3600000000000ULL),
	SE_KEY_MILLIS("EnergyModbusTimeout", modbus_conf_t, timeout_ns, 10,
		      60000),
	SE_KEY_REAL("EnergyModbusMaxPower", modbus_conf_t, max_power_w, 1.0,
		    1e8),
	SE_KEY_PATH("EnergyModbusMap", modbus_conf_t, map_path, NULL,
		    "(null)"),
};

static const char *const parity_names[] = { "N", "E", "O", NULL };

/* ------------------------------------------------------- checked values */

int modbus_check_device(const conf_where_t *w, const char *v, char *err,
			size_t len)
{
	char dev[512], why[128];
	modbus_device_t d;
	int rc;

	if ((rc = conf_expand(w, v, "node", dev, sizeof(dev), err, len)))
		return rc;
	if (modbus_device_parse(dev, &d, why, sizeof(why)))
		return conf_fail(w, v, err, len, -EINVAL, "%s", why);
	return 0;
}

bool modbus_rtu_unit_bad(const char *device, unsigned unit)
{
	char dev[512], why[128];
	modbus_device_t d;

	if (!device || !strcasecmp(device, "none") ||
	    conf_expand(NULL, device, "node", dev, sizeof(dev), NULL, 0) ||
	    modbus_device_parse(dev, &d, why, sizeof(why)))
		return false;
	return d.kind == MODBUS_DEV_RTU && (unit < 1 || unit > 247);
}

void modbus_model_names(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (const mb_model_t *m = mb_models; m->name && n < len; m++)
		n += (size_t) snprintf(buf + n, len - n, "%s%s",
				       n ? ", " : "", m->name);
}

/* ---------------------------------------------------------- key parsers */

static int _p_parity(void *conf, const conf_where_t *w, const char *v,
		     char *err, size_t len)
{
	modbus_conf_t *c = conf;
	int i, rc = conf_enum(w, v, parity_names, &i, err, len);

	if (!rc)
		c->serial.parity = parity_names[i][0];
	return rc;
}

static int _p_reg(mb_point_t *p, const conf_where_t *w, const char *v,
		  char *err, size_t len)
{
	uint64_t x;
	int rc = conf_uint(w, v, 0, 65535, &x, err, len);

	if (!rc) {
		p->present = true;
		p->address = (uint16_t) x;
	}
	return rc;
}

static int _p_preg(void *conf, const conf_where_t *w, const char *v, char *err,
		   size_t len)
{
	modbus_conf_t *c = conf;

	return _p_reg(&c->power, w, v, err, len);
}

static int _p_ereg(void *conf, const conf_where_t *w, const char *v, char *err,
		   size_t len)
{
	modbus_conf_t *c = conf;

	return _p_reg(&c->energy, w, v, err, len);
}

static int _p_model(void *conf, const conf_where_t *w, const char *v,
		    char *err, size_t len)
{
	modbus_conf_t *c = conf;
	char known[256];

	if (!strcasecmp(v, "custom")) {
		free(c->model);
		c->model = NULL;
		return 0;
	}
	if (mb_model_find(v))
		return conf_set_str(&c->model, v);
	modbus_model_names(known, sizeof(known));
	return conf_fail(w, v, err, len, -EINVAL,
			 "unknown model (known: custom, %s)", known);
}

/* --------------------------------------------------------- key printers */

SE_CONF_SHOW(_s_parity, modbus_conf_t, "%c", c->serial.parity)

static void _s_reg(const mb_point_t *p, char *buf, size_t len)
{
	if (p->present)
		snprintf(buf, len, "%u", p->address);
	else
		snprintf(buf, len, "(null)");
}

static void _s_preg(const void *conf, char *buf, size_t len)
{
	const modbus_conf_t *c = conf;

	_s_reg(&c->power, buf, len);
}

static void _s_ereg(const void *conf, char *buf, size_t len)
{
	const modbus_conf_t *c = conf;

	_s_reg(&c->energy, buf, len);
}

static void _s_order(const void *conf, char *buf, size_t len)
{
	const modbus_conf_t *c = conf;

	if (c->energy.present && c->power.present &&
	    c->energy.order != c->power.order)
		snprintf(buf, len, "%s (power), %s (energy)",
			 mb_order_names[c->power.order],
			 mb_order_names[c->energy.order]);
	else
		snprintf(buf, len, "%s", mb_order_names[c->power.present ?
			 c->power.order : c->energy.present ?
			 c->energy.order : c->order]);
}

SE_CONF_SHOW(_s_model, modbus_conf_t, "%s", c->model ? c->model : "custom")

/*
 * A counter that can wrap more than once between two reads (one period and
 * one timeout apart) at MaxPower cannot be counted: a wrap would look like
 * no wrap, or two like one.  The share of a map entry cancels out (the node
 * is billed that share of both the bound and the register), so it is
 * checked for the whole channel.  where: "FILE" or "MAP:LINE".
 */
int modbus_check_wrap(const modbus_conf_t *c, const mb_point_t *en,
		      double max_power_w, const char *where, char *err,
		      size_t len)
{
	uint64_t dt_ns = c->period_ns + c->timeout_ns, max_delta;
	counter_spec_t spec;
	double range_j;

	if (!en->present)
		return 0;
	modbus_energy_counter_spec(en->type, en->scale, 1.0, &spec);
	max_delta = counter_max_delta(spec.mj_per_unit,
				      (uint64_t) (max_power_w * 1000.0),
				      dt_ns, 1, 1);
	if (!counter_wrap_ambiguous(spec.width_bits, max_delta))
		return 0;
	range_j = ldexp(spec.mj_per_unit / 1000.0, (int) spec.width_bits);
	snprintf(err, len,
		 "%s: EnergyModbusEnergyType=%s EnergyModbusEnergyScale=%g EnergyModbusMaxPower=%g: the register wraps every %.6g J, and at %g W it may count %.6g J in EnergyModbusFrequency + EnergyModbusTimeout (%.3f s): a wrap could not be told from two; use a wider register or coarser scale, a shorter period, or a MaxPower near the node's real peak",
		 where, mb_type_names[en->type], en->scale, max_power_w,
		 range_j, max_power_w, max_power_w * (double) dt_ns / 1e9,
		 (double) dt_ns / 1e9);
	return -EINVAL;
}
