/*
 * modbus_conf.c - acct_gather_energy/modbus configuration (see modbus_conf.h).
 *
 * Table-driven: one row per key, with its parser and its printer; the rules
 * that tie keys together live in modbus_conf_check().
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_desc.h"
#include "counter.h"
#include "modbus_conf.h"
#include "se_log.h"

/* ------------------------------------------------------- private types */

enum {
	K_DEVICE, K_BAUD, K_PARITY, K_DATA_BITS, K_STOP_BITS, K_UNIT,
	K_KIND, K_PREG, K_PTYPE, K_ORDER, K_PSCALE, K_EREG, K_ETYPE,
	K_ESCALE, K_MODEL, K_FREQ, K_TIMEOUT, K_MAX_POWER, K_MAP,
	K_COUNT
};

/* Collects map lines (modbus_conf_read_map). */
typedef struct {
	modbus_conf_t *c;
	size_t cap;
	bool line_failed;	/* a line was refused: err names it */
} map_ctx_t;

/* -------------------------------------------------- private prototypes */

static int _p_device(void *, const conf_where_t *, const char *, char *,
		     size_t);
static int _p_baud(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_parity(void *, const conf_where_t *, const char *, char *,
		     size_t);
static int _p_data_bits(void *, const conf_where_t *, const char *, char *,
			size_t);
static int _p_stop_bits(void *, const conf_where_t *, const char *, char *,
			size_t);
static int _p_unit(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_kind(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_preg(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_ptype(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_order(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_pscale(void *, const conf_where_t *, const char *, char *,
		     size_t);
static int _p_ereg(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_etype(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_escale(void *, const conf_where_t *, const char *, char *,
		     size_t);
static int _p_model(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_freq(void *, const conf_where_t *, const char *, char *, size_t);
static int _p_timeout(void *, const conf_where_t *, const char *, char *,
		      size_t);
static int _p_max_power(void *, const conf_where_t *, const char *, char *,
			size_t);
static int _p_map(void *, const conf_where_t *, const char *, char *, size_t);

static void _s_device(const void *, char *, size_t);
static void _s_baud(const void *, char *, size_t);
static void _s_parity(const void *, char *, size_t);
static void _s_data_bits(const void *, char *, size_t);
static void _s_stop_bits(const void *, char *, size_t);
static void _s_unit(const void *, char *, size_t);
static void _s_kind(const void *, char *, size_t);
static void _s_preg(const void *, char *, size_t);
static void _s_ptype(const void *, char *, size_t);
static void _s_order(const void *, char *, size_t);
static void _s_pscale(const void *, char *, size_t);
static void _s_ereg(const void *, char *, size_t);
static void _s_etype(const void *, char *, size_t);
static void _s_escale(const void *, char *, size_t);
static void _s_model(const void *, char *, size_t);
static void _s_freq(const void *, char *, size_t);
static void _s_timeout(const void *, char *, size_t);
static void _s_max_power(const void *, char *, size_t);
static void _s_map(const void *, char *, size_t);

/* --------------------------------------------------- private variables */

/* Order = the K_* enum. */
static const se_conf_key_t keys[K_COUNT] = {
	SE_KEY_FN("EnergyModbusDevice", _p_device, _s_device),
	SE_KEY_FN("EnergyModbusBaud", _p_baud, _s_baud),
	SE_KEY_FN("EnergyModbusParity", _p_parity, _s_parity),
	SE_KEY_FN("EnergyModbusDataBits", _p_data_bits, _s_data_bits),
	SE_KEY_FN("EnergyModbusStopBits", _p_stop_bits, _s_stop_bits),
	SE_KEY_FN("EnergyModbusUnit", _p_unit, _s_unit),
	SE_KEY_FN("EnergyModbusRegisterKind", _p_kind, _s_kind),
	SE_KEY_FN("EnergyModbusPowerRegister", _p_preg, _s_preg),
	SE_KEY_FN("EnergyModbusPowerType", _p_ptype, _s_ptype),
	SE_KEY_FN("EnergyModbusWordOrder", _p_order, _s_order),
	SE_KEY_FN("EnergyModbusPowerScale", _p_pscale, _s_pscale),
	SE_KEY_FN("EnergyModbusEnergyRegister", _p_ereg, _s_ereg),
	SE_KEY_FN("EnergyModbusEnergyType", _p_etype, _s_etype),
	SE_KEY_FN("EnergyModbusEnergyScale", _p_escale, _s_escale),
	SE_KEY_FN("EnergyModbusModel", _p_model, _s_model),
	SE_KEY_FN("EnergyModbusFrequency", _p_freq, _s_freq),
	SE_KEY_FN("EnergyModbusTimeout", _p_timeout, _s_timeout),
	SE_KEY_FN("EnergyModbusMaxPower", _p_max_power, _s_max_power),
	SE_KEY_FN("EnergyModbusMap", _p_map, _s_map),
};

static const char *const parity_names[] = { "N", "E", "O", NULL };

/* ---------------------------------------------------- public functions */

void modbus_conf_init(modbus_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->serial.baud = MODBUS_DEF_BAUD;
	c->serial.parity = MODBUS_DEF_PARITY;
	c->serial.data_bits = MODBUS_DEF_DATA_BITS;
	c->serial.stop_bits = MODBUS_DEF_STOP_BITS;
	c->unit = MODBUS_DEF_UNIT;
	c->kind = MB_KIND_HOLDING;
	c->power = (mb_point_t) { false, 0, MB_UINT16, MB_ORDER_ABCD, 1.0 };
	c->energy = (mb_point_t) { false, 0, MB_UINT32, MB_ORDER_ABCD, 1.0 };
	c->order = MB_ORDER_ABCD;
	c->max_regs_per_read = 125;	/* the protocol's limit */
	c->period_ns = MODBUS_DEF_PERIOD_NS;
	c->timeout_ns = MODBUS_DEF_TIMEOUT_NS;
	c->max_power_w = MODBUS_DEF_MAX_POWER_W;
}

void modbus_conf_free(modbus_conf_t *c)
{
	size_t i;

	for (i = 0; i < c->map_len; i++) {
		free(c->map[i].nodes);
		free(c->map[i].device);
	}
	free(c->map);
	free(c->device);
	free(c->model);
	free(c->map_path);
	memset(c, 0, sizeof(*c));
}

/* se_conf_desc_t.given: the model's map applies under explicit keys. */
static void _mark_given(void *conf, size_t i)
{
	modbus_conf_t *c = conf;

	c->given |= 1U << i;
}

/* se_conf_desc_t.check_files: what slurmd reads when it builds the meter. */
static int _check_files(void *conf, char *err, size_t err_len)
{
	return modbus_conf_read_map(conf, err, err_len);
}

/* ---------------------------------------------------------- key parsers */

/* A device template: syntax checked with a placeholder node name. */
static int _check_device(const conf_where_t *w, const char *v, char *err,
			 size_t len)
{
	char dev[512], why[128];
	modbus_device_t d;
	int rc;

	if ((rc = conf_expand(w, v, "node", dev, sizeof(dev), err, len)))
		return rc;
	if (modbus_device_parse(dev, &d, why, sizeof(why))) {
		if (w->line)
			snprintf(err, len, "%s:%u: %s=%s: %s", w->file,
				 w->line, w->key, v, why);
		else
			snprintf(err, len, "%s: %s=%s: %s", w->file, w->key,
				 v, why);
		return -EINVAL;
	}
	return 0;
}

/* An RTU bus addresses units 1 to 247 (0 is its broadcast, which no meter
 * answers): true when device (a template, as written) is RTU and unit is
 * outside.  A device that does not parse is its own error. */
static bool _rtu_unit_bad(const char *device, unsigned unit)
{
	char dev[512], why[128];
	modbus_device_t d;

	if (!device || !strcasecmp(device, "none") ||
	    conf_expand(NULL, device, "node", dev, sizeof(dev), NULL, 0) ||
	    modbus_device_parse(dev, &d, why, sizeof(why)))
		return false;
	return d.kind == MODBUS_DEV_RTU && (unit < 1 || unit > 247);
}

static int _set_str(char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int _p_device(void *conf, const conf_where_t *w, const char *v,
		     char *err, size_t len)
{
	modbus_conf_t *c = conf;
	int rc = _check_device(w, v, err, len);

	return rc ? rc : _set_str(&c->device, v);
}

static int _p_baud(void *conf, const conf_where_t *w, const char *v, char *err,
		   size_t len)
{
	modbus_conf_t *c = conf;
	uint64_t x;
	int rc = conf_uint(w, v, 300, 4000000, &x, err, len);

	if (!rc)
		c->serial.baud = (unsigned) x;
	return rc;
}

static int _p_parity(void *conf, const conf_where_t *w, const char *v,
		     char *err, size_t len)
{
	modbus_conf_t *c = conf;
	int i, rc = conf_enum(w, v, parity_names, &i, err, len);

	if (!rc)
		c->serial.parity = parity_names[i][0];
	return rc;
}

static int _p_data_bits(void *conf, const conf_where_t *w, const char *v,
			char *err, size_t len)
{
	modbus_conf_t *c = conf;
	uint64_t x;
	int rc = conf_uint(w, v, 5, 8, &x, err, len);

	if (!rc)
		c->serial.data_bits = (unsigned) x;
	return rc;
}

static int _p_stop_bits(void *conf, const conf_where_t *w, const char *v,
			char *err, size_t len)
{
	modbus_conf_t *c = conf;
	uint64_t x;
	int rc = conf_uint(w, v, 1, 2, &x, err, len);

	if (!rc)
		c->serial.stop_bits = (unsigned) x;
	return rc;
}

static int _p_unit(void *conf, const conf_where_t *w, const char *v, char *err,
		   size_t len)
{
	modbus_conf_t *c = conf;
	uint64_t x;
	int rc = conf_uint(w, v, 0, 255, &x, err, len);

	if (!rc)
		c->unit = (unsigned) x;
	return rc;
}

static int _p_kind(void *conf, const conf_where_t *w, const char *v, char *err,
		   size_t len)
{
	modbus_conf_t *c = conf;
	int i, rc = conf_enum(w, v, mb_kind_names, &i, err, len);

	if (!rc)
		c->kind = (mb_kind_t) i;
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

static int _p_type(mb_point_t *p, const conf_where_t *w, const char *v,
		   char *err, size_t len)
{
	int i, rc = conf_enum(w, v, mb_type_names, &i, err, len);

	if (!rc)
		p->type = (mb_type_t) i;
	return rc;
}

static int _p_ptype(void *conf, const conf_where_t *w, const char *v,
		    char *err, size_t len)
{
	modbus_conf_t *c = conf;

	return _p_type(&c->power, w, v, err, len);
}

static int _p_etype(void *conf, const conf_where_t *w, const char *v,
		    char *err, size_t len)
{
	modbus_conf_t *c = conf;

	return _p_type(&c->energy, w, v, err, len);
}

static int _p_order(void *conf, const conf_where_t *w, const char *v,
		    char *err, size_t len)
{
	modbus_conf_t *c = conf;
	int i, rc = conf_enum(w, v, mb_order_names, &i, err, len);

	if (!rc)
		c->order = (mb_order_t) i;
	return rc;
}

/* Scales: positive; 1e-9 (nW/nJ per unit) to 1e12 (TJ per unit). */
static int _p_scale(double *scale, const conf_where_t *w, const char *v,
		    char *err, size_t len)
{
	return conf_double(w, v, 1e-9, 1e12, scale, err, len);
}

static int _p_pscale(void *conf, const conf_where_t *w, const char *v,
		     char *err, size_t len)
{
	modbus_conf_t *c = conf;

	return _p_scale(&c->power.scale, w, v, err, len);
}

static int _p_escale(void *conf, const conf_where_t *w, const char *v,
		     char *err, size_t len)
{
	modbus_conf_t *c = conf;

	return _p_scale(&c->energy.scale, w, v, err, len);
}

static int _p_model(void *conf, const conf_where_t *w, const char *v,
		    char *err, size_t len)
{
	modbus_conf_t *c = conf;
	const mb_model_t *m;
	size_t n = 0;
	int k;

	if (!strcasecmp(v, "custom")) {
		free(c->model);
		c->model = NULL;
		return 0;
	}
	if (mb_model_find(v))
		return _set_str(&c->model, v);
	k = snprintf(err, len, "%s: %s=%s: unknown model (known: custom",
		     w->file, w->key, v);
	n = k > 0 ? (size_t) k : 0;
	for (m = mb_models; m->name && n < len; m++) {
		k = snprintf(err + n, len - n, ", %s", m->name);
		n += k > 0 ? (size_t) k : 0;
	}
	if (n < len)
		snprintf(err + n, len - n, ")");
	return -EINVAL;
}

static int _p_freq(void *conf, const conf_where_t *w, const char *v, char *err,
		   size_t len)
{
	modbus_conf_t *c = conf;

	/* 0.1 s: a 12-register RTU read at 9600 b/s takes ~44 ms. */
	return conf_seconds_ns(w, v, 100000000ULL, 3600000000000ULL,
			       &c->period_ns, err, len);
}

static int _p_timeout(void *conf, const conf_where_t *w, const char *v,
		      char *err, size_t len)
{
	modbus_conf_t *c = conf;

	return conf_millis_ns(w, v, 10, 60000, &c->timeout_ns, err, len);
}

static int _p_max_power(void *conf, const conf_where_t *w, const char *v,
			char *err, size_t len)
{
	modbus_conf_t *c = conf;

	return conf_double(w, v, 1.0, 1e8, &c->max_power_w, err, len);
}

static int _p_map(void *conf, const conf_where_t *w, const char *v, char *err,
		  size_t len)
{
	modbus_conf_t *c = conf;

	if (v[0] != '/') {
		snprintf(err, len, "%s: %s=%s: must be an absolute path",
			 w->file, w->key, v);
		return -EINVAL;
	}
	return _set_str(&c->map_path, v);
}

/* --------------------------------------------------------- key printers */

SE_CONF_SHOW(_s_device, modbus_conf_t, "%s", c->device ? c->device : "(null)")

SE_CONF_SHOW(_s_baud, modbus_conf_t, "%u", c->serial.baud)

SE_CONF_SHOW(_s_parity, modbus_conf_t, "%c", c->serial.parity)

SE_CONF_SHOW(_s_data_bits, modbus_conf_t, "%u", c->serial.data_bits)

SE_CONF_SHOW(_s_stop_bits, modbus_conf_t, "%u", c->serial.stop_bits)

SE_CONF_SHOW(_s_unit, modbus_conf_t, "%u", c->unit)

SE_CONF_SHOW(_s_kind, modbus_conf_t, "%s", mb_kind_names[c->kind])

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

SE_CONF_SHOW(_s_ptype, modbus_conf_t, "%s", mb_type_names[c->power.type])

SE_CONF_SHOW(_s_etype, modbus_conf_t, "%s", mb_type_names[c->energy.type])

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

SE_CONF_SHOW(_s_pscale, modbus_conf_t, "%g", c->power.scale)

SE_CONF_SHOW(_s_escale, modbus_conf_t, "%g", c->energy.scale)

SE_CONF_SHOW(_s_model, modbus_conf_t, "%s", c->model ? c->model : "custom")

SE_CONF_SHOW(_s_freq, modbus_conf_t, "%g", (double) c->period_ns / 1e9)

static void _s_timeout(const void *conf, char *buf, size_t len)
{
	const modbus_conf_t *c = conf;

	snprintf(buf, len, "%llu",
		 (unsigned long long) (c->timeout_ns / 1000000ULL));
}

SE_CONF_SHOW(_s_max_power, modbus_conf_t, "%g", c->max_power_w)

SE_CONF_SHOW(_s_map, modbus_conf_t, "%s", c->map_path ? c->map_path : "(null)")

/* ------------------------------------------------------------ checking */

static bool _given(const modbus_conf_t *c, int k)
{
	return c->given & (1U << k);
}

/* The model's point under the keys given explicitly. */
static void _merge_point(mb_point_t *p, const mb_point_t *model,
			 bool reg_given, bool type_given, bool scale_given)
{
	if (!model->present || reg_given)
		return;	/* custom point, or the admin's register */
	p->present = true;
	p->address = model->address;
	if (!type_given)
		p->type = model->type;
	if (!scale_given)
		p->scale = model->scale;
	p->order = model->order;
}

static int _check_point(const mb_point_t *p, const char *file,
			const char *what, unsigned max_regs, char *err,
			size_t len)
{
	unsigned words = mb_type_words(p->type);

	if (!p->present)
		return 0;
	if ((unsigned) p->address + words > 65536) {
		snprintf(err, len,
			 "%s: %s register %u: %u registers do not fit below 65536",
			 file, what, p->address, words);
		return -EINVAL;
	}
	if (words > max_regs) {
		snprintf(err, len,
			 "%s: %s register: %s needs %u registers, the meter reads at most %u",
			 file, what, mb_type_names[p->type], words, max_regs);
		return -EINVAL;
	}
	return 0;
}

/*
 * A counter that can wrap more than once between two reads (one period and
 * one timeout apart) at MaxPower cannot be counted: a wrap would look like
 * no wrap, or two like one.  The share of a map entry cancels out (the node
 * is billed that share of both the bound and the register), so it is
 * checked for the whole channel.  where: "FILE" or "MAP:LINE".
 */
static int _check_wrap(const modbus_conf_t *c, const mb_point_t *en,
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

int modbus_conf_check(modbus_conf_t *c, const char *file, char *err,
		      size_t err_len)
{
	const mb_model_t *m = c->model ? mb_model_find(c->model) : NULL;
	int rc;

	if (!file)
		file = MODBUS_CONF_FILE;
	if (m) {
		if (!_given(c, K_KIND))
			c->kind = m->kind;
		_merge_point(&c->power, &m->power, _given(c, K_PREG),
			     _given(c, K_PTYPE), _given(c, K_PSCALE));
		_merge_point(&c->energy, &m->energy, _given(c, K_EREG),
			     _given(c, K_ETYPE), _given(c, K_ESCALE));
		if (m->max_regs_per_read)
			c->max_regs_per_read = m->max_regs_per_read;
	}
	/* An explicit word order applies to both points; else the model's
	 * (or the default abcd) stays. */
	if (_given(c, K_ORDER) || !m) {
		c->power.order = c->order;
		c->energy.order = c->order;
	}
	if (!c->power.present && !c->energy.present) {
		snprintf(err, err_len,
			 "%s: no register to read: set EnergyModbusPowerRegister and/or EnergyModbusEnergyRegister, or EnergyModbusModel",
			 file);
		return -EINVAL;
	}
	if (!c->device && !c->map_path) {
		snprintf(err, err_len,
			 "%s: no meter: set EnergyModbusDevice or EnergyModbusMap",
			 file);
		return -EINVAL;
	}
	if (_rtu_unit_bad(c->device, c->unit)) {
		snprintf(err, err_len,
			 "%s: EnergyModbusUnit=%u: the RTU device EnergyModbusDevice=%s addresses units 1 to 247",
			 file, c->unit, c->device);
		return -EINVAL;
	}
	if ((rc = _check_point(&c->power, file, "power", c->max_regs_per_read,
			       err, err_len)) ||
	    (rc = _check_point(&c->energy, file, "energy",
			       c->max_regs_per_read, err, err_len)) ||
	    (rc = _check_wrap(c, &c->energy, c->max_power_w, file, err,
			      err_len)))
		return rc;
	if (c->timeout_ns > c->period_ns)
		se_log(SE_LOG_INFO,
		       "%s: EnergyModbusTimeout (%llu ms) is longer than EnergyModbusFrequency (%g s): a slow read skips ticks",
		       file, (unsigned long long) (c->timeout_ns / 1000000),
		       (double) c->period_ns / 1e9);
	return 0;
}

/* ------------------------------------------------------------ map file */

static int _map_fail(const char *path, unsigned line, const conf_pair_t *p,
		     const char *why, char *err, size_t len)
{
	if (p)
		snprintf(err, len, "%s:%u: %s=%s: %s", path, line, p->key,
			 p->value, why);
	else
		snprintf(err, len, "%s:%u: %s", path, line, why);
	return -EINVAL;
}

const char *const modbus_map_keys[] = {
	"Nodes", "Device", "Unit", "Offset", "Share", "Model", "MaxPower", NULL
};

/* "FILE:LINE: KEY=VALUE: unknown key (known: ...)", from modbus_map_keys. */
static int _map_unknown(const char *path, unsigned line, const conf_pair_t *p,
			char *err, size_t len)
{
	char known[256] = "unknown key (known: ";
	size_t n = strlen(known);

	for (size_t i = 0; modbus_map_keys[i] && n < sizeof(known); i++)
		n += (size_t) snprintf(known + n, sizeof(known) - n, "%s%s",
				       i ? ", " : "", modbus_map_keys[i]);
	if (n < sizeof(known))
		snprintf(known + n, sizeof(known) - n, ")");
	return _map_fail(path, line, p, known, err, len);
}

static bool _is_map_key(const char *key)
{
	for (size_t i = 0; modbus_map_keys[i]; i++)
		if (!strcasecmp(modbus_map_keys[i], key))
			return true;
	return false;
}

/* One pair of a map line; a key must be in modbus_map_keys (so the list,
 * the unknown-key message and the tests that walk it stay one). */
static int _map_pair(modbus_map_entry_t *e, const char *path, unsigned line,
		     const conf_pair_t *p, char *err, size_t len)
{
	conf_where_t w = { path, p->key, line };
	uint64_t x;
	int rc;

	if (!_is_map_key(p->key))
		return _map_unknown(path, line, p, err, len);
	if (!strcasecmp(p->key, "Nodes")) {
		if (!*p->value)
			return _map_fail(path, line, p, "empty", err, len);
		return _set_str(&e->nodes, p->value);
	}
	if (!strcasecmp(p->key, "Device")) {
		if (strcasecmp(p->value, "none") &&
		    (rc = _check_device(&w, p->value, err, len)))
			return rc;
		return _set_str(&e->device, p->value);
	}
	if (!strcasecmp(p->key, "Unit")) {
		if ((rc = conf_uint(&w, p->value, 0, 255, &x, err, len)))
			return rc;
		e->has_unit = true;
		e->unit = (unsigned) x;
		return 0;
	}
	if (!strcasecmp(p->key, "Offset")) {
		if ((rc = conf_uint(&w, p->value, 0, 65535, &x, err, len)))
			return rc;
		e->offset = (unsigned) x;
		return 0;
	}
	if (!strcasecmp(p->key, "Share")) {
		if (!strcasecmp(p->value, "equal")) {
			e->share_equal = true;
			return 0;
		}
		e->share_equal = false;
		return conf_double(&w, p->value, 1e-6, 1.0, &e->share, err,
				   len);
	}
	if (!strcasecmp(p->key, "Model")) {
		if (!(e->model = mb_model_find(p->value)))
			return _map_fail(path, line, p,
					 "unknown model (known: sdm630, sdm72d, em24, pm5300)",
					 err, len);
		return 0;
	}
	if (!strcasecmp(p->key, "MaxPower"))
		return conf_double(&w, p->value, 1.0, 1e8, &e->max_power_w,
				   err, len);
	return _map_unknown(path, line, p, err, len);
}

/* A map line's own register map or bound must be countable too. */
static int _check_entry_wrap(const modbus_conf_t *c,
			     const modbus_map_entry_t *e, const char *path,
			     char *err, size_t len)
{
	const mb_point_t *en = e->model ? &e->model->energy : &c->energy;
	double max_power_w = e->max_power_w ? e->max_power_w :
					      c->max_power_w;
	char where[PATH_MAX + 16];

	if (!e->model && !e->max_power_w)
		return 0;
	snprintf(where, sizeof(where), "%s:%u", path, e->line);
	return _check_wrap(c, en, max_power_w, where, err, len);
}

static int _map_entry(map_ctx_t *mc, const char *path, unsigned line,
		      const conf_pair_t *pairs, size_t n, char *err,
		      size_t len)
{
	modbus_conf_t *c = mc->c;
	modbus_map_entry_t *e;
	size_t i;
	int rc;

	if (c->map_len == mc->cap) {
		size_t cap = mc->cap ? 2 * mc->cap : 16;
		modbus_map_entry_t *nm = realloc(c->map, cap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		c->map = nm;
		mc->cap = cap;
	}
	e = &c->map[c->map_len++];
	memset(e, 0, sizeof(*e));
	e->line = line;
	e->share_equal = true;
	for (i = 0; i < n; i++) {
		if ((rc = _map_pair(e, path, line, &pairs[i], err, len)))
			return rc;
	}
	if (!e->nodes)
		return _map_fail(path, line, NULL, "no Nodes=", err, len);
	if (!e->device && !c->device)
		return _map_fail(path, line, NULL,
				 "no Device= and no EnergyModbusDevice",
				 err, len);
	if (_rtu_unit_bad(e->device ? e->device : c->device,
			  e->has_unit ? e->unit : c->unit)) {
		snprintf(err, len,
			 "%s:%u: %s=%u: the RTU device %s addresses units 1 to 247",
			 path, line, e->has_unit ? "Unit" : "EnergyModbusUnit",
			 e->has_unit ? e->unit : c->unit,
			 e->device ? e->device : c->device);
		return -EINVAL;
	}
	return _check_entry_wrap(c, e, path, err, len);
}

static int _map_line(void *arg, const char *path, unsigned line,
		     const conf_pair_t *pairs, size_t n, char *err,
		     size_t len)
{
	map_ctx_t *mc = arg;
	int rc = _map_entry(mc, path, line, pairs, n, err, len);

	if (rc)
		mc->line_failed = true;
	return rc;
}

int modbus_conf_read_map(modbus_conf_t *c, char *err, size_t err_len)
{
	map_ctx_t mc = { c, c->map_len, false };
	int rc;

	if (!c->map_path)
		return 0;
	rc = conf_read_pairs_file(c->map_path, _map_line, &mc, err, err_len);
	/* Cannot be read (open, read): said as acct_gather.conf's key.  A
	 * line's own refusal keeps its message ("MAP:LINE: KEY=VALUE: why"),
	 * whatever its errno (-ENAMETOOLONG: a Device= that expands too
	 * long was reported as the map's file name being too long). */
	if (rc && !mc.line_failed && rc != -EINVAL && rc != -ENOMEM)
		snprintf(err, err_len, "%s: EnergyModbusMap=%s: %s",
			 MODBUS_CONF_FILE, c->map_path, strerror(-rc));
	if (!rc && !c->map_len) {
		snprintf(err, err_len, "%s: no entries", c->map_path);
		rc = -EINVAL;
	}
	return rc;
}

/* ------------------------------------------------------------ resolving */

/* A Nodes= the caller's hostlist parser refused, named with its value. */
static int _bad_nodes(const char *path, unsigned line, const char *nodes,
		      char *err, size_t len)
{
	snprintf(err, len, "%s:%u: Nodes=%s: not a hostlist expression", path,
		 line, nodes);
	return -EINVAL;
}

static const char *_entry_device(const modbus_conf_t *c,
				 const modbus_map_entry_t *e)
{
	return e->device ? e->device : c->device;
}

static unsigned _entry_unit(const modbus_conf_t *c,
			    const modbus_map_entry_t *e)
{
	return e->has_unit ? e->unit : c->unit;
}

/* Does a device template name the node (a %n escape, not a "%%n")? */
static bool _per_node(const char *tmpl)
{
	for (const char *p = tmpl; (p = strchr(p, '%')); p += 2) {
		if (p[1] == 'n')
			return true;
		if (!p[1])
			break;
	}
	return false;
}

/* Same channel: device (as written), unit and offset. */
static bool _same_channel(const modbus_conf_t *c, const modbus_map_entry_t *a,
			  const modbus_map_entry_t *b)
{
	return !strcmp(_entry_device(c, a), _entry_device(c, b)) &&
	       _entry_unit(c, a) == _entry_unit(c, b) &&
	       a->offset == b->offset;
}

/*
 * The share of an entry: fixed, or what the fixed shares of its channel
 * leave, split among the nodes of its channel with Share=equal.
 */
static int _entry_share(const modbus_conf_t *c, const modbus_map_entry_t *e,
			const modbus_hostlist_ops_t *hl, double *share,
			char *err, size_t len)
{
	const char **equal = NULL;
	double fixed = 0.0;
	size_t i, n_equal = 0;
	long count;
	int rc = 0;

	if (!e->share_equal) {
		*share = e->share;
		return 0;
	}
	/* A per-node device (%n) is a channel of its own; "%%n" is a
	 * literal "%n", one device (tests/fuzz: both nodes of
	 * "Device=tcp://p%%none" were billed the whole channel). */
	if (_per_node(_entry_device(c, e))) {
		*share = 1.0;
		return 0;
	}
	if (!(equal = calloc(c->map_len, sizeof(*equal))))
		return -ENOMEM;
	for (i = 0; i < c->map_len; i++) {
		const modbus_map_entry_t *o = &c->map[i];

		if (!_same_channel(c, e, o))
			continue;
		if (o->share_equal) {
			equal[n_equal++] = o->nodes;
			continue;
		}
		if ((count = hl->count(hl->arg, (const char *const *) &o->nodes,
				       1)) < 0) {
			rc = _bad_nodes(c->map_path, o->line, o->nodes, err,
					len);
			goto out;
		}
		fixed += o->share * (double) count;
	}
	count = hl->count(hl->arg, equal, n_equal);
	if (count <= 0) {
		rc = _bad_nodes(c->map_path, e->line, e->nodes, err, len);
	} else if (fixed >= 1.0 - 1e-9) {
		snprintf(err, len,
			 "%s:%u: fixed Share= on channel %s unit %u offset %u add up to %g: nothing left for Share=equal",
			 c->map_path, e->line, _entry_device(c, e),
			 _entry_unit(c, e), e->offset, fixed);
		rc = -EINVAL;
	} else {
		*share = (1.0 - fixed) / (double) count;
	}
out:
	free(equal);
	return rc;
}

/* The sum of the fixed shares on e's channel must not pass 1. */
static int _check_fixed_total(const modbus_conf_t *c,
			      const modbus_map_entry_t *e,
			      const modbus_hostlist_ops_t *hl, char *err,
			      size_t len)
{
	double fixed = 0.0;
	size_t i;
	long count;

	for (i = 0; i < c->map_len; i++) {
		const modbus_map_entry_t *o = &c->map[i];

		if (o->share_equal || !_same_channel(c, e, o))
			continue;
		count = hl->count(hl->arg, (const char *const *) &o->nodes, 1);
		if (count < 0)
			return _bad_nodes(c->map_path, o->line, o->nodes, err,
					  len);
		fixed += o->share * (double) count;
	}
	if (fixed > 1.0 + 1e-9) {
		snprintf(err, len,
			 "%s:%u: Share= on channel %s unit %u offset %u add up to %g (more than 1)",
			 c->map_path, e->line, _entry_device(c, e),
			 _entry_unit(c, e), e->offset, fixed);
		return -EINVAL;
	}
	return 0;
}

/* The map entry of node: NULL if none; -EINVAL in *rc if twice or bad. */
static const modbus_map_entry_t *_find_entry(const modbus_conf_t *c,
					     const char *node,
					     const modbus_hostlist_ops_t *hl,
					     int *rc, char *err, size_t len)
{
	const modbus_map_entry_t *found = NULL;
	size_t i;
	int in;

	*rc = 0;
	for (i = 0; i < c->map_len; i++) {
		in = hl->contains(hl->arg, c->map[i].nodes, node);
		if (in < 0) {
			*rc = _bad_nodes(c->map_path, c->map[i].line,
					 c->map[i].nodes, err, len);
			return NULL;
		}
		if (!in)
			continue;
		if (found) {
			snprintf(err, len,
				 "%s: node %s is on line %u and on line %u: one channel per node",
				 c->map_path, node, found->line,
				 c->map[i].line);
			*rc = -EINVAL;
			return NULL;
		}
		found = &c->map[i];
	}
	return found;
}

int modbus_conf_resolve(const modbus_conf_t *c, const char *node,
			const modbus_hostlist_ops_t *hl, modbus_target_t *t,
			char *err, size_t err_len)
{
	conf_where_t w = { MODBUS_CONF_FILE, "EnergyModbusDevice", 0 };
	const modbus_map_entry_t *e = NULL;
	const char *tmpl = c->device;
	int rc;

	memset(t, 0, sizeof(*t));
	t->unit = c->unit;
	t->share = 1.0;
	t->max_power_w = c->max_power_w;
	if (c->map_len) {
		e = _find_entry(c, node, hl, &rc, err, err_len);
		if (rc)
			return rc;
		if (!e && !c->device) {
			snprintf(err, err_len,
				 "%s: node %s is not mapped and there is no EnergyModbusDevice",
				 c->map_path, node);
			return -EINVAL;
		}
	}
	if (e) {
		w.file = c->map_path;
		w.key = "Device";
		w.line = e->line;
		tmpl = _entry_device(c, e);
		t->line = e->line;
		t->unit = _entry_unit(c, e);
		t->offset = e->offset;
		t->model = e->model;
		if (e->max_power_w)
			t->max_power_w = e->max_power_w;
		if ((rc = _check_fixed_total(c, e, hl, err, err_len)) ||
		    (rc = _entry_share(c, e, hl, &t->share, err, err_len)))
			return rc;
	}
	if (!tmpl) {
		snprintf(err, err_len, "%s: no EnergyModbusDevice",
			 MODBUS_CONF_FILE);
		return -EINVAL;
	}
	if (!strcasecmp(tmpl, "none")) {
		t->none = true;
		return 0;
	}
	return conf_expand(&w, tmpl, node, t->device, sizeof(t->device), err,
			   err_len);
}

int modbus_conf_meter_config(const modbus_conf_t *c, const modbus_target_t *t,
			     modbus_meter_config_t *out, char *err,
			     size_t err_len)
{
	const mb_model_t *m = t->model;
	const mb_point_t *pts[2] = { m ? &m->power : &c->power,
				     m ? &m->energy : &c->energy };
	mb_point_t *dst[2] = { &out->power, &out->energy };
	int i;

	memset(out, 0, sizeof(*out));
	out->device = t->device;
	out->serial = c->serial;
	out->unit = t->unit;
	/* A map line's Model= is these nodes' whole register map. */
	out->kind = m ? m->kind : c->kind;
	out->max_regs_per_read = m && m->max_regs_per_read ?
		m->max_regs_per_read : c->max_regs_per_read;
	out->share = t->share;
	for (i = 0; i < 2; i++) {
		*dst[i] = *pts[i];
		if (!pts[i]->present)
			continue;
		if (pts[i]->address + t->offset + mb_type_words(pts[i]->type) >
		    65536) {
			snprintf(err, err_len,
				 "%s:%u: Offset=%u moves the %s register past 65535",
				 c->map_path ? c->map_path : MODBUS_CONF_FILE,
				 t->line, t->offset, i ? "energy" : "power");
			return -EINVAL;
		}
		dst[i]->address = (uint16_t) (pts[i]->address + t->offset);
	}
	return 0;
}

SE_CONF_DESC_DEFINE(modbus_conf_desc, modbus_conf, modbus_conf_t, "modbus",
		    MODBUS_CONF_FILE, keys,
		    .given = _mark_given,
		    .check_files = _check_files);
