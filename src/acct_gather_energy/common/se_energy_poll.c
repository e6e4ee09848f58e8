/*
 * se_energy_poll.c - a node's meter through slurm-energy-pdu-poller(8)
 * (se_energy_poll.h).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>

#include "src/common/slurm_xlator.h"
#include "src/common/read_config.h"	/* slurm_conf: SlurmUser */

#include "pdu_poll_meter.h"
#include "se_energy_poll.h"
#include "se_munge.h"
#include "se_slurm_conf.h"

static void _poll_meter_free(void *dev)
{
	pdu_poll_meter_destroy(dev);	/* with its MUNGE context */
}

int se_energy_poll_meter_give(se_energy_meter_t *out, const char *node,
			      const char *poller, const char *key,
			      uint64_t period_ns, uint64_t timeout_ns,
			      char *err, size_t err_len)
{
	char sock[256];
	pdu_poll_meter_config_t pc = {
		.node = node, .poller = poller, .key = key,
		.poller_uid = slurm_conf.slurm_user_id,
		.timeout_ns = timeout_ns,
		.max_age_ns = 2 * period_ns + timeout_ns,
	};
	pdu_poll_meter_t *pm;
	void *munge;
	int rc;

	if (!(munge = se_munge_new(se_slurm_munge_socket(sock, sizeof(sock)),
				   err, err_len)))
		return -EINVAL;
	pc.sealer = se_munge_sealer(munge);
	pc.sealer_free = se_munge_free;	/* the meter owns it */
	if ((rc = pdu_poll_meter_create(&pc, &pm, err, err_len))) {
		se_munge_free(munge);
		return rc;
	}
	se_energy_meter_give(out, &pdu_poll_meter_ops, pm, _poll_meter_free,
			     period_ns, timeout_ns);
	return 0;
}
