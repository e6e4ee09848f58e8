/*
 * modbus_conf_priv.h - what the files of the Modbus configuration share:
 * its keys (modbus_keys.c; modbus_conf.c ties them together), its map file
 * (modbus_map.c) and a node's channel (modbus_resolve.c).  Not for other
 * callers: modbus_conf.h is the API.
 */
#ifndef SE_MODBUS_CONF_PRIV_H
#define SE_MODBUS_CONF_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "conf.h"
#include "conf_desc.h"
#include "modbus_conf.h"

/* The acct_gather.conf keys, in the table's order. */
enum {
	K_DEVICE, K_BAUD, K_PARITY, K_DATA_BITS, K_STOP_BITS, K_UNIT,
	K_KIND, K_PREG, K_PTYPE, K_ORDER, K_PSCALE, K_EREG, K_ETYPE,
	K_ESCALE, K_MODEL, K_FREQ, K_TIMEOUT, K_MAX_POWER, K_MAP,
	K_COUNT
};

/* ---- modbus_keys.c: the rows and the checks of single values ---- */

/* Their rows: a map key bounded as a key (Unit, MaxPower, Device) takes
 * its row (SE_KEY_LIKE). */
extern const se_conf_key_t modbus_conf_keys[K_COUNT];

/* A device template: syntax checked with a placeholder node name.
 * Returns 0, or -EINVAL with "FILE[:LINE]: KEY=VALUE: why" in err. */
int modbus_check_device(const conf_where_t *w, const char *v, char *err,
			size_t len);

/* An RTU bus addresses units 1 to 247 (0 is its broadcast, which no meter
 * answers): true when device (a template, as written) is RTU and unit is
 * outside.  A device that does not parse is its own error. */
bool modbus_rtu_unit_bad(const char *device, unsigned unit);

/* The built-in models' names, "sdm630, sdm72d, ...", into buf. */
void modbus_model_names(char *buf, size_t len);

/*
 * A counter that can wrap more than once between two reads (one period and
 * one timeout apart) at max_power_w cannot be counted.  where: "FILE" or
 * "MAP:LINE".  0 or -EINVAL with the message in err.
 */
int modbus_check_wrap(const modbus_conf_t *c, const mb_point_t *en,
		      double max_power_w, const char *where, char *err,
		      size_t len);

#endif
