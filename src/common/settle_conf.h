/*
 * settle_conf.h - when and how long a step's energy is settled at its end
 * (se_energy_step_settle), as two key tables over one struct, checked
 * without Slurm (conf_desc.h), so the test that walks every key of the
 * suite walks these too:
 *  - acct_gather.conf, read by every energy plugin of the suite:
 *      EnergySettle=yes|no        the plugin settles in its fini()
 *      EnergySettleMaxWait=SECONDS
 *  - plugstack.conf, the arguments of the optional spank_energy_settle.so:
 *      max_wait=SECONDS
 */
#ifndef SE_SETTLE_CONF_H
#define SE_SETTLE_CONF_H

#include <stdbool.h>

#include "conf_desc.h"

#define SETTLE_DEF_MAX_WAIT_S	30
#define SETTLE_MAX_MAX_WAIT_S	600

typedef enum {
	SETTLE_IN_PLUGIN_YES,	/* the default: the energy plugin settles */
	SETTLE_IN_PLUGIN_NO,	/* only spank_energy_settle.so, if listed */
} settle_in_plugin_t;

typedef struct {
	int in_plugin;		/* settle_in_plugin_t (an ENUM key's int) */
	unsigned max_wait_s;
} settle_conf_t;

/* acct_gather.conf: EnergySettle, EnergySettleMaxWait. */
extern const se_conf_desc_t settle_energy_conf_desc;
/* plugstack.conf: spank_energy_settle.so's max_wait. */
extern const se_conf_desc_t settle_conf_desc;

void settle_conf_init(settle_conf_t *c);
void settle_conf_free(settle_conf_t *c);

/*
 * The plugin's arguments (ac, av as SPANK hands them) into c, initialised
 * by the caller: each must be KEY=VALUE of the table.  0 or -EINVAL with
 * "plugstack.conf: spank_energy_settle.so: ..." naming the argument.
 */
int settle_conf_args(settle_conf_t *c, int ac, char **av, char *err,
		     size_t err_len);

#endif
