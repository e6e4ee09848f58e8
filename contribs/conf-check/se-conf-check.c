/*
 * se-conf-check - check acct_gather.conf for an energy plugin of the suite
 * the way slurmd will, before slurmd is restarted with it.
 *
 *   se-conf-check [--type acct_gather_energy/modbus] /etc/slurm/acct_gather.conf
 *
 * Reads the file's Key=Value lines (Slurm's syntax: one pair per line,
 * '#' comments, "double quotes" around values with blanks), hands every key
 * of the plugin to the same Slurm-free parser and check the plugin runs in
 * slurmd, and prints the first error as slurmd would log it (file, key and
 * value) or "ok".  Keys of other plugins are left alone.  Exit 0 when good,
 * 1 on a configuration error, 2 on bad usage.  slurm-energy-check runs it
 * for the AcctGatherEnergyType of slurm.conf.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "conf.h"

#ifdef SE_CHECK_MODBUS
#include "modbus_conf.h"
#endif
#ifdef SE_CHECK_BMC
#include "bmc_conf.h"
#endif
#ifdef SE_CHECK_RRD
#include "rrd_conf.h"
#endif

/* One energy plugin's configuration, behind the same four calls. */
typedef struct {
	const char *type;	/* AcctGatherEnergyType value */
	const char *(*key)(size_t i);	/* NULL past the last */
	void (*init)(void);
	int (*set)(const char *file, size_t i, const char *value, char *err,
		   size_t len);
	int (*check)(const char *file, char *err, size_t len);
} checker_t;

#ifdef SE_CHECK_MODBUS
static modbus_conf_t modbus;

static const char *_modbus_key(size_t i)
{
	return i < modbus_conf_key_count() ? modbus_conf_key_name(i) : NULL;
}

static void _modbus_init(void)
{
	modbus_conf_init(&modbus);
}

static int _modbus_set(const char *file, size_t i, const char *value,
		       char *err, size_t len)
{
	return modbus_conf_set(&modbus, file, i, value, err, len);
}

/* slurmd also reads the map file when it builds the node's meter. */
static int _modbus_check(const char *file, char *err, size_t len)
{
	int rc = modbus_conf_check(&modbus, file, err, len);

	return rc ? rc : modbus_conf_read_map(&modbus, err, len);
}
#endif

#ifdef SE_CHECK_BMC
static bmc_conf_t bmc;

static void _bmc_init(void)
{
	bmc_conf_init(&bmc);
}

static int _bmc_set(const char *file, size_t i, const char *value, char *err,
		    size_t len)
{
	return bmc_conf_set(&bmc, file, bmc_conf_key(i), value, err, len);
}

static int _bmc_check(const char *file, char *err, size_t len)
{
	return bmc_conf_check(&bmc, file, err, len);
}
#endif

#ifdef SE_CHECK_RRD
static rrd_conf_t rrd;

static void _rrd_init(void)
{
	rrd_conf_init(&rrd);
}

static int _rrd_set(const char *file, size_t i, const char *value, char *err,
		    size_t len)
{
	return rrd_conf_set(&rrd, file, rrd_conf_key(i), value, err, len);
}

static int _rrd_check(const char *file, char *err, size_t len)
{
	return rrd_conf_check(&rrd, file, err, len);
}
#endif

static const checker_t checkers[] = {
#ifdef SE_CHECK_MODBUS
	{ "acct_gather_energy/modbus", _modbus_key, _modbus_init, _modbus_set,
	  _modbus_check },
#endif
#ifdef SE_CHECK_BMC
	{ "acct_gather_energy/bmc", bmc_conf_key, _bmc_init, _bmc_set,
	  _bmc_check },
#endif
#ifdef SE_CHECK_RRD
	{ "acct_gather_energy/rrd", rrd_conf_key, _rrd_init, _rrd_set,
	  _rrd_check },
#endif
	{ NULL, NULL, NULL, NULL, NULL },
};

static const checker_t *checker;

/* Index of key among the plugin's keys (case-insensitive, as Slurm). */
static long _key_index(const char *key)
{
	const char *k;

	for (size_t i = 0; (k = checker->key(i)); i++) {
		if (!strcasecmp(k, key))
			return (long) i;
	}
	return -1;
}

static int _line(void *arg, const char *path, unsigned line,
		 const conf_pair_t *pairs, size_t n, char *err, size_t len)
{
	(void) arg;
	for (size_t i = 0; i < n; i++) {
		long k = _key_index(pairs[i].key);
		int rc;

		if (k < 0)
			continue;
		rc = checker->set(path, (size_t) k, pairs[i].value, err, len);
		if (rc) {
			/* the parser names file, key and value; add the line */
			size_t used = strlen(err);

			snprintf(err + used, len - used, " (line %u)", line);
			return rc;
		}
	}
	return 0;
}

static int _usage(void)
{
	fprintf(stderr,
		"usage: se-conf-check [--type PLUGIN] ACCT_GATHER_CONF\n"
		"plugins checked by this build:");
	for (const checker_t *c = checkers; c->type; c++)
		fprintf(stderr, " %s", c->type);
	fprintf(stderr, "\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *type = "acct_gather_energy/modbus", *path = NULL;
	char err[2048] = "";

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
	checker->init();
	if (conf_read_pairs_file(path, _line, NULL, err, sizeof(err)) ||
	    checker->check(path, err, sizeof(err))) {
		printf("FAIL %s: %s\n", type, err);
		return 1;
	}
	printf("ok   %s: %s\n", type, path);
	return 0;
}
