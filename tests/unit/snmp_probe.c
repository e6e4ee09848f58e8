/*
 * snmp_probe.c - the SNMP meter of one node against a live agent, for
 * tests/integration and the bench: reads the map and secrets as the plugin
 * does, then prints one line per read:
 *   read RC power_mw P counter C|- ms LATENCY [msg]
 * Usage: snmp_probe MAP SECRETS NODE READS [TIMEOUT_MS]
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "snmp_conf.h"
#include "snmp_meter.h"
#include "se_time.h"

/* exact names and comma lists only (no Slurm here) */
static int _contains(void *arg, const char *expr, const char *node)
{
	char buf[1024], *save = NULL, *tok;

	(void) arg;
	snprintf(buf, sizeof(buf), "%s", expr);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (!strcmp(tok, node))
			return 1;
	return 0;
}

static long _count(void *arg, const char *const *exprs, size_t n)
{
	long k = 0;

	(void) arg;
	for (size_t i = 0; i < n; i++) {
		k++;
		for (const char *p = exprs[i]; *p; p++)
			k += *p == ',';
	}
	return k;
}

int main(int argc, char **argv)
{
	snmp_hostlist_ops_t hl = { _contains, _count, NULL };
	snmp_meter_config_t mc;
	snmp_conf_t c;
	snmp_target_t t;
	snmp_meter_t *m;
	char err[1024] = "", desc[1024];
	int reads, rc;

	if (argc < 5) {
		fprintf(stderr, "usage: %s MAP SECRETS NODE READS [TIMEOUT_MS]\n",
			argv[0]);
		return 2;
	}
	snmp_conf_init(&c);
	c.map_path = strdup(argv[1]);
	c.secrets_path = strdup(argv[2]);
	if (argc > 5)
		c.timeout_ns = strtoull(argv[5], NULL, 10) * SE_NS_PER_MS;
	reads = atoi(argv[4]);
	if ((rc = snmp_conf_read_files(&c, err, sizeof(err))) ||
	    (rc = snmp_conf_resolve(&c, argv[3], &hl, &t, err, sizeof(err)))) {
		fprintf(stderr, "config: %s\n", err);
		return 1;
	}
	mc = (snmp_meter_config_t) { .node = argv[3], .pdus = t.pdus,
		.n_pdus = t.n_pdus, .outlets = t.outlets,
		.n_outlets = t.n_outlets, .timeout_ns = c.timeout_ns };
	if ((rc = snmp_meter_create(&mc, &m, err, sizeof(err)))) {
		fprintf(stderr, "meter: %s\n", err);
		return 1;
	}
	snmp_meter_describe(m, desc, sizeof(desc));
	printf("meter %s\n", desc);
	for (int i = 0; i < reads; i++) {
		meter_reading_t r;
		uint64_t t0 = se_mono_ns();
		char msg[1024] = "";

		memset(&r, 0, sizeof(r));
		rc = snmp_meter_ops.open(m, t0 + c.timeout_ns);
		if (!rc)
			rc = snmp_meter_ops.read(m, &r, t0 + c.timeout_ns,
						 msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "open failed");
		if (rc && rc != -11)
			snmp_meter_ops.close(m);
		printf("read %d power_mw %llu counter %s%llu ms %.3f %s\n", rc,
		       (unsigned long long) r.power_mw,
		       r.has_counter ? "" : "-",
		       (unsigned long long) r.counter_raw,
		       (se_mono_ns() - t0) / 1e6, msg);
		fflush(stdout);
	}
	snmp_meter_destroy(m);
	snmp_conf_free(&c);
	return 0;
}
