/*
 * slurm-energy-exporter - serve slurmd's node and job energy as
 * OpenMetrics, from slurmd's energy query socket (slurm-energy-exporter(8);
 * the parts in exporter.h).
 *
 * Start: the command line, the web configuration and its TLS files, the
 * listener rule, the socket bound: each failure is one line naming what
 * is wrong, and exit status 2 (1: a runtime failure).  Then the listener
 * runs in libmicrohttpd's thread, and this one waits for SIGTERM/SIGINT.
 * slurmd may come and go meanwhile: every scrape asks it afresh (a new
 * connection each time), so there is nothing to reconnect.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"

#include "energy_query.h"
#include "exp_http.h"
#include "exporter.h"
#include "se_time.h"

/* A job whose lookup failed is asked again after this long.  Lookups run
 * in their own thread (exp_jobs_start): the budget is the inline mode's
 * only. */
#define LOOKUP_RETRY_NS		(30 * SE_NS_PER_SEC)
#define LOOKUP_BUDGET_NS	(20 * SE_NS_PER_MS)

typedef struct {
	const char *path;
	uint64_t timeout_ns;
	int last_rc;		/* for one log line per change */
} query_ctx_t;

static int _snapshot(void *arg, energy_snapshot_t *out)
{
	query_ctx_t *q = arg;
	int rc = energy_query_snapshot(q->path, q->timeout_ns, out);

	if (rc != q->last_rc) {
		if (rc)
			fprintf(stderr, "slurm-energy-exporter: slurmd's energy query socket %s: %s; scrapes say slurmd_up 0 until it answers\n",
				q->path, rc == -EPROTONOSUPPORT ?
				"slurmd's energy plugin predates the snapshot query (upgrade slurm-energy-plugins on this node)" :
				strerror(-rc));
		else
			fprintf(stderr, "slurm-energy-exporter: slurmd answers on %s\n",
				q->path);
		q->last_rc = rc;
	}
	return rc;
}

static int _fail(const char *what)
{
	fprintf(stderr, "slurm-energy-exporter: %s\n", what);
	return 2;
}

/* Configuration, TLS files, the listener rule: 0 or exit status 2. */
static int _configure(exp_conf_t *c, int argc, char **argv, char *path,
		      size_t path_len)
{
	char err[1024];
	int rc, loop;

	rc = exp_conf_parse(c, argc, argv, err, sizeof(err));
	if (rc > 0)
		exit(0);
	if (rc)
		return _fail(err);
	if (c->web_config_file &&
	    exp_webconf_load(c->web_config_file, &c->web, err, sizeof(err)))
		return _fail(err);
	if (exp_tls_check(&c->web, err, sizeof(err)))
		return _fail(err);
	loop = exp_host_is_loopback(c->listen_host);
	if (loop < 0) {
		snprintf(err, sizeof(err), "--web.listen-address=%s:%u: cannot resolve %s",
			 c->listen_host, c->listen_port, c->listen_host);
		return _fail(err);
	}
	if (exp_conf_check_listener(c, loop, err, sizeof(err)))
		return _fail(err);
	if (c->socket_path)
		snprintf(path, path_len, "%s", c->socket_path);
	else if ((rc = energy_query_socket_path(c->spool_dir, c->node, path,
						path_len))) {
		snprintf(err, sizeof(err), "the energy query socket's path from --spool-dir=%s and --node=%s: %s",
			 c->spool_dir, c->node, strerror(-rc));
		return _fail(err);
	}
	return 0;
}

static void _wait_for_signal(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
		;	/* nothing to reload: the configuration is read at start */
}

int main(int argc, char **argv)
{
	exp_conf_t conf;
	char path[PATH_MAX], err[1024];
	query_ctx_t q = { .path = path, .last_rc = 1 };
	exp_jobs_t *jobs = NULL;
	exp_http_t *h;
	sigset_t set;
	int fd, rc;

	if ((rc = _configure(&conf, argc, argv, path, sizeof(path))))
		return rc;
	q.timeout_ns = conf.query_timeout_ns;
	if (conf.check_only) {
		printf("slurm-energy-exporter: configuration good: listen %s:%u%s%s, socket %s\n",
		       conf.listen_host, conf.listen_port,
		       conf.web.cert_file ? ", TLS" : "",
		       conf.web.n_users ? ", basic auth" : "", path);
		exp_conf_free(&conf);
		return 0;
	}
	/* signals for sigwait only: blocked before any thread starts */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	if ((rc = exp_listen(conf.listen_host, conf.listen_port, &fd, err,
			     sizeof(err))))
		return _fail(err);
	if (conf.slurm_labels) {
		slurm_init(NULL);
		jobs = exp_jobs_new(exp_slurm_lookup, NULL, LOOKUP_RETRY_NS,
				    LOOKUP_BUDGET_NS);
		if (jobs && exp_jobs_start(jobs))
			return _fail("cannot start the job lookup thread");
	}
	h = exp_http_new(&conf, _snapshot, &q, jobs);
	if (!h || (conf.slurm_labels && !jobs))
		return _fail("out of memory");
	if (exp_http_start(h, fd, err, sizeof(err)))
		return _fail(err);
	fprintf(stderr, "slurm-energy-exporter: serving node %s on %s%s:%u/metrics from %s\n",
		conf.node, conf.web.cert_file ? "https://" : "http://",
		conf.listen_host, conf.listen_port, path);
	_wait_for_signal();
	exp_http_free(h);
	exp_jobs_free(jobs);
	if (conf.slurm_labels)
		slurm_fini();
	exp_conf_free(&conf);
	return 0;
}
