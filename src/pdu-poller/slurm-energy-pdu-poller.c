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
#include "pdu_poll_wire.h"
#include "se_log.h"
#include "se_munge.h"
#include "se_prog.h"
#include "se_time.h"
#include "pdu_poller.h"
#include "snmp_conf.h"
#include "snmp_poller.h"

#define PROG		"slurm-energy-pdu-poller"
#define MAX_CONNS	4096	/* nodes connected at once */
/* The polling thread's naps between rounds: how soon an early read for a
 * node that asked again (a step's boundary) begins. */
#define POLL_NAP_NS	(20 * SE_NS_PER_MS)

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
	snmp_poller_t *poller;		/* NULL: no EnergySNMPMap */
#ifdef SE_HAVE_REDFISH
	bmc_conf_t bmc;
	rf_poller_t *rf;		/* NULL: no EnergyBMCPoller */
#endif
	void *munge;
	int lfd;
	conn_t *conns;		/* [0] unused: the listener's slot */
	struct pollfd *pfds;
	size_t n;		/* slots used, the listener's included */
	unsigned long asks;
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

const se_hostlist_ops_t pp_hostlist_ops = {
	.contains = _hl_contains, .count = _hl_count,
};

int pp_hostlist_names(const char *const *exprs, const char *const *where,
		      size_t n, char ***names, size_t *n_names, char *err,
		      size_t err_len)
{
	struct hostlist *hl = slurm_hostlist_create(NULL);
	char *h;

	*names = NULL;
	*n_names = 0;
	for (size_t i = 0; hl && i < n; i++)
		if (!slurm_hostlist_push(hl, exprs[i])) {
			snprintf(err, err_len, "%s: Nodes=%s: not a hostlist",
				 where[i], exprs[i]);
			slurm_hostlist_destroy(hl);
			return -EINVAL;
		}
	if (!hl)
		return -ENOMEM;
	slurm_hostlist_uniq(hl);
	*names = calloc(slurm_hostlist_count(hl) + 1, sizeof(**names));
	while (*names && (h = slurm_hostlist_shift(hl))) {
		(*names)[(*n_names)++] = strdup(h);
		free(h);
	}
	slurm_hostlist_destroy(hl);
	return *names ? 0 : -ENOMEM;
}

/* Every node of the SNMP map's Nodes= lines, each once, into *names. */
static int _nodes(const snmp_conf_t *c, char ***names, size_t *n,
		  char *err, size_t len)
{
	const char **exprs = calloc(c->n_lines + 1, sizeof(*exprs));
	char (*where)[300] = calloc(c->n_lines + 1, sizeof(*where));
	const char **wheres = calloc(c->n_lines + 1, sizeof(*wheres));
	int rc = -ENOMEM;

	if (exprs && where && wheres) {
		for (size_t i = 0; i < c->n_lines; i++) {
			exprs[i] = c->lines[i].nodes;
			snprintf(where[i], sizeof(where[i]), "%s:%u",
				 c->map_path, c->lines[i].line);
			wheres[i] = where[i];
		}
		rc = pp_hostlist_names(exprs, wheres, c->n_lines, names, n,
				       err, len);
	}
	free(exprs);
	free(where);
	free(wheres);
	return rc;
}

/* ------------------------------------------------------- configuration */

static int _conf_line(void *arg, const char *path, unsigned line,
		      const conf_pair_t *pairs, size_t n, char *err,
		      size_t len)
{
	int rc;

	(void)line;
	for (size_t i = 0; i < n; i++) {
		daemon_t *d = arg;

		rc = 0;
		if (!strncasecmp(pairs[i].key, "EnergySNMP", 10))
			rc = se_conf_set(&snmp_conf_desc, &d->conf, path,
					 pairs[i].key, pairs[i].value, err,
					 len);
#ifdef SE_HAVE_REDFISH
		else if (!strncasecmp(pairs[i].key, "EnergyBMC", 9))
			rc = se_conf_set(&bmc_conf_desc, &d->bmc, path,
					 pairs[i].key, pairs[i].value, err,
					 len);
#endif
		if (rc)		/* (another plugin's keys are not ours) */
			return rc;
	}
	return 0;
}

/* The SNMP family: its keys together, the map and the secrets. */
static int _snmp_conf(daemon_t *d, char *err, size_t len)
{
	int rc;

	if (!d->conf.secrets_path) {
		snprintf(err, len, "%s: EnergySNMPSecrets is required (the "
			 "poller reads the PDUs)", d->o.conf_path);
		return -EINVAL;
	}
	if ((rc = snmp_conf_check(&d->conf, d->o.conf_path, err, len)))
		return rc;
	return snmp_conf_read_files(&d->conf, err, len);
}

/* Where the nodes ask: --listen, else the families' address (the same,
 * when both are polled). */
static int _listen_address(daemon_t *d, const char *bmc_poller, char *err,
			   size_t len)
{
	const char *snmp_poller = d->conf.map_path ? d->conf.poller : NULL;

	if (d->o.listen)
		return 0;
	if (snmp_poller && bmc_poller && strcmp(snmp_poller, bmc_poller)) {
		snprintf(err, len, "%s: EnergySNMPPoller=%s and "
			 "EnergyBMCPoller=%s: one poller listens on one "
			 "address (or give --listen)", d->o.conf_path,
			 snmp_poller, bmc_poller);
		return -EINVAL;
	}
	if (!(d->o.listen = snmp_poller ? snmp_poller : bmc_poller)) {
		snprintf(err, len, "%s: no EnergySNMPPoller=HOST:PORT nor "
			 "EnergyBMCPoller=HOST:PORT (nor --listen): where do "
			 "the nodes ask?", d->o.conf_path);
		return -EINVAL;
	}
	return 0;
}

/* acct_gather.conf's SNMP keys (with EnergySNMPMap) and Redfish keys
 * (EnergyBMCMethod=redfish with EnergyBMCPoller): one family or both. */
static int _read_conf(daemon_t *d, char *err, size_t len)
{
	const char *bmc_poller = NULL;
	int rc;

	snmp_conf_init(&d->conf);
#ifdef SE_HAVE_REDFISH
	bmc_conf_init(&d->bmc);
#endif
	if ((rc = conf_read_pairs_file(d->o.conf_path, _conf_line, d,
				       err, len)))
		return rc;
#ifdef SE_HAVE_REDFISH
	if (d->bmc.poller) {	/* (refused with a method but redfish) */
		if ((rc = bmc_conf_check(&d->bmc, d->o.conf_path, err, len)))
			return rc;
		bmc_poller = d->bmc.poller;
	}
#endif
	if (!d->conf.map_path && !bmc_poller) {
		snprintf(err, len, "%s: nothing to poll: no EnergySNMPMap, "
			 "nor EnergyBMCMethod=redfish with EnergyBMCPoller",
			 d->o.conf_path);
		return -EINVAL;
	}
	if (d->conf.map_path && (rc = _snmp_conf(d, err, len)))
		return rc;
	return _listen_address(d, bmc_poller, err, len);
}

static int _make_poller(daemon_t *d, char *err, size_t len)
{
	snmp_poller_config_t pc = { .conf = &d->conf,
				    .hl = &pp_hostlist_ops };
	char **names;
	size_t n;
	int rc;

#ifdef SE_HAVE_REDFISH
	if (d->bmc.method == BMC_METHOD_REDFISH && d->bmc.poller &&
	    (rc = pp_redfish_make(&d->bmc, d->o.conf_path, &d->rf, err,
				  len)))
		return rc;
#endif
	if (!d->conf.map_path)
		return 0;
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

#ifdef SE_HAVE_REDFISH
	if (d->rf) {
		rf_poller_stats_t rs;

		rf_poller_stats(d->rf, &rs);
		se_log(SE_LOG_INFO, "Redfish: %zu nodes on %zu services, "
		       "read every %g s (tick watch %s), timeout %llu ms; "
		       "listening on %s", rs.nodes, rs.services,
		       d->bmc.period_ns / 1e9,
		       d->bmc.rf_tick_watch == BMC_TICK_WATCH_YES ? "on" :
		       "off",
		       (unsigned long long)(d->bmc.timeout_ns / SE_NS_PER_MS),
		       d->o.listen);
	}
#endif
	if (!d->poller)
		return;
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

/* One family's rounds, on a thread of their own. */
typedef struct {
	unsigned (*round)(void *poller);
	/* optional: nodes asked again for the reading they have (a step's
	 * boundary); early() reads for them between rounds */
	bool (*wanted)(void *poller);
	unsigned (*early)(void *poller);
	void *poller;
	uint64_t period_ns;
	double cpu_s;		/* the thread's, at its end */
	pthread_t th;
	bool started;
} poll_loop_t;

static void *_poll_thread(void *arg)
{
	poll_loop_t *l = arg;
	uint64_t next = se_mono_ns();
	double cpu = 0;

	while (!se_prog_stop) {
		double c0 = _cpu_s();
		uint64_t now;

		l->round(l->poller);
		cpu += _cpu_s() - c0;
		next += l->period_ns;
		now = se_mono_ns();
		if (next < now)		/* a late round: no catching up */
			next = now;
		while (!se_prog_stop && (now = se_mono_ns()) < next) {
			/* a node asking again whose PDUs are not due yet
			 * stays wanted: nap between tries, never spin */
			if (l->wanted && l->wanted(l->poller)) {
				c0 = _cpu_s();
				l->early(l->poller);
				cpu += _cpu_s() - c0;
				if ((now = se_mono_ns()) >= next)
					break;
			}
			se_sleep_ns(next - now < POLL_NAP_NS ? next - now :
				    POLL_NAP_NS);
		}
	}
	l->cpu_s = cpu;
	return NULL;
}

static unsigned _snmp_round(void *poller)
{
	return snmp_poller_round(poller);
}

static bool _snmp_wanted(void *poller)
{
	return snmp_poller_wanted(poller);
}

static unsigned _snmp_early(void *poller)
{
	return snmp_poller_round_wanted(poller);
}

#ifdef SE_HAVE_REDFISH
static unsigned _rf_round(void *poller)
{
	return rf_poller_round(poller);
}

static bool _rf_wanted(void *poller)
{
	return rf_poller_wanted(poller);
}

static unsigned _rf_early(void *poller)
{
	return rf_poller_round_wanted(poller);
}
#endif

static int _start_loop(poll_loop_t *l)
{
	return !l->poller ? 0 :
	       (l->started = !pthread_create(&l->th, NULL, _poll_thread, l)) ?
	       0 : -1;
}

static void _join_loop(poll_loop_t *l)
{
	if (l->started)
		pthread_join(l->th, NULL);
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
	/* the node's family: the SNMP map's, else the Redfish map's */
	if (!d->poller ||
	    snmp_poller_answer(d->poller, ask.node, se_mono_ns(), &r)) {
#ifdef SE_HAVE_REDFISH
		if (d->rf)
			rf_poller_answer(d->rf, ask.node, se_mono_ns(), &r);
#endif
	}
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

/* The totals at the end: a line per family. */
static void _say_totals(const daemon_t *d, const poll_loop_t *snmp,
			const poll_loop_t *rf)
{
	struct rusage ru;
	double proc;

	getrusage(RUSAGE_SELF, &ru);
	proc = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	if (d->poller) {
		snmp_poller_stats_t st;

		snmp_poller_stats(d->poller, &st);
		se_log(SE_LOG_INFO, "signal %d: %lu rounds, %lu GETs (%.2f a "
		       "round for %zu PDUs), %lu PDU polls failed, %lu asks "
		       "answered; polling thread CPU %.0f us a round, "
		       "process CPU %.3f s", (int)se_prog_stop, st.rounds,
		       st.gets, st.rounds ? (double)st.gets / st.rounds : 0.0,
		       st.pdus, st.failed, d->asks,
		       st.rounds ? snmp->cpu_s / st.rounds * 1e6 : 0.0, proc);
	}
#ifdef SE_HAVE_REDFISH
	if (d->rf) {
		rf_poller_stats_t rs;

		rf_poller_stats(d->rf, &rs);
		se_log(SE_LOG_INFO, "signal %d: Redfish: %lu rounds, %lu "
		       "requests (%.2f a round for %zu services, %zu "
		       "documents a round), %lu service rounds failed, %lu "
		       "not watched, %lu early for nodes asking again, %lu "
		       "asks answered; polling thread CPU %.0f us a round, "
		       "process CPU %.3f s",
		       (int)se_prog_stop, rs.rounds, rs.requests,
		       rs.rounds ? (double)rs.requests / rs.rounds : 0.0,
		       rs.services, rs.gets_a_round, rs.failed, rs.unwatched,
		       rs.early, d->asks, rs.rounds ? rf->cpu_s / rs.rounds * 1e6 : 0.0,
		       proc);
	}
#else
	(void)rf;
#endif
}

int main(int argc, char **argv)
{
	static daemon_t d = { .lfd = -1 };
	poll_loop_t snmp = { .round = _snmp_round }, rf = { 0 };
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
	if (d.o.check) {	/* the maps, secrets and every node resolved */
		printf("%s: ok\n", d.o.conf_path);
		return 0;
	}
	if (!(d.munge = se_munge_new(d.o.munge_socket, err, sizeof(err))) ||
	    _listen(&d, err, sizeof(err))) {
		se_log(SE_LOG_ERROR, "%s", err);
		return 2;
	}
	_say_started(&d);
	snmp.poller = d.poller;
	snmp.period_ns = d.conf.period_ns;
	snmp.wanted = _snmp_wanted;
	snmp.early = _snmp_early;
#ifdef SE_HAVE_REDFISH
	rf = (poll_loop_t){ .round = _rf_round, .wanted = _rf_wanted,
			    .early = _rf_early, .poller = d.rf,
			    .period_ns = d.bmc.period_ns };
#endif
	d.conns = calloc(MAX_CONNS, sizeof(*d.conns));
	d.pfds = calloc(MAX_CONNS, sizeof(*d.pfds));
	if (!d.conns || !d.pfds || _start_loop(&snmp) || _start_loop(&rf)) {
		se_log(SE_LOG_ERROR, "out of memory or threads");
		return 1;
	}
	_serve(&d);
	_join_loop(&snmp);
	_join_loop(&rf);
	_say_totals(&d, &snmp, &rf);
	close(d.lfd);
	free(d.conns);
	free(d.pfds);
	snmp_poller_destroy(d.poller);
#ifdef SE_HAVE_REDFISH
	rf_poller_destroy(d.rf);
	bmc_conf_free(&d.bmc);
#endif
	se_munge_free(d.munge);
	snmp_conf_free(&d.conf);
	return 0;
}
