/*
 * snmp_models.c - the built-in PDU models (snmp_models.h).
 *
 * Every OID, unit, type and index below was checked (issue #44) against
 * the vendors' MIB texts as published in public MIB collections; the
 * source of each is cited beside its row.
 *
 * APC rPDU2 (PowerNet-MIB): rPDU2OutletMeteredStatusPower in W (the MIB
 *   text names no unit; rack monitors read it as W at scale 1) and
 *   rPDU2OutletMeteredStatusEnergy in tenths of kWh (360 kJ: coarse, so
 *   the accumulator shapes it by the power), both INTEGER (31 bits);
 *   index rPDU2OutletMeteredStatusIndex, the table row (= the outlet on a
 *   lone PDU; the Module column tells the PDUs of a chain apart); the
 *   operator can reset the energy.
 * Raritan PX2/PX3 (PDU2-MIB): measurementsOutletSensorValue, Unsigned32,
 *   indexed pduId.outletId.sensorType (pduId 1 on PX2/PX3), activePower
 *   (5) in W, activeEnergy (8) in Wh.  Values are to be divided by
 *   10^outletSensorDecimalDigits (1.3.6.1.4.1.13742.6.3.5.4.1.7, same
 *   index): 0 for watt and wattHour sensors on PX2/PX3 (Raritan's SNMP MIB
 *   User Guide shows it for inlets); a unit with other digits needs
 *   Model=custom with the scale.
 * ServerTech Sentry4 (Sentry4-MIB): st4OutletActivePower (column 7),
 *   Integer32(-1..10000) W, and st4OutletEnergy (column 14),
 *   Integer32(-1..2147483647) Wh (-1: no reading); index
 *   st4UnitIndex.st4InputCordIndex.st4OutletIndex (unit 1..6, A=1).
 * Eaton ePDU (EATON-EPDU-MIB): outletWatts (column 3), Integer32 W
 *   (negative: not available), and outletWh (column 4), Unsigned32 Wh,
 *   writable to reset it; index strappingIndex (0..23, 0 without
 *   strapping).outletIndex.
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
	/* PowerNet-MIB (netdisco/netdisco-mibs apc/powernet.mib,
	 * librenms/librenms mibs/apc/PowerNet-MIB): rPDU2 = 318.1.1.26,
	 * rPDU2OutletMeteredStatusEntry = rPDU2.9.4.3.1, Power 7, Energy 11 */
	{ .name = "apc-rpdu2", .mib = "PowerNet-MIB rPDU2",
	  .power_oid = "1.3.6.1.4.1.318.1.1.26.9.4.3.1.7", .power_suffix = "",
	  .power_w = 1.0,
	  .energy_oid = "1.3.6.1.4.1.318.1.1.26.9.4.3.1.11",
	  .energy_suffix = "", .energy_j = 100.0 * WH_J, .energy_width = 31,
	  .unit_default = NULL },
	/* PDU2-MIB (librenms/librenms mibs/raritan/PDU2-MIB):
	 * outletSensorMeasurementsEntry = 13742.6.5.4.3.1, Value 4;
	 * SensorTypeEnumeration activePower(5), activeEnergy(8) */
	{ .name = "raritan-px", .mib = "PDU2-MIB",
	  .power_oid = "1.3.6.1.4.1.13742.6.5.4.3.1.4", .power_suffix = "5",
	  .power_w = 1.0,
	  .energy_oid = "1.3.6.1.4.1.13742.6.5.4.3.1.4", .energy_suffix = "8",
	  .energy_j = WH_J, .energy_width = 32, .unit_default = "1" },
	/* Sentry4-MIB (librenms/librenms mibs/sentry/Sentry4-MIB):
	 * st4OutletMonitorEntry = 1718.4.1.8.3.1, ActivePower 7, Energy 14 */
	{ .name = "servertech-sentry4", .mib = "Sentry4-MIB",
	  .power_oid = "1.3.6.1.4.1.1718.4.1.8.3.1.7", .power_suffix = "",
	  .power_w = 1.0,
	  .energy_oid = "1.3.6.1.4.1.1718.4.1.8.3.1.14",
	  .energy_suffix = "", .energy_j = WH_J, .energy_width = 31,
	  .unit_default = "1.1", .negative_is_absent = true },
	/* EATON-EPDU-MIB (librenms/librenms mibs/eaton/EATON-EPDU-MIB):
	 * outletPowerEntry = 534.6.6.7.6.5.1, outletWatts 3, outletWh 4 */
	{ .name = "eaton-epdu", .mib = "EATON-EPDU-MIB",
	  .power_oid = "1.3.6.1.4.1.534.6.6.7.6.5.1.3", .power_suffix = "",
	  .power_w = 1.0,
	  .energy_oid = "1.3.6.1.4.1.534.6.6.7.6.5.1.4", .energy_suffix = "",
	  .energy_j = WH_J, .energy_width = 32, .unit_default = "0",
	  .negative_is_absent = true },
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
