/*
 * modbus_conf.c - the acct_gather.conf configuration of
 * acct_gather_energy/modbus (see modbus_conf.h): defaults, the rules that
 * tie keys together (modbus_conf_check()) and the descriptor that reads the
 * map file.  The keys themselves are modbus_keys.c, the map file
 * modbus_map.c, a node's channel modbus_resolve.c.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "conf_desc.h"
#include "modbus_conf.h"
#include "modbus_conf_priv.h"
#include "se_log.h"

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
	for (size_t i = 0; i < c->map_len; i++)
		se_conf_keys_free(modbus_map.keys, modbus_map.n_keys,
				  &c->map[i]);
	free(c->map);
	se_conf_keys_free(modbus_conf_keys, K_COUNT, c);
	free(c->model);
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
	if (modbus_rtu_unit_bad(c->device, c->unit)) {
		snprintf(err, err_len,
			 "%s: EnergyModbusUnit=%u: the RTU device EnergyModbusDevice=%s addresses units 1 to 247",
			 file, c->unit, c->device);
		return -EINVAL;
	}
	if ((rc = _check_point(&c->power, file, "power", c->max_regs_per_read,
			       err, err_len)) ||
	    (rc = _check_point(&c->energy, file, "energy",
			       c->max_regs_per_read, err, err_len)) ||
	    (rc = modbus_check_wrap(c, &c->energy, c->max_power_w, file,
				    err, err_len)))
		return rc;
	if (c->timeout_ns > c->period_ns)
		se_log(SE_LOG_INFO,
		       "%s: EnergyModbusTimeout (%llu ms) is longer than EnergyModbusFrequency (%g s): a slow read skips ticks",
		       file, (unsigned long long) (c->timeout_ns / 1000000),
		       (double) c->period_ns / 1e9);
	return 0;
}

SE_CONF_DESC_DEFINE(modbus_conf_desc, modbus_conf, modbus_conf_t, "modbus",
		    MODBUS_CONF_FILE, modbus_conf_keys,
		    .given = _mark_given,
		    .check_files = _check_files);
