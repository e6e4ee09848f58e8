/*
 * rf_poll_probe.c - the Redfish core of slurm-energy-pdu-poller
 * (src/meters/redfish/rf_poller.c) against live services, for
 * tests/integration/test_redfish_meter.py: rounds a period apart, and
 * after each every node's answer fed to an energy accumulator of its own
 * as the node's slurmd would (through the poller's wire fields), printed
 * one line a node.  Built by make check (not a test of its own: it needs
 * peers).
 *
 *   rf_poll_probe --node NAME --base URL [--source URI[,URI...]] ...
 *                 [--user U --password-file F] [--ca FILE]
 *                 [--rounds N] [--period-ms P] [--no-tick-sync]
 * Each --node starts a node; the --base and --source after it are its.
 * Prints:
 *   read <round> <node> <status> <has_power> <power_mw> <has_counter>
 *        <counter_raw> <mj_per_unit> <energy_mj> <t_unix_s> <registers>
 *        | <error>
 *   round <round> requests <n> ms <ms> cpu-us <us>  (before its reads;
 *         cpu-us: the thread's CPU for the round: HTTP, JSON, the watch,
 *         every node's reading)
 *   stats services <n> documents <n> rounds <n> requests <n>
 *         unwatched <n> round-ms <mean>
 * Exit status 0 after the rounds, 2 on bad arguments.
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
#include "rf_poller.h"
#include "se_time.h"

#define MAX_NODES	16

static void _usage(void)
{
	fprintf(stderr, "usage: rf_poll_probe --node NAME --base URL [--source URIS] ... [--user U --password-file F] [--ca FILE] [--rounds N] [--period-ms P] [--no-tick-sync]\n");
	exit(2);
}

/* Node i's answer at the end of a round, as slurmd's meter takes it. */
static void _answer(rf_poller_t *p, long round, const char *node,
		    energy_acc_t *acc)
{
	pdu_poll_reading_t r = { 0 };
	uint64_t now = se_mono_ns(), t, e_mj = 0;
	double t_unix = probe_unix_now();
	counter_spec_t spec;

	rf_poller_answer(p, node, now, &r);
	t = now - r.age_ns;
	if (!r.status && (r.flags & PDU_POLL_COUNTER)) {
		spec = (counter_spec_t) { .width_bits = r.width_bits,
					  .mj_per_unit = r.mj_per_unit,
					  .registers = r.registers };
		energy_acc_add_counter(acc, t, r.counter_raw, &spec,
				       (r.flags & PDU_POLL_POWER) ?
				       (int64_t) r.power_mw : -1);
	} else if (!r.status && (r.flags & PDU_POLL_POWER)) {
		energy_acc_add_power(acc, t, r.power_mw);
	}
	energy_acc_energy_at(acc, t, &e_mj);
	printf("read %ld %s %d %d %llu %d %llu %.9g %llu %.6f %u | %s\n",
	       round, node, r.status, !!(r.flags & PDU_POLL_POWER),
	       (unsigned long long) r.power_mw,
	       !!(r.flags & PDU_POLL_COUNTER),
	       (unsigned long long) r.counter_raw, r.mj_per_unit,
	       (unsigned long long) e_mj, t_unix - r.age_ns / 1e9,
	       r.registers, r.error);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "node", 1, NULL, 'n' }, { "base", 1, NULL, 'b' },
		{ "source", 1, NULL, 's' }, { "user", 1, NULL, 'u' },
		{ "password-file", 1, NULL, 'p' }, { "ca", 1, NULL, 'c' },
		{ "rounds", 1, NULL, 'r' }, { "period-ms", 1, NULL, 'P' },
		{ "no-tick-sync", 0, NULL, 'N' }, { NULL, 0, NULL, 0 },
	};
	rf_poller_node_t nodes[MAX_NODES];
	energy_acc_t *accs[MAX_NODES];
	energy_acc_config_t ac = { .history = 4096,
				   .max_power_mw = 100000000 };
	rf_poller_config_t pc = { .nodes = nodes, .tick_watch = true };
	const char *user = NULL, *password = NULL, *ca = NULL;
	long rounds = 5, period_ms = 1000;
	double round_ms = 0;
	size_t n = 0;
	rf_poller_stats_t st;
	rf_poller_t *p;
	char err[512];
	int o;

	memset(nodes, 0, sizeof(nodes));
	while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		rf_poller_node_t *cur = n ? &nodes[n - 1] : NULL;

		switch (o) {
		case 'n':
			if (n == MAX_NODES)
				_usage();
			nodes[n++].name = optarg;
			break;
		case 'b': if (!cur) _usage(); cur->meter.base = optarg; break;
		case 's':
			if (!cur)
				_usage();
			cur->meter.pick = RF_PICK_URI;
			cur->meter.source_uri = optarg;
			break;
		case 'u': user = optarg; break;
		case 'p': password = probe_password(optarg); break;
		case 'c': ca = optarg; break;
		case 'r': rounds = atol(optarg); break;
		case 'P': period_ms = atol(optarg); break;
		case 'N': pc.tick_watch = false; break;
		default: _usage();
		}
	}
	if (!n)
		_usage();
	for (size_t i = 0; i < n; i++) {
		if (!nodes[i].meter.base)
			_usage();
		nodes[i].meter.user = user;
		nodes[i].meter.password = password;
		nodes[i].meter.ca_file = ca;
		nodes[i].meter.tls_verify = true;
		nodes[i].meter.timeout_ns = 4000 * SE_NS_PER_MS;
		nodes[i].meter.max_power_mw = 100000000;
		if (!(accs[i] = energy_acc_create(&ac)))
			return 2;
	}
	pc.n_nodes = n;
	pc.period_ns = period_ms * SE_NS_PER_MS;
	if (rf_http_global_init() || rf_poller_create(&pc, &p, err,
						      sizeof(err))) {
		fprintf(stderr, "rf_poller_create: %s\n", err);
		return 2;
	}
	for (long r = 0; r < rounds; r++) {
		uint64_t t0 = se_mono_ns(), cpu0;
		unsigned long req0;

		rf_poller_stats(p, &st);
		req0 = st.requests;
		cpu0 = probe_thread_cpu_ns();
		rf_poller_round(p);
		round_ms += (se_mono_ns() - t0) / 1e6;
		rf_poller_stats(p, &st);
		printf("round %ld requests %lu ms %.3f cpu-us %.1f\n", r,
		       st.requests - req0, (se_mono_ns() - t0) / 1e6,
		       (probe_thread_cpu_ns() - cpu0) / 1e3);
		for (size_t i = 0; i < n; i++)
			_answer(p, r, nodes[i].name, accs[i]);
		fflush(stdout);
		if (r + 1 < rounds)
			usleep(period_ms * 1000);
	}
	rf_poller_stats(p, &st);
	printf("stats services %zu documents %zu rounds %lu requests %lu "
	       "unwatched %lu round-ms %.3f\n", st.services, st.gets_a_round,
	       st.rounds, st.requests, st.unwatched,
	       rounds ? round_ms / rounds : 0.0);
	rf_poller_destroy(p);
	for (size_t i = 0; i < n; i++)
		energy_acc_destroy(accs[i]);
	return 0;
}
