/*
 * snmp_probe.c - the SNMP meter of one node against a live agent, for
 * tests/integration/test_snmp_meter.py and the bench: reads the map and
 * secrets as the plugin does, opens, then reads a period apart and feeds
 * an energy accumulator as the sampler does (counter with power, or power
 * alone).  One line per read:
 *   read RC POWER_MW COUNT|- ENERGY_MJ WALL_S MS REQUESTS | MSG
 * (COUNT "-": the reading carried no counter; ENERGY_MJ: the accumulator's
 * total at the reading; WALL_S: its wall-clock instant; MS: the read's
 * duration; REQUESTS: GETs sent so far).
 * Usage: snmp_probe MAP SECRETS NODE READS TIMEOUT_MS PERIOD_MS
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "energy_acc.h"
#include "snmp_conf.h"
#include "snmp_meter.h"
#include "se_time.h"

/* exact names and comma lists only (no Slurm here) */
#include "comma_hostlist.h"

/* One read into the accumulator; prints its line. */
static void _read_once(snmp_meter_t *m, energy_acc_t *acc,
		       const counter_spec_t *spec, bool counter,
		       uint64_t timeout_ns)
{
	meter_reading_t r;
	uint64_t t0 = se_mono_ns(), e_mj = 0;
	char msg[1024] = "";
	int rc;

	memset(&r, 0, sizeof(r));
	rc = snmp_meter_ops.open(m, t0 + timeout_ns);
	if (!rc)
		rc = snmp_meter_ops.read(m, &r, t0 + timeout_ns, msg,
					 sizeof(msg));
	else
		snprintf(msg, sizeof(msg), "open failed");
	if (rc && rc != -EAGAIN)
		snmp_meter_ops.close(m);
	if (!rc) {
		if (counter && r.has_counter)
			energy_acc_add_counter(acc, r.t_ns, r.counter_raw,
					       spec, (int64_t) r.power_mw);
		else
			energy_acc_add_power(acc, r.t_ns, r.power_mw);
		energy_acc_energy_at(acc, r.t_ns, &e_mj);
	}
	printf("read %d %llu %s%llu %llu %.6f %.3f %lu | %s\n", rc,
	       (unsigned long long) r.power_mw, r.has_counter ? "" : "-",
	       (unsigned long long) r.counter_raw, (unsigned long long) e_mj,
	       rc ? se_wall_ns() / 1e9 : se_mono_to_wall_ns(r.t_ns) / 1e9,
	       (se_mono_ns() - t0) / 1e6, snmp_meter_requests(m), msg);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	snmp_hostlist_ops_t hl = { comma_hostlist_contains,
				   comma_hostlist_count, NULL };
	energy_acc_config_t ac = { .history = 4096 };
	snmp_meter_config_t mc;
	counter_spec_t spec;
	energy_acc_t *acc;
	snmp_conf_t c;
	static snmp_target_t t;
	snmp_meter_t *m;
	char err[1024] = "", desc[1024];
	uint64_t period_ns, next;
	bool counter;
	int reads, rc;

	if (argc < 7) {
		fprintf(stderr, "usage: %s MAP SECRETS NODE READS TIMEOUT_MS PERIOD_MS\n",
			argv[0]);
		return 2;
	}
	snmp_conf_init(&c);
	c.map_path = strdup(argv[1]);
	c.secrets_path = strdup(argv[2]);
	c.timeout_ns = strtoull(argv[5], NULL, 10) * SE_NS_PER_MS;
	period_ns = strtoull(argv[6], NULL, 10) * SE_NS_PER_MS;
	reads = atoi(argv[4]);
	if ((rc = snmp_conf_read_files(&c, err, sizeof(err))) ||
	    (rc = snmp_conf_resolve(&c, argv[3], &hl, &t, err, sizeof(err)))) {
		printf("config-error %s\n", err);
		return 1;
	}
	mc = (snmp_meter_config_t) { .node = argv[3], .pdus = t.pdus,
		.n_pdus = t.n_pdus, .outlets = t.outlets,
		.n_outlets = t.n_outlets, .timeout_ns = c.timeout_ns };
	if ((rc = snmp_meter_create(&mc, &m, err, sizeof(err)))) {
		printf("config-error %s\n", err);
		return 1;
	}
	counter = snmp_meter_counter_spec(m, &spec);
	ac.max_power_mw = (uint64_t) (snmp_meter_max_power_w(m) * 1000.0);
	ac.gap_ns = 3 * period_ns + c.timeout_ns;
	if (!(acc = energy_acc_create(&ac)))
		return 1;
	snmp_meter_describe(m, desc, sizeof(desc));
	printf("meter %s\n", desc);
	next = se_mono_ns();
	for (int i = 0; i < reads; i++) {
		uint64_t now = se_mono_ns();

		if (next > now)
			se_sleep_ns(next - now);
		next += period_ns;
		_read_once(m, acc, &spec, counter, c.timeout_ns);
	}
	energy_acc_destroy(acc);
	snmp_meter_destroy(m);
	snmp_conf_free(&c);
	return 0;
}
