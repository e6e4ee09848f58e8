/*
 * se_slurm_conf.h - a configuration descriptor (conf_desc.h) with Slurm's
 * configuration parser: its keys registered as strings, the values Slurm
 * collected handed to the descriptor's own parsers (whose messages name file,
 * key and value; Slurm's would only say "bad"), and the effective values
 * back for scontrol show config.  Also what the plugins take from
 * slurm.conf itself (munged's socket).
 *
 * Slurm-side (Slurm headers, after Slurm's "config.h"):
 * compiled into plugins only (libseslurm), never into the Slurm-free core.
 */
#ifndef SE_SLURM_CONF_H
#define SE_SLURM_CONF_H

#include <stddef.h>

#include "conf_desc.h"
#include "slurm_compat.h"

/* Every key of d as S_P_STRING, terminated by an empty entry; xfree() it. */
s_p_options_t *se_slurm_conf_options(const se_conf_desc_t *d);

/*
 * conf (of d's type) from tbl (NULL: no keys given): d->free, d->init, every
 * key tbl holds through its parser, then d->check.  file names the file in
 * messages.  Returns 0 or the first negative errno, message in err.
 */
int se_slurm_conf_parse(const se_conf_desc_t *d, void *conf,
			s_p_hashtbl_t *tbl, const char *file, char *err,
			size_t err_len);

/* Append one config_key_pair_t per key of d (its effective value) to
 * list, in the table's order. */
void se_slurm_conf_values(const se_conf_desc_t *d, const void *conf,
			  se_list_t list);

/* munged's socket as Slurm's auth/munge takes it, from slurm.conf's
 * AuthInfo=socket=PATH: PATH in buf, or NULL (MUNGE's default).  For a
 * plugin's own MUNGE context (se_munge_new): the PDU poller's nodes. */
const char *se_slurm_munge_socket(char *buf, size_t len);

#endif
