/*
 * snmp_conf.h - acct_gather.conf keys of acct_gather_energy/snmp, its map
 * (PDUs and which outlets feed which nodes) and its secrets file, parsed
 * and checked without Slurm.  Every error names the file, the line or key
 * and the value, except a secret's value, which is never written.
 *
 * acct_gather.conf:
 *   EnergySNMPMap=/etc/slurm/snmp.map          (required)
 *   EnergySNMPSecrets=/etc/slurm/snmp.secrets  (required; root-only)
 *   EnergySNMPFrequency=5        seconds between reads
 *   EnergySNMPTimeout=1000       ms, the longest GET
 *   EnergySNMPMaxPower=10000     W, an outlet's bound (wrap vs reset)
 *   EnergySNMPPoller=HOST:PORT   read through slurm-energy-pdu-poller(8)
 *                                 (EnergySNMPSecrets then not needed on
 *                                 the nodes: the poller has them)
 *
 * Map, one line a PDU or a group of nodes:
 *   PDU=pdua Host=10.0.0.5 Model=apc-rpdu2
 *   PDU=pdub Host=udp:10.0.0.6:1161 Model=raritan-px Unit=1
 *   PDU=pduc Host=10.0.0.7 Model=custom PowerOID=1.3.6.1.4.1.X.1.7
 *            EnergyOID=1.3.6.1.4.1.X.1.9 PowerScale=0.1 EnergyScale=3600
 *            EnergyWidth=32
 *   Nodes=n01 Outlets=pdua:1,pdub:1
 *   Nodes=c[01-04] Outlets=pdua:5,pdua:6 Share=equal
 * Outlets are PDU:INDEX, INDEX the outlet's number (after the PDU's Unit
 * when its model has one).  Share (default equal) is the node's part of
 * each of its outlets: a number in (0, 1], or what fixed shares of the
 * outlet leave split equally among the nodes with Share=equal.
 *
 * Secrets, one line per PDU (or PDU=* for the rest):
 *   PDU=pdua Community=public
 *   PDU=pdub User=slurm AuthProto=SHA AuthKey=... PrivProto=AES PrivKey=...
 */
#ifndef SE_SNMP_CONF_H
#define SE_SNMP_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf_desc.h"
#include "conf_map.h"
#include "snmp_meter.h"

#define SNMP_CONF_FILE		"acct_gather.conf"
#define SNMP_DEF_PERIOD_NS	5000000000ULL	/* 5 s */
#define SNMP_DEF_TIMEOUT_NS	1000000000ULL	/* 1000 ms */
#define SNMP_DEF_MAX_POWER_W	10000.0

/* A PDU line, with its model (a custom one lives here). */
typedef struct {
	unsigned line;
	snmp_pdu_t pdu;		/* secret filled from the secrets file */
	bool has_secret;
	snmp_model_t custom;	/* Model=custom */
	char power_oid[256], energy_oid[256];
	const snmp_model_t *model;
	char unit[SNMP_INDEX_MAX]; /* "" none */
} snmp_conf_pdu_t;

/* A Nodes line. */
typedef struct {
	unsigned line;
	char *nodes;
	char *outlets;		/* "pdua:1,pdub:1" as written */
	bool share_equal;
	double share;
} snmp_conf_nodes_t;

typedef struct {
	char *map_path;
	char *secrets_path;
	char *poller;		/* "HOST:PORT" or NULL: the PDUs directly */
	uint64_t period_ns;
	uint64_t timeout_ns;
	double max_power_w;

	snmp_conf_pdu_t *pdus;	/* after snmp_conf_read_files() */
	size_t n_pdus;
	snmp_conf_nodes_t *lines;
	size_t n_lines;
} snmp_conf_t;

/* Hostlist matching, supplied by the caller (conf_map.h). */
typedef se_hostlist_ops_t snmp_hostlist_ops_t;

/* One node's outlets, ready for snmp_meter_create(). */
#define SNMP_TARGET_OUTLETS	64	/* a whole PDU read as one "node" */
typedef struct {
	snmp_outlet_t outlets[SNMP_TARGET_OUTLETS];
	size_t n_outlets;
	snmp_pdu_t pdus[SNMP_TARGET_OUTLETS];
	size_t n_pdus;
} snmp_target_t;

extern const se_conf_desc_t snmp_conf_desc;

void snmp_conf_init(snmp_conf_t *c);
void snmp_conf_free(snmp_conf_t *c);
int snmp_conf_check(snmp_conf_t *c, const char *file, char *err,
		    size_t err_len);

/* Read the map and the secrets (its mode checked first): 0 or -errno,
 * the message in err naming file, line, key (never a secret's value). */
int snmp_conf_read_files(snmp_conf_t *c, char *err, size_t err_len);

/* The map alone (a node reading through the poller): as above, without
 * the secrets (each PDU's secret left empty). */
int snmp_conf_read_map(snmp_conf_t *c, char *err, size_t err_len);

/* This node's outlets and their PDUs (with secrets): 0, SE's
 * -ENOENT when no line names the node (err says so), or -EINVAL. */
int snmp_conf_resolve(const snmp_conf_t *c, const char *node,
		      const snmp_hostlist_ops_t *hl, snmp_target_t *t,
		      char *err, size_t err_len);

#endif
