/*
 * slurm-energy-powercapd - the cluster power cap's controller (issue #45;
 * doc/design-powercap.md; slurm-energy-powercapd(8)).
 *
 * The I/O around pcap_ctl.c: it listens on PowerCapController's port for
 * the agents (slurm-energy-powercap-agent, one TCP connection per node,
 * each message a MUNGE credential: se_munge.h), runs a round every
 * PowerCapPeriod over PowerCapNodes (pcap_ctl_round, then every node not
 * sent a new cap is sent its cap again: its lease renewed, its answer
 * asked), sends the held raises when pcap_ctl_tick says, and feeds the
 * agents' REPORTs to pcap_ctl_answer.  A node without an agent, or whose
 * agent gave no reading or failed to apply, is charged its maximum.
 * SIGHUP reloads powercap.conf (a bad file is logged and the old one
 * kept); SIGTERM/SIGINT exit without a message to the agents: each node
 * keeps its last cap until its lease (PowerCapHoldSeconds) lapses, then
 * its agent restores its defaults.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* accept4 */
#endif
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pcap_conf.h"
#include "pcap_ctl.h"
#include "pcap_jobrec.h"
#include "pcap_slurm.h"
#include "pcap_wire.h"
#include "se_array.h"
#include "se_munge.h"
#include "se_munge_pool.h"
#include "se_prog.h"
#include "pcap_state.h"
#include "se_log.h"
#include "se_time.h"

#define PROG		"slurm-energy-powercapd"
#define TICK_NS		((int64_t)(10 * SE_NS_PER_MS))	/* while raises are held */
/* PowerCapStateFile: rewritten at least this often (and at once when the
 * capping starts or stops), stale after STATE_VALID_TIMES of it: a few
 * writes a minute on a shared file system, and a dead daemon's "capping"
 * is ignored at submit within 15 s or so */
#define STATE_EVERY_S	5
/* PowerCapJobRecords: a capped job's AdminComment rewritten this often at
 * most (else when its lowest cap goes down): slurmctld takes no update of
 * a finished job, so the record is written while it runs */
#define JOB_WRITE_EVERY_NS ((int64_t)(30 * SE_NS_PER_SEC))
/* An ended job's final record is tried in slurmdbd this often, until its
 * end is there (slurmctld sends it within a second or so), for at most
 * FINAL_GIVE_UP_NS (slurmdbd down: slurmctld queues the end for it). */
#define FINAL_RETRY_NS ((int64_t)SE_NS_PER_SEC)
#define FINAL_GIVE_UP_NS ((int64_t)(600 * SE_NS_PER_SEC))
#define STATE_VALID_TIMES 3
/* files open beside the agents' connections: listening socket, munged,
 * logs, libslurm's */
#define PCAP_FILES_SPARE 64
/* MUNGE round trips at once (--munge-threads): munged's own default is 2
 * threads; a head node runs it with more */
#define MUNGE_THREADS 4

typedef struct {
	int fd;
	se_lines_t lines;
	char node[PCAP_WIRE_NAME_MAX];	/* "" until its first REPORT */
	long index;			/* in nodes[]; -1: none */
	bool gone;			/* read its end: closed after the batch */
} conn_t;

/* A message sealed or opened with the others of its loop turn (the MUNGE
 * pool): its connection and node (sends). */
typedef struct {
	size_t conn;
	size_t node;		/* a CAP's node */
	size_t off;		/* a REPORT's line in in_text */
} pending_t;

typedef struct {
	const char *conf_path, *munge_socket, *user, *listen;
	unsigned munge_threads;	/* --munge-threads */
	bool verbose, check;
	bool uniform;	/* --uniform: every node cap/n, the baseline */
} opts_t;

typedef struct {
	pcap_conf_t conf;
	size_t n;
	pcap_node_t *nodes;
	char **names;		/* nodes[i].name's storage */
	long *conn;		/* node -> conns[] index, -1 */
	size_t *by_name;	/* node indexes sorted by name */
	pcap_ctl_t ctl;
	bool have_ctl;
} group_t;

/* An ended job's final record, to be set in slurmdbd (pcap_slurm_record_final) */
typedef struct {
	uint32_t job_id;
	char token[96];
	int64_t ended_ns, next_ns;	/* monotonic */
} final_t;

typedef struct {
	opts_t o;
	group_t g;
	se_munge_pool_t *munge;
	/* this loop turn's CAPs to seal and send, REPORTs to open */
	se_munge_item_t *out_items, *in_items;
	pending_t *out_to, *in_from;
	size_t n_out, cap_out_items, cap_out_to;
	size_t n_in, cap_in_items, cap_in_from;
	char *in_text;		/* the REPORTs' lines, NUL after each */
	size_t in_len, cap_in_text;
	uid_t user_uid;
	int listen_fd;
	conn_t *conns;
	size_t n_conns, cap_conns;
	uint64_t rounds;
	se_ratelimit_t rl_knob, rl_state, rl_accept, rl_munge;
	int64_t accept_resume_ns;	/* out of files: listen again then */
	uint64_t files_limit;		/* RLIMIT_NOFILE, as raised */
	int64_t state_next_ns;	/* the state file's next write (mono) */
	bool state_capping;	/* as last published */
	int64_t state_since_s;	/* capping since (wall s); 0: not */
	pcap_jobrecs_t recs;	/* PowerCapJobRecords */
	pcap_slurm_jobs_t jobs;	/* the running jobs, as last loaded */
	time_t jobs_last;	/* slurm_load_jobs's update time */
	uint32_t *caps, *maxs;	/* per node, for pcap_jobrecs_round */
	se_ratelimit_t rl_jobs;
	final_t *finals;	/* ended jobs' records not yet in slurmdbd */
	size_t n_finals, cap_finals;
	/* PowerCapJobRecords' RPCs run in a thread of their own: libslurm
	 * retries a connect to a slurmctld that is down for MessageTimeout
	 * (10 s by default), which in the loop stopped the rounds and let
	 * the nodes' leases lapse (test_powercap_failures).  While it runs
	 * the loop touches none of recs, jobs, jobs_last, caps, maxs,
	 * rl_jobs, and a SIGHUP waits for it. */
	pthread_t jobs_thread;
	bool jobs_thread_on;	/* started, not joined */
	atomic_bool jobs_busy;	/* still in its RPCs */
	int64_t jobs_now;	/* the round it works for */
	uint64_t jobs_skipped;	/* rounds whose records waited */
} daemon_t;

/* ---------------------------------------------------------- the nodes */

static group_t *sort_group;

static int _cmp_index(const void *a, const void *b)
{
	return strcmp(sort_group->names[*(const size_t *)a],
		      sort_group->names[*(const size_t *)b]);
}

static long _find(group_t *g, const char *name)
{
	size_t lo = 0, hi = g->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(name, g->names[g->by_name[mid]]);

		if (!c)
			return (long)g->by_name[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

static void _group_free(group_t *g)
{
	if (g->have_ctl)
		pcap_ctl_free(&g->ctl);
	for (size_t i = 0; i < g->n; i++)
		free(g->names[i]);
	free(g->names);
	free(g->nodes);
	free(g->conn);
	free(g->by_name);
	pcap_conf_free(&g->conf);
	memset(g, 0, sizeof(*g));
}

/* --check-config's answer: the group as the daemon will run it, each node
 * class with its nodes, and the floors' sum against the cap. */
static void _print_check(const group_t *g, const char *path)
{
	uint64_t floors_mw = 0;

	for (size_t i = 0; i < g->n; i++)
		floors_mw += g->nodes[i].floor_mw;
	printf("%s: %zu nodes, cap %g W, floors %g W: OK\n", path, g->n,
	       g->conf.cap_w, floors_mw / 1e3);
	for (size_t k = 0; k < g->conf.n_classes; k++) {
		const pcap_class_t *c = &g->conf.classes[k];
		size_t n = 1;

		for (const char *p = c->nodes; *p; p++)
			n += *p == ',';
		printf("  NodeClass=%s: %zu node%s, %g..%g W, knobs %s\n",
		       c->name, n, n == 1 ? "" : "s", c->floor_w, c->max_w,
		       c->knobs ? c->knobs : g->conf.knobs);
	}
}

/*
 * One connection per node: the soft limit of open files (1024 under
 * systemd unless LimitNOFILE says more) raised to the hard one, as
 * slurmctld does, and a limit still short of the group said at once (the
 * agents beyond it could not connect, and would be charged their max).
 */
static uint64_t _open_files(size_t nodes)
{
	struct rlimit rl;
	unsigned long long nr_open = 0;
	FILE *f;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return UINT64_MAX;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		/* no higher than the kernel takes (an unlimited hard limit) */
		if (rl.rlim_max == RLIM_INFINITY &&
		    (f = fopen("/proc/sys/fs/nr_open", "r"))) {
			if (fscanf(f, "%llu", &nr_open) == 1 && nr_open)
				rl.rlim_cur = (rlim_t)nr_open;
			fclose(f);
		}
		if (setrlimit(RLIMIT_NOFILE, &rl))
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur < nodes + PCAP_FILES_SPARE)
		se_log(SE_LOG_ERROR, "open files limit %llu is under the "
		       "group's %zu nodes + %d: raise LimitNOFILE (the "
		       "agents beyond it cannot connect)",
		       (unsigned long long)rl.rlim_cur, nodes,
		       PCAP_FILES_SPARE);
	return (uint64_t)rl.rlim_cur;
}

/* The group of a checked configuration: 0, or -errno with err. */
static int _group_load(group_t *g, const char *path, char *err, size_t len)
{
	char *list, *save = NULL, *tok, e[400];
	pcap_params_t p;
	int rv;

	memset(g, 0, sizeof(*g));
	if ((rv = pcap_conf_read(&g->conf, path, err, len)))
		return rv;
	if (!g->conf.nodes || !g->conf.controller) {
		snprintf(err, len, "%s: %s is required", path,
			 g->conf.nodes ? "PowerCapController" :
			 "PowerCapNodes");
		_group_free(g);
		return -EINVAL;
	}
	for (const char *c = g->conf.nodes; *c; c++)
		g->n += *c == ',';
	g->n++;
	g->nodes = calloc(g->n, sizeof(*g->nodes));
	g->names = calloc(g->n, sizeof(*g->names));
	g->conn = calloc(g->n, sizeof(*g->conn));
	g->by_name = calloc(g->n, sizeof(*g->by_name));
	list = strdup(g->conf.nodes);
	if (!g->nodes || !g->names || !g->conn || !g->by_name || !list) {
		free(list);
		_group_free(g);
		snprintf(err, len, "out of memory");
		return -ENOMEM;
	}
	g->n = 0;
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), g->n++) {
		pcap_node_conf_t nc;

		pcap_conf_node(&g->conf, tok, &nc);	/* its NodeClass */
		g->names[g->n] = strdup(tok);
		g->nodes[g->n] = (pcap_node_t){
			.name = g->names[g->n],
			.floor_mw = (uint32_t)(nc.floor_w * 1000 + 0.5),
			.max_mw = (uint32_t)(nc.max_w * 1000 + 0.5) };
		g->conn[g->n] = -1;
		g->by_name[g->n] = g->n;
	}
	free(list);
	sort_group = g;
	qsort(g->by_name, g->n, sizeof(*g->by_name), _cmp_index);
	for (size_t i = 1; i < g->n; i++)
		if (!strcmp(g->names[g->by_name[i]],
			    g->names[g->by_name[i - 1]])) {
			snprintf(err, len, "%s: PowerCapNodes names %s twice",
				 path, g->names[g->by_name[i]]);
			_group_free(g);
			return -EINVAL;
		}
	pcap_conf_params(&g->conf, &p);
	if ((rv = pcap_params_check(&p, g->nodes, g->n, e, sizeof(e))))
		snprintf(err, len, "%s: %s", path, e);
	else if ((rv = pcap_ctl_init(&g->ctl, &p, g->nodes, g->n,
				     (int64_t)g->conf.raise_gate_ns,
				     2 * (int64_t)g->conf.period_ns)))
		snprintf(err, len, "out of memory");
	if (rv) {
		_group_free(g);
		return rv;
	}
	g->have_ctl = true;
	/* The agents take only sequence numbers above the last they applied
	 * (pcap_lease.c): a restarted daemon starts above any its previous
	 * run sent, from the wall clock in ns (one message per ns would be
	 * needed to catch up with it). */
	g->ctl.seq = se_wall_ns();
	return 0;
}

/* A reloaded group goes on from the old one's state, node by node: the
 * caps sent (still in force), the answers, the sequence numbers.  Without
 * it every node would count as uncapped and silent for a round. */
static void _group_carry(group_t *g, const group_t *old)
{
	for (size_t i = 0; i < g->n; i++) {
		long j = _find((group_t *)old, g->names[i]);
		pcap_ctl_node_t *st = &g->ctl.st[i];

		if (j < 0)
			continue;
		*st = old->ctl.st[j];
		st->held_mw = 0;
		if (st->sent_cap_mw > g->nodes[i].max_mw)
			st->sent_cap_mw = g->nodes[i].max_mw;
	}
	if (old->ctl.seq > g->ctl.seq)
		g->ctl.seq = old->ctl.seq;
}

/* ------------------------------------------------------ the connections */

static void _close(daemon_t *d, size_t c)
{
	conn_t *k = &d->conns[c];

	if (k->index >= 0 && d->g.conn[k->index] == (long)c) {
		/* charged its maximum from the next round on, not after
		 * silent_ns: an agent stopped restores its defaults now */
		pcap_ctl_answer(&d->g.ctl, (size_t)k->index,
				(int64_t)se_mono_ns(), 0,
				d->g.ctl.st[k->index].power_mw, false);
		pcap_ctl_idle(&d->g.ctl, (size_t)k->index, false);
		pcap_ctl_window_cap(&d->g.ctl, (size_t)k->index, 0);
		se_log(SE_LOG_INFO, "node %s: agent gone", k->node);
		d->g.conn[k->index] = -1;
	}
	close(k->fd);
	/* the last connection takes its place */
	*k = d->conns[--d->n_conns];
	if (c < d->n_conns && k->index >= 0 &&
	    d->g.conn[k->index] == (long)d->n_conns)
		d->g.conn[k->index] = (long)c;
}

/* Room for one more message of a loop turn: its item and where it goes
 * (two arrays, one for the MUNGE pool). */
static int _pending_room(se_munge_item_t **items, size_t *cap_items,
			 pending_t **to, size_t *cap_to, size_t n)
{
	return se_array_room(items, n, cap_items, sizeof(**items), 256) ?:
	       se_array_room(to, n, cap_to, sizeof(**to), 256);
}

/* pcap_ctl's send: node i's CAP, sealed and written with the others of
 * this loop turn (_flush_sends). */
static void _send(void *arg, size_t i, uint32_t cap_mw, uint64_t seq)
{
	daemon_t *d = arg;
	long c = d->g.conn[i];
	pcap_cap_msg_t m = { .seq = seq, .cap_mw = cap_mw,
			     .lease_ms = (uint32_t)(d->g.conf.hold_ns /
						    SE_NS_PER_MS) };
	se_munge_item_t *it;
	int len;

	if (c < 0)
		return;		/* no agent: charged its max (silent) */
	if (d->g.ctl.st[i].released)
		m.flags |= PCAP_CAP_RESTORE;	/* idle: its knobs' defaults */
	snprintf(m.node, sizeof(m.node), "%s", d->g.names[i]);
	if (_pending_room(&d->out_items, &d->cap_out_items, &d->out_to,
			  &d->cap_out_to, d->n_out)) {
		se_log(SE_LOG_ERROR, "node %s: out of memory", m.node);
		return;
	}
	it = &d->out_items[d->n_out];
	if ((len = pcap_wire_cap(&m, it->buf, sizeof(it->buf))) < 0)
		return;
	it->len = (size_t)len;
	d->out_to[d->n_out++] = (pending_t){ .conn = (size_t)c, .node = i };
}

/* This turn's CAPs sealed together (the MUNGE pool), then written. */
static void _flush_sends(daemon_t *d)
{
	uint64_t t0 = se_mono_ns();

	if (!d->n_out)
		return;
	se_munge_pool_seal(d->munge, d->out_items, d->n_out);
	for (size_t k = 0; k < d->n_out; k++) {
		se_munge_item_t *it = &d->out_items[k];
		int fd = d->conns[d->out_to[k].conn].fd;
		int rv = it->rc;

		if (rv) {	/* munged's failure, not the connection's:
				 * the node's lease runs on, its cap resent
				 * next round */
			se_log_limited(&d->rl_munge, se_mono_ns(),
				       SE_LOG_ERROR, "node %s: %s",
				       d->g.names[d->out_to[k].node], it->err);
		} else if ((rv = se_write_all(fd, it->sealed,
					      it->sealed_len))) {
			se_log(SE_LOG_ERROR, "node %s: write: %s",
			       d->g.names[d->out_to[k].node], strerror(-rv));
			shutdown(fd, SHUT_RDWR);	/* closed by poll */
		}
		free(it->sealed);
		it->sealed = NULL;
	}
	se_log(SE_LOG_DEBUG, "%zu caps sealed and sent in %.1f ms", d->n_out,
	       (se_mono_ns() - t0) / 1e6);
	d->n_out = 0;
}

static void _report(daemon_t *d, size_t c, const pcap_report_msg_t *m)
{
	conn_t *k = &d->conns[c];
	long i = _find(&d->g, m->node);

	if (i < 0) {
		se_log(SE_LOG_ERROR, "a report from node %s, not in "
		       "PowerCapNodes: connection closed", m->node);
		shutdown(k->fd, SHUT_RDWR);
		return;
	}
	if (k->index != i) {
		if (d->g.conn[i] >= 0 && d->g.conn[i] != (long)c)
			shutdown(d->conns[d->g.conn[i]].fd, SHUT_RDWR);
		/* a connection that named another node before: that node
		 * has no agent now (charged its maximum, sent nothing) */
		if (k->index >= 0 && d->g.conn[k->index] == (long)c)
			d->g.conn[k->index] = -1;
		d->g.conn[i] = (long)c;
		k->index = i;
		snprintf(k->node, sizeof(k->node), "%s", m->node);
		se_log(SE_LOG_INFO, "node %s: agent connected", m->node);
	}
	if (m->error[0])	/* a failing knob answers every round */
		se_log_limited(&d->rl_knob, se_mono_ns(), SE_LOG_ERROR,
			       "node %s: knob failed: %s", m->node, m->error);
	/* no reading (window 0): answered as not enforced, so charged its
	 * maximum: nothing says what it draws */
	pcap_ctl_answer(&d->g.ctl, (size_t)i, (int64_t)se_mono_ns(), m->seq,
			m->power_mw,
			(m->flags & PCAP_REPORT_ENFORCED) && m->window_ms);
	pcap_ctl_idle(&d->g.ctl, (size_t)i, !(m->flags & PCAP_REPORT_JOB));
	pcap_ctl_window_cap(&d->g.ctl, (size_t)i, m->window_cap_mw);
}

/* A REPORT of connection c, opened: taken, or refused and logged. */
static void _opened(daemon_t *d, size_t c, const se_munge_item_t *it)
{
	pcap_report_msg_t m;
	char err[256];

	if (it->rc) {
		se_log(SE_LOG_ERROR, "a report refused: %s", it->err);
		return;
	}
	if (it->uid != 0 && it->uid != d->user_uid) {
		se_log(SE_LOG_ERROR, "a report refused: sent by uid %u (root "
		       "or uid %u only)", (unsigned)it->uid,
		       (unsigned)d->user_uid);
		return;
	}
	if (pcap_wire_read_report(it->payload, it->payload_len, &m, err,
				  sizeof(err))) {
		se_log(SE_LOG_ERROR, "a report refused: %s", err);
		return;
	}
	_report(d, c, &m);
}

/* A line of connection c, to open with the others of this loop turn. */
static void _queue_report(daemon_t *d, size_t c, const char *line)
{
	size_t n = strlen(line) + 1;

	if (d->in_len + n > d->cap_in_text) {
		size_t cap = d->cap_in_text ? 2 * d->cap_in_text : 65536;
		char *t;

		while (cap < d->in_len + n)
			cap *= 2;
		if (!(t = realloc(d->in_text, cap)))
			goto nomem;
		d->in_text = t;
		d->cap_in_text = cap;
	}
	if (_pending_room(&d->in_items, &d->cap_in_items, &d->in_from,
			  &d->cap_in_from, d->n_in))
		goto nomem;
	memcpy(d->in_text + d->in_len, line, n);
	d->in_from[d->n_in++] = (pending_t){ .conn = c, .off = d->in_len };
	d->in_len += n;
	return;
nomem:	/* the node looks silent this round: charged its maximum */
	se_log_limited(&d->rl_munge, se_mono_ns(), SE_LOG_ERROR,
		       "a report dropped: out of memory");
}

/* This turn's REPORTs opened together (the MUNGE pool), then taken in the
 * order they came. */
static void _open_reports(daemon_t *d)
{
	for (size_t k = 0; k < d->n_in; k++)
		d->in_items[k].text = d->in_text + d->in_from[k].off;
	se_munge_pool_open(d->munge, d->in_items, d->n_in);
	for (size_t k = 0; k < d->n_in; k++)
		_opened(d, d->in_from[k].conn, &d->in_items[k]);
	d->n_in = 0;
	d->in_len = 0;
}

/* Connection c's lines queued: 0, or -1 when it ended (closed after this
 * turn's REPORTs are taken). */
static int _readable(daemon_t *d, size_t c)
{
	char line[SE_LINE_MAX];
	int rv = se_lines_fill(&d->conns[c].lines, d->conns[c].fd);

	if (rv <= 0)
		return -1;
	while ((rv = se_lines_next(&d->conns[c].lines, line,
				     sizeof(line))) > 0)
		_queue_report(d, c, line);
	return rv;
}

static void _accept(daemon_t *d)
{
	int fd = accept4(d->listen_fd, NULL, NULL,
			 SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd >= 0 && d->n_conns + PCAP_FILES_SPARE >= d->files_limit) {
		/* the spare descriptors are munged's and the logs': without
		 * them every node's message would fail, not this one's */
		close(fd);
		fd = -1;
		errno = EMFILE;
	}
	if (fd < 0) {
		if (errno != EMFILE && errno != ENFILE)
			return;
		/* the connection stays queued: not listened to for 100 ms,
		 * or the loop would spin on it */
		d->accept_resume_ns = (int64_t)se_mono_ns() +
				      100 * (int64_t)SE_NS_PER_MS;
		se_log_limited(&d->rl_accept, se_mono_ns(), SE_LOG_ERROR,
			       "accept: %s with %zu agents connected: the "
			       "others cannot connect (raise LimitNOFILE)",
			       strerror(errno), d->n_conns);
		return;
	}
	if (d->n_conns == d->cap_conns) {
		size_t n = d->cap_conns ? 2 * d->cap_conns : 64;
		conn_t *p = realloc(d->conns, n * sizeof(*p));

		if (!p) {
			close(fd);
			return;
		}
		d->conns = p;
		d->cap_conns = n;
	}
	d->conns[d->n_conns++] = (conn_t){ .fd = fd, .index = -1 };
}

static int _listen(daemon_t *d, char *err, size_t len)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE }, *res = NULL;
	const char *port = strrchr(d->g.conf.controller, ':') + 1;
	int one = 1, rv;

	if ((rv = getaddrinfo(d->o.listen, port, &hints, &res))) {
		snprintf(err, len, "listen on %s:%s: %s",
			 d->o.listen ? d->o.listen : "*", port,
			 gai_strerror(rv));
		return -EINVAL;
	}
	d->listen_fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
			      SOCK_CLOEXEC, 0);
	if (d->listen_fd < 0 ||
	    setsockopt(d->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
		       sizeof(one)) ||
	    bind(d->listen_fd, res->ai_addr, res->ai_addrlen) ||
	    listen(d->listen_fd, 1024)) {
		snprintf(err, len, "listen on %s:%s: %s",
			 d->o.listen ? d->o.listen : "*", port,
			 strerror(errno));
		freeaddrinfo(res);
		return -errno;
	}
	freeaddrinfo(res);
	return 0;
}

/* ------------------------------------------------------------- rounds */

/* PowerCapStateFile (pcap_state.h): whether any node's cap in force is
 * below its maximum, written when that changes or every STATE_EVERY_S;
 * a write error is logged (rate-limited), the caps go on regardless. */
static void _publish(daemon_t *d, int64_t now)
{
	const group_t *g = &d->g;
	int64_t wall = (int64_t)(se_wall_ns() / SE_NS_PER_SEC);
	int64_t every = STATE_EVERY_S > g->conf.period_ns / SE_NS_PER_SEC ?
			STATE_EVERY_S :
			(int64_t)(g->conf.period_ns / SE_NS_PER_SEC);
	pcap_state_t st = { .time_s = wall, .cap_w = g->conf.cap_w,
			    .power_w = g->ctl.last.sum_power_mw / 1e3,
			    .nodes = (unsigned)g->n };
	char err[512];

	if (!g->conf.state_file)
		return;
	for (size_t i = 0; i < g->n; i++)
		st.capped_nodes += g->ctl.st[i].sent_cap_mw <
				   g->nodes[i].max_mw;
	st.capping = st.capped_nodes > 0;
	if (st.capping == d->state_capping && now < d->state_next_ns)
		return;
	if (st.capping && !d->state_capping)
		d->state_since_s = wall;
	st.since_s = st.capping ? d->state_since_s : 0;
	st.valid_until_s = wall + STATE_VALID_TIMES * every;
	if (pcap_state_write(g->conf.state_file, &st, err, sizeof(err))) {
		se_log_limited(&d->rl_state, se_mono_ns(), SE_LOG_ERROR,
			       "PowerCapStateFile: %s", err);
		return;		/* tried again next round */
	}
	if (st.capping != d->state_capping)
		se_log(SE_LOG_INFO, "capping %s (%u of %zu nodes below their "
		       "maximum): %s written", st.capping ? "started" :
		       "stopped", st.capped_nodes, g->n, g->conf.state_file);
	d->state_capping = st.capping;
	d->state_next_ns = now + every * (int64_t)SE_NS_PER_SEC;
}


static long _find_node(void *arg, const char *name)
{
	return _find(arg, name);
}

/* A job gone: its final record logged, and queued for slurmdbd
 * (slurmctld takes no update of a finished job; _job_finals). */
static void _job_end(void *arg, const pcap_jobrec_t *r)
{
	daemon_t *d = arg;
	char token[96];
	final_t *f;

	if (!pcap_jobrec_token(r, token, sizeof(token)))
		return;
	se_log(SE_LOG_INFO, "job %u ended: %s", r->job_id, token);
	if (se_array_room(&d->finals, d->n_finals, &d->cap_finals,
			  sizeof(d->finals[0]), 16)) {
		se_log(SE_LOG_ERROR, "job %u: final record %s not written: "
		       "out of memory", r->job_id, token);
		return;
	}
	f = &d->finals[d->n_finals++];
	f->job_id = r->job_id;
	snprintf(f->token, sizeof(f->token), "%s", token);
	f->ended_ns = f->next_ns = (int64_t)se_mono_ns();
}

/* The ended jobs' final records into slurmdbd, each once its end is
 * there; given up after FINAL_GIVE_UP_NS (its AdminComment then holds the
 * last record written while it ran). */
static void _job_finals(daemon_t *d)
{
	int64_t now = (int64_t)se_mono_ns();
	char err[512];
	size_t k = 0;

	while (k < d->n_finals) {
		final_t *f = &d->finals[k];
		int rc = 1;

		if (f->next_ns <= now) {
			rc = pcap_slurm_record_final(f->job_id, f->token, err,
						     sizeof(err));
			if (rc < 0)
				se_log_limited(&d->rl_jobs, se_mono_ns(),
					       SE_LOG_ERROR,
					       "job %u: final record: %s",
					       f->job_id, err);
			else if (!rc)
				se_log(SE_LOG_INFO, "job %u: final record "
				       "in its accounting: %s", f->job_id,
				       f->token);
			else
				se_log(SE_LOG_DEBUG, "final record: %s", err);
			f->next_ns = now + FINAL_RETRY_NS;
		}
		if (rc && now - f->ended_ns < FINAL_GIVE_UP_NS) {
			k++;
			continue;
		}
		if (rc)
			se_log(SE_LOG_ERROR, "job %u: final record %s not "
			       "written: its end not in slurmdbd after %.0f s",
			       f->job_id, f->token, FINAL_GIVE_UP_NS / 1e9);
		d->finals[k] = d->finals[--d->n_finals];
	}
}

/* Each running job's record into its AdminComment when due. */
static void _job_write(daemon_t *d, int64_t now)
{
	char token[96], err[512];

	for (size_t k = 0; k < d->recs.n; k++) {
		pcap_jobrec_t *r = &d->recs.v[k];
		const char *old = NULL;

		if (!pcap_jobrec_due(r, now, JOB_WRITE_EVERY_NS) ||
		    !pcap_jobrec_token(r, token, sizeof(token)))
			continue;
		for (size_t i = 0; i < d->jobs.n; i++)
			if (d->jobs.jobs[i].job_id == r->job_id)
				old = d->jobs.comments[i];
		/* a failure is tried again JOB_WRITE_EVERY_NS later */
		pcap_jobrec_written(r, now);
		if (pcap_slurm_record(r->job_id, old, token, err,
				      sizeof(err)))
			se_log_limited(&d->rl_jobs, se_mono_ns(),
				       SE_LOG_ERROR, "job record: %s", err);
		else
			se_log(SE_LOG_DEBUG, "job %u: %s", r->job_id, token);
	}
}

/* PowerCapJobRecords: the jobs' records advanced by this round's caps.
 * The job list is asked every round with its update time (slurmctld
 * answers "no change" cheaply); a failure keeps the old list, so no job
 * ends on a failed RPC. */
static void _job_records(daemon_t *d, int64_t now)
{
	group_t *g = &d->g;
	pcap_slurm_jobs_t fresh;
	char err[512];
	int rv;

	rv = pcap_slurm_jobs_load(&fresh, &d->jobs_last, _find_node, g, err,
				  sizeof(err));
	if (rv < 0)
		se_log_limited(&d->rl_jobs, se_mono_ns(), SE_LOG_ERROR,
			       "job records: %s", err);
	else if (rv == 0) {
		pcap_slurm_jobs_free(&d->jobs);
		d->jobs = fresh;
	}
	pcap_jobrecs_round(&d->recs, now, d->jobs.jobs, d->jobs.n, d->caps,
			   d->maxs, g->n, _job_end, d);
	_job_write(d, now);
	_job_finals(d);
}

static void *_job_records_thread(void *arg)
{
	daemon_t *d = arg;

	_job_records(d, d->jobs_now);
	atomic_store(&d->jobs_busy, false);
	return NULL;
}

/* The last records' thread joined; false while it still runs. */
static bool _job_records_idle(daemon_t *d)
{
	if (!d->jobs_thread_on)
		return true;
	if (atomic_load(&d->jobs_busy))
		return false;
	pthread_join(d->jobs_thread, NULL);
	d->jobs_thread_on = false;
	return true;
}

/* This round's caps to the records' thread; a round whose thread is still
 * in its RPCs is skipped (the next one charges the jobs the whole
 * interval since the last records' round). */
static void _job_records_start(daemon_t *d, int64_t now)
{
	group_t *g = &d->g;

	if (!g->conf.job_records)
		return;
	pcap_slurm_init();	/* in this thread, before the first RPC */
	if (!_job_records_idle(d)) {
		if (!(d->jobs_skipped++ % 10))
			se_log(SE_LOG_INFO, "job records: slurmctld has not "
			       "answered for %.1f s (rounds go on)",
			       (now - d->jobs_now) / 1e9);
		return;
	}
	if (!d->caps) {
		d->caps = calloc(g->n, sizeof(*d->caps));
		d->maxs = calloc(g->n, sizeof(*d->maxs));
		if (!d->caps || !d->maxs) {
			free(d->caps);
			free(d->maxs);
			d->caps = d->maxs = NULL;
			return;
		}
	}
	for (size_t i = 0; i < g->n; i++) {
		d->caps[i] = g->ctl.st[i].sent_cap_mw;
		d->maxs[i] = g->nodes[i].max_mw;
	}
	d->jobs_now = now;
	d->jobs_skipped = 0;
	atomic_store(&d->jobs_busy, true);
	if (pthread_create(&d->jobs_thread, NULL, _job_records_thread, d)) {
		_job_records_thread(d);		/* no thread: in the loop */
		return;
	}
	d->jobs_thread_on = true;
}

static void _round(daemon_t *d, int64_t now)
{
	pcap_ctl_t *ctl = &d->g.ctl;
	const pcap_stats_t *s = &ctl->last;
	int rv = pcap_ctl_round(ctl, now, _send, d);

	if (rv) {
		se_log(SE_LOG_ERROR, "round: %s", strerror(-rv));
		return;
	}
	pcap_ctl_renew(ctl, _send, d);
	d->rounds++;
	_publish(d, now);
	_job_records_start(d, now);
	se_log(SE_LOG_DEBUG, "round %llu: power %.1f W, caps %.1f W of %.1f "
	       "W (budget %.1f W), level %.3f, greedy %zu, donor %zu, "
	       "held %zu, unenforced %zu, released %zu, changed %zu, "
	       "lowered %zu%s",
	       (unsigned long long)d->rounds, s->sum_power_mw / 1e3,
	       s->sum_caps_mw / 1e3, ctl->params.cap_mw / 1e3,
	       s->budget_mw / 1e3, s->level, s->n_greedy, s->n_donor,
	       s->n_held, s->n_unenforced, s->n_released, s->n_changed,
	       s->n_lower,
	       s->infeasible ? ", INFEASIBLE: the cap cannot be held" : "");
	if (s->infeasible)
		se_log(SE_LOG_ERROR, "round %llu: the nodes charged their "
		       "maximum and the others' floors exceed PowerCapWatts",
		       (unsigned long long)d->rounds);
}

/* SIGHUP: a new group, the connections bound again by name. */
static void _reload(daemon_t *d)
{
	group_t g;
	char err[512];

	if (!_job_records_idle(d))
		return;		/* tried again when the records' RPCs end */
	se_prog_reload = 0;
	if (_group_load(&g, d->o.conf_path, err, sizeof(err))) {
		se_log(SE_LOG_ERROR, "reload: %s (the old configuration "
		       "kept)", err);
		return;
	}
	if (strcmp(strrchr(g.conf.controller, ':'),
		   strrchr(d->g.conf.controller, ':')))
		se_log(SE_LOG_ERROR, "reload: PowerCapController's port "
		       "changes only at a restart");
	_group_carry(&g, &d->g);
	g.ctl.uniform = d->o.uniform;
	_group_free(&d->g);
	d->g = g;
	/* the jobs' node indexes were the old group's: asked again */
	pcap_slurm_jobs_free(&d->jobs);
	free(d->caps);
	free(d->maxs);
	d->caps = d->maxs = NULL;
	d->jobs_last = 0;
	for (size_t c = 0; c < d->n_conns; c++) {
		conn_t *k = &d->conns[c];

		k->index = k->node[0] ? _find(&d->g, k->node) : -1;
		if (k->index >= 0)
			d->g.conn[k->index] = (long)c;
		else if (k->node[0])
			shutdown(k->fd, SHUT_RDWR);
	}
	d->files_limit = _open_files(d->g.n);
	se_log(SE_LOG_INFO, "reloaded %s: %zu nodes, cap %g W (a new node "
	       "charged its maximum until it answers)", d->o.conf_path,
	       d->g.n, d->g.conf.cap_w);
}

static void _run(daemon_t *d)
{
	struct pollfd *p = NULL;
	size_t cap_p = 0;
	int64_t next_round = (int64_t)se_mono_ns() +
			     (int64_t)d->g.conf.period_ns;

	while (!se_prog_stop) {
		int64_t now = (int64_t)se_mono_ns(), wait;
		bool holding;

		if (se_prog_reload)
			_reload(d);
		if (now >= next_round) {
			_round(d, now);
			next_round += (int64_t)d->g.conf.period_ns;
			if (next_round <= now)	/* late: no burst */
				next_round = now + (int64_t)d->g.conf.period_ns;
		}
		holding = pcap_ctl_tick(&d->g.ctl, now, _send, d);
		_flush_sends(d);	/* the round's and the tick's CAPs */
		wait = next_round - now;
		if (holding && wait > TICK_NS)
			wait = TICK_NS;
		if (now < d->accept_resume_ns && wait > d->accept_resume_ns - now)
			wait = d->accept_resume_ns - now;	/* listen again */
		if (cap_p < d->n_conns + 1) {
			cap_p = d->cap_conns + 1;
			p = realloc(p, cap_p * sizeof(*p));
		}
		p[0] = (struct pollfd){ .fd = now < d->accept_resume_ns ? -1 :
					      d->listen_fd, .events = POLLIN };
		for (size_t c = 0; c < d->n_conns; c++)
			p[c + 1] = (struct pollfd){ .fd = d->conns[c].fd,
						    .events = POLLIN };
		if (poll(p, d->n_conns + 1, (int)(wait / (int64_t)SE_NS_PER_MS) + 1) <=
		    0)
			continue;
		for (size_t c = 0; c < d->n_conns; c++)
			if (p[c + 1].revents && _readable(d, c))
				d->conns[c].gone = true;
		_open_reports(d);
		/* from the end: _close moves the last connection */
		for (size_t c = d->n_conns; c-- > 0;)
			if (d->conns[c].gone)
				_close(d, c);
		if (p[0].revents & POLLIN)
			_accept(d);
	}
	free(p);
}

/* ---------------------------------------------------------------- setup */

static void _usage(FILE *f)
{
	fprintf(f, "usage: " PROG " [-v] [-f powercap.conf] [-l address] "
		"[--munge-socket path] [--munge-threads N] [-u user] "
		"[--uniform]\n"
		"       " PROG " --check-config [-f powercap.conf]\n");
}

static int _options(int argc, char **argv, opts_t *o)
{
	static const struct option longs[] = {
		{ "conf", required_argument, NULL, 'f' },
		{ "listen", required_argument, NULL, 'l' },
		{ "munge-socket", required_argument, NULL, 'm' },
		{ "munge-threads", required_argument, NULL, 'T' },
		{ "user", required_argument, NULL, 'u' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "uniform", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	char *end;
	int c;

	*o = (opts_t){ .conf_path = "/etc/slurm/powercap.conf",
		       .user = "root", .munge_threads = MUNGE_THREADS };
	while ((c = getopt_long(argc, argv, "f:l:m:u:vCh", longs, NULL)) !=
	       -1) {
		switch (c) {
		case 'f': o->conf_path = optarg; break;
		case 'l': o->listen = optarg; break;
		case 'm': o->munge_socket = optarg; break;
		case 'u': o->user = optarg; break;
		case 'v': o->verbose = true; break;
		case 'C': o->check = true; break;
		case 'U': o->uniform = true; break;
		case 'T':
			o->munge_threads = (unsigned)strtoul(optarg, &end, 10);
			if (*end || !o->munge_threads ||
			    o->munge_threads > SE_MUNGE_POOL_MAX_THREADS) {
				fprintf(stderr, PROG ": --munge-threads %s: 1 "
					"to %d\n", optarg,
					SE_MUNGE_POOL_MAX_THREADS);
				return -EINVAL;
			}
			break;
		case 'h': _usage(stdout); exit(0);
		default: _usage(stderr); return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	static daemon_t d = { .listen_fd = -1,
			      .rl_knob = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC,
							   10),
			      .rl_state = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC,
							    2),
			      .rl_accept = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC,
							     3),
			      .rl_munge = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC,
							    10),
			      .rl_jobs = SE_RATELIMIT_INIT(60 * SE_NS_PER_SEC,
							   5) };
	char err[512];

	if (_options(argc, argv, &d.o))
		return 2;
	se_prog_log(PROG, d.o.verbose);
	se_prog_signals();
	if (d.o.check) {	/* the file alone: nothing opened */
		if (_group_load(&d.g, d.o.conf_path, err, sizeof(err))) {
			fprintf(stderr, PROG ": %s\n", err);
			return 2;
		}
		_print_check(&d.g, d.o.conf_path);
		_group_free(&d.g);
		return 0;
	}
	if (_group_load(&d.g, d.o.conf_path, err, sizeof(err)) ||
	    se_prog_uid(d.o.user, &d.user_uid, err, sizeof(err)) ||
	    !(d.munge = se_munge_pool_new(d.o.munge_socket,
					  d.o.munge_threads, err,
					  sizeof(err))) ||
	    _listen(&d, err, sizeof(err))) {
		se_log(SE_LOG_ERROR, "%s", err);
		return 2;
	}
	d.g.ctl.uniform = d.o.uniform;
	d.files_limit = _open_files(d.g.n);
	se_log(SE_LOG_INFO, "%zu nodes, cap %g W%s, period %g s, lease %g s, "
	       "listening on port %s", d.g.n, d.g.conf.cap_w,
	       d.o.uniform ? " (uniform: cap/n each)" : "",
	       d.g.conf.period_ns / 1e9, d.g.conf.hold_ns / 1e9,
	       strrchr(d.g.conf.controller, ':') + 1);
	_run(&d);
	if (d.jobs_thread_on)
		pthread_join(d.jobs_thread, NULL);
	se_log(SE_LOG_INFO, "signal %d: exiting; each node keeps its cap "
	       "until its lease (%g s) lapses", (int)se_prog_stop,
	       d.g.conf.hold_ns / 1e9);
	while (d.n_conns)
		_close(&d, d.n_conns - 1);
	close(d.listen_fd);
	free(d.conns);
	se_munge_pool_free(d.munge);
	free(d.out_items);
	free(d.out_to);
	free(d.in_items);
	free(d.in_from);
	free(d.in_text);
	pcap_slurm_jobs_free(&d.jobs);
	for (size_t k = 0; k < d.n_finals; k++)
		se_log(SE_LOG_INFO, "job %u: final record %s not written "
		       "(exiting)", d.finals[k].job_id, d.finals[k].token);
	free(d.finals);
	pcap_slurm_fini();
	pcap_jobrecs_free(&d.recs);
	free(d.caps);
	free(d.maxs);
	_group_free(&d.g);
	return 0;
}
