/*
 * se-bench-powercapd-load.c - N node agents in one process, for the power
 * cap daemon at scale (issue #45; bench/powercap/daemon_scale.py drives
 * it).  Each agent is one TCP connection to slurm-energy-powercapd, as the
 * real agent's: a first REPORT naming its node, then a REPORT answering
 * every CAP (its sequence, power min(demand, cap) over a 1 s window, the
 * cap held, ENFORCED and JOB), every message sealed and opened by munged
 * as the real programs do, the CAPs that came together opened and answered
 * by a pool of threads (se_munge_pool.h: one agent at a time could not
 * answer 10,000 a second).  No knobs, no slurmd: what is measured is the
 * daemon's side, its rounds' sends and answers.
 *
 *   se-bench-powercapd-load HOST:PORT PREFIX N DEMAND_W SECONDS
 *                           [MUNGE_SOCKET]
 *
 * Nodes PREFIX00001 .. PREFIX<N>, five digits (the daemon's PowerCapNodes
 * PREFIX[00001-N]).  Prints one line per round the daemon sent (a burst
 * of CAPs, bursts split where no CAP came for 300 ms): its CAPs, the time
 * from its first to its last CAP as received, and then a summary line.
 * The agents' own work (munge_decode and munge_encode of each message)
 * shares the machine with the daemon's: on a small host the figures are
 * an upper bound of the daemon's round.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pcap_wire.h"
#include "se_lines.h"
#include "se_munge.h"
#include "se_munge_pool.h"
#include "se_time.h"

#define BURST_GAP_NS	((int64_t)(300 * SE_NS_PER_MS))
#define LOAD_THREADS	4
#define EVENTS_MAX	1024

typedef struct {
	int fd;
	char node[PCAP_WIRE_NAME_MAX];
	se_lines_t lines;
} fake_agent_t;

typedef struct {
	se_munge_pool_t *munge;
	uint32_t demand_mw;
	/* this turn's CAPs (their lines), then the REPORTs answering them */
	se_munge_item_t items[EVENTS_MAX * 4];
	fake_agent_t *from[EVENTS_MAX * 4];
	char text[EVENTS_MAX * 4][SE_LINE_MAX];
	size_t n;
	/* the burst of CAPs being received */
	int64_t burst_first_ns, burst_last_ns;
	size_t burst_caps, bursts;
	double spread_sum_s, spread_max_s;
	size_t refused;
} load_t;

static int _connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai;
	int fd = -1;

	if (getaddrinfo(host, port, &hints, &ai))
		return -1;
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen)) {
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* Agent a's REPORT answering seq (cap_mw held) into it->buf. */
static int _report(const load_t *l, const fake_agent_t *a, uint64_t seq,
		   uint32_t cap_mw, se_munge_item_t *it)
{
	pcap_report_msg_t m = { .seq = seq, .window_ms = 1000,
				.cap_mw = cap_mw, .window_cap_mw = cap_mw,
				.flags = PCAP_REPORT_ENFORCED |
					 PCAP_REPORT_JOB };
	int len;

	m.power_mw = l->demand_mw < cap_mw ? l->demand_mw : cap_mw;
	snprintf(m.node, sizeof(m.node), "%s", a->node);
	len = pcap_wire_report(&m, it->buf, sizeof(it->buf));
	it->len = len < 0 ? 0 : (size_t)len;
	return len < 0 ? -1 : 0;
}

/* The sealed items written to their agents. */
static void _write_sealed(load_t *l, se_munge_item_t *items,
			  fake_agent_t **to, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (items[k].rc || !items[k].sealed ||
		    se_write_all(to[k]->fd, items[k].sealed,
				 items[k].sealed_len))
			l->refused++;
		free(items[k].sealed);
		items[k].sealed = NULL;
	}
}

/* A burst ended (no CAP for BURST_GAP_NS): its line. */
static void _burst_end(load_t *l)
{
	double spread;

	if (!l->burst_caps)
		return;
	spread = (l->burst_last_ns - l->burst_first_ns) / 1e9;
	printf("round %zu: %zu caps over %.3f s\n", l->bursts + 1,
	       l->burst_caps, spread);
	fflush(stdout);
	l->bursts++;
	l->spread_sum_s += spread;
	if (spread > l->spread_max_s)
		l->spread_max_s = spread;
	l->burst_caps = 0;
}

/* One CAP opened (it): counted in its burst, its REPORT built in it. */
static int _cap(load_t *l, fake_agent_t *a, se_munge_item_t *it)
{
	int64_t now = (int64_t)se_mono_ns();
	pcap_cap_msg_t m;
	char err[256];

	if (it->rc || pcap_wire_read_cap(it->payload, it->payload_len, &m,
					 err, sizeof(err))) {
		fprintf(stderr, "%s: a message refused: %s\n", a->node,
			it->rc ? it->err : err);
		l->refused++;
		return -1;
	}
	if (l->burst_caps && now - l->burst_last_ns > BURST_GAP_NS)
		_burst_end(l);
	if (!l->burst_caps)
		l->burst_first_ns = now;
	l->burst_last_ns = now;
	l->burst_caps++;
	return _report(l, a, m.seq, m.flags & PCAP_CAP_RESTORE ? UINT32_MAX :
								 m.cap_mw, it);
}

/* This turn's CAPs opened together, answered, the REPORTs sealed
 * together and written. */
static void _answer_all(load_t *l)
{
	size_t k, n = 0;

	for (k = 0; k < l->n; k++)
		l->items[k].text = l->text[k];
	se_munge_pool_open(l->munge, l->items, l->n);
	for (k = 0; k < l->n; k++)	/* the answered ones first */
		if (!_cap(l, l->from[k], &l->items[k])) {
			if (k != n) {
				memcpy(l->items[n].buf, l->items[k].buf,
				       l->items[k].len);
				l->items[n].len = l->items[k].len;
				l->from[n] = l->from[k];
			}
			n++;
		}
	se_munge_pool_seal(l->munge, l->items, n);
	_write_sealed(l, l->items, l->from, n);
	l->n = 0;
}

static int _readable(load_t *l, fake_agent_t *a)
{
	int rv = se_lines_fill(&a->lines, a->fd);

	if (rv <= 0)
		return -1;
	for (;;) {
		if (l->n == sizeof(l->items) / sizeof(l->items[0]))
			_answer_all(l);
		rv = se_lines_next(&a->lines, l->text[l->n],
				   sizeof(l->text[0]));
		if (rv <= 0)
			break;
		l->from[l->n++] = a;
	}
	return rv < 0 ? -1 : 0;
}

static int _open_all(load_t *l, fake_agent_t *ag, size_t n, const char *host,
		     const char *port, const char *prefix, int ep)
{
	for (size_t i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN,
					  .data.ptr = &ag[i] };

		snprintf(ag[i].node, sizeof(ag[i].node), "%s%05zu", prefix,
			 i + 1);
		if ((ag[i].fd = _connect(host, port)) < 0) {
			fprintf(stderr, "connect %s:%s for %s: %s\n", host,
				port, ag[i].node, strerror(errno));
			return -1;
		}
		_report(l, &ag[i], 0, UINT32_MAX, &l->items[0]);
		se_munge_pool_seal(l->munge, l->items, 1);	/* its node */
		_write_sealed(l, l->items, (fake_agent_t *[]){ &ag[i] }, 1);
		fcntl(ag[i].fd, F_SETFL, O_NONBLOCK);
		if (epoll_ctl(ep, EPOLL_CTL_ADD, ag[i].fd, &ev))
			return -1;
	}
	return 0;
}

static void _run(load_t *l, int ep, double seconds)
{
	static struct epoll_event ev[EVENTS_MAX];
	int64_t end = (int64_t)se_mono_ns() + (int64_t)(seconds * 1e9);

	while ((int64_t)se_mono_ns() < end) {
		int n = epoll_wait(ep, ev, EVENTS_MAX, 100);

		for (int i = 0; i < n; i++) {
			fake_agent_t *a = ev[i].data.ptr;

			if (_readable(l, a)) {
				fprintf(stderr, "%s: the daemon closed its "
					"connection\n", a->node);
				epoll_ctl(ep, EPOLL_CTL_DEL, a->fd, NULL);
			}
		}
		_answer_all(l);
		if (l->burst_caps &&
		    (int64_t)se_mono_ns() - l->burst_last_ns > BURST_GAP_NS)
			_burst_end(l);
	}
	_burst_end(l);
}

int main(int argc, char **argv)
{
	struct rlimit rl = { 65536, 65536 };
	static load_t l;
	fake_agent_t *ag;
	char err[256], *colon;
	size_t n;
	int ep;

	if (argc < 6 || argc > 7 || !(colon = strrchr(argv[1], ':'))) {
		fprintf(stderr, "usage: %s HOST:PORT PREFIX N DEMAND_W "
			"SECONDS [MUNGE_SOCKET]\n", argv[0]);
		return 2;
	}
	*colon = '\0';
	n = strtoul(argv[3], NULL, 10);
	l.demand_mw = (uint32_t)(atof(argv[4]) * 1000);
	setrlimit(RLIMIT_NOFILE, &rl);	/* 10,000 connections */
	if (!(l.munge = se_munge_pool_new(argc == 7 ? argv[6] : NULL,
					  LOAD_THREADS, err, sizeof(err)))) {
		fprintf(stderr, "munge: %s\n", err);
		return 1;
	}
	if (!n || !(ag = calloc(n, sizeof(*ag))) ||
	    (ep = epoll_create1(0)) < 0)
		return 1;
	if (_open_all(&l, ag, n, argv[1], colon + 1, argv[2], ep))
		return 1;
	fprintf(stderr, "%zu agents connected\n", n);
	_run(&l, ep, atof(argv[5]));
	printf("summary: %zu rounds, spread mean %.3f s, max %.3f s, "
	       "%zu messages refused or unsent\n", l.bursts,
	       l.bursts ? l.spread_sum_s / l.bursts : 0.0, l.spread_max_s,
	       l.refused);
	for (size_t i = 0; i < n; i++)
		close(ag[i].fd);
	free(ag);
	se_munge_pool_free(l.munge);
	return 0;
}
