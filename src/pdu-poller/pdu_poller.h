/*
 * pdu_poller.h - what the parts of slurm-energy-pdu-poller(8) share: the
 * map's hostlists (Slurm's public API) and the Redfish family
 * (pdu_poller_redfish.c), beside the SNMP one in the main file.
 */
#ifndef SE_PDU_POLLER_H
#define SE_PDU_POLLER_H

#include <stddef.h>

#include "conf_map.h"

/* Slurm's hostlist API behind the map readers' interface. */
extern const se_hostlist_ops_t pp_hostlist_ops;

/* The union of n hostlist expressions, each host once, into *names (the
 * caller frees each and the array): 0, -EINVAL with the expression in
 * err (what names it: "map:line"), or -ENOMEM. */
int pp_hostlist_names(const char *const *exprs, const char *const *where,
		      size_t n, char ***names, size_t *n_names, char *err,
		      size_t err_len);

#ifdef SE_HAVE_REDFISH
#include "bmc_conf.h"
#include "rf_poller.h"

/* The Redfish poller of acct_gather.conf's EnergyBMC keys (c, read from
 * conf_path; EnergyBMCMethod=redfish with EnergyBMCPoller): every node of
 * EnergyBMCMap's lines, each resolved as its slurmd resolves it, the
 * password file read.  0 or -errno with err naming the file, line or
 * node. */
int pp_redfish_make(const bmc_conf_t *c, const char *conf_path,
		    rf_poller_t **out, char *err, size_t err_len);
#endif

#endif
