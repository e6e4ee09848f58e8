/*
 * bmc_conf.h - the acct_gather.conf keys of acct_gather_energy/bmc.
 *
 * Table-driven: bmc_conf_desc lists every key (conf_desc.h; the plugin
 * registers them with Slurm's parser as strings and hands each value found
 * to se_conf_set()).  bmc_conf_resolve_map() and bmc_conf_finish() then
 * resolve what depends on the node (its line of EnergyBMCMap, the %n of
 * its host) and read the password file.  Every error names the file, the
 * key (or map line) and the value; the password itself never appears in a
 * message.  Nothing here knows Slurm: hostlist matching is the caller's.
 *
 * Map file (EnergyBMCMap=FILE), one BMC per line, key=value pairs:
 *   # nodes             their BMC
 *   Nodes=n[1-2]        Host=%n-bmc.mgmt
 *   Nodes=n3            Host=10.1.0.3:6230
 * Nodes is a Slurm hostlist expression, Host as EnergyBMCHost (%n allowed).
 * With EnergyBMCMethod=redfish a line may also say Source= and Chassis=,
 * the node's EnergyBMCRedfishSource and EnergyBMCRedfishChassis (a rack
 * PDU's outlet: Host=https://pdu1 Source=/redfish/v1/PowerEquipment/...).
 * A source may list up to BMC_RF_MAX_SOURCES resources, comma-separated,
 * summed: a node's two outlets, each a path on Host= or a URL of another
 * PDU (Source=/redfish/v1/.../A1,https://pdu2/redfish/v1/.../A1), read
 * with the same user and password.
 * A node on no line uses EnergyBMCHost (an error without it); a node on
 * two lines is an error.
 *
 * EnergyBMCMethod=redfish reads the BMC over Redfish (src/meters/redfish/)
 * instead of IPMI: EnergyBMCHost is then required ("HOST[:PORT]" for
 * https, or a URL "https://..."/"http://..."), with EnergyBMCUser and
 * EnergyBMCPasswordFile (up to 127 bytes), EnergyBMCAuth, EnergyBMCCAFile,
 * EnergyBMCTLSVerify, EnergyBMCRedfishChassis and EnergyBMCRedfishSource;
 * its defaults for EnergyBMCFrequency and EnergyBMCTimeout are 5 s and
 * 4000 ms (the IPMI methods' 1 s and 2000 ms), unless the keys are given.
 * The IPMI-only keys are ignored there.
 *
 * EnergyBMCPoller=HOST:PORT ([V6ADDR]:PORT), with EnergyBMCMethod=redfish
 * only: the node asks slurm-energy-pdu-poller(8) for its reading
 * (pdu_poll_meter.h) instead of reading its PDU outlets, each PDU then
 * read once a period for all its nodes.  The node still resolves its map
 * line (host and Source=, for the description) but reads no password:
 * bmc_conf_finish() leaves EnergyBMCPasswordFile alone then, since the
 * file is on the poller's host only.  The poller, reading the same
 * acct_gather.conf, needs the password: it clears poller before
 * bmc_conf_finish().
 */
#ifndef SE_BMC_CONF_H
#define SE_BMC_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf_desc.h"
#include "conf_map.h"

typedef enum {
	BMC_METHOD_AUTO = 0,	/* DCMI when the BMC answers it, else sensors */
	BMC_METHOD_DCMI,
	BMC_METHOD_SENSORS,
	BMC_METHOD_REDFISH,	/* Redfish over HTTPS (src/meters/redfish) */
} bmc_method_t;

typedef enum {
	BMC_AUTH_SESSION = 0,	/* Redfish session, X-Auth-Token */
	BMC_AUTH_BASIC,		/* HTTP basic on every request */
} bmc_auth_t;

typedef enum {
	BMC_TLS_YES = 0,	/* verify the BMC's certificate */
	BMC_TLS_NO,		/* explicit: do not (slurm-energy-check warns) */
} bmc_tls_t;

typedef enum {
	BMC_TICK_WATCH_YES = 0,	/* stamp a reading at the BMC's refresh */
	BMC_TICK_WATCH_NO,	/* one GET a read: for BMCs that mind the
				 * watch's 25-40 GETs (stamped at the GET) */
} bmc_tick_watch_t;

typedef enum {
	BMC_RF_SOURCE_AUTO = 0,	/* the best the chassis has */
	BMC_RF_SOURCE_ENERGY,	/* an energy counter, or fail */
	BMC_RF_SOURCE_POWER,	/* power only */
	BMC_RF_SOURCE_URI,	/* the resource named */
} bmc_rf_source_t;

typedef enum {
	BMC_PRIV_USER = 0,
	BMC_PRIV_OPERATOR,
	BMC_PRIV_ADMIN,
} bmc_priv_t;

typedef enum {
	BMC_PROTO_2_0 = 0,	/* RMCP+ (IPMI 2.0 LAN), the default */
	BMC_PROTO_1_5,		/* RMCP with MD5 authentication (IPMI 1.5) */
} bmc_proto_t;

#define BMC_MAX_SENSORS		32
#define BMC_RF_MAX_SOURCES	8	/* resources summed (RF_MAX_PROBES) */
#define BMC_SDR_CACHE_DIR_DEFAULT "/var/cache/ipmimonitoringsdrcache"
#define BMC_PASSWORD_MAX_2_0	20	/* IPMI 2.0 user passwords: 20 bytes */
#define BMC_PASSWORD_MAX_1_5	16
#define BMC_PASSWORD_MAX_REDFISH 127	/* HTTP: what a BMC account holds */
#define BMC_USER_MAX_IPMI	16	/* IPMI 2.0 §22.28: 16-byte user names */
#define BMC_USER_MAX_REDFISH	127	/* an HTTP account (iDRAC: 16, iLO: 39,
					 * a directory account: longer) */

/* One entry of EnergyBMCSensors: a record id, or a sensor name. */
typedef struct {
	bool by_id;
	unsigned record_id;
	char *name;
} bmc_sensor_sel_t;

typedef struct {
	bmc_method_t method;
	bmc_sensor_sel_t sensors[BMC_MAX_SENSORS];
	size_t n_sensors;		/* 0: every system Watts sensor */
	char *host_tmpl;		/* EnergyBMCHost (may hold %n) */
	char *map_path;			/* EnergyBMCMap */
	char *user;
	char *password_file;
	bmc_priv_t privilege;
	bmc_proto_t protocol;
	unsigned cipher_suite;		/* IPMI 2.0 cipher suite id */
	unsigned workarounds_2_0;	/* FreeIPMI IPMI 2.0 workaround bits */
	unsigned workarounds_1_5;	/* FreeIPMI IPMI 1.5 workaround bits */
	char *workaround_names;		/* as given, for the load line */
	uint64_t period_ns;		/* EnergyBMCFrequency */
	uint64_t timeout_ns;		/* EnergyBMCTimeout */
	uint64_t max_power_mw;		/* EnergyBMCMaxWatts */
	char *sdr_cache_dir;		/* EnergyBMCSdrCacheDir, NULL: default */
	/* Redfish */
	bmc_auth_t auth;		/* EnergyBMCAuth */
	char *ca_file;			/* EnergyBMCCAFile, NULL: system's */
	bmc_tls_t tls_verify;		/* EnergyBMCTLSVerify */
	char *rf_chassis;		/* EnergyBMCRedfishChassis */
	bmc_rf_source_t rf_source;	/* EnergyBMCRedfishSource */
	bmc_tick_watch_t rf_tick_watch;	/* EnergyBMCRedfishTickWatch */
	char *rf_source_uri;		/* ... when a URI */
	char *poller;			/* EnergyBMCPoller, NULL: none */
	bool period_given, timeout_given; /* else the method's defaults */

	/* set by bmc_conf_resolve_map(): the node's line, if any */
	char *map_host;			/* its Host= (may hold %n) */
	char *map_source;		/* its Source= (redfish) */
	char *map_chassis;		/* its Chassis= (redfish) */
	unsigned map_line;

	/* set by bmc_conf_finish() */
	char *host;			/* NULL: in-band */
	char password[BMC_PASSWORD_MAX_REDFISH + 1];
	bool have_password;
} bmc_conf_t;

/* The keys of an EnergyBMCMap line ("Nodes", "Host") as rows
 * (conf_map.h). */
extern const se_conf_map_t bmc_map;

/* The keys in the order of the man page, and the calls below through
 * void * (conf_desc.h); se_conf_show() never shows the password. */
extern const se_conf_desc_t bmc_conf_desc;

/* Defaults: method auto, in-band, privilege user, cipher suite 3,
 * frequency 1 s, timeout 2000 ms (redfish: 5 s, 4000 ms), max 20 kW;
 * Redfish: session auth, TLS verified, source auto. */
void bmc_conf_init(bmc_conf_t *c);

/* Free what the configuration holds and wipe the password. */
void bmc_conf_free(bmc_conf_t *c);

/*
 * Check the keys together (nothing node-specific): 0 or -EINVAL with a
 * message in err.  bmc_conf_finish() does it too.
 */
int bmc_conf_check(const bmc_conf_t *c, const char *file, char *err,
		   size_t err_len);

/* Hostlist matching, supplied by the caller (conf_map.h); count unused. */
typedef se_hostlist_ops_t bmc_hostlist_ops_t;

/*
 * Read EnergyBMCMap (if set) and find node's line: its Host= then replaces
 * EnergyBMCHost for bmc_conf_finish().  Returns 0 (also without a map),
 * -EINVAL for a malformed map, a bad Nodes= expression, a node on two
 * lines, or a node on none without EnergyBMCHost; -errno for an unreadable
 * map.  The message in err names the map file and line.
 */
int bmc_conf_resolve_map(bmc_conf_t *c, const char *node,
			 const bmc_hostlist_ops_t *hl, char *err,
			 size_t err_len);

/*
 * Check the keys together and resolve them for node (NULL outside slurmd):
 * expand %n in the node's map Host= (else EnergyBMCHost), check the
 * password file (owned by us, no group/other access) and read its first
 * line; with EnergyBMCPoller, no password file is checked or read (the
 * poller's host has it).  Returns 0 or -errno with a message in err.
 */
int bmc_conf_finish(bmc_conf_t *c, const char *file, const char *node,
		    char *err, size_t err_len);

/* Deep copy (the password too); 0 or -ENOMEM (dst then empty). */
int bmc_conf_copy(bmc_conf_t *dst, const bmc_conf_t *src);

/* Names of the enum values, for messages and the load line. */
const char *bmc_method_name(bmc_method_t m);
const char *bmc_priv_name(bmc_priv_t p);

#endif
