/*
 * slurm_compat.h - the one place where Slurm releases differ for our glue.
 *
 * Only Slurm-glue files include this (after Slurm's "config.h"); the
 * Slurm-free core never does.  Everything is keyed on SLURM_VERSION_NUMBER of
 * the configured tree we build against, which is also the plugin_version the
 * daemons insist on.
 *
 * Known differences:
 *  - 23.02 moved the plugin-interface headers from src/common/ to
 *    src/interfaces/ (slurm_acct_gather_energy.h -> acct_gather_energy.h,
 *    slurm_acct_gather_profile.h -> acct_gather_profile.h);
 *  - 23.02 introduced list_t and 23.11 dropped the old "List" typedef from
 *    plugin signatures (conf_values takes a list_t **);
 *  - 23.11 made hostlist_t a struct type handled through hostlist_t *.
 */
#ifndef SE_SLURM_COMPAT_H
#define SE_SLURM_COMPAT_H

#include "slurm/slurm.h"
#include "slurm/slurm_version.h"

#ifndef SLURM_VERSION_NUM
#  define SLURM_VERSION_NUM(a, b, c) (((a) << 16) + ((b) << 8) + (c))
#endif

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 2, 0)
#  include "src/interfaces/acct_gather_energy.h"
#  include "src/interfaces/acct_gather_profile.h"
typedef list_t se_slurm_list_t;
#else
#  include "src/common/slurm_acct_gather_energy.h"
#  include "src/common/slurm_acct_gather_profile.h"
typedef List se_slurm_list_t;
#endif

#include "src/common/hostlist.h"
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(23, 11, 0)
typedef hostlist_t *se_hostlist_t;
#else
typedef hostlist_t se_hostlist_t;
#endif

#include "src/common/log.h"
#include "src/common/parse_config.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"

/*
 * The entry points Slurm resolves with dlsym() in every acct_gather_energy
 * plugin (see syms[] in slurm_acct_gather_energy.c).  Declared here so that
 * each plugin is compiled against the signatures of the release it is built
 * for, and so -Wmissing-prototypes holds.
 */
extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_version;

extern int init(void);
extern int fini(void);
extern int acct_gather_energy_p_update_node_energy(void);
extern int acct_gather_energy_p_get_data(enum acct_energy_type data_type,
					 void *data);
extern int acct_gather_energy_p_set_data(enum acct_energy_type data_type,
					 void *data);
extern void acct_gather_energy_p_conf_options(s_p_options_t **full_options,
					      int *full_options_cnt);
extern void acct_gather_energy_p_conf_set(int context_id_in,
					  s_p_hashtbl_t *tbl);
extern void acct_gather_energy_p_conf_values(se_slurm_list_t *data);

#endif
