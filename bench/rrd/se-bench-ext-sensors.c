/*
 * se-bench-ext-sensors - controller time per ext_sensors round, measured the
 * way slurmctld calls the plugin.
 *
 *   se-bench-ext-sensors SLURM_CONF ROUNDS
 *
 * Reads SLURM_CONF (and ext_sensors.conf next to it) with libslurmfull,
 * builds the node table from its NodeName lines as slurmctld does
 * (build_all_nodeline_info), gives every node its ext_sensors record, loads
 * the ExtSensorsType plugin from PluginDir through ext_sensors_init() (the
 * same plugin_context_create() path as slurmctld, fallback included), then
 * calls ext_sensors_g_update_component_data() ROUNDS times, one round every
 * ExtSensorsFreq seconds, as _slurmctld_background() does under the node
 * write lock.  For each round it prints
 *
 *   call_ms   wall time inside the call: the time slurmctld holds its node
 *             write lock (no RPC that needs it is served meanwhile);
 *   cpu_ms    CPU time of the whole process (every thread, so reader
 *             threads count too) since the previous round;
 *   valid     nodes whose ExtSensorsJoules and ExtSensorsWatts are set.
 *
 * Round 1 is a warm-up for both plugins (upstream's first round only stamps
 * each node; ours gives its pacer the node set, whose reads the next calls
 * adopt), so the summary skips it.  Ours reads on its own clock (the pacer,
 * every ExtSensorsFreq): the call only adopts finished reads and copies
 * values, which is what call_ms measures.  This process has no
 * lock_slurmctld(), so the pacer's own publishing into the node records is
 * off here and only the calls publish.
 */
#include "config.h"		/* Slurm's, first */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/read_config.h"
#include "slurm_compat_ext_sensors.h"

#define NS_PER_MS	1000000.0

static double _now_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / NS_PER_MS;
}

static double _cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

static int _cmp_double(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return (x > y) - (x < y);
}

static int _valid_nodes(void)
{
	node_record_t *node_ptr;
	int n = 0;

	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		ext_sensors_data_t *ext = node_ptr->ext_sensors;

		if (ext && ext->consumed_energy != NO_VAL64 &&
		    ext->current_watts != NO_VAL)
			n++;
	}
	return n;
}

/* Sleep until wall-clock instant t_ms (CLOCK_MONOTONIC). */
static void _sleep_until(double t_ms)
{
	struct timespec ts = {
		.tv_sec = (time_t) (t_ms / 1e3),
		.tv_nsec = (long) ((t_ms - (time_t) (t_ms / 1e3) * 1e3) *
				   NS_PER_MS),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

int main(int argc, char **argv)
{
	log_options_t lopts = LOG_OPTS_STDERR_ONLY;
	double *call_ms, t_next, cpu_prev, cpu_sum = 0, call_sum = 0;
	int rounds, freq, n = 0;
	node_record_t *node_ptr;

	if (argc != 3 || (rounds = atoi(argv[2])) < 2) {
		fprintf(stderr, "usage: %s SLURM_CONF ROUNDS (>= 2)\n",
			argv[0]);
		return 2;
	}
	lopts.stderr_level = LOG_LEVEL_VERBOSE;
	log_init(argv[0], lopts, 0, NULL);
	/* ext_sensors.conf is looked up next to $SLURM_CONF */
	setenv("SLURM_CONF", argv[1], 1);
	if (slurm_conf_init(argv[1]) != SLURM_SUCCESS) {
		fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[1]);
		return 1;
	}
	init_node_conf();
	build_all_nodeline_info(false, 0);
	for (int i = 0; (node_ptr = next_node(&i)); i++) {
		if (!node_ptr->ext_sensors)	/* create_node_record() did */
			node_ptr->ext_sensors = ext_sensors_alloc();
		n++;
	}
	freq = slurm_conf.ext_sensors_freq ? slurm_conf.ext_sensors_freq : 10;
	if (ext_sensors_init() != SLURM_SUCCESS) {
		fprintf(stderr, "%s: cannot load %s\n", argv[0],
			slurm_conf.ext_sensors_type);
		return 1;
	}
	printf("# %s: %d nodes, ExtSensorsType=%s, ExtSensorsFreq=%d\n",
	       argv[0], n, slurm_conf.ext_sensors_type, freq);
	printf("# round  call_ms    cpu_ms  valid\n");
	fflush(stdout);

	call_ms = calloc((size_t) rounds, sizeof(double));
	t_next = _now_ms(CLOCK_MONOTONIC);
	cpu_prev = _cpu_ms();
	for (int r = 0; r < rounds; r++) {
		double t0, cpu;

		_sleep_until(t_next);
		t0 = _now_ms(CLOCK_MONOTONIC);
		ext_sensors_g_update_component_data();
		call_ms[r] = _now_ms(CLOCK_MONOTONIC) - t0;
		cpu = _cpu_ms();
		printf("%7d %8.2f %9.2f %6d\n", r + 1, call_ms[r],
		       cpu - cpu_prev, _valid_nodes());
		fflush(stdout);
		if (r) {
			cpu_sum += cpu - cpu_prev;
			call_sum += call_ms[r];
		}
		cpu_prev = cpu;
		t_next += freq * 1e3;
	}
	qsort(call_ms + 1, (size_t) rounds - 1, sizeof(double), _cmp_double);
	printf("SUMMARY plugin=%s nodes=%d rounds=%d call_ms_median=%.2f "
	       "call_ms_max=%.2f call_ms_mean=%.2f cpu_ms_per_round=%.1f "
	       "valid=%d\n", slurm_conf.ext_sensors_type, n, rounds - 1,
	       call_ms[1 + (rounds - 2) / 2], call_ms[rounds - 1],
	       call_sum / (rounds - 1), cpu_sum / (rounds - 1),
	       _valid_nodes());
	free(call_ms);
	ext_sensors_fini();
	return 0;
}
