/*
 * modbus_models.c - built-in meter register maps (EnergyModbusModel=).
 *
 * Each entry was taken from its manufacturer's published Modbus map, named
 * in `source`.  Address conventions differ between documents:
 *   - "30001"/"40001" style (Modicon) references and 1-based "register
 *     numbers" are one more than the address sent on the wire;
 *   - "protocol address"/"physical address" hex columns are the wire
 *     address already.
 * mb_point_t.address is always the 0-based wire (PDU) address, so every
 * entry below says which column it came from and how it was converted.
 * Scales turn the raw register value into watts or joules exactly:
 * 1 kWh = 3.6e6 J, 1 Wh = 3600 J.
 *
 * Models whose maps could not be confirmed from more than one copy of the
 * manufacturer's own document (Janitza UMG: the energy register differs
 * between copies; Lumel P43; Socomec Diris) are left out on purpose: the
 * custom map (EnergyModbusPower*=, EnergyModbusEnergy*=) covers them.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <stddef.h>
#include <strings.h>

#include "modbus_codec.h"

#define J_PER_KWH	3.6e6
#define J_PER_WH	3600.0

const mb_model_t mb_models[] = {
	/*
	 * Eastron SDM630-Modbus (V2), input registers, function 04.
	 * Verified: 30053 "Total system power" float W, hex address 00 34;
	 * 30073 "Total import kWh" float kWh, hex address 00 48.  Wire
	 * address = 3xxxx reference - 30001 (= the document's hex column).
	 * Floats are big-endian, high word first.  A request may cover at
	 * most 40 parameters (80 registers), like the SDM630MCT document.
	 */
	{
		.name = "sdm630",
		.description = "Eastron SDM630-Modbus 3-phase meter",
		.source = "Eastron SDM630Modbus Smart Meter Modbus Protocol "
			  "Implementation V1.8, input registers 30053, 30073",
		.kind = MB_KIND_INPUT,
		.power = { true, 52, MB_FLOAT32, MB_ORDER_ABCD, 1.0 },
		.energy = { true, 72, MB_FLOAT32, MB_ORDER_ABCD, J_PER_KWH },
		.max_regs_per_read = 80,
	},
	/*
	 * Eastron SDM72D-M: the reduced register set of the same family.
	 * Verified: 30053 "Total system power" float W (hex 00 34) and 30073
	 * "Total Import kWh" float kWh (hex 00 48), function 04; "each
	 * request ... restricted to 30 parameters or less" (60 registers).
	 */
	{
		.name = "sdm72d",
		.description = "Eastron SDM72D-M 3-phase meter",
		.source = "Eastron SDM72D-M Modbus Protocol V1.1 / SDM72D-M "
			  "user manual part 3, input registers 30053, 30073",
		.kind = MB_KIND_INPUT,
		.power = { true, 52, MB_FLOAT32, MB_ORDER_ABCD, 1.0 },
		.energy = { true, 72, MB_FLOAT32, MB_ORDER_ABCD, J_PER_KWH },
		.max_regs_per_read = 60,
	},
	/*
	 * Carlo Gavazzi EM24-DIN (PFA, PFB and X models), table 2.3-1
	 * "Instantaneous variables and meters", functions 03 and 04.
	 * Verified: Modicon 300041 / physical 0028h "W" INT32, value weight
	 * Watt*10; Modicon 300063 / physical 003Eh "kWh(+) TOT" INT32, value
	 * weight kWh*10.  Wire address = the physical (hex) column =
	 * Modicon - 300001.  §2.1: "In INT32, UINT32 and UINT64 formats, the
	 * word order is LSW->MSW", bytes MSB first: cdab.  The counter is a
	 * signed INT32 in the map (counter bits 0: read as a plain value).
	 * Read limit: the EM2x protocols state 11 words per request.
	 */
	{
		.name = "em24",
		.description = "Carlo Gavazzi EM24-DIN 3-phase energy analyzer",
		.source = "Carlo Gavazzi EM24-DIN PFA, PFB & X models "
			  "Communication Protocol, table 2.3-1 (0028h, 003Eh)",
		.kind = MB_KIND_INPUT,
		.power = { true, 0x0028, MB_INT32, MB_ORDER_CDAB, 0.1 },
		.energy = { true, 0x003E, MB_INT32, MB_ORDER_CDAB,
			    0.1 * J_PER_KWH },
		.max_regs_per_read = 11,
	},
	/*
	 * Schneider Electric PowerLogic PM5300 (PM5000 series register
	 * list), holding registers, function 03.
	 * Verified: register 3060 "Active Power Total" Float32 kW; register
	 * 3204 "Active Energy Delivered (Into Load)" INT64 Wh.  Register
	 * numbers are 1-based: wire address = register - 1 (3059, 3203).
	 * Schneider FAQ FA237865 composes the INT64 as reg3212 x 2^48 + ...
	 * + reg3215, i.e. most significant register first: abcd.
	 * Read limit: the Modbus maximum of 125; not stated in the list.
	 */
	{
		.name = "pm5300",
		.description = "Schneider Electric PowerLogic PM5300 meter",
		.source = "Schneider Electric PM5300 register list (PM5000 "
			  "series), registers 3060, 3204; FAQ FA237865",
		.kind = MB_KIND_HOLDING,
		.power = { true, 3059, MB_FLOAT32, MB_ORDER_ABCD, 1000.0 },
		.energy = { true, 3203, MB_INT64, MB_ORDER_ABCD, J_PER_WH },
		.max_regs_per_read = 125,
	},
	{ .name = NULL },
};

const mb_model_t *mb_model_find(const char *name)
{
	const mb_model_t *m;

	if (!name)
		return NULL;
	for (m = mb_models; m->name; m++) {
		if (!strcasecmp(m->name, name))
			return m;
	}
	return NULL;
}
