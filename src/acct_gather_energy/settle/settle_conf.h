/*
 * settle_conf.h - the plugstack.conf arguments of spank_energy_settle.so
 * (max_wait=SECONDS), checked without Slurm as a key table (conf_desc.h),
 * so the test that walks every key of the suite walks these too.
 */
#ifndef SE_SETTLE_CONF_H
#define SE_SETTLE_CONF_H

#include "conf_desc.h"

#define SETTLE_DEF_MAX_WAIT_S	30
#define SETTLE_MAX_MAX_WAIT_S	600

typedef struct {
	unsigned max_wait_s;
} settle_conf_t;

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
