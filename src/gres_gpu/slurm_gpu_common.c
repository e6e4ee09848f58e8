/*
 * slurm_gpu_common.c - Slurm's own GPU frequency helpers (gpu_common.c),
 * compiled from the configured Slurm tree at build time (-isystem
 * $(SLURM_SRC)); no Slurm source lives in this repository.
 */
#include "config.h"	/* Slurm's */
#include "src/plugins/gpu/common/gpu_common.c"
