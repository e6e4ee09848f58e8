/*
 * slurm-energy-powercap-agent - a node's side of the cluster power cap
 * (issue #45; doc/design-powercap.md; slurm-energy-powercap-agent(8)).
 *
 * The I/O around pcap_agent.c: it connects to slurm-energy-powercapd
 * (PowerCapController in powercap.conf), takes CAP messages in MUNGE
 * credentials of root or --user, applies them through the node's knobs
 * (PowerCapKnobs) and answers each with a REPORT holding the node's mean
 * power, read from slurmd's energy query socket (a snapshot request), since
 * its last answer.  Defaults are restored at start, when the lease lapses
 * (the daemon silent for its lease, connected or not) and at exit by
 * SIGTERM or SIGINT.  A lost connection is retried every second; the
 * lease runs on meanwhile.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "energy_query.h"
#include "energy_snapshot.h"
#include "pcap_agent.h"
#include "pcap_conf.h"
#include "pcap_wire.h"
#include "se_munge.h"
#include "se_prog.h"
#include "se_log.h"
#include "se_resolve.h"
#include "se_time.h"

#define PROG		"slurm-energy-powercap-agent"
#define TICK_NS		((int64_t)(100 * SE_NS_PER_MS))	/* the lease's timer */
#define RETRY_NS	((int64_t)SE_NS_PER_SEC)	/* reconnect */
#define QUERY_NS	(200 * SE_NS_PER_MS)	/* the query socket's wait */
#define RESOLVE_NS	(500 * SE_NS_PER_MS)	/* the controller's name */

typedef struct {
	const char *conf_path, *node, *query_path, *munge_socket, *user;
	bool verbose;
} opts_t;

typedef struct {
	pcap_conf_t conf;
	pcap_node_conf_t node_conf;	/* this node's NodeClass, or the file's */
	pcap_node_knobs_t knobs;
	pcap_agent_t core;
	void *munge;
	uid_t user_uid;
	char query_path[108];
	int fd;			/* the controller; -1: none */
	bool connecting;
	int64_t retry_ns;
	se_lines_t lines;
	/* the last snapshot's total, for the mean power since */
	bool have_prev;
	uint64_t prev_id, prev_mj, prev_ns;
	se_ratelimit_t rl_query, rl_conn, rl_rewrite;
} agent_t;

static energy_snapshot_t snap;	/* large: not on the stack */

/*
 * slurmd's total at the snapshot's newest sample.  The total is what
 * Slurm's energy RPC would answer (energy_snapshot.h): the node's energy at
 * the answer, the newest sample carried on at its power for at most
 * period + deadline (sampler_status, energy_acc_energy_at), so the carried
 * part comes off here.  Paired with last_sample_ns as it was, a window
 * starting just before a sample was charged the sample's whole interval
 * (the test cluster: 821 W over 143 ms, then 152 W over 857 ms, from a
 * meter serving 230-282 W; the controller flapped).  Left over: slurmd's
 * monotone floors (a carried total already answered, above the next
 * sample's) can hold the total a little high until the samples catch up.
 */
static uint64_t _total_at_sample(const energy_snapshot_t *s)
{
	uint64_t dt = 0, carried;

	if (s->now_ns > s->last_sample_ns)
		dt = s->now_ns - s->last_sample_ns;
	if (dt > s->period_ns + s->deadline_ns)
		dt = s->period_ns + s->deadline_ns;
	carried = s->power_mw * dt / SE_NS_PER_SEC;	/* mW x s = mJ */
	return s->total_mj > carried ? s->total_mj - carried : 0;
}

/* ---------------------------------------------------------------- power */

/* The node's mean power since the last call (slurmd's total at the newest
 * sample over the time between two snapshots' samples), or the newest
 * sample's power when no total continues; window 0: no reading (the daemon
 * charges the node its maximum); end_ns: the newest sample's time, where
 * the window ends.  JOB from the steps slurmd's split lists as running. */
static uint32_t _power(agent_t *a, uint32_t *window_ms, int64_t *end_ns)
{
	uint64_t t, mw, total;
	int rv = energy_query_snapshot(a->query_path, QUERY_NS, &snap);

	*window_ms = 0;
	*end_ns = 0;
	if (rv) {
		se_log_limited(&a->rl_query, se_mono_ns(), SE_LOG_ERROR,
			       "%s: no power: %s", a->query_path,
			       strerror(-rv));
		a->have_prev = false;
		return 0;
	}
	a->core.job = false;
	for (uint32_t i = 0; i < snap.n_steps && i < ENERGY_SNAPSHOT_STEPS_MAX;
	     i++)
		if (!(snap.steps[i].flags & ENERGY_SNAPSHOT_STEP_ENDED))
			a->core.job = true;
	if (!snap.last_sample_ns)
		return 0;
	t = snap.last_sample_ns;
	*end_ns = (int64_t)t;	/* slurmd's sampler: this node's monotonic */
	total = _total_at_sample(&snap);
	if ((snap.flags & ENERGY_SNAPSHOT_TOTAL) && a->have_prev &&
	    snap.total_id == a->prev_id && t > a->prev_ns &&
	    total >= a->prev_mj) {
		mw = (total - a->prev_mj) * SE_NS_PER_SEC / (t - a->prev_ns);
		*window_ms = (uint32_t)((t - a->prev_ns) / SE_NS_PER_MS);
	} else {
		mw = snap.power_mw;
		*window_ms = (uint32_t)(snap.period_ns / SE_NS_PER_MS) ?: 1;
	}
	if (snap.flags & ENERGY_SNAPSHOT_TOTAL) {
		a->have_prev = true;
		a->prev_id = snap.total_id;
		a->prev_mj = total;
		a->prev_ns = t;
	}
	return mw > UINT32_MAX ? UINT32_MAX : (uint32_t)mw;
}

/* ----------------------------------------------------------- connection */

static void _drop(agent_t *a, const char *why)
{
	if (a->fd >= 0) {
		se_log(SE_LOG_INFO, "controller %s: %s; retrying every second",
		       a->conf.controller, why);
		close(a->fd);
	}
	a->fd = -1;
	a->connecting = false;
	a->lines.len = 0;
	a->retry_ns = (int64_t)se_mono_ns() + RETRY_NS;
}

/* The controller's address: its name looked up by se_resolve, bounded (a
 * resolver that does not answer must not hold the lease's timer), then
 * the numeric address and port into res.  0, or -1 (logged). */
static int _controller_addr(agent_t *a, struct addrinfo **res)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	char host[256], addr[SE_RESOLVE_ADDR_LEN], *colon;
	int rv;

	snprintf(host, sizeof(host), "%s", a->conf.controller);
	colon = strrchr(host, ':');
	*colon = '\0';
	if ((rv = se_resolve(host, SOCK_STREAM, se_mono_ns() + RESOLVE_NS,
			     addr, sizeof(addr)))) {
		se_log_limited(&a->rl_conn, se_mono_ns(), SE_LOG_ERROR,
			       "PowerCapController=%s: looking up %s: %s",
			       a->conf.controller, host, rv == -ENOENT ?
			       "no such host" : strerror(-rv));
		return -1;
	}
	if ((rv = getaddrinfo(addr, colon + 1, &hints, res))) {
		se_log_limited(&a->rl_conn, se_mono_ns(), SE_LOG_ERROR,
			       "PowerCapController=%s: %s",
			       a->conf.controller, gai_strerror(rv));
		return -1;
	}
	return 0;
}

static void _connect(agent_t *a)
{
	struct addrinfo *res = NULL;

	a->retry_ns = (int64_t)se_mono_ns() + RETRY_NS;
	if (_controller_addr(a, &res))
		return;
	a->fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
		       SOCK_CLOEXEC, 0);
	if (a->fd >= 0 && connect(a->fd, res->ai_addr, res->ai_addrlen) &&
	    errno != EINPROGRESS) {
		se_log_limited(&a->rl_conn, se_mono_ns(), SE_LOG_ERROR,
			       "connect to %s: %s", a->conf.controller,
			       strerror(errno));
		close(a->fd);
		a->fd = -1;
	}
	a->connecting = a->fd >= 0;
	freeaddrinfo(res);
}

/* The REPORT: the answer to a CAP, and the hello on a new connection. */
static void _report(agent_t *a)
{
	pcap_report_msg_t m;
	uint8_t buf[PCAP_WIRE_MAX_LEN];
	int64_t end_ns;
	uint32_t window_ms, mw = _power(a, &window_ms, &end_ns);
	char err[256];
	int len;

	pcap_agent_report(&a->core, mw, window_ms, end_ns, &m);
	if (a->core.rewritten)
		se_log_limited(&a->rl_rewrite, se_mono_ns(), SE_LOG_ERROR,
			       "knobs read %.3f W, not the %.3f W written: "
			       "set behind the agent's back, written again%s",
			       a->core.rewritten_from_mw / 1e3,
			       a->core.written_read_mw / 1e3,
			       a->core.error[0] ? " (failed)" : "");
	if ((len = pcap_wire_report(&m, buf, sizeof(buf))) < 0) {
		se_log(SE_LOG_ERROR, "report: %s", strerror(-len));
		return;
	}
	if (se_munge_send(a->munge, a->fd, buf, len, err, sizeof(err)))
		_drop(a, err);
	else
		se_log(SE_LOG_DEBUG, "report seq %llu: %u mW over %u ms, cap "
		       "%u mW%s%s", (unsigned long long)m.seq, m.power_mw,
		       m.window_ms, m.cap_mw,
		       m.flags & PCAP_REPORT_ENFORCED ? ", enforced" : "",
		       m.flags & PCAP_REPORT_JOB ? ", job" : "");
}

/* One credential from the controller. */
static void _message(agent_t *a, const char *cred)
{
	uint8_t buf[PCAP_WIRE_MAX_LEN];
	size_t len = sizeof(buf);
	pcap_cap_msg_t m;
	char err[256];
	uid_t uid;
	int rv;

	if (se_munge_open(a->munge, cred, buf, &len, &uid, err,
			    sizeof(err))) {
		se_log(SE_LOG_ERROR, "a message refused: %s", err);
		return;
	}
	if (uid != 0 && uid != a->user_uid) {
		se_log(SE_LOG_ERROR, "a message refused: sent by uid %u (root "
		       "or uid %u only)", (unsigned)uid,
		       (unsigned)a->user_uid);
		return;
	}
	if (pcap_wire_read_cap(buf, len, &m, err, sizeof(err))) {
		se_log(SE_LOG_ERROR, "a message refused: %s", err);
		return;
	}
	rv = pcap_agent_cap(&a->core, (int64_t)se_mono_ns(), &m);
	if (rv == -EINVAL && strcmp(m.node, a->core.node)) {
		se_log(SE_LOG_ERROR, "a cap for node %s refused: this is %s",
		       m.node, a->core.node);
		return;
	}
	if (rv)
		se_log(SE_LOG_ERROR, "cap %u mW not applied: %s", m.cap_mw,
		       a->core.error);
	else
		se_log(SE_LOG_DEBUG, "cap seq %llu: %u mW%s%s",
		       (unsigned long long)m.seq, m.cap_mw,
		       m.flags & PCAP_CAP_RESTORE ? " (restore)" : "",
		       a->knobs.have_draw ? " (split by draw)" : "");
	if (a->knobs.counter_error_new) {	/* once, not every round */
		se_log(SE_LOG_ERROR, "knob energy counter: %s: the node cap "
		       "is split linearly until it reads",
		       a->knobs.counter_error);
		a->knobs.counter_error_new = false;
	}
	_report(a);
}

static void _readable(agent_t *a)
{
	char line[SE_LINE_MAX];
	int rv = se_lines_fill(&a->lines, a->fd);

	if (rv <= 0) {
		_drop(a, rv ? strerror(-rv) : "connection closed");
		return;
	}
	while (a->fd >= 0 &&
	       (rv = se_lines_next(&a->lines, line, sizeof(line))) > 0)
		_message(a, line);
	if (rv < 0)
		_drop(a, "a line too long");
}

static void _writable(agent_t *a)
{
	int e = 0;
	socklen_t len = sizeof(e);

	getsockopt(a->fd, SOL_SOCKET, SO_ERROR, &e, &len);
	if (e) {
		se_log_limited(&a->rl_conn, se_mono_ns(), SE_LOG_ERROR,
			       "connect to %s: %s", a->conf.controller,
			       strerror(e));
		close(a->fd);
		a->fd = -1;
		a->connecting = false;
		return;
	}
	a->connecting = false;
	se_log(SE_LOG_INFO, "connected to %s", a->conf.controller);
	_report(a);
}

/* ----------------------------------------------------------------- loop */

static void _tick(agent_t *a)
{
	bool capped = a->core.lease.capped;

	if (pcap_agent_tick(&a->core, (int64_t)se_mono_ns()))
		se_log(SE_LOG_ERROR, "restore: %s", a->core.error);
	if (capped && !a->core.lease.capped)
		se_log(SE_LOG_INFO, "lease lapsed (no cap for %g s): the "
		       "knobs' defaults restored", a->conf.hold_ns / 1e9);
}

static int _run(agent_t *a)
{
	int64_t next_tick = (int64_t)se_mono_ns();

	while (!se_prog_stop) {
		int64_t now = (int64_t)se_mono_ns();
		struct pollfd p = { .fd = a->fd };
		int ms;

		if (now >= next_tick) {
			_tick(a);
			next_tick = now + TICK_NS;
		}
		if (a->fd < 0 && now >= a->retry_ns)
			_connect(a);
		ms = (int)((next_tick - now) / (int64_t)SE_NS_PER_MS) + 1;
		p.events = a->connecting ? POLLOUT : POLLIN;
		if (poll(&p, 1, ms) <= 0 || a->fd < 0)
			continue;
		if (a->connecting)
			_writable(a);
		else
			_readable(a);
	}
	return 0;
}

/* ---------------------------------------------------------------- setup */

static void _usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-v] [-f powercap.conf] [-n node] "
		"[-q query-socket] [--munge-socket path] [-u user]\n");
}

static int _options(int argc, char **argv, opts_t *o)
{
	static const struct option longs[] = {
		{ "conf", required_argument, NULL, 'f' },
		{ "node", required_argument, NULL, 'n' },
		{ "query-socket", required_argument, NULL, 'q' },
		{ "munge-socket", required_argument, NULL, 'm' },
		{ "user", required_argument, NULL, 'u' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c;

	*o = (opts_t){ .conf_path = "/etc/slurm/powercap.conf",
		       .user = "slurm" };
	while ((c = getopt_long(argc, argv, "f:n:q:m:u:vh", longs, NULL)) !=
	       -1) {
		switch (c) {
		case 'f': o->conf_path = optarg; break;
		case 'n': o->node = optarg; break;
		case 'q': o->query_path = optarg; break;
		case 'm': o->munge_socket = optarg; break;
		case 'u': o->user = optarg; break;
		case 'v': o->verbose = true; break;
		case 'h': _usage(stdout); exit(0);
		default: _usage(stderr); return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

/* Configuration, knobs, munge: 0, or -errno with err. */
static int _setup(agent_t *a, const opts_t *o, char *err, size_t len)
{
	static char host[PCAP_WIRE_NAME_MAX];
	const char *node = o->node;
	int rv;

	if (!node) {
		gethostname(host, sizeof(host) - 1);
		host[strcspn(host, ".")] = '\0';
		node = host;
	}
	if ((rv = pcap_conf_read(&a->conf, o->conf_path, err, len)))
		return rv;
	if (!a->conf.controller) {
		snprintf(err, len, "%s: PowerCapController is required",
			 o->conf_path);
		return -EINVAL;
	}
	if ((rv = se_prog_uid(o->user, &a->user_uid, err, len)))
		return rv;
	if (o->query_path)
		snprintf(a->query_path, sizeof(a->query_path), "%s",
			 o->query_path);
	else if ((rv = energy_query_socket_path("/var/spool/slurmd", node,
						a->query_path,
						sizeof(a->query_path)))) {
		snprintf(err, len, "query socket %s: %s", a->query_path,
			 strerror(-rv));
		return rv;
	}
	if (!(a->munge = se_munge_new(o->munge_socket, err, len)))
		return -EINVAL;
	pcap_conf_node(&a->conf, node, &a->node_conf);
	if ((rv = pcap_node_open(&a->knobs, a->node_conf.knobs,
				 (uint32_t)(a->node_conf.floor_w * 1000 + 0.5),
				 (uint32_t)(a->node_conf.max_w * 1000 + 0.5),
				 err, len)))
		return rv;
	pcap_agent_init(&a->core, node, &a->knobs, (int64_t)a->conf.hold_ns);
	return 0;
}

int main(int argc, char **argv)
{
	static agent_t a = { .fd = -1,
			     .rl_query = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC,
							   3),
			     .rl_conn = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC,
							  3),
			     .rl_rewrite = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC,
							     3) };
	char err[512];
	opts_t o;

	if (_options(argc, argv, &o))
		return 2;
	se_prog_log(PROG, o.verbose);
	se_prog_signals();
	if (_setup(&a, &o, err, sizeof(err))) {
		se_log(SE_LOG_ERROR, "%s", err);
		return 2;
	}
	if (pcap_agent_start(&a.core, (int64_t)se_mono_ns()))
		se_log(SE_LOG_ERROR, "restore at start: %s", a.core.error);
	se_log(SE_LOG_INFO, "node %s: knobs %s restored; controller %s, "
	       "lease %g s", a.core.node, a.node_conf.knobs, a.conf.controller,
	       a.conf.hold_ns / 1e9);
	_run(&a);
	if (pcap_node_restore(&a.knobs, err, sizeof(err)))
		se_log(SE_LOG_ERROR, "restore at exit: %s", err);
	else
		se_log(SE_LOG_INFO, "signal %d: the knobs' defaults restored",
		       (int)se_prog_stop);
	if (a.fd >= 0)
		close(a.fd);
	pcap_node_close(&a.knobs);
	se_munge_free(a.munge);
	pcap_conf_free(&a.conf);
	return 0;
}
