/*
 * se-fake-node-power - slurmd's energy query socket for a node this
 * machine lacks (issue #45's daemon test): the real sampler
 * (src/common/sampler.c) and the real query server (energy_query_server.c)
 * over a meter whose power is the watts written in a file, so that
 * slurm-energy-powercap-agent asks it exactly as it asks slurmd (a
 * snapshot request, wire version 5) and averages slurmd's total the same
 * way.  The total is the sampler's energy since it began (as slurmd's
 * node total, one continuity id).
 *
 *   se-fake-node-power SOCKET WATTS_FILE [PERIOD_MS]
 *
 * Runs until SIGTERM; the file is read at every sample (a test changes a
 * node's demand by rewriting it).  A job runs on the node (a running step
 * 1.0 in the snapshot, the agent's JOB flag) unless the file's second word
 * is "idle" ("90 idle": a node whose jobs ended, drawing 90 W).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "energy_query.h"
#include "energy_snapshot.h"
#include "sampler.h"
#include "se_time.h"

static const char *watts_file;
static sampler_t *sampler;

static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len)
{
	FILE *f = fopen(watts_file, "r");
	double w;
	int n;

	(void) dev;
	(void) deadline_ns;
	if (!f) {
		snprintf(msg, msg_len, "%s: %s", watts_file, strerror(errno));
		return -EAGAIN;
	}
	n = fscanf(f, "%lf", &w);
	fclose(f);
	if (n != 1 || w < 0) {
		snprintf(msg, msg_len, "%s: not watts", watts_file);
		return -EAGAIN;
	}
	out->has_power = true;
	out->power_mw = (uint64_t)(w * 1000 + 0.5);
	return 0;
}

static const meter_ops_t ops = { .name = "fake-node-power", .read = _read };

/* The file's second word is "idle": no job runs on the node. */
static bool _idle(void)
{
	FILE *f = fopen(watts_file, "r");
	char word[16] = "";
	double w;
	int n;

	if (!f)
		return false;
	n = fscanf(f, "%lf %15s", &w, word);
	fclose(f);
	return n == 2 && !strcmp(word, "idle");
}

/* slurmd's total as se_energy_node.c's snapshot gives it: the energy
 * since the sampler began at the answer (sampler_status: the newest
 * sample carried on at its power), not at the newest sample, as Slurm's
 * energy RPC answers it (energy_snapshot.h). */
static int _snapshot(void *arg, energy_snapshot_t *out)
{
	sampler_status_t st;

	(void) arg;
	if (!_idle()) {		/* listed as slurmd lists a running step */
		out->flags |= ENERGY_SNAPSHOT_NODE_STEPS;
		out->n_steps = 1;
		out->steps[0] = (energy_snapshot_step_t){ .job_id = 1 };
	}
	if (!out->last_sample_ns)
		return 0;
	sampler_status(sampler, &st);
	out->flags |= ENERGY_SNAPSHOT_TOTAL;
	out->total_id = 1;
	out->total_mj = st.energy_mj;
	return 0;
}

int main(int argc, char **argv)
{
	energy_query_hooks_t hooks = { .snapshot = _snapshot };
	sampler_config_t cfg;
	uint64_t period_ms = argc > 3 ? strtoull(argv[3], NULL, 10) : 100;
	energy_query_server_t *srv = NULL;
	char err[256];
	sigset_t set;
	int sig;

	if (argc < 3 || !period_ms) {
		fprintf(stderr, "usage: se-fake-node-power SOCKET WATTS_FILE "
			"[PERIOD_MS]\n");
		return 2;
	}
	watts_file = argv[2];
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	sampler_config_init(&cfg, period_ms * SE_NS_PER_MS,
			    period_ms * SE_NS_PER_MS / 2);
	if (!(sampler = sampler_start(&ops, NULL, &cfg)) ||
	    !(srv = energy_query_server_start(argv[1], sampler, cfg.period_ns,
				       cfg.deadline_ns, &hooks, err,
				       sizeof(err)))) {
		fprintf(stderr, "se-fake-node-power: %s\n",
			sampler ? err : "sampler_start failed");
		return 1;
	}
	sigwait(&set, &sig);
	energy_query_server_stop(srv);
	sampler_stop(sampler);
	return 0;
}
