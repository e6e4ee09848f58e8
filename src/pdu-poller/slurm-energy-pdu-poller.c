/*
 * slurm-energy-pdu-poller - one poller for the rack PDUs of
 * acct_gather_energy/snmp (issue #44; slurm-energy-pdu-poller(8)).
 *
 * It reads the SNMP keys of acct_gather.conf (EnergySNMPMap, its secrets,
 * EnergySNMPFrequency, EnergySNMPTimeout, EnergySNMPMaxPower,
 * EnergySNMPPoller: its own address), polls every PDU of the map once a
 * period with one GET for all the outlets the map lists on it
 * (snmp_poller.c, on its polling thread), and answers each node's ASK
 * with the node's latest reading and its age (pdu_poll_wire.h), each
 * message a MUNGE credential a line (se_munge.h).  The nodes' slurmd
 * then never talk to the PDUs: a rack of 40 nodes on two PDUs costs the
 * PDUs two GETs a period instead of 80.
 *
 * Threads: main (the listening socket and the nodes' connections, poll(2))
 * and the polling thread (the rounds; the PDUs' I/O).  SIGTERM/SIGINT stop
 * it, with a line of totals (rounds, GETs, failures, CPU a round).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4 */
#endif
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>

#include "conf.h"
#include "se_log.h"
#include "se_munge.h"
#include "se_prog.h"
#include "se_time.h"
#include "snmp_conf.h"
#include "pdu_poll_wire.h"
#include "snmp_poller.h"

#define PROG		"slurm-energy-pdu-poller"
#define MAX_CONNS	4096	/* nodes connected at once */

typedef struct {
	const char *conf_path, *listen, *munge_socket;
	bool verbose, check;
} opts_t;

typedef struct {
	int fd;
	se_lines_t lines;
} conn_t;

typedef struct {
	opts_t o;
	snmp_conf_t conf;
	snmp_poller_t *poller;
	void *munge;
	int lfd;
	conn_t *conns;		/* [0] unused: the listener's slot */
	struct pollfd *pfds;
	size_t n;		/* slots used, the listener's included */
	unsigned long asks;
	double poll_cpu_s;	/* the polling thread's, at its end */
} daemon_t;

/* ---------------------------------------------------- the map's nodes */

static int _hl_contains(void *arg, const char *expr, const char *node)
{
	struct hostlist *hl = slurm_hostlist_create(expr);
	int in;

	(void)arg;
	if (!hl)
		return -EINVAL;
	in = slurm_hostlist_find(hl, node) >= 0;
	slurm_hostlist_destroy(hl);
	return in;
}

static long _hl_count(void *arg, const char *const *exprs, size_t n)
{
	struct hostlist *hl = slurm_hostlist_create(NULL);
	long k;

	(void)arg;
	if (!hl)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!slurm_hostlist_push(hl, exprs[i])) {
			slurm_hostlist_destroy(hl);
			return -EINVAL;
		}
	slurm_hostlist_uniq(hl);
	k = slurm_hostlist_count(hl);
	slurm_hostlist_destroy(hl);
	return k;
}

static const snmp_hostlist_ops_t hostlist_ops = {
	.contains = _hl_contains, .count = _hl_count,
};

/* Every node of the map's Nodes= lines, each once, into *names. */
static int _nodes(const snmp_conf_t *c, char ***names, size_t *n,
		  char *err, size_t len)
{
	struct hostlist *hl = slurm_hostlist_create(NULL);
	char *h;

	*names = NULL;
	*n = 0;
	for (size_t i = 0; hl && i < c->n_lines; i++)
		if (!slurm_hostlist_push(hl, c->lines[i].nodes)) {
			snprintf(err, len, "%s:%u: Nodes=%s: not a hostlist",
				 c->map_path, c->lines[i].line,
				 c->lines[i].nodes);
			slurm_hostlist_destroy(hl);
			return -EINVAL;
		}
	if (!hl)
		return -ENOMEM;
	slurm_hostlist_uniq(hl);
	*names = calloc(slurm_hostlist_count(hl) + 1, sizeof(**names));
	while (*names && (h = slurm_hostlist_shift(hl))) {
		(*names)[(*n)++] = strdup(h);
		free(h);
	}
	slurm_hostlist_destroy(hl);
	return *names ? 0 : -ENOMEM;
}

/* ------------------------------------------------------- configuration */

static int _conf_line(void *arg, const char *path, unsigned line,
		      const conf_pair_t *pairs, size_t n, char *err,
		      size_t len)
{
	int rc;

	(void)line;
	for (size_t i = 0; i < n; i++) {
		if (strncasecmp(pairs[i].key, "EnergySNMP", 10))
			continue;	/* another plugin's key */
		if ((rc = se_conf_set(&snmp_conf_desc, arg, path,
				      pairs[i].key, pairs[i].value, err,
				      len)))
			return rc;
	}
	return 0;
}

/* acct_gather.conf's SNMP keys, the map and the secrets. */
static int _read_conf(daemon_t *d, char *err, size_t len)
{
	int rc;

	snmp_conf_init(&d->conf);
	if ((rc = conf_read_pairs_file(d->o.conf_path, _conf_line, &d->conf,
				       err, len)))
		return rc;
	if (!d->conf.secrets_path) {
		snprintf(err, len, "%s: EnergySNMPSecrets is required (the "
			 "poller reads the PDUs)", d->o.conf_path);
		return -EINVAL;
	}
	if ((rc = snmp_conf_check(&d->conf, d->o.conf_path, err, len)))
		return rc;
	if (!d->o.listen && !(d->o.listen = d->conf.poller)) {
		snprintf(err, len, "%s: no EnergySNMPPoller=HOST:PORT (nor "
			 "--listen): where do the nodes ask?", d->o.conf_path);
		return -EINVAL;
	}
	return snmp_conf_read_files(&d->conf, err, len);
}

static int _make_poller(daemon_t *d, char *err, size_t len)
{
	snmp_poller_config_t pc = { .conf = &d->conf, .hl = &hostlist_ops };
	char **names;
	size_t n;
	int rc;

	if ((rc = _nodes(&d->conf, &names, &n, err, len)))
		return rc;
	pc.nodes = (const char *const *)names;
	pc.n_nodes = n;
	rc = snmp_poller_create(&pc, &d->poller, err, len);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return rc;
}

/* Said once it listens: what it polls, how often, where nodes ask. */
static void _say_started(const daemon_t *d)
{
	snmp_poller_stats_t st;

	snmp_poller_stats(d->poller, &st);
	se_log(SE_LOG_INFO, "%zu nodes on %zu PDUs (%zu OIDs in all), "
	       "polled every %g s, timeout %llu ms; listening on %s",
	       st.nodes, st.pdus, st.oids, d->conf.period_ns / 1e9,
	       (unsigned long long)(d->conf.timeout_ns / SE_NS_PER_MS),
	       d->o.listen);
	/* the PDUs are polled one after the other (snmp_poller.h) */
	if (st.pdus * d->conf.timeout_ns > d->conf.period_ns)
		se_log(SE_LOG_INFO, "%zu PDUs polled one after the other, "
		       "each up to EnergySNMPTimeout: with PDUs down a round "
		       "outlasts EnergySNMPFrequency and the readings age; "
		       "split the map among pollers", st.pdus);
}

/* ---------------------------------------------------- the polling thread */

static double _cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *_poll_thread(void *arg)
{
	daemon_t *d = arg;
	uint64_t next = se_mono_ns();
	double cpu = 0;

	while (!se_prog_stop) {
		double c0 = _cpu_s();
		uint64_t now;

		snmp_poller_round(d->poller);
		cpu += _cpu_s() - c0;
		next += d->conf.period_ns;
		now = se_mono_ns();
		if (next < now)		/* a late round: no catching up */
			next = now;
		while (!se_prog_stop && (now = se_mono_ns()) < next)
			se_sleep_ns(next - now < 100 * SE_NS_PER_MS ?
				    next - now : 100 * SE_NS_PER_MS);
	}
	d->poll_cpu_s = cpu;
	return NULL;
}

/* --------------------------------------------------------- the network */

static int _listen(daemon_t *d, char *err, size_t len)
{
	char host[256];
	const char *colon = strrchr(d->o.listen, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE };
	struct addrinfo *ai = NULL;
	int one = 1, rc;
	size_t n = colon ? (size_t)(colon - d->o.listen) : 0;

	if (!colon || n >= sizeof(host)) {
		snprintf(err, len, "listen address %s: not HOST:PORT",
			 d->o.listen);
		return -EINVAL;
	}
	if (d->o.listen[0] == '[' && n >= 2)
		snprintf(host, sizeof(host), "%.*s", (int)n - 2,
			 d->o.listen + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)n, d->o.listen);
	if ((rc = getaddrinfo(host, colon + 1, &hints, &ai)) || !ai) {
		snprintf(err, len, "listen address %s: %s", d->o.listen,
			 gai_strerror(rc));
		return -EINVAL;
	}
	d->lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
			SOCK_CLOEXEC, 0);
	setsockopt(d->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	rc = d->lfd < 0 || bind(d->lfd, ai->ai_addr, ai->ai_addrlen) ||
	     listen(d->lfd, 128) ? -errno : 0;
	freeaddrinfo(ai);
	if (rc)
		snprintf(err, len, "listen on %s: %s", d->o.listen,
			 strerror(-rc));
	return rc;
}

static void _drop(daemon_t *d, size_t i)
{
	close(d->conns[i].fd);
	d->n--;
	d->conns[i] = d->conns[d->n];
	d->pfds[i] = d->pfds[d->n];
}

static void _accept(daemon_t *d)
{
	int fd = accept4(d->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	if (d->n >= MAX_CONNS) {
		close(fd);
		return;
	}
	d->conns[d->n] = (conn_t){ .fd = fd };
	d->pfds[d->n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	d->n++;
}

/* One ASK answered: 0, or -errno (the connection is then dropped). */
static int _answer(daemon_t *d, conn_t *c, const char *cred)
{
	uint8_t buf[PDU_POLL_MAX_LEN];
	size_t len = sizeof(buf);
	pdu_poll_ask_t ask;
	pdu_poll_reading_t r = { 0 };
	char err[512];
	uid_t uid;
	int rc;

	if ((rc = se_munge_open(d->munge, cred, buf, &len, &uid, err,
				sizeof(err))) ||
	    (rc = pdu_poll_wire_read_ask(buf, len, &ask, err,
					 sizeof(err)))) {
		se_log(SE_LOG_INFO, "an ask refused: %s", err);
		return rc;
	}
	snmp_poller_answer(d->poller, ask.node, se_mono_ns(), &r);
	r.nonce = ask.nonce;
	d->asks++;
	if ((rc = pdu_poll_wire_reading(&r, buf, sizeof(buf))) < 0)
		return rc;
	if ((rc = se_munge_send(d->munge, c->fd, buf, (size_t)rc, err,
				sizeof(err))))
		se_log(SE_LOG_DEBUG, "node %s: %s", ask.node, err);
	return rc;
}

static int _readable(daemon_t *d, conn_t *c)
{
	static char line[SE_LINE_MAX];
	int rc = se_lines_fill(&c->lines, c->fd);

	if (rc <= 0)
		return -1;
	while ((rc = se_lines_next(&c->lines, line, sizeof(line))) > 0)
		if (_answer(d, c, line))
			return -1;
	return rc;
}

static void _serve(daemon_t *d)
{
	d->pfds[0] = (struct pollfd){ .fd = d->lfd, .events = POLLIN };
	d->n = 1;
	while (!se_prog_stop) {
		if (poll(d->pfds, d->n, 200) <= 0)
			continue;
		if (d->pfds[0].revents)
			_accept(d);
		for (size_t i = d->n - 1; i >= 1; i--)
			if (d->pfds[i].revents &&
			    _readable(d, &d->conns[i]) < 0)
				_drop(d, i);
	}
	for (size_t i = 1; i < d->n; i++)
		close(d->conns[i].fd);
}

/* ---------------------------------------------------------------- setup */

static void _usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-v] [-f acct_gather.conf] "
		"[-l HOST:PORT] [--munge-socket path] [--check-config]\n");
}

static int _options(int argc, char **argv, opts_t *o)
{
	static const struct option longs[] = {
		{ "conf", required_argument, NULL, 'f' },
		{ "listen", required_argument, NULL, 'l' },
		{ "munge-socket", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-config", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	*o = (opts_t){ .conf_path = "/etc/slurm/acct_gather.conf" };
	while ((c = getopt_long(argc, argv, "f:l:m:vh", longs, NULL)) != -1) {
		switch (c) {
		case 'f': o->conf_path = optarg; break;
		case 'l': o->listen = optarg; break;
		case 'm': o->munge_socket = optarg; break;
		case 'v': o->verbose = true; break;
		case 'c': o->check = true; break;
		case 'h': _usage(stdout); exit(0);
		default: _usage(stderr); return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	static daemon_t d = { .lfd = -1 };
	struct rusage ru;
	pthread_t th;
	snmp_poller_stats_t st;
	double cpu;
	char err[1024];

	if (_options(argc, argv, &d.o))
		return 2;
	se_prog_log(PROG, d.o.verbose);
	se_prog_signals();
	if (_read_conf(&d, err, sizeof(err)) ||
	    _make_poller(&d, err, sizeof(err))) {
		se_log(SE_LOG_ERROR, "%s", err);
		return 2;
	}
	if (d.o.check) {	/* the map, secrets and every node resolved */
		printf("%s: ok\n", d.o.conf_path);
		return 0;
	}
	if (!(d.munge = se_munge_new(d.o.munge_socket, err, sizeof(err))) ||
	    _listen(&d, err, sizeof(err))) {
		se_log(SE_LOG_ERROR, "%s", err);
		return 2;
	}
	_say_started(&d);
	d.conns = calloc(MAX_CONNS, sizeof(*d.conns));
	d.pfds = calloc(MAX_CONNS, sizeof(*d.pfds));
	if (!d.conns || !d.pfds ||
	    pthread_create(&th, NULL, _poll_thread, &d)) {
		se_log(SE_LOG_ERROR, "out of memory or threads");
		return 1;
	}
	_serve(&d);
	pthread_join(th, NULL);
	cpu = d.poll_cpu_s;
	snmp_poller_stats(d.poller, &st);
	getrusage(RUSAGE_SELF, &ru);
	se_log(SE_LOG_INFO, "signal %d: %lu rounds, %lu GETs (%.2f a round "
	       "for %zu PDUs), %lu PDU polls failed, %lu asks answered; "
	       "polling thread CPU %.0f us a round, process CPU %.3f s",
	       (int)se_prog_stop, st.rounds, st.gets,
	       st.rounds ? (double)st.gets / st.rounds : 0.0, st.pdus,
	       st.failed, d.asks, st.rounds ? cpu / st.rounds * 1e6 : 0.0,
	       ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
	close(d.lfd);
	free(d.conns);
	free(d.pfds);
	snmp_poller_destroy(d.poller);
	se_munge_free(d.munge);
	snmp_conf_free(&d.conf);
	return 0;
}
