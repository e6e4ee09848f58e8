/*
 * snmp_models.c - the built-in PDU models (snmp_models.h).
 *
 * APC rPDU2 (PowerNet-MIB): rPDU2OutletMeteredStatusPower in W and
 *   rPDU2OutletMeteredStatusEnergy in tenths of kWh (360 kJ: coarse, so
 *   the accumulator shapes it by the power), an INTEGER (31 bits), index
 *   the outlet; the operator can reset it.
 * Raritan PX2/PX3 (PDU2-MIB): measurementsOutletSensorValue indexed
 *   pdu.outlet.sensorType, activePower (5) in W, activeEnergy (8) in Wh,
 *   Unsigned32.  Both sensors have 0 decimal digits on PX2/PX3 outlets.
 * ServerTech Sentry4 (Sentry4-MIB): st4OutletActivePower (column 7) in W
 *   and st4OutletEnergy (column 14) in Wh, INTEGERs, index
 *   unit.cord.outlet.
 * Eaton ePDU (EATON-EPDU-MIB): outletWatts (column 3) in W and outletWh
 *   (column 4) in Wh, index strappingIndex.outlet.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "snmp_models.h"

#define WH_J	3600.0

static const snmp_model_t models[] = {
	{ .name = "apc-rpdu2", .mib = "PowerNet-MIB rPDU2",
	  .power_oid = "1.3.6.1.4.1.318.1.1.26.9.4.3.1.7", .power_suffix = "",
	  .power_w = 1.0,
	  .energy_oid = "1.3.6.1.4.1.318.1.1.26.9.4.3.1.11",
	  .energy_suffix = "", .energy_j = 100.0 * WH_J, .energy_width = 31,
	  .unit_default = NULL },
	{ .name = "raritan-px", .mib = "PDU2-MIB",
	  .power_oid = "1.3.6.1.4.1.13742.6.5.4.3.1.4", .power_suffix = "5",
	  .power_w = 1.0,
	  .energy_oid = "1.3.6.1.4.1.13742.6.5.4.3.1.4", .energy_suffix = "8",
	  .energy_j = WH_J, .energy_width = 32, .unit_default = "1" },
	{ .name = "servertech-sentry4", .mib = "Sentry4-MIB",
	  .power_oid = "1.3.6.1.4.1.1718.4.1.8.3.1.7", .power_suffix = "",
	  .power_w = 1.0,
	  .energy_oid = "1.3.6.1.4.1.1718.4.1.8.3.1.14",
	  .energy_suffix = "", .energy_j = WH_J, .energy_width = 31,
	  .unit_default = "1.1" },
	{ .name = "eaton-epdu", .mib = "EATON-EPDU-MIB",
	  .power_oid = "1.3.6.1.4.1.534.6.6.7.6.5.1.3", .power_suffix = "",
	  .power_w = 1.0,
	  .energy_oid = "1.3.6.1.4.1.534.6.6.7.6.5.1.4", .energy_suffix = "",
	  .energy_j = WH_J, .energy_width = 32, .unit_default = "0" },
};

#define N_MODELS (sizeof(models) / sizeof(models[0]))

const snmp_model_t *snmp_model_find(const char *name)
{
	for (size_t i = 0; name && i < N_MODELS; i++)
		if (!strcasecmp(models[i].name, name))
			return &models[i];
	return NULL;
}

const snmp_model_t *snmp_model_at(size_t i)
{
	return i < N_MODELS ? &models[i] : NULL;
}

void snmp_model_names(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < N_MODELS && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
			      models[i].name);
}
