/*
 * slurm_gres_gpu_stock.h - included by the per-release file of our gres/gpu
 * (gres_gpu_2205.c or gres_gpu_2411.c) right before it includes Slurm's
 * stock gres/gpu (src/plugins/gres/gpu/gres_gpu.c of the configured tree,
 * -isystem $(SLURM_SRC)), so that the stock file is compiled into our plugin
 * at build time with its entry points renamed stock_* (prototypes of the
 * common ones in slurm_gres_gpu.h).  No Slurm source lives in this
 * repository.
 *
 * The headers the stock file uses (in either release) are included first,
 * so that the renames below touch only the stock file's own definitions.
 * Names a release does not have are harmless here.
 */
#ifndef SE_SLURM_GRES_GPU_STOCK_H
#define SE_SLURM_GRES_GPU_STOCK_H

#define _GNU_SOURCE
#include "config.h"	/* Slurm's */

#include <ctype.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/slurm_xlator.h"
#include "src/common/assoc_mgr.h"
#include "src/common/bitstring.h"
#include "src/common/env.h"
#include "src/common/list.h"
#include "src/common/strnatcmp.h"
#include "src/common/xstring.h"
#include "slurm_compat_gres.h"
#include "src/plugins/gres/common/gres_common.h"

#include "slurm_gres_gpu.h"	/* the renamed prototypes, checked here */

/* every release */
#define plugin_name			stock_plugin_name
#define plugin_type			stock_plugin_type
#define plugin_version			stock_plugin_version
#define init				stock_init
#define fini				stock_fini
#define gres_p_node_config_load		stock_gres_p_node_config_load
#define gres_p_job_set_env		stock_gres_p_job_set_env
#define gres_p_step_set_env		stock_gres_p_step_set_env
#define gres_p_task_set_env		stock_gres_p_task_set_env
#define gres_p_send_stepd		stock_gres_p_send_stepd
#define gres_p_recv_stepd		stock_gres_p_recv_stepd
#define gres_p_get_devices		stock_gres_p_get_devices
#define gres_p_step_hardware_init	stock_gres_p_step_hardware_init
#define gres_p_step_hardware_fini	stock_gres_p_step_hardware_fini
/* 22.05 (gres_gpu_2205.c) */
#define gres_p_get_job_info		stock_gres_p_get_job_info
#define gres_p_get_step_info		stock_gres_p_get_step_info
#define gres_p_epilog_build_env		stock_gres_p_epilog_build_env
#define gres_p_epilog_set_env		stock_gres_p_epilog_set_env
/* 23.02+ (gres_gpu_2411.c) */
#define gres_p_prep_build_env		stock_gres_p_prep_build_env
#define gres_p_prep_set_env		stock_gres_p_prep_set_env

#endif
