/*
 * rf_probe.c - the Redfish meter against a live service, for
 * tests/integration/test_redfish_meter.py: discovery (open), then a number
 * of reads a period apart, each fed to an energy accumulator as the
 * sampler would, printed one line each.  Built by make check (not a test
 * of its own: it needs a peer).
 *
 *   rf_probe --base URL [--user U --password-file F] [--ca FILE]
 *            [--insecure] [--basic] [--chassis C] [--source S]
 *            [--reads N] [--period-ms P] [--timeout-ms T] [--reconnect]
 * --reconnect closes the meter after each read (a new connection, TLS
 * handshake and session each time: what keep-alive saves).
 * --no-tick-sync: rf_meter_set_tick_sync(m, false) (the bench: HTTP alone).
 * --open-retries N tries a failed open again, a second apart, N times.
 * Prints:
 *   source <description>            or  open-error <rc> <message>
 *   read <i> <rc> <has_power> <power_mw> <has_counter> <counter_raw>
 *        <mj_per_unit> <energy_mj> <t_unix_s> <requests> <ms> <cpu_us>
 *        <registers> <rounds> | <message>
 *   (requests: HTTP requests the read made, over every service; ms: the
 *   read's wall time; cpu_us: the thread's CPU for the read, its
 *   accumulator sample and, with --reconnect, the close: bench/redfish;
 *   registers: the counters the reading sums, counter_spec_t.registers;
 *   rounds: rounds of GETs, several while the meter watches for the
 *   BMC's sensing tick; --no-tick-sync: one, stamped at its midpoint)
 *   requests <n> logins <n>
 * Exit status 0 after the reads, 1 when open failed, 2 on bad arguments.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "energy_acc.h"
#include "rf_probe_util.h"
#include "rf_meter.h"
#include "se_time.h"

static void _usage(void)
{
	fprintf(stderr, "usage: rf_probe --base URL [--user U --password-file F] [--ca FILE] [--insecure] [--basic] [--chassis C] [--source auto|energy|power|URI] [--reads N] [--period-ms P] [--timeout-ms T]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "base", 1, NULL, 'b' }, { "user", 1, NULL, 'u' },
		{ "password-file", 1, NULL, 'p' }, { "ca", 1, NULL, 'c' },
		{ "insecure", 0, NULL, 'k' }, { "basic", 0, NULL, 'B' },
		{ "chassis", 1, NULL, 'C' }, { "source", 1, NULL, 's' },
		{ "reads", 1, NULL, 'n' }, { "period-ms", 1, NULL, 'P' },
		{ "timeout-ms", 1, NULL, 'T' }, { "reconnect", 0, NULL, 'R' },
		{ "open-retries", 1, NULL, 'O' }, { "no-tick-sync", 0, NULL, 'N' },
		{ NULL, 0, NULL, 0 },
	};
	rf_meter_conf_t c = { .tls_verify = true, .pick = RF_PICK_AUTO,
			      .timeout_ns = 4000 * SE_NS_PER_MS,
			      .max_power_mw = 100000000 };
	energy_acc_config_t ac = { .history = 4096,
				   .max_power_mw = 100000000 };
	long reads = 3, period_ms = 1000, open_retries = 0;
	bool tick_sync = true;
	bool reconnect = false;
	double read_ms_sum = 0;
	energy_acc_t *acc;
	rf_meter_t *m;
	char msg[512], desc[512];
	int o, rc;
	long i;

	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (o) {
		case 'b': c.base = optarg; break;
		case 'u': c.user = optarg; break;
		case 'p': c.password = probe_password(optarg); break;
		case 'c': c.ca_file = optarg; break;
		case 'k': c.tls_verify = false; break;
		case 'B': c.auth = RF_AUTH_BASIC; break;
		case 'C': c.chassis = optarg; break;
		case 's':
			if (!strcmp(optarg, "energy"))
				c.pick = RF_PICK_ENERGY;
			else if (!strcmp(optarg, "power"))
				c.pick = RF_PICK_POWER;
			else if (strcmp(optarg, "auto")) {
				c.pick = RF_PICK_URI;
				c.source_uri = optarg;
			}
			break;
		case 'n': reads = atol(optarg); break;
		case 'P': period_ms = atol(optarg); break;
		case 'T': c.timeout_ns = atol(optarg) * SE_NS_PER_MS; break;
		case 'R': reconnect = true; break;
		case 'O': open_retries = atol(optarg); break;
		case 'N': tick_sync = false; break;
		default: _usage();
		}
	}
	if (!c.base)
		_usage();
	if (rf_http_global_init() || !(m = rf_meter_create(&c)) ||
	    !(acc = energy_acc_create(&ac)))
		return 2;
	rf_meter_set_tick_sync(m, tick_sync);
	rc = rf_meter_ops.open(m, se_mono_ns() + 2 * c.timeout_ns * 8);
	while (rc && open_retries-- > 0) {	/* as the sampler, sooner */
		rf_meter_ops.close(m);
		sleep(1);
		rc = rf_meter_ops.open(m, se_mono_ns() + 2 * c.timeout_ns * 8);
	}
	if (rc) {
		printf("open-error %d\n", rc);
		return 1;
	}
	printf("source %s\n", rf_meter_source(m));
	rf_meter_describe(m, desc, sizeof(desc));
	printf("meter %s\n", desc);
	for (i = 0; i < reads; i++) {
		meter_reading_t rd;
		uint64_t t0 = se_mono_ns(), e_mj = 0, cpu0 = probe_thread_cpu_ns();
		uint64_t end;
		unsigned long req0 = rf_meter_requests(m);
		unsigned long rounds0 = rf_meter_rounds(m);
		double ms;
		double t_unix;

		memset(&rd, 0, sizeof(rd));
		msg[0] = '\0';
		rc = rf_meter_ops.read(m, &rd, t0 + 2 * c.timeout_ns, msg,
				       sizeof(msg));
		ms = (se_mono_ns() - t0) / 1e6;
		read_ms_sum += ms;
		/* stamped as the sampler does: the meter's instant (a BMC's
		 * sensing tick), else the read's midpoint */
		t_unix = probe_unix_now();
		end = se_mono_ns();
		t0 = rd.t_ns ? rd.t_ns : t0 + (end - t0) / 2;
		t_unix -= (end - t0) / 1e9;
		if (!rc && rd.has_counter)
			energy_acc_add_counter(acc, t0, rd.counter_raw,
					       &rd.counter_spec,
					       rd.has_power ?
					       (int64_t) rd.power_mw : -1);
		else if (!rc && rd.has_power)
			energy_acc_add_power(acc, t0, rd.power_mw);
		energy_acc_energy_at(acc, t0, &e_mj);
		if (reconnect || (rc && rc != -EAGAIN)) { /* as the sampler */
			rf_meter_ops.close(m);
			rf_meter_ops.open(m, se_mono_ns() + 8 * c.timeout_ns);
		}
		printf("read %ld %d %d %llu %d %llu %.9g %llu %.6f %lu %.3f %.1f %u %lu | %s\n",
		       i, rc, rd.has_power, (unsigned long long) rd.power_mw,
		       rd.has_counter, (unsigned long long) rd.counter_raw,
		       rd.counter_spec.mj_per_unit,
		       (unsigned long long) e_mj, t_unix,
		       rf_meter_requests(m) - req0, ms,
		       (probe_thread_cpu_ns() - cpu0) / 1e3,
		       rd.counter_spec.registers,
		       rf_meter_rounds(m) - rounds0, msg);
		fflush(stdout);
		if (i + 1 < reads)
			usleep(period_ms * 1000);
	}
	printf("requests %lu logins %lu\n",
	       rf_meter_requests(m), rf_meter_logins(m));
	printf("read-ms %.3f\n", reads ? read_ms_sum / reads : 0);
	rf_meter_destroy(m);
	energy_acc_destroy(acc);
	return 0;
}
