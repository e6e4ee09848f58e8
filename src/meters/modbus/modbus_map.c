/*
 * modbus_map.c - the map file of acct_gather_energy/modbus (EnergyModbusMap,
 * see modbus_conf.h), read by the suite's one map reader (conf_map.h).  A
 * key that is also an acct_gather.conf key (Unit, MaxPower) is bounded by
 * that key's row.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_desc.h"
#include "conf_map.h"
#include "modbus_conf.h"
#include "modbus_conf_priv.h"
#include "se_array.h"

/* ------------------------------------------------------- private types */

/* Collects the map's lines into c->map. */
typedef struct {
	modbus_conf_t *c;
	size_t cap;
} map_ctx_t;

enum {
	MK_NODES, MK_DEVICE, MK_UNIT, MK_OFFSET, MK_SHARE, MK_MODEL,
	MK_MAX_POWER, MK_COUNT
};

/* -------------------------------------------------- private prototypes */

static int _check_device(const conf_where_t *, const char *, char *, size_t);
static int _p_share(void *, const conf_where_t *, const char *, char *,
		    size_t);
static int _p_model(void *, const conf_where_t *, const char *, char *,
		    size_t);
static void _init(void *entry);
static void _given(void *entry, size_t i);
static int _line(void *arg, void *entry, const char *path, unsigned line,
		 char *err, size_t len);

/* --------------------------------------------------- private variables */

/* Order = the MK_* enum. */
static const se_conf_key_t map_keys[MK_COUNT] = {
	SE_KEY_STR("Nodes", modbus_map_entry_t, nodes, conf_nonempty, NULL),
	SE_KEY_STR("Device", modbus_map_entry_t, device, _check_device, NULL),
	SE_KEY_LIKE("Unit", modbus_map_entry_t, unit,
		    &modbus_conf_keys[K_UNIT]),
	/* added to both register addresses: within their range */
	SE_KEY_UINT("Offset", modbus_map_entry_t, offset, 0, 65535),
	SE_KEY_FN("Share", _p_share, NULL),
	SE_KEY_FN("Model", _p_model, NULL),
	SE_KEY_LIKE("MaxPower", modbus_map_entry_t, max_power_w,
		    &modbus_conf_keys[K_MAX_POWER]),
};

const se_conf_map_t modbus_map = {
	.conf_file = MODBUS_CONF_FILE,
	.conf_key = "EnergyModbusMap",
	.keys = map_keys,
	.n_keys = MK_COUNT,
	.entry_size = sizeof(modbus_map_entry_t),
	.init = _init,
	.given = _given,
	.line = _line,
};

/* ---------------------------------------------------- public functions */

int modbus_conf_read_map(modbus_conf_t *c, char *err, size_t err_len)
{
	map_ctx_t mc = { c, c->map_len };

	if (!c->map_path)
		return 0;
	return se_conf_map_read(&modbus_map, c->map_path, &mc, err, err_len);
}

/* ------------------------------------------------------- the map's keys */

/* EnergyModbusDevice's check, and "none": a node with no meter. */
static int _check_device(const conf_where_t *w, const char *v, char *err,
			 size_t len)
{
	return strcasecmp(v, "none") ? modbus_check_device(w, v, err, len) : 0;
}

static int _p_share(void *entry, const conf_where_t *w, const char *v,
		    char *err, size_t len)
{
	modbus_map_entry_t *e = entry;

	if (!strcasecmp(v, "equal")) {
		e->share_equal = true;
		return 0;
	}
	e->share_equal = false;
	return conf_double(w, v, 1e-6, 1.0, &e->share, err, len);
}

static int _p_model(void *entry, const conf_where_t *w, const char *v,
		    char *err, size_t len)
{
	modbus_map_entry_t *e = entry;
	char known[256];

	if ((e->model = mb_model_find(v)))
		return 0;
	modbus_model_names(known, sizeof(known));
	return conf_fail(w, v, err, len, -EINVAL, "unknown model (known: %s)",
			 known);
}

/* ------------------------------------------------------------ one line */

static void _init(void *entry)
{
	modbus_map_entry_t *e = entry;

	e->share_equal = true;
}

static void _given(void *entry, size_t i)
{
	modbus_map_entry_t *e = entry;

	if (i == MK_UNIT)
		e->has_unit = true;
}

static int _line_fail(const char *path, unsigned line, const char *why,
		      char *err, size_t len)
{
	snprintf(err, len, "%s:%u: %s", path, line, why);
	return -EINVAL;
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
	return modbus_check_wrap(c, en, max_power_w, where, err, len);
}

/* se_conf_map_t.line: the line's keys together, then kept in c->map. */
static int _line(void *arg, void *entry, const char *path, unsigned line,
		 char *err, size_t len)
{
	map_ctx_t *mc = arg;
	modbus_conf_t *c = mc->c;
	modbus_map_entry_t *e = entry;
	int rc;

	e->line = line;
	if (!e->nodes)
		return _line_fail(path, line, "no Nodes=", err, len);
	if (!e->device && !c->device)
		return _line_fail(path, line,
				  "no Device= and no EnergyModbusDevice", err,
				  len);
	if (modbus_rtu_unit_bad(e->device ? e->device : c->device,
				e->has_unit ? e->unit : c->unit)) {
		snprintf(err, len,
			 "%s:%u: %s=%u: the RTU device %s addresses units 1 to 247",
			 path, line, e->has_unit ? "Unit" : "EnergyModbusUnit",
			 e->has_unit ? e->unit : c->unit,
			 e->device ? e->device : c->device);
		return -EINVAL;
	}
	if ((rc = _check_entry_wrap(c, e, path, err, len)))
		return rc;
	if (se_array_room(&c->map, c->map_len, &mc->cap, sizeof(c->map[0]),
			  16))
		return -ENOMEM;
	c->map[c->map_len++] = *e;
	memset(e, 0, sizeof(*e));	/* its strings are c's now */
	return 0;
}
