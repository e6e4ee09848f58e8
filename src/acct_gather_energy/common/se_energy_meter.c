/*
 * se_energy_meter.c - the part of make_meter() every live meter shares:
 * handing the built meter to the glue under the suite's sampler policy,
 * with that timing in its load line.
 *
 * Called by the plugin files (modbus, bmc, snmp) only; calls nothing of
 * the glue, so it sits below them and beside the role files.
 */
#include "se_config.h"

#include "se_energy.h"

void se_energy_meter_give(se_energy_meter_t *out, const meter_ops_t *ops,
			  void *dev, void (*dev_free)(void *dev),
			  uint64_t period_ns, uint64_t timeout_ns)
{
	out->ops = ops;
	out->dev = dev;
	out->dev_free = dev_free;
	sampler_config_init(&out->cfg, period_ns, timeout_ns);
	sampler_describe_timing(out->describe, sizeof(out->describe),
				period_ns, timeout_ns);
}
