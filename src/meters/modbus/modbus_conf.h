/*
 * modbus_conf.h - acct_gather.conf keys of acct_gather_energy/modbus and its
 * per-node map file, parsed and checked without Slurm.
 *
 * The plugin hands over the strings Slurm's parser collected, key by key
 * (se_conf_set with modbus_conf_desc, conf_desc.h), then checks the whole (modbus_conf_check: model
 * defaults, cross-key rules), reads the map in slurmd only
 * (modbus_conf_read_map) and resolves this node's meter channel
 * (modbus_conf_resolve).  Every error names the file, the key (or map line)
 * and the value, e.g.
 *   acct_gather.conf: EnergyModbusParity=X: must be one of: N, E, O
 *   /etc/slurm/modbus.map:7: Share=1.5: must be between 1e-06 and 1
 *
 * Map file (EnergyModbusMap=FILE), one channel per line, key=value pairs:
 *   Nodes=n[01-04] Device=rtu:/dev/ttyS1 Unit=3 Offset=0 Share=equal
 *   Nodes=gpu01    Device=tcp://pdu7:502 Unit=1 Offset=200 Share=0.6
 *   Nodes=login1   Device=none
 * Nodes is a Slurm hostlist expression (matched by the caller's hostlist
 * ops).  Device, Unit default to EnergyModbusDevice, EnergyModbusUnit;
 * Offset (default 0) is added to both register addresses (one PDU outlet
 * of many); Share is this node's part of the channel: a number in (0, 1],
 * or "equal" (default): what fixed shares on that channel leave, split
 * equally among the nodes with Share=equal.  Device=none: a node with no
 * meter (it reports no energy).
 */
#ifndef SE_MODBUS_CONF_H
#define SE_MODBUS_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf_desc.h"
#include "conf_map.h"
#include "modbus_codec.h"
#include "modbus_meter.h"

#define MODBUS_CONF_FILE	"acct_gather.conf"

/* Defaults (documented in acct_gather_energy_modbus(5)). */
#define MODBUS_DEF_BAUD		9600
#define MODBUS_DEF_PARITY	'N'
#define MODBUS_DEF_DATA_BITS	8
#define MODBUS_DEF_STOP_BITS	1
#define MODBUS_DEF_UNIT		1
#define MODBUS_DEF_PERIOD_NS	1000000000ULL	/* 1 s */
#define MODBUS_DEF_TIMEOUT_NS	1000000000ULL	/* 1000 ms */
#define MODBUS_DEF_MAX_POWER_W	100000.0	/* 100 kW per channel */

typedef struct {
	unsigned line;		/* in the map file */
	char *nodes;		/* hostlist expression */
	char *device;		/* NULL: EnergyModbusDevice */
	bool has_unit;
	unsigned unit;
	unsigned offset;	/* added to register addresses */
	bool share_equal;
	double share;		/* when !share_equal, (0, 1] */
	const mb_model_t *model; /* Model=: these nodes' register map;
				 * NULL: the global one */
	double max_power_w;	/* MaxPower=; 0: EnergyModbusMaxPower */
} modbus_map_entry_t;

typedef struct {
	char *device;		/* template, may hold %n; NULL: none */
	modbus_serial_t serial;
	unsigned unit;
	char *model;		/* NULL: custom */
	mb_kind_t kind;
	mb_point_t power;	/* scale to W */
	mb_point_t energy;	/* scale to J */
	mb_order_t order;	/* EnergyModbusWordOrder, if given */
	unsigned max_regs_per_read;
	uint64_t period_ns;
	uint64_t timeout_ns;
	double max_power_w;
	char *map_path;
	uint32_t given;		/* keys set explicitly: 1 << key index */

	modbus_map_entry_t *map;	/* after modbus_conf_read_map() */
	size_t map_len;
} modbus_conf_t;

/* Hostlist matching, supplied by the caller (conf_map.h). */
typedef se_hostlist_ops_t modbus_hostlist_ops_t;

/* One node's meter channel. */
typedef struct {
	bool none;		/* Device=none: no meter */
	char device[512];	/* %n expanded */
	unsigned unit;
	unsigned offset;
	double share;
	unsigned line;		/* map line; 0 without a map entry */
	const mb_model_t *model; /* the map line's Model=, or NULL */
	double max_power_w;	/* the channel's bound: MaxPower= of the map
				 * line, else EnergyModbusMaxPower */
} modbus_target_t;

/* The keys of a map line ("Nodes", ...) as rows (conf_map.h): a key not
 * there is refused as unknown. */
extern const se_conf_map_t modbus_map;

/* Defaults into c. */
void modbus_conf_init(modbus_conf_t *c);
void modbus_conf_free(modbus_conf_t *c);

/* The keys in acct_gather.conf spelling, each with its parser and printer,
 * and the calls here through void * (conf_desc.h); its check_files reads
 * the map (modbus_conf_read_map). */
extern const se_conf_desc_t modbus_conf_desc;

/* Apply the model's map under explicit keys; check cross-key rules. */
int modbus_conf_check(modbus_conf_t *c, const char *file, char *err,
		      size_t err_len);

/* Read EnergyModbusMap (if set; modbus_map.c).  0, -EINVAL or -errno
 * (message in err). */
int modbus_conf_read_map(modbus_conf_t *c, char *err, size_t err_len);

/* This node's channel (modbus_resolve.c).  0 or -EINVAL (message in
 * err). */
int modbus_conf_resolve(const modbus_conf_t *c, const char *node,
			const modbus_hostlist_ops_t *hl, modbus_target_t *t,
			char *err, size_t err_len);

/* The meter config of a target (pointing into c and t). 0 or -EINVAL. */
int modbus_conf_meter_config(const modbus_conf_t *c, const modbus_target_t *t,
			     modbus_meter_config_t *out, char *err,
			     size_t err_len);

#endif
