/*
 * pdu_poll_meter.c - a node's reading from the PDU poller
 * (pdu_poll_meter.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "se_resolve.h"
#include "se_time.h"
#include "pdu_poll_meter.h"
#include "pdu_poll_wire.h"

/* ------------------------------------------------------- private types */

struct pdu_poll_meter {
	char node[PDU_POLL_NAME_MAX];
	char poller[256];		/* as configured, for messages */
	char host[256], port[16];
	se_sealer_t sealer;
	void (*sealer_free)(void *ctx);
	uid_t poller_uid;
	uint64_t timeout_ns, max_age_ns;
	int fd;				/* -1: not connected */
	se_lines_t lines;
	uint64_t nonce;
	uint64_t last_seq;		/* of the last reading taken */
	unsigned long asks;
};

/* -------------------------------------------------- private prototypes */

static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len);
static void _close(void *dev);

/* --------------------------------------------------- public variables */

const meter_ops_t pdu_poll_meter_ops = {
	.name = "pdu-poller",
	.open = NULL,		/* connected by the first read: its message
				 * names the poller */
	.read = _read,
	.close = _close,
};

/* ---------------------------------------------------- private functions */

/* "HOST:PORT" or "[V6]:PORT" into host and port. */
static int _split(const char *addr, char *host, size_t hlen, char *port,
		  size_t plen)
{
	const char *colon = strrchr(addr, ':');
	size_t n;

	if (!colon || colon == addr || !colon[1] ||
	    strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    strlen(colon + 1) >= plen)
		return -EINVAL;
	n = (size_t)(colon - addr);
	if (addr[0] == '[' && colon[-1] == ']')
		addr++, n -= 2;
	if (!n || n >= hlen)
		return -EINVAL;
	memcpy(host, addr, n);
	host[n] = '\0';
	snprintf(port, plen, "%s", colon + 1);
	return 0;
}

static int _fail(pdu_poll_meter_t *m, char *msg, size_t len, int rc,
		 const char *what, const char *why)
{
	snprintf(msg, len, "poller %s: %s: %s", m->poller, what,
		 why ? why : strerror(-rc));
	return rc;
}

/* Wait for fd to be ready for events by deadline: 0, or -ETIMEDOUT. */
static int _wait(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };

	for (;;) {
		uint64_t now = se_mono_ns();
		int r;

		if (now >= deadline_ns)
			return -ETIMEDOUT;
		r = poll(&p, 1, (int)((deadline_ns - now + 999999) / 1000000));
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
	}
}

static int _connect(pdu_poll_meter_t *m, uint64_t deadline_ns, char *msg,
		    size_t len)
{
	char addr[SE_RESOLVE_ADDR_LEN];
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST |
					      AI_NUMERICSERV };
	struct addrinfo *ai = NULL;
	socklen_t sl = sizeof(int);
	int rc, so = 0;

	if ((rc = se_resolve(m->host, SOCK_STREAM, deadline_ns, addr,
			     sizeof(addr))))
		return _fail(m, msg, len, rc, "resolve", NULL);
	if (getaddrinfo(addr, m->port, &hints, &ai) || !ai)
		return _fail(m, msg, len, -EINVAL, "address", addr);
	m->fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK |
		       SOCK_CLOEXEC, 0);
	if (m->fd < 0) {
		freeaddrinfo(ai);
		return _fail(m, msg, len, -errno, "socket", NULL);
	}
	rc = connect(m->fd, ai->ai_addr, ai->ai_addrlen) ? -errno : 0;
	freeaddrinfo(ai);
	if (rc == -EINPROGRESS &&
	    !(rc = _wait(m->fd, POLLOUT, deadline_ns)) &&
	    !getsockopt(m->fd, SOL_SOCKET, SO_ERROR, &so, &sl))
		rc = -so;
	if (rc) {
		_close(m);
		return _fail(m, msg, len, rc, "connect", rc == -ETIMEDOUT ?
			     "no connection by the deadline" : NULL);
	}
	m->lines.len = 0;
	return 0;
}

/* The ASK sealed and written, its newline after it. */
static int _ask(pdu_poll_meter_t *m, uint64_t deadline_ns, char *msg,
		size_t len)
{
	pdu_poll_ask_t ask = { .nonce = ++m->nonce };
	uint8_t buf[PDU_POLL_ASK_LEN];
	char *text = NULL, why[256] = "";
	size_t off = 0, n;
	int rc;

	snprintf(ask.node, sizeof(ask.node), "%s", m->node);
	if ((rc = pdu_poll_wire_ask(&ask, buf, sizeof(buf))) < 0)
		return _fail(m, msg, len, rc, "ask", NULL);
	if ((rc = m->sealer.seal(m->sealer.ctx, buf, (size_t)rc, &text, why,
				 sizeof(why))))
		return _fail(m, msg, len, rc, "seal", why);
	n = strlen(text);
	text[n++] = '\n';		/* over its NUL */
	while (off < n && !rc) {
		ssize_t w = send(m->fd, text + off, n - off, MSG_NOSIGNAL);

		if (w >= 0)
			off += (size_t)w;
		else if (errno == EAGAIN || errno == EINTR)
			rc = _wait(m->fd, POLLOUT, deadline_ns);
		else
			rc = -errno;
	}
	free(text);
	m->asks++;
	return rc ? _fail(m, msg, len, rc, "send", NULL) : 0;
}

/* A line opened and decoded: 0, 1 (not this ask's answer: skip it), or
 * -errno with msg. */
static int _answer(pdu_poll_meter_t *m, const char *line,
		   pdu_poll_reading_t *r, char *msg, size_t len)
{
	uint8_t buf[PDU_POLL_MAX_LEN];
	size_t n = sizeof(buf);
	char why[256] = "";
	uid_t uid;
	int rc;

	if ((rc = m->sealer.open(m->sealer.ctx, line, buf, &n, &uid, why,
				 sizeof(why))))
		return _fail(m, msg, len, rc, "answer", why);
	if (uid != 0 && uid != m->poller_uid) {
		snprintf(why, sizeof(why), "sealed by uid %u, not root or "
			 "the poller's uid %u", (unsigned)uid,
			 (unsigned)m->poller_uid);
		return _fail(m, msg, len, -EACCES, "answer", why);
	}
	if ((rc = pdu_poll_wire_read_reading(buf, n, r, why, sizeof(why))))
		return _fail(m, msg, len, rc, "answer", why);
	if (r->nonce != m->nonce)
		return 1;	/* a late answer to an ask given up on */
	if (strcmp(r->node, m->node)) {
		snprintf(why, sizeof(why), "a reading for node %s", r->node);
		return _fail(m, msg, len, -EBADMSG, "answer", why);
	}
	return 0;
}

/* This ask's answer, by deadline. */
static int _receive(pdu_poll_meter_t *m, uint64_t deadline_ns,
		    pdu_poll_reading_t *r, char *msg, size_t len)
{
	static __thread char line[SE_LINE_MAX];
	int rc;

	for (;;) {
		while ((rc = se_lines_next(&m->lines, line, sizeof(line))) >
		       0)
			if ((rc = _answer(m, line, r, msg, len)) <= 0)
				return rc;
		if (rc < 0)
			return _fail(m, msg, len, rc, "answer", "a line too "
				     "long (not a PDU poller?)");
		if ((rc = _wait(m->fd, POLLIN, deadline_ns)))
			return _fail(m, msg, len, rc, "answer",
				     rc == -ETIMEDOUT ?
				     "no answer by the deadline" : NULL);
		rc = se_lines_fill(&m->lines, m->fd);
		if (rc <= 0)
			return _fail(m, msg, len, rc ? rc : -ECONNRESET,
				     "answer", rc ? NULL :
				     "the poller closed the connection");
	}
}

/* The poller's reading as this node's, stamped at receipt - age. */
static int _take(pdu_poll_meter_t *m, const pdu_poll_reading_t *r,
		 uint64_t now, meter_reading_t *out, char *msg, size_t len)
{
	char why[64];

	if (r->status) {
		snprintf(msg, len, "poller %s: %s", m->poller, r->error);
		return -EAGAIN;		/* the connection is fine */
	}
	if (r->seq == m->last_seq)
		return -EALREADY;
	if (r->age_ns > m->max_age_ns || r->age_ns > now) {
		snprintf(why, sizeof(why), "%.1f s old (the poller's rounds "
			 "are late)", r->age_ns / 1e9);
		return _fail(m, msg, len, -EAGAIN, "reading", why);
	}
	m->last_seq = r->seq;
	out->t_ns = now - r->age_ns;
	out->has_power = r->flags & PDU_POLL_POWER;
	out->power_mw = r->power_mw;
	if (r->flags & PDU_POLL_COUNTER) {
		out->has_counter = true;
		out->counter_raw = r->counter_raw;
		out->counter_spec = (counter_spec_t) {
			.width_bits = r->width_bits,
			.mj_per_unit = r->mj_per_unit,
			.registers = r->registers };
	}
	return 0;
}

static int _read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		 char *msg, size_t msg_len)
{
	pdu_poll_meter_t *m = dev;
	uint64_t by = se_mono_ns() + m->timeout_ns;
	pdu_poll_reading_t r;
	int rc;

	if (deadline_ns < by)
		by = deadline_ns;
	if ((m->fd < 0 && (rc = _connect(m, by, msg, msg_len))) ||
	    (rc = _ask(m, by, msg, msg_len)) ||
	    (rc = _receive(m, by, &r, msg, msg_len))) {
		_close(m);
		return rc == -EAGAIN ? -EIO : rc;
	}
	return _take(m, &r, se_mono_ns(), out, msg, msg_len);
}

static void _close(void *dev)
{
	pdu_poll_meter_t *m = dev;

	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
	m->lines.len = 0;
}

/* ---------------------------------------------------- public functions */

int pdu_poll_meter_create(const pdu_poll_meter_config_t *cfg,
			  pdu_poll_meter_t **out, char *err,
			  size_t err_len)
{
	pdu_poll_meter_t *m;

	*out = NULL;
	if (!(m = calloc(1, sizeof(*m))))
		return -ENOMEM;
	m->fd = -1;
	snprintf(m->poller, sizeof(m->poller), "%s", cfg->poller);
	if (_split(cfg->poller, m->host, sizeof(m->host), m->port,
		   sizeof(m->port))) {
		snprintf(err, err_len, "%s=%s: not HOST:PORT",
			 cfg->key ? cfg->key : "poller", cfg->poller);
		free(m);
		return -EINVAL;
	}
	snprintf(m->node, sizeof(m->node), "%s", cfg->node);
	m->sealer = cfg->sealer;
	m->sealer_free = cfg->sealer_free;
	m->poller_uid = cfg->poller_uid;
	m->timeout_ns = cfg->timeout_ns;
	m->max_age_ns = cfg->max_age_ns;
	/* apart from another slurmd's nonces after a restart */
	m->nonce = se_wall_ns() ^ ((uint64_t)getpid() << 32);
	*out = m;
	return 0;
}

void pdu_poll_meter_destroy(pdu_poll_meter_t *m)
{
	if (!m)
		return;
	_close(m);
	if (m->sealer_free)
		m->sealer_free(m->sealer.ctx);
	free(m);
}

unsigned long pdu_poll_meter_asks(const pdu_poll_meter_t *m)
{
	return m->asks;
}
