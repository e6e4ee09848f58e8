/*
 * slurm_gres_common.c - Slurm's GRES helper code
 * (src/plugins/gres/common/gres_common.c, which no library exports),
 * compiled from the configured tree at build time (-isystem $(SLURM_SRC)).
 */
#include "config.h"	/* Slurm's */
#include "src/plugins/gres/common/gres_common.c"
