/*
 * se-conf-check - check acct_gather.conf for an energy plugin of the suite
 * the way slurmd will, before slurmd is restarted with it.
 *
 *   se-conf-check [--type acct_gather_energy/modbus] /etc/slurm/acct_gather.conf
 *   se-conf-check --type energy_policy /etc/slurm/energy_policy.conf
 *
 * Reads the file's Key=Value lines (Slurm's syntax: one pair per line,
 * '#' comments, "double quotes" around values with blanks), hands every key
 * of the plugin to the same Slurm-free parser and check the plugin runs in
 * slurmd, and prints the first error as slurmd would log it (file, key and
 * value) or "ok".  Keys of other plugins are left alone; a key that
 * starts like this plugin's keys (EnergyModbus...) but is not one is an
 * error, as it is for slurmd.  Exit 0 when good,
 * 1 on a configuration error, 2 on bad usage.  slurm-energy-check runs it
 * for the AcctGatherEnergyType of slurm.conf.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"
#include "conf_desc.h"

#ifdef SE_CHECK_MODBUS
#include "modbus_conf.h"
#endif
#ifdef SE_CHECK_BMC
#include "bmc_conf.h"
#endif
#ifdef SE_CHECK_RRD
#include "rrd_conf.h"
#endif
#ifdef SE_CHECK_SNMP
#include "snmp_conf.h"
#endif
#ifdef SE_CHECK_EXT_SENSORS
#include "es_conf.h"
#endif
#include "attrib.h"
#include "settle_conf.h"
#include "gpu_meter_conf.h"
#include "freq_history.h"
#include "freq_policy.h"

/* A whole file read by its own parser (not Key=Value lines of a
 * descriptor): 0, or non-zero with the parser's message in err. */
typedef int (*file_loader_t)(const char *path, char *err, size_t len);


/* One plugin's configuration: its back-end's descriptor, or its loader. */
typedef struct {
	const char *type;	/* AcctGatherEnergyType value, or the file's */
	const se_conf_desc_t *desc;
	file_loader_t load;
} checker_t;

static const checker_t checkers[] = {
#ifdef SE_CHECK_MODBUS
	{ "acct_gather_energy/modbus", &modbus_conf_desc, NULL },
#endif
#ifdef SE_CHECK_BMC
	{ "acct_gather_energy/bmc", &bmc_conf_desc, NULL },
#endif
#ifdef SE_CHECK_RRD
	{ "acct_gather_energy/rrd", &rrd_conf_desc, NULL },
#endif
#ifdef SE_CHECK_SNMP
	/* its map and its secrets file (owner and mode) too */
	{ "acct_gather_energy/snmp", &snmp_conf_desc, NULL },
#endif
	/* EnergyAttribution and its keys, beside any energy plugin's */
	{ "acct_gather_energy/attribution", &attrib_conf_desc, NULL },
	/* EnergySettle and EnergySettleMaxWait, the same */
	{ "acct_gather_energy/settle", &settle_energy_conf_desc, NULL },
	/* EnergyGPU, EnergyGPUFactor and EnergyGPULibrary, the same */
	{ "acct_gather_energy/node-gpus", &gpu_meter_conf_desc, NULL },
#ifdef SE_CHECK_EXT_SENSORS
	{ "ext_sensors/meters", &es_conf_desc, NULL },
#endif
	/* job_submit/energy_policy's energy_policy.conf and history file */
	{ "energy_policy", NULL, freq_policy_check_file },
	{ "energy_policy/history", NULL, freq_history_check_file },
	{ NULL, NULL, NULL },
};

static const checker_t *checker;

/* Length of the prefix every key of d shares ("EnergyModbus"): a key with
 * it that is not in the table is a typo of ours, which Slurm's parser
 * refuses too ("unrecognized key"), so slurmd would not start. */
static size_t _prefix_len(const se_conf_desc_t *d)
{
	size_t n = d->n_keys ? strlen(d->keys[0].name) : 0;

	for (size_t i = 1; i < d->n_keys; i++)
		while (n && strncasecmp(d->keys[0].name, d->keys[i].name, n))
			n--;
	return n;
}

/* key belongs to another table of ours (acct_gather.conf holds several:
 * a back-end's, the attribution's, the settle's). */
static bool _other_table_key(const char *key)
{
	for (const checker_t *c = checkers; c->type; c++)
		if (c != checker && c->desc && se_conf_key_index(c->desc, key) >= 0)
			return true;
	return false;
}

static int _line(void *conf, const char *path, unsigned line,
		 const conf_pair_t *pairs, size_t n, char *err, size_t len)
{
	size_t plen = _prefix_len(checker->desc);

	for (size_t i = 0; i < n; i++) {
		long k = se_conf_key_index(checker->desc, pairs[i].key);
		int rc;

		if (k < 0 && plen &&
		    !strncasecmp(pairs[i].key, checker->desc->keys[0].name,
				 plen) && !_other_table_key(pairs[i].key)) {
			snprintf(err, len,
				 "%s: %s=%s: unknown key (line %u; slurmd refuses it too)",
				 path, pairs[i].key, pairs[i].value, line);
			return -EINVAL;
		}
		if (k < 0)
			continue;
		rc = se_conf_set_index(checker->desc, conf, path, (size_t) k,
				       pairs[i].value, err, len);
		if (rc) {
			/* the parser names file, key and value; add the line */
			size_t used = strlen(err);

			snprintf(err + used, len - used, " (line %u)", line);
			return rc;
		}
	}
	return 0;
}

/* Keys as slurmd parses them, then what slurmd checks of the files they
 * name (Modbus's map).  0 when good, 1 on a configuration error. */
static int _check(const se_conf_desc_t *d, const char *type, const char *path)
{
	void *conf = calloc(1, d->size);
	char err[2048] = "";
	int rc;

	if (!conf) {
		fprintf(stderr, "se-conf-check: out of memory\n");
		return 1;
	}
	d->init(conf);
	rc = conf_read_pairs_file(path, _line, conf, err, sizeof(err));
	if (!rc)
		rc = se_conf_check(d, conf, path, err, sizeof(err));
	if (!rc && d->check_files)
		rc = d->check_files(conf, err, sizeof(err));
	d->free(conf);
	free(conf);
	if (rc) {
		printf("FAIL %s: %s\n", type, err);
		return 1;
	}
	printf("ok   %s: %s\n", type, path);
	return 0;
}

/* A file of its own format, read by the plugin's own loader. */
static int _check_file(const checker_t *c, const char *path)
{
	char err[2048] = "";

	if (c->load(path, err, sizeof(err))) {
		printf("FAIL %s: %s\n", c->type, err);
		return 1;
	}
	printf("ok   %s: %s\n", c->type, path);
	return 0;
}

static int _usage(void)
{
	fprintf(stderr,
		"usage: se-conf-check [--type PLUGIN] FILE\n"
		"plugins (and files) checked by this build:");
	for (const checker_t *c = checkers; c->type; c++)
		fprintf(stderr, " %s", c->type);
	fprintf(stderr, "\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *type = "acct_gather_energy/modbus", *path = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--type") && i + 1 < argc)
			type = argv[++i];
		else if (argv[i][0] != '-' && !path)
			path = argv[i];
		else
			return _usage();
	}
	if (!path)
		return _usage();
	for (checker = checkers; checker->type; checker++) {
		if (!strcmp(checker->type, type))
			break;
	}
	if (!checker->type) {
		fprintf(stderr, "se-conf-check: %s is not a plugin of this build\n",
			type);
		return _usage();
	}
	if (checker->load)
		return _check_file(checker, path);
	return _check(checker->desc, type, path);
}
