/*
 * se_energy_poll.h - a node's meter through slurm-energy-pdu-poller(8),
 * for the plugins whose meters a poller can read (acct_gather_energy/snmp
 * with EnergySNMPPoller, acct_gather_energy/bmc's Redfish method with
 * EnergyBMCPoller): a pdu_poll_meter_t (src/common/pdu_poll_meter.h)
 * sealing with MUNGE on the socket of Slurm's AuthInfo, taking answers
 * from root or SlurmUser only, refusing a reading older than twice the
 * period plus the timeout (the poller's rounds late).  Compiled into those
 * plugins only: they link libmunge, the others need not.
 */
#ifndef SE_ENERGY_POLL_H
#define SE_ENERGY_POLL_H

#include <stddef.h>
#include <stdint.h>

#include "se_energy.h"

/* out's meter: node's reading from the poller at poller ("HOST:PORT",
 * named by key in messages), every period_ns, each exchange within
 * timeout_ns.  0, or -errno with err (munged, the address). */
int se_energy_poll_meter_give(se_energy_meter_t *out, const char *node,
			      const char *poller, const char *key,
			      uint64_t period_ns, uint64_t timeout_ns,
			      char *err, size_t err_len);

#endif
