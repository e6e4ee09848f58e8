/*
 * se-bench-exporter - slurm-energy-exporter's scrape: latency and CPU per
 * scrape at 1, 16 and 128 running steps (issue #43: "< 50 ms for 64 jobs").
 *
 * A child process plays slurmd: the real sampler (a meter of constant
 * power read every second), the real attribution tables with N registered
 * steps (in N/2 jobs: each an extern step and step 0), and the real energy
 * query server with a snapshot hook that lists them as slurmd's glue does
 * (attrib_running_steps under a lock).  This process is the exporter: the
 * real listener (libmicrohttpd on loopback), the label cache (a lookup
 * that answers at once: the real one is one slurmctld RPC per new job,
 * paid once, not per scrape), the real query client and rendering.  The
 * main thread scrapes GET /metrics over HTTP/1.0, one after another.
 *
 * Printed per N: scrapes, latency p50/p99/max (the HTTP round trip), the
 * exporter's CPU per scrape (this process less the scraping thread:
 * getrusage), slurmd's CPU per scrape (the child's threads' schedstat,
 * its sampler's one read a second included), the exposition's size.
 *
 * With "node" (EnergyAttribution=node, Slurm's default) the child has no
 * split: its server lists the steps that asked it (energy_query_steps.h),
 * each step registered by one question as a step's first poll sends, and
 * each scrape computes every step's E(newest sample) - E(t0).
 *
 *   se-bench-exporter [SCRAPES [share|node]]  (default 2000 per row, share)
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attrib.h"
#include "cg_cpu.h"
#include "energy_query.h"
#include "exp_http.h"
#include "exporter.h"
#include "sampler.h"
#include "se_time.h"

/* ------------------------------------------------------------ slurmd */

static attrib_t *split;
static pthread_mutex_t split_lock = PTHREAD_MUTEX_INITIALIZER;
static attrib_step_row_t rows[ENERGY_SNAPSHOT_STEPS_MAX];
static bool node_mode;	/* "node": no split, the server lists the steps */

static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len)
{
	(void) dev;
	(void) deadline_ns;
	(void) msg;
	(void) msg_len;
	out->has_power = true;
	out->power_mw = 400000;
	return 0;
}

static const meter_ops_t ops = { .name = "bench", .read = _read };

/* As se_share_snapshot: the steps and their shares, under the split's
 * lock; and a total, as _node_snapshot. */
static int _snapshot(void *arg, energy_snapshot_t *out)
{
	size_t n;

	(void) arg;
	pthread_mutex_lock(&split_lock);
	n = attrib_running_steps(split, rows, ENERGY_SNAPSHOT_STEPS_MAX,
				 2 * SE_NS_PER_SEC);
	for (size_t i = 0; i < n && i < ENERGY_SNAPSHOT_STEPS_MAX; i++)
		out->steps[i] = (energy_snapshot_step_t) {
			.job_id = rows[i].job_id, .step_id = rows[i].step_id,
			.energy_mj = rows[i].share_mj };
	pthread_mutex_unlock(&split_lock);
	out->n_steps = n;
	out->flags |= ENERGY_SNAPSHOT_TOTAL | ENERGY_SNAPSHOT_SHARE;
	out->total_id = 1;
	out->total_mj = out->power_mw * 3600;
	return 0;
}

/* Node mode's total hook, as _node_total. */
static int _total(void *arg, uint64_t *total_mj, uint64_t *power_mw,
		  uint64_t *sample_ns)
{
	sampler_status_t st;

	sampler_status(arg, &st);
	*total_mj = st.energy_mj;
	*power_mw = st.power_mw;
	*sample_ns = st.last_sample_ns;
	return st.last_sample_ns ? 0 : -ENODATA;
}

/* The child: serve path until killed. */
static void _slurmd(const char *path, unsigned steps)
{
	sampler_config_t cfg;
	attrib_params_t p = { .node_cpus = 128 };
	energy_query_hooks_t hooks = { .snapshot = _snapshot };
	char err[256];
	sampler_t *s;

	split = attrib_new(&p);
	for (unsigned i = 0; i < steps; i++)
		attrib_step_begin(split, 1000 + i / 2,
				  i % 2 ? 0 : CG_STEP_EXTERN, 1, 2);
	sampler_config_init(&cfg, SE_NS_PER_SEC, 200 * SE_NS_PER_MS);
	if (!(s = sampler_start(&ops, NULL, &cfg))) {
		fprintf(stderr, "se-bench-exporter: slurmd side: sampler\n");
		_exit(1);
	}
	if (node_mode)
		hooks = (energy_query_hooks_t) { .total = _total, .arg = s,
						 .total_id = 1 };
	if (!energy_query_server_start(path, s, cfg.period_ns,
				       cfg.deadline_ns, &hooks, err,
				       sizeof(err))) {
		fprintf(stderr, "se-bench-exporter: slurmd side: %s\n", err);
		_exit(1);
	}
	for (;;)
		pause();
}

/* ------------------------------------------------------------ exporter */

static int _query(void *arg, energy_snapshot_t *out)
{
	return energy_query_snapshot(arg, 100 * SE_NS_PER_MS, out);
}

static int _lookup(void *arg, uint32_t job_id, char **user, char **account,
		   char **partition)
{
	(void) arg;
	if (asprintf(user, "user%u", job_id % 50) < 0)
		return -ENOMEM;
	*account = strdup("physics");
	*partition = strdup("cpu");
	return 0;
}

/* Node mode: each step asks once, as its first poll does (its start, the
 * step named); their E(t0) final after the sampler's next reading. */
static int _register_steps(const char *path, unsigned steps)
{
	uint64_t t0 = se_mono_ns();

	for (unsigned i = 0; i < steps; i++) {
		energy_query_step_t q = { .job_id = 1000 + i / 2,
					  .step_id = i % 2 ? 0 : CG_STEP_EXTERN,
					  .begin = true };
		energy_query_answer_t a;
		int rc = energy_query_step(path, t0, t0, &q,
					   100 * SE_NS_PER_MS, &a);

		if (rc) {
			fprintf(stderr, "se-bench-exporter: step question: %s\n",
				strerror(-rc));
			return -1;
		}
	}
	se_sleep_ns(1200 * SE_NS_PER_MS);
	return 0;
}

/* One GET /metrics: the body's size, or -1. */
static ssize_t _get(unsigned port, char *buf, size_t cap)
{
	static const char req[] = "GET /metrics HTTP/1.0\r\n\r\n";
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	size_t len = 0;
	ssize_t n;
	char *body;

	if (fd < 0 || connect(fd, (struct sockaddr *) &sa, sizeof(sa)) ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t) sizeof(req) - 1) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (len < cap - 1 && (n = read(fd, buf + len, cap - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	if (strncmp(buf, "HTTP/1.", 7) || !strstr(buf, " 200 ") ||
	    !(body = strstr(buf, "\r\n\r\n")))
		return -1;
	return (ssize_t) (len - (body + 4 - buf));
}

static uint64_t _cpu_ns(int who)
{
	struct rusage ru;

	getrusage(who, &ru);
	return (uint64_t) (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
	       SE_NS_PER_SEC +
	       (uint64_t) (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000;
}

/* A process's CPU time: the sum of its threads' schedstat (ns; the
 * clock ticks of /proc/PID/stat are too coarse for microseconds). */
static uint64_t _proc_cpu_ns(pid_t pid)
{
	char path[64];
	uint64_t sum = 0;
	struct dirent *e;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int) pid);
	if (!(d = opendir(path)))
		return 0;
	while ((e = readdir(d))) {
		char p2[384];
		unsigned long long ns;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p2, sizeof(p2), "%s/%s/schedstat", path, e->d_name);
		if ((f = fopen(p2, "r"))) {
			if (fscanf(f, "%llu", &ns) == 1)
				sum += ns;
			fclose(f);
		}
	}
	closedir(d);
	return sum;
}

static int _cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

	return x < y ? -1 : x > y;
}

static int _row(unsigned steps, unsigned scrapes)
{
	char dir[] = "/tmp/se-bench-exporter.XXXXXX", path[160], err[256];
	char *argv[] = { "se-bench-exporter", "--node=bench",
			 "--no-slurm-labels", NULL };
	static char buf[4 << 20];
	uint64_t *lat = calloc(scrapes, sizeof(*lat));
	uint64_t cpu0, thr0, child0, cpu1, thr1, child1;
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	exp_conf_t conf;
	exp_jobs_t *jobs;
	exp_http_t *h;
	ssize_t bytes = 0;
	pid_t pid;
	int fd;

	if (!lat || !mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/slurm-energy-bench.sock", dir);
	if ((pid = fork()) == 0)
		_slurmd(path, steps);
	/* wait for the socket (the sampler's first read comes first) */
	for (int i = 0; i < 500 && access(path, F_OK); i++)
		se_sleep_ns(10 * SE_NS_PER_MS);
	se_sleep_ns(200 * SE_NS_PER_MS);
	if (node_mode && _register_steps(path, steps))
		return -1;
	if (exp_conf_parse(&conf, 3, argv, err, sizeof(err)) ||
	    exp_listen("127.0.0.1", 0, &fd, err, sizeof(err)) ||
	    getsockname(fd, (struct sockaddr *) &sa, &sl)) {
		fprintf(stderr, "se-bench-exporter: %s\n", err);
		return -1;
	}
	jobs = exp_jobs_new(_lookup, NULL, SE_NS_PER_SEC, SE_NS_PER_SEC);
	h = exp_http_new(&conf, _query, path, jobs);
	if (!h || exp_http_start(h, fd, err, sizeof(err))) {
		fprintf(stderr, "se-bench-exporter: %s\n", err);
		return -1;
	}
	/* warm: the labels looked up once, as on a node after the first scrape */
	for (int i = 0; i < 20; i++)
		bytes = _get(ntohs(sa.sin_port), buf, sizeof(buf));
	cpu0 = _cpu_ns(RUSAGE_SELF);
	thr0 = _cpu_ns(RUSAGE_THREAD);
	child0 = _proc_cpu_ns(pid);
	for (unsigned i = 0; i < scrapes; i++) {
		uint64_t t0 = se_mono_ns();

		bytes = _get(ntohs(sa.sin_port), buf, sizeof(buf));
		lat[i] = se_mono_ns() - t0;
		if (bytes < 0) {
			fprintf(stderr, "se-bench-exporter: scrape %u failed\n", i);
			return -1;
		}
	}
	cpu1 = _cpu_ns(RUSAGE_SELF);
	thr1 = _cpu_ns(RUSAGE_THREAD);
	child1 = _proc_cpu_ns(pid);
	if (!strstr(buf, "slurm_energy_exporter_slurmd_up{node=\"bench\"} 1") ||
	    (steps && !strstr(buf, "slurm_energy_job_energy_joules_total{"))) {
		fprintf(stderr, "se-bench-exporter: unexpected exposition:\n%s\n",
			buf);
		return -1;
	}
	qsort(lat, scrapes, sizeof(*lat), _cmp);
	printf("| %5u | %7u | %8.3f | %8.3f | %8.3f | %12.1f | %10.1f | %5zd |\n",
	       steps, scrapes, lat[scrapes / 2] / 1e6,
	       lat[(size_t) (scrapes * 0.99)] / 1e6, lat[scrapes - 1] / 1e6,
	       ((cpu1 - cpu0) - (thr1 - thr0)) / 1e3 / scrapes,
	       (child1 - child0) / 1e3 / scrapes, bytes);
	fflush(stdout);
	exp_http_free(h);
	exp_jobs_free(jobs);
	exp_conf_free(&conf);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	unlink(path);
	rmdir(dir);
	free(lat);
	return 0;
}

int main(int argc, char **argv)
{
	static const unsigned steps[] = { 1, 16, 128 };
	unsigned scrapes = argc > 1 ? (unsigned) atoi(argv[1]) : 2000;
	const char *mode = argc > 2 ? argv[2] : "share";

	node_mode = !strcmp(mode, "node");
	if (scrapes < 10 || (!node_mode && strcmp(mode, "share"))) {
		fprintf(stderr, "usage: se-bench-exporter [SCRAPES >= 10 [share|node]]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	printf("slurm-energy-exporter: GET /metrics over loopback HTTP, one at a time, %s mode (CPU: us per scrape)\n",
	       mode);
	printf("| steps | scrapes | p50 (ms) | p99 (ms) | max (ms) | exporter CPU | slurmd CPU | bytes |\n");
	printf("|------:|--------:|---------:|---------:|---------:|------------:|-----------:|------:|\n");
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (_row(steps[i], scrapes))
			return 1;
	return 0;
}
