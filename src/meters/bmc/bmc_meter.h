/*
 * bmc_meter.h - the BMC as a meter_ops_t: DCMI power reading or the sum of
 * SDR power sensors, in-band or over an IPMI LAN session.
 *
 * Two methods (EnergyBMCMethod):
 *   dcmi     DCMI Get Power Reading (DCMI 1.5 §6.6.1) through libfreeipmi
 *            on one persistent session, reopened when it drops.  When the
 *            BMC offers an enhanced-statistics rolling average no longer
 *            than twice the sampling period, the reading is that average,
 *            stamped at the middle of its window: a step of power between
 *            two reads is then counted, not missed.
 *   sensors  the sum of Watts sensors read through libipmimonitoring (one
 *            session per read, as that library works): the ones named in
 *            EnergyBMCSensors, or by default every Watts sensor of the
 *            power-supply entity (0x0A), else of the system board, chassis,
 *            power unit or power distribution entities.  Every chosen
 *            sensor must read, or the whole reading fails: never a partial
 *            sum, never only the first sensor.
 *   auto     dcmi; on a BMC that answers "invalid command", sensors.
 * No EnergyBMCHost: the in-band driver (OpenIPMI /dev/ipmi0, KCS, SSIF).
 *
 * A reading fails (and the sampler gap-fills) when the BMC reports no
 * measurement, the power exceeds EnergyBMCMaxWatts, or a DCMI reading is
 * stuck: same watts and same BMC time stamp for 5 x max(period, 2 s).
 * Every library timeout comes from EnergyBMCTimeout; open() also logs its
 * failures (rate-limited), since the sampler's open gives no message back.
 * The password never appears in a message.
 */
#ifndef SE_BMC_METER_H
#define SE_BMC_METER_H

#include <stddef.h>

#include "bmc_conf.h"
#include "meter.h"

typedef struct bmc_meter bmc_meter_t;

/* The operations to hand to sampler_start() with a bmc_meter_t. */
extern const meter_ops_t bmc_meter_ops;

/*
 * Create a meter for a finished configuration (bmc_conf_finish()), which
 * is copied.  No I/O.  Returns NULL with errno ENOMEM.
 */
bmc_meter_t *bmc_meter_create(const bmc_conf_t *conf);

/* Close (if open) and free. */
void bmc_meter_destroy(bmc_meter_t *m);

/* One line for logs: "dcmi over lan 2.0 to 10.0.0.5 as admin (user)". */
void bmc_meter_describe(const bmc_meter_t *m, char *buf, size_t len);

#endif
