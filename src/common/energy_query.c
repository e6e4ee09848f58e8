/*
 * energy_query.c - the energy query's client (a step, se-energy-query):
 * one question, one answer, bounded by the caller's timeout
 * (energy_query.h has the model, energy_query_wire.h the wire; the server
 * is energy_query_server.c).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "energy_query.h"
#include "energy_query_wire.h"
#include "se_time.h"

/* ------------------------------------------------------------ shared */

int energy_query_socket_path(const char *spool_dir, const char *node, char *buf,
			     size_t len)
{
	struct sockaddr_un sa;
	int n;

	if (!spool_dir || !*spool_dir || !node || !*node || !len)
		return -EINVAL;
	n = snprintf(buf, len, "%s/slurm-energy-%s.sock", spool_dir, node);
	if (n < 0)
		return -EINVAL;
	if ((size_t) n >= len || (size_t) n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	return 0;
}

uint64_t energy_query_random_id(void)
{
	uint64_t g = 0;

	if (getrandom(&g, sizeof(g), GRND_NONBLOCK) != sizeof(g))
		g = se_mono_ns() ^ ((uint64_t) getpid() << 40) ^ se_wall_ns();
	return g ? g : 1;
}

/* ------------------------------------------------------------ client */

/*
 * The socket whose server refused version 4, asked in version 3 until
 * until_ns.  One slot: a process (a step, the tool) asks one socket.
 */
static struct {
	pthread_mutex_t lock;
	char path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
	uint64_t until_ns;
} old_server_seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool _server_is_old(const char *path)
{
	bool old;

	pthread_mutex_lock(&old_server_seen.lock);
	old = se_mono_ns() < old_server_seen.until_ns &&
	      !strcmp(old_server_seen.path, path);
	pthread_mutex_unlock(&old_server_seen.lock);
	return old;
}

static void _remember_old_server(const char *path)
{
	pthread_mutex_lock(&old_server_seen.lock);
	snprintf(old_server_seen.path, sizeof(old_server_seen.path), "%s",
		 path);
	old_server_seen.until_ns = se_mono_ns() +
				   ENERGY_QUERY_OLD_SERVER_REMEMBER_NS;
	pthread_mutex_unlock(&old_server_seen.lock);
}

/*
 * The reply to a request of version asked, n bytes in rep: its status, or
 * -EPROTO when it is not one.  A reply comes in the version asked, except
 * an old server's refusal of a newer request, which comes in its own:
 * *old_server tells it (-EPROTO: ask again in ENERGY_QUERY_VERSION_OLD).
 */
static int _check_reply(const energy_query_wire_rep_t *rep, ssize_t n,
			unsigned asked, bool *old_server)
{
	const energy_query_wire_rep3_t *h = &rep->v3;
	unsigned v = energy_query_version_of(h->magic, h->version, h->size,
					     ENERGY_QUERY_MAGIC_REP, n, true);

	*old_server = false;
	if (v == asked)
		return h->status;
	if (v == ENERGY_QUERY_VERSION_OLD && asked == ENERGY_QUERY_VERSION &&
	    h->status) {
		*old_server = h->status == -EPROTO;
		return h->status;
	}
	return -EPROTO;		/* an old server's answer is no answer */
}

int energy_query_dial(const struct sockaddr_un *sa, const void *req,
		      size_t size, int *fdp)
{
	int fd, rc;

	/* Non-blocking: a full backlog is -EAGAIN at once, not a wait. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa))) {
		rc = -errno;
		close(fd);
		return rc;
	}
	/*
	 * A server that refuses us (our uid) replies and closes at once,
	 * maybe before our request is sent: its reply is still ours to read.
	 */
	if (send(fd, req, size, MSG_NOSIGNAL) != (ssize_t) size &&
	    errno != EPIPE && errno != ECONNRESET) {
		rc = errno == EAGAIN ? -ETIMEDOUT : -errno;
		close(fd);
		return rc;
	}
	*fdp = fd;
	return 0;
}

int energy_query_recv(int fd, void *buf, size_t cap, uint64_t deadline_ns,
		      ssize_t *n)
{
	int rc = energy_query_wait_fd(fd, POLLIN, deadline_ns);

	if (rc <= 0)
		return rc ? rc : -ETIMEDOUT;
	*n = recv(fd, buf, cap, MSG_TRUNC);
	if (*n < 0)
		return -errno;
	if (*n == 0)
		return -ECONNRESET;	/* closed unanswered (slurmd stopping) */
	return 0;
}

/*
 * A connection with req sent in version asked: its fd in *fdp (the
 * caller's to close), or -errno.
 */
static int _send(const struct sockaddr_un *sa, energy_query_wire_req_t *req,
		 unsigned asked, int *fdp)
{
	size_t size = energy_query_req_size(asked);

	req->v3.magic = ENERGY_QUERY_MAGIC_REQ;
	req->v3.version = asked;
	req->v3.size = size;
	return energy_query_dial(sa, req, size, fdp);
}

/* The reply on fd to a request of version asked, into rep; fd closed. */
static int _receive(int fd, unsigned asked, energy_query_wire_rep_t *rep,
		    uint64_t deadline_ns, bool *old_server)
{
	ssize_t n;
	int rc;

	*old_server = false;
	memset(rep, 0, sizeof(*rep));
	rc = energy_query_recv(fd, rep, sizeof(*rep), deadline_ns, &n);
	if (!rc)
		rc = _check_reply(rep, n, asked, old_server);
	close(fd);
	return rc;
}

static void _unpack(const energy_query_wire_rep_t *rep, unsigned version,
		    energy_query_answer_t *out)
{
	const energy_query_wire_rep3_t *h = &rep->v3;

	memset(out, 0, sizeof(*out));
	out->generation = h->generation;
	out->e0_mj = h->e0_mj;
	out->e1_mj = h->e1_mj;
	out->rc0 = h->rc0;
	out->rc1 = h->rc1;
	out->complete0 = h->flags & ENERGY_QUERY_COMPLETE0;
	out->complete1 = h->flags & ENERGY_QUERY_COMPLETE1;
	out->kicked = h->flags & ENERGY_QUERY_KICKED;
	out->last_sample_ns = h->last_sample_ns;
	out->period_ns = h->period_ns;
	out->deadline_ns = h->deadline_ns;
	out->share = h->flags & ENERGY_QUERY_SHARE;
	out->share_rc = h->share_rc;
	out->share_mj = h->share_mj;
	out->share_last_ns = h->share_last_ns;
	out->total = h->flags & ENERGY_QUERY_TOTAL;
	out->total_id = h->total_id;
	out->total_mj = h->total_mj;
	out->total_power_mw = h->total_power_mw;
	out->total_sample_ns = h->total_sample_ns;
	out->version = version;
	if (version < ENERGY_QUERY_VERSION)
		return;
	out->gpu.metered = rep->gpu_flags & ENERGY_QUERY_GPU_METERED;
	out->gpu.part = rep->gpu_flags & ENERGY_QUERY_GPU_PART;
	out->gpu.count = rep->gpu_count;
	out->gpu.part_mj = rep->gpu_part_mj;
	out->gpu.e0_mj = rep->gpu_e0_mj;
	out->gpu.e1_mj = rep->gpu_e1_mj;
}

/* A request naming step (NULL: none), with its GPUs when it knows them. */
static void _request(energy_query_wire_req_t *req, uint64_t t0_ns,
		     uint64_t t1_ns, const energy_query_step_t *step,
		     uint32_t flags)
{
	memset(req, 0, sizeof(*req));
	req->v3.t0_ns = t0_ns;
	req->v3.t1_ns = t1_ns;
	req->v3.flags = flags;
	if (!step)
		return;
	req->v3.flags |= ENERGY_QUERY_REQ_STEP |
			 (step->begin ? ENERGY_QUERY_REQ_BEGIN : 0) |
			 (step->end ? ENERGY_QUERY_REQ_END : 0);
	req->v3.job_id = step->job_id;
	req->v3.step_id = step->step_id;
	req->v3.ncpus = step->ncpus;
	if (!step->gpus_known)
		return;
	req->v3.flags |= ENERGY_QUERY_REQ_GPUS;
	memcpy(req->step_minors, step->step_minors, sizeof(req->step_minors));
	memcpy(req->job_minors, step->job_minors, sizeof(req->job_minors));
}

/* energy_query_ask()'s how on the wire */
static uint32_t _wire_flags(unsigned how)
{
	return (how & ENERGY_QUERY_NO_KICK ? ENERGY_QUERY_REQ_NO_KICK : 0) |
	       (how & ENERGY_QUERY_HOLD ? ENERGY_QUERY_REQ_HOLD : 0);
}

int energy_query_send(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		      const energy_query_step_t *step, unsigned how,
		      uint64_t timeout_ns, energy_query_asking_t *q)
{
	energy_query_wire_req_t req;
	struct sockaddr_un sa;
	int rc;

	memset(q, 0, sizeof(*q));
	q->fd = -1;
	if (t0_ns > t1_ns)
		return -EINVAL;
	if ((rc = energy_query_fill_addr(path, &sa)))
		return rc;
	snprintf(q->path, sizeof(q->path), "%s", path);
	q->t0_ns = t0_ns;
	q->t1_ns = t1_ns;
	q->how = how;
	q->named = step != NULL;
	if (step)
		q->step = *step;
	q->deadline_ns = se_mono_ns() + timeout_ns;
	q->version = _server_is_old(path) ? ENERGY_QUERY_VERSION_OLD :
					     ENERGY_QUERY_VERSION;
	_request(&req, t0_ns, t1_ns, step, _wire_flags(how));
	return _send(&sa, &req, q->version, &q->fd);
}

/*
 * The answer, in the version asked: 4, or 3 to a server known to refuse 4.
 * A refusal by an old server is learnt once per
 * ENERGY_QUERY_OLD_SERVER_REMEMBER_NS: it costs a second connection, within the
 * same deadline.
 */
int energy_query_collect(energy_query_asking_t *q, energy_query_answer_t *out)
{
	energy_query_wire_rep_t rep;
	uint64_t now;
	bool old;
	int fd = q->fd, rc;

	if (fd < 0)
		return -EBADF;
	q->fd = -1;
	rc = _receive(fd, q->version, &rep, q->deadline_ns, &old);
	if (!rc) {
		_unpack(&rep, q->version, out);
		return 0;
	}
	if (!old)
		return rc;
	/* an old server: asked again in its version, within the timeout */
	_remember_old_server(q->path);
	now = se_mono_ns();
	if (now >= q->deadline_ns)
		return -ETIMEDOUT;
	return energy_query_ask(q->path, q->t0_ns, q->t1_ns,
				q->named ? &q->step : NULL, q->how,
				q->deadline_ns - now, out);
}

void energy_query_drop(energy_query_asking_t *q)
{
	if (q->fd >= 0)
		close(q->fd);
	q->fd = -1;
}

/* One question and its answer: sent, then waited for. */
int energy_query_ask(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		     const energy_query_step_t *step, unsigned how,
		     uint64_t timeout_ns, energy_query_answer_t *out)
{
	energy_query_asking_t q;
	int rc;

	if (!out)
		return -EINVAL;
	if ((rc = energy_query_send(path, t0_ns, t1_ns, step, how, timeout_ns,
				    &q)))
		return rc;
	return energy_query_collect(&q, out);
}

int energy_query(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		 uint64_t timeout_ns, energy_query_answer_t *out)
{
	return energy_query_ask(path, t0_ns, t1_ns, NULL, 0, timeout_ns, out);
}

int energy_query_known(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		       uint64_t timeout_ns, energy_query_answer_t *out)
{
	return energy_query_ask(path, t0_ns, t1_ns, NULL, ENERGY_QUERY_NO_KICK,
				timeout_ns, out);
}

int energy_query_step(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		      const energy_query_step_t *step, uint64_t timeout_ns,
		      energy_query_answer_t *out)
{
	return energy_query_ask(path, t0_ns, t1_ns, step, 0, timeout_ns, out);
}

int energy_query_step_known(const char *path, uint64_t t0_ns, uint64_t t1_ns,
			    const energy_query_step_t *step,
			    uint64_t timeout_ns, energy_query_answer_t *out)
{
	return energy_query_ask(path, t0_ns, t1_ns, step, ENERGY_QUERY_NO_KICK,
				timeout_ns, out);
}

/* ------------------------------------------------------------ minors */

int energy_query_minors_add(uint64_t set[ENERGY_QUERY_MINOR_WORDS],
			    unsigned minor)
{
	if (minor >= ENERGY_QUERY_MINORS_MAX)
		return -ERANGE;
	set[minor / 64] |= (uint64_t) 1 << (minor % 64);
	return 0;
}

bool energy_query_minors_has(const uint64_t set[ENERGY_QUERY_MINOR_WORDS],
			     unsigned minor)
{
	return minor < ENERGY_QUERY_MINORS_MAX &&
	       (set[minor / 64] >> (minor % 64)) & 1;
}
