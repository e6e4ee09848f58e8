/*
 * es_conf.h - ext_sensors.conf of ext_sensors/meters (no Slurm).
 *
 * The keys of upstream's ext_sensors/rrd, with its meaning and defaults, so
 * that an admin swaps plugins without touching the file:
 *   JobData=energy  NodeData=energy,temp  SwitchData=energy,temp
 *   ColdDoorData=temp  EnergyRRA=DS  TempRRA=DS  EnergyPathRRD=PATH(%n)
 *   TempPathRRD=PATH(%n)  MinWatt  MaxWatt  MinTemp  MaxTemp
 * ("RRA" is upstream's name for what rrdtool calls the data source.)
 * Ours, all optional:
 *   ColdDoors=     hostlist of cold-door names (ColdDoorData=temp);
 *   Switches=      hostlist of switch names (default: topology.conf's);
 *   RRDDaemon=     rrdcached address (default $RRDCACHED_ADDRESS; "none");
 *   ReadThreads=   parallel RRD readers (default 8);
 *   MaxAge=        seconds after which the newest row is stale (default 60);
 *   EnergyHistory= seconds of rows kept per node for step energy (3600).
 * Upstream matched list items with strstr(); we reject unknown items.
 */
#ifndef SE_ES_CONF_H
#define SE_ES_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "conf_desc.h"

#define ES_JOB_ENERGY		0x01
#define ES_NODE_ENERGY		0x02
#define ES_NODE_TEMP		0x04
#define ES_SWITCH_ENERGY	0x08
#define ES_SWITCH_TEMP		0x10
#define ES_DOOR_TEMP		0x20

typedef struct {
	unsigned data;		/* ES_* */
	char *energy_ds;	/* EnergyRRA; NULL: the file's first DS */
	char *temp_ds;		/* TempRRA; NULL: the file's first DS */
	char *energy_path;	/* EnergyPathRRD, %n = component name */
	char *temp_path;	/* TempPathRRD */
	double min_w, max_w;	/* MinWatt (10), MaxWatt (500) */
	double min_temp_c;	/* MinTemp (1) */
	double max_temp_c;	/* MaxTemp (300) */
	char *cold_doors;	/* ColdDoors hostlist; NULL: none */
	char *switches;		/* Switches hostlist; NULL: topology's */
	char *daemon;		/* RRDDaemon; NULL: $RRDCACHED_ADDRESS */
	unsigned threads;	/* ReadThreads (8) */
	uint64_t max_age_ns;	/* MaxAge (60 s) */
	uint64_t history_ns;	/* EnergyHistory (3600 s) */
} es_conf_t;

/* The keys (set them with se_conf_set()), and the calls below through
 * void * (conf_desc.h). */
extern const se_conf_desc_t es_conf_desc;

void es_conf_init(es_conf_t *c);
void es_conf_free(es_conf_t *c);

/* Checks across keys (paths given for what is asked, bounds ordered). */
int es_conf_check(const es_conf_t *c, const char *file, char *err,
		  size_t err_len);

#endif
