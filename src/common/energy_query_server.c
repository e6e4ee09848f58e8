/*
 * energy_query_server.c - slurmd's side of the energy query: one thread
 * answering from the sampler (energy_query.h has the model,
 * energy_query_wire.h the wire).
 *
 * The thread takes no lock of its own beyond the sampler's short one, and
 * serves one connection at a time: each is bounded by
 * ENERGY_QUERY_SERVER_IO_TIMEOUT_NS, and an answer takes microseconds, so
 * queued clients wait little.  A held question (ENERGY_QUERY_HOLD) does not
 * hold the thread: its connection waits in a small table, answered again each
 * time the sampler says a reading landed (its notify fd) and at its
 * deadline.  The thread never blocks slurmd: it is its own thread, and
 * stop wakes it through a pipe.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "energy_query.h"
#include "energy_query_steps.h"
#include "energy_query_wire.h"
#include "se_log.h"
#include "se_thread.h"
#include "se_time.h"

#define ENERGY_QUERY_BACKLOG	64
/* Refused peers: a few log lines a minute. */
#define ENERGY_QUERY_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define ENERGY_QUERY_LOG_BURST		3

/*
 * Questions held until their answer is final (ENERGY_QUERY_REQ_HOLD): the
 * connection stays open, and each reading that lands (the sampler's notify fd)
 * answers them again.  A settling step asks this way instead of asking, pausing
 * and asking again: its answer comes the moment the reading after its end
 * is in.  Past ENERGY_QUERY_HOLDS_MAX held, a question is answered at once.
 */
#define ENERGY_QUERY_HOLDS_MAX	32

/* Node mode: an ended step's final total stays in the snapshot this many
 * sampler periods (as share mode's, se_energy_share.c), so that a scrape
 * every period sees it. */
#define ENERGY_QUERY_STEPS_LINGER_PERIODS	2

typedef struct {
	int fd;
	unsigned version;
	energy_query_wire_req_t req;
	uint64_t until_ns;	/* answered as it stands then */
	bool kicked;		/* this question kicked a read already */
} energy_query_hold_t;

struct energy_query_server {
	char path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
	int lfd;
	int wake[2];		/* stop writes, the thread polls */
	int landed;		/* eventfd: a reading landed (sampler) */
	/* server thread only */
	energy_query_hold_t holds[ENERGY_QUERY_HOLDS_MAX];
	unsigned nholds;
	dev_t dev;		/* the socket file we bound, to unlink */
	ino_t ino;		/* only that one at stop */
	pthread_t thread;
	sampler_t *s;
	uint64_t period_ns;
	uint64_t deadline_ns;
	uint64_t hold_ns;	/* a held question's longest wait */
	uint64_t generation;
	energy_query_hooks_t hooks;	/* fixed at start */
	energy_query_wire_rep5_t *snap_rep; /* server thread only: made at
				 * the first snapshot request */
	bool list_steps;	/* node mode (no share hook): list ... */
	energy_query_steps_t *steps;	/* ... the steps that asked (made at
				 * the first), server thread only */
	uid_t euid;
	unsigned long answered;	/* atomic builtins */
	unsigned long refused;
	se_ratelimit_t rl;	/* server thread only */
};

/* A reading now, and the kick hook's companions (energy_query.h). */
static void _kick(energy_query_server_t *srv)
{
	sampler_kick(srv->s);
	if (srv->hooks.kick)
		srv->hooks.kick(srv->hooks.arg);
}

/* ------------------------------------------------------------ server */

/* Send rep in version's layout: a version-3 reply is the head alone. */
static void _reply(int fd, energy_query_wire_rep_t *rep, unsigned version)
{
	size_t size = energy_query_rep_size(version);

	rep->v3.magic = ENERGY_QUERY_MAGIC_REP;
	rep->v3.version = version;
	rep->v3.size = size;
	/* A client that left gets nothing; never a SIGPIPE in slurmd. */
	(void) send(fd, rep, size, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Energy at one instant; complete when a sample at or after it exists. */
static bool _instant(energy_query_server_t *srv, uint64_t t_ns,
		     uint64_t last_ns, uint64_t *e_mj, int32_t *rc)
{
	*rc = sampler_energy_at(srv->s, t_ns, e_mj);
	return !*rc && last_ns && last_ns >= t_ns;
}

/* Whether a later reading can complete an instant: not one older than the
 * history kept, nor one before the sampler's first sample ever (a step
 * begun before this slurmd started). */
static bool _instant_open(bool complete, int32_t rc, uint64_t t_ns,
			  const sampler_status_t *st)
{
	if (complete || rc == -ERANGE)
		return false;
	return !(rc == -ENODATA && st->first_sample_ns &&
		 t_ns < st->first_sample_ns);
}

/* The step a request names, with its GPUs when a version-4 request says
 * them (a version-3 step never does). */
static void _request_step(const energy_query_wire_req_t *req, unsigned version,
			  energy_query_step_t *step)
{
	const energy_query_wire_req3_t *h = &req->v3;

	memset(step, 0, sizeof(*step));
	step->job_id = h->job_id;
	step->step_id = h->step_id;
	step->ncpus = h->ncpus;
	step->begin = h->flags & ENERGY_QUERY_REQ_BEGIN;
	step->end = h->flags & ENERGY_QUERY_REQ_END;
	if (version < ENERGY_QUERY_VERSION ||
	    !(h->flags & ENERGY_QUERY_REQ_GPUS))
		return;
	step->gpus_known = true;
	memcpy(step->step_minors, req->step_minors, sizeof(step->step_minors));
	memcpy(step->job_minors, req->job_minors, sizeof(step->job_minors));
}

/* sampler_energy_at for the steps' table. */
static int _energy_at(void *arg, uint64_t t_ns, uint64_t *energy_mj)
{
	return sampler_energy_at(arg, t_ns, energy_mj);
}

/* Node mode: a step's question, into the steps listed by the snapshot. */
static void _steps_heard(energy_query_server_t *srv,
			 const energy_query_wire_req_t *req, unsigned version)
{
	energy_query_step_t step;
	sampler_status_t st;

	if (!srv->list_steps || !(req->v3.flags & ENERGY_QUERY_REQ_STEP))
		return;
	if (!srv->steps && !(srv->steps = energy_query_steps_new()))
		return;		/* out of memory: its series are missing */
	_request_step(req, version, &step);
	sampler_status(srv->s, &st);
	energy_query_steps_heard(srv->steps, &step, req->v3.t0_ns,
				 req->v3.t1_ns, se_mono_ns(), _energy_at,
				 srv->s, st.last_sample_ns);
}

/* A step's share, when the server has a share hook and was asked. */
static bool _answer_share(energy_query_server_t *srv,
			  const energy_query_wire_req3_t *req,
			  const energy_query_step_t *step,
			  energy_query_wire_rep3_t *rep,
			  energy_query_gpu_t *gpu)
{
	const energy_query_hooks_t *h = &srv->hooks;

	if (!h->share || !(req->flags & ENERGY_QUERY_REQ_STEP))
		return false;
	rep->share_rc = h->share(h->arg, step, req->t0_ns, req->t1_ns,
				 &rep->share_mj, &rep->share_last_ns, gpu);
	rep->flags |= ENERGY_QUERY_SHARE;
	/* the split after t1 is the one a settle waits for */
	return !rep->share_rc && rep->share_last_ns < req->t1_ns;
}

/* The step's GPU part from the GPU hook (a version-4 step query only: an
 * older reply has no room for it). */
static void _answer_gpus(energy_query_server_t *srv,
			 const energy_query_wire_req3_t *req,
			 const energy_query_step_t *step,
			 energy_query_gpu_t *gpu)
{
	const energy_query_hooks_t *h = &srv->hooks;
	energy_query_gpu_t got = *gpu;

	if (!h->gpus || !(req->flags & ENERGY_QUERY_REQ_STEP))
		return;
	if (!h->gpus(h->arg, step, req->t0_ns, req->t1_ns, &got))
		*gpu = got;
}

/* The GPU part into the version-4 tail. */
static void _pack_gpus(const energy_query_gpu_t *gpu,
		       energy_query_wire_rep_t *rep)
{
	rep->gpu_flags = (gpu->metered ? ENERGY_QUERY_GPU_METERED : 0) |
			 (gpu->part ? ENERGY_QUERY_GPU_PART : 0);
	rep->gpu_count = gpu->count;
	rep->gpu_part_mj = gpu->part_mj;
	rep->gpu_e0_mj = gpu->e0_mj;
	rep->gpu_e1_mj = gpu->e1_mj;
}

/* The owner's total, when the server has a total hook. */
static void _answer_total(energy_query_server_t *srv,
			  energy_query_wire_rep3_t *rep)
{
	const energy_query_hooks_t *h = &srv->hooks;

	if (!h->total || h->total(h->arg, &rep->total_mj, &rep->total_power_mw,
				  &rep->total_sample_ns))
		return;
	rep->total_id = h->total_id;
	rep->flags |= ENERGY_QUERY_TOTAL;
}

/*
 * Answer from the sampler, for a request of version (its tail, if any,
 * filled only then).  The newest sample's instant is taken first: a sample
 * recorded between that and the energies only makes them better, never
 * "complete" wrongly (complete is judged on the older view).  Returns
 * whether a later reading would change it: an instant past the newest
 * sample, or a share not split up to t1 (_instant_open).  Such an answer kicks
 * a read (do not wait a tick) when kick allows, and ENERGY_QUERY_REQ_NO_KICK
 * does not forbid it.
 */
static bool _answer(energy_query_server_t *srv,
		    const energy_query_wire_req_t *req, unsigned version,
		    bool kick, energy_query_wire_rep_t *rep)
{
	const energy_query_wire_req3_t *q = &req->v3;
	energy_query_wire_rep3_t *r = &rep->v3;
	energy_query_gpu_t gpu = { 0 };
	energy_query_step_t step;
	sampler_status_t st;
	bool c0, c1, instants_open, share_open;

	memset(rep, 0, sizeof(*rep));
	sampler_status(srv->s, &st);
	c0 = _instant(srv, q->t0_ns, st.last_sample_ns, &r->e0_mj, &r->rc0);
	c1 = _instant(srv, q->t1_ns, st.last_sample_ns, &r->e1_mj, &r->rc1);
	r->flags = (c0 ? ENERGY_QUERY_COMPLETE0 : 0) |
		   (c1 ? ENERGY_QUERY_COMPLETE1 : 0);
	instants_open = _instant_open(c0, r->rc0, q->t0_ns, &st) ||
			_instant_open(c1, r->rc1, q->t1_ns, &st);
	_request_step(req, version, &step);
	share_open = _answer_share(srv, q, &step, r, &gpu);
	if (kick &&
	    ((instants_open && !(q->flags & ENERGY_QUERY_REQ_NO_KICK)) ||
	     share_open)) {
		_kick(srv);
		r->flags |= ENERGY_QUERY_KICKED;
	}
	_answer_total(srv, r);
	r->generation = srv->generation;
	r->last_sample_ns = st.last_sample_ns;
	r->period_ns = srv->period_ns;
	r->deadline_ns = srv->deadline_ns;
	if (version >= ENERGY_QUERY_VERSION) {
		_answer_gpus(srv, q, &step, &gpu);
		_pack_gpus(&gpu, rep);
	}
	return instants_open || share_open;
}

static bool _peer_allowed(energy_query_server_t *srv, int fd, uid_t *uid)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    len != sizeof(cred)) {
		*uid = (uid_t) -1;
		return false;
	}
	*uid = cred.uid;
	return cred.uid == 0 || cred.uid == srv->euid;
}

/* The sampler's state as a snapshot says it. */
static uint32_t _meter_state(const sampler_status_t *st)
{
	switch (st->state) {
	case SAMPLER_OK:
		return ENERGY_SNAPSHOT_METER_OK;
	case SAMPLER_FAILING:
		return ENERGY_SNAPSHOT_METER_FAILING;
	default:
		return ENERGY_SNAPSHOT_METER_STARTING;
	}
}

/*
 * Answer a snapshot request (energy_snapshot.h, wire version 5): the
 * sampler's part here, the owner's from its snapshot hook (or its total
 * hook alone).  The reply is sized to the steps it holds.
 */
static void _serve_snapshot(energy_query_server_t *srv, int fd)
{
	energy_query_wire_rep5_t *rep = srv->snap_rep;
	energy_snapshot_t *s;
	sampler_status_t st;
	size_t size;

	if (!rep && !(rep = srv->snap_rep = malloc(sizeof(*rep))))
		return;		/* closed unanswered: the scrape fails */
	memset(rep, 0, offsetof(energy_query_wire_rep5_t, snap.steps));
	s = &rep->snap;
	sampler_status(srv->s, &st);
	s->generation = srv->generation;
	s->meter_state = _meter_state(&st);
	s->last_sample_ns = st.last_sample_ns;
	s->power_mw = st.power_mw;
	s->period_ns = srv->period_ns;
	s->deadline_ns = srv->deadline_ns;
	if (srv->hooks.snapshot) {
		rep->status = srv->hooks.snapshot(srv->hooks.arg, s);
	} else if (srv->hooks.total) {
		uint64_t power, sample;

		if (!srv->hooks.total(srv->hooks.arg, &s->total_mj, &power,
				      &sample)) {
			s->flags |= ENERGY_SNAPSHOT_TOTAL;
			s->total_id = srv->hooks.total_id;
		}
	}
	/* node mode: the steps that asked, unless the owner listed them */
	if (!rep->status && srv->list_steps &&
	    !(s->flags & ENERGY_SNAPSHOT_SHARE) && !s->n_steps)
		energy_query_steps_snapshot(srv->steps, se_mono_ns(),
					    st.last_sample_ns,
					    ENERGY_QUERY_STEPS_LINGER_PERIODS *
					    srv->period_ns, _energy_at, srv->s,
					    srv->hooks.gpus, srv->hooks.arg, s);
	if (s->n_steps > ENERGY_SNAPSHOT_STEPS_MAX) {
		s->n_steps = ENERGY_SNAPSHOT_STEPS_MAX;
		s->flags |= ENERGY_SNAPSHOT_TRUNCATED;
	}
	if (s->n_gpus > ENERGY_SNAPSHOT_GPUS_MAX)
		s->n_gpus = ENERGY_SNAPSHOT_GPUS_MAX;
	s->now_ns = se_mono_ns();
	size = rep->status ? offsetof(energy_query_wire_rep5_t, snap) :
			     energy_query_rep5_size(s->n_steps);
	rep->magic = ENERGY_QUERY_MAGIC_REP;
	rep->version = ENERGY_QUERY_VERSION_SNAPSHOT;
	rep->size = size;
	/* A client that left gets nothing; never a SIGPIPE in slurmd. */
	(void) send(fd, rep, size, MSG_NOSIGNAL | MSG_DONTWAIT);
	__atomic_add_fetch(&srv->answered, 1, __ATOMIC_SEQ_CST);
}

/* A refusal in version's layout: a client of that version can read it. */
static void _refuse(energy_query_server_t *srv, int fd, unsigned version,
		    int32_t status, const char *why)
{
	energy_query_wire_rep_t rep = { .v3.status = status };

	__atomic_add_fetch(&srv->refused, 1, __ATOMIC_SEQ_CST);
	se_log_limited(&srv->rl, se_mono_ns(), SE_LOG_ERROR,
		       "energy query %s: request refused: %s", srv->path,
		       why);
	if (status)
		_reply(fd, &rep, version);
}

/* ------------------------------------------------------------ holds */

/* Send held question i its answer rep, and forget it (closing fd). */
static void _hold_reply(energy_query_server_t *srv, unsigned i,
			energy_query_wire_rep_t *rep)
{
	energy_query_hold_t *h = &srv->holds[i];

	if (h->kicked)
		rep->v3.flags |= ENERGY_QUERY_KICKED;
	_reply(h->fd, rep, h->version);
	close(h->fd);
	__atomic_add_fetch(&srv->answered, 1, __ATOMIC_SEQ_CST);
	srv->holds[i] = srv->holds[--srv->nholds];
}

/* Answer held question i as it stands now (its time is up), and forget it. */
static void _hold_release(energy_query_server_t *srv, unsigned i)
{
	energy_query_wire_rep_t rep;

	(void) _answer(srv, &srv->holds[i].req, srv->holds[i].version, false,
		       &rep);
	_hold_reply(srv, i, &rep);
}

/* Empty the landed eventfd: whether a reading landed since the last time. */
static bool _drain_landed(energy_query_server_t *srv)
{
	uint64_t n;

	return read(srv->landed, &n, sizeof(n)) == sizeof(n) && n;
}

/* Keep fd's question until its answer is final or until_ns: true, or false
 * when no room is left (answer it now). */
static bool _hold(energy_query_server_t *srv, int fd, unsigned version,
		  const energy_query_wire_req_t *req, bool kicked)
{
	energy_query_hold_t *h;

	if (srv->nholds >= ENERGY_QUERY_HOLDS_MAX)
		return false;
	h = &srv->holds[srv->nholds++];
	h->fd = fd;
	h->version = version;
	h->req = *req;
	h->kicked = kicked;
	h->until_ns = se_mono_ns() + srv->hold_ns;
	return true;
}

/*
 * A reading landed (landed true) or time passed: answer the held questions
 * that are final or due.  One still open after a reading kicks one read if
 * it has not kicked yet (it asked with ENERGY_QUERY_REQ_NO_KICK while a read
 * was on its way, and that read did not cover it); never more, so that a meter
 * whose readings lag (a BMC's rolling average) is not read back to back:
 * the client asks again after a pause.
 */
static void _holds_review(energy_query_server_t *srv, bool landed)
{
	uint64_t now = se_mono_ns();
	energy_query_wire_rep_t rep;

	for (unsigned i = 0; i < srv->nholds;) {
		energy_query_hold_t *h = &srv->holds[i];

		if (now >= h->until_ns) {
			_hold_release(srv, i);
		} else if (!landed) {
			i++;
		} else if (_answer(srv, &h->req, h->version, !h->kicked,
				   &rep)) {
			h->kicked |= rep.v3.flags & ENERGY_QUERY_KICKED;
			i++;
		} else {
			/* final: this answer, not a second one */
			_hold_reply(srv, i, &rep);
		}
	}
}

/* poll()'s timeout: until the first held question is due, -1 none. */
static int _holds_timeout_ms(const energy_query_server_t *srv)
{
	uint64_t first = UINT64_MAX, now = se_mono_ns();

	for (unsigned i = 0; i < srv->nholds; i++)
		if (srv->holds[i].until_ns < first)
			first = srv->holds[i].until_ns;
	if (first == UINT64_MAX)
		return -1;
	return first <= now ? 0 :
	       (int) ((first - now + SE_NS_PER_MS - 1) / SE_NS_PER_MS);
}

/* Stop: every held question gets its answer as it stands. */
static void _holds_release_all(energy_query_server_t *srv)
{
	while (srv->nholds)
		_hold_release(srv, srv->nholds - 1);
}

/* ------------------------------------------------------------ serving */

/* One connection: one request, one reply, bounded in time.  Returns true
 * when the question is held (fd stays open: the holds own it). */
static bool _serve(energy_query_server_t *srv, int fd)
{
	uint64_t deadline = se_mono_ns() + ENERGY_QUERY_SERVER_IO_TIMEOUT_NS;
	energy_query_wire_req_t req = { 0 };
	energy_query_wire_rep_t rep = { 0 };
	unsigned version;
	char why[96];
	uid_t uid;
	ssize_t n;
	bool open;

	/*
	 * MSG_TRUNC: a longer message shows its real length, and is refused.
	 * The request is read before any refusal: a unix socket closed with
	 * unread data resets its peer, whose recv() then fails with
	 * ECONNRESET instead of returning the refusal queued for it.  It is
	 * usually there already (a client sends as it connects): a poll only
	 * when it is not.
	 */
	n = recv(fd, &req, sizeof(req), MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && errno == EAGAIN) {
		if (energy_query_wait_fd(fd, POLLIN, deadline) <= 0) {
			/* connected and said nothing: not worth a log line */
			__atomic_add_fetch(&srv->refused, 1, __ATOMIC_SEQ_CST);
			return false;
		}
		n = recv(fd, &req, sizeof(req), MSG_DONTWAIT | MSG_TRUNC);
	}
	if (n == 0)
		return false;	/* a probe (start's stale check): gone */
	version = energy_query_version_of(req.v3.magic, req.v3.version,
					  req.v3.size, ENERGY_QUERY_MAGIC_REQ,
					  n, false);
	if (!_peer_allowed(srv, fd, &uid)) {
		snprintf(why, sizeof(why), "peer uid %ld is neither root nor %ld",
			 (long) uid, (long) srv->euid);
		_refuse(srv, fd, version ? version : ENERGY_QUERY_VERSION,
			-EACCES, why);
		return false;
	}
	if (energy_query_is_snapshot_req(&req.v3, n)) {
		_serve_snapshot(srv, fd);
		return false;
	}
	/* Anything else is refused in our newest layout: a newer client
	 * reads in it which version to ask again in. */
	if (!version) {
		_refuse(srv, fd, ENERGY_QUERY_VERSION, -EPROTO,
			"not an energy query of version 3 or 4");
		return false;
	}
	if (req.v3.t0_ns > req.v3.t1_ns) {
		_refuse(srv, fd, version, -EINVAL, "t0 after t1");
		return false;
	}
	/*
	 * A held question learns of readings from its answer on: news of
	 * readings that landed while nothing was held is dropped first,
	 * before the answer that may kick the very reading it waits for
	 * (dropped after, that reading's news could be lost with them).
	 */
	if ((req.v3.flags & ENERGY_QUERY_REQ_HOLD) && !srv->nholds)
		(void) _drain_landed(srv);
	_steps_heard(srv, &req, version);
	open = _answer(srv, &req, version, true, &rep);
	if (open && (req.v3.flags & ENERGY_QUERY_REQ_HOLD) &&
	    _hold(srv, fd, version, &req, rep.v3.flags & ENERGY_QUERY_KICKED))
		return true;
	_reply(fd, &rep, version);
	__atomic_add_fetch(&srv->answered, 1, __ATOMIC_SEQ_CST);
	return false;
}


static void *_server_main(void *arg)
{
	energy_query_server_t *srv = arg;

	for (;;) {
		/* readings landing matter only to held questions: without
		 * any, the thread sleeps through them */
		struct pollfd p[3] = {
			{ .fd = srv->wake[0], .events = POLLIN },
			{ .fd = srv->nholds ? srv->landed : -1,
			  .events = POLLIN },
			{ .fd = srv->lfd, .events = POLLIN },
		};
		int fd;

		if (poll(p, 3, _holds_timeout_ms(srv)) < 0) {
			if (errno == EINTR)
				continue;
			se_log(SE_LOG_ERROR, "energy query %s: poll: %s; server stopped",
			       srv->path, strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		_holds_review(srv, p[1].revents && _drain_landed(srv));
		if (!p[2].revents)
			continue;
		fd = accept4(srv->lfd, NULL, NULL,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;	/* the client left, or EMFILE: next */
		if (!_serve(srv, fd))
			close(fd);
	}
	_holds_release_all(srv);
	return NULL;
}

/*
 * Make path free for our socket: a stale socket (its slurmd gone) is
 * removed; a live one or any other file is left alone.
 */
static int _clear_path(const char *path, const struct sockaddr_un *sa,
		       char *err, size_t err_len)
{
	struct stat sb;
	int fd, rc;

	if (lstat(path, &sb)) {
		if (errno == ENOENT)
			return 0;
		rc = -errno;
		snprintf(err, err_len, "%s: %s", path, strerror(-rc));
		return rc;
	}
	if (!S_ISSOCK(sb.st_mode)) {
		snprintf(err, err_len, "%s exists and is not a socket; not touched",
			 path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0 && !connect(fd, (const struct sockaddr *) sa,
				sizeof(*sa))) {
		close(fd);
		snprintf(err, err_len, "%s: another server answers there (a second slurmd with this node name?)",
			 path);
		return -EADDRINUSE;
	}
	if (fd >= 0)
		close(fd);
	if (unlink(path) && errno != ENOENT) {
		rc = -errno;
		snprintf(err, err_len, "cannot remove stale %s: %s", path,
			 strerror(-rc));
		return rc;
	}
	return 0;
}

/* Socket bound at path, mode 0600, listening.  0 or -errno (err set). */
static int _listen(energy_query_server_t *srv, const struct sockaddr_un *sa,
		   char *err, size_t err_len)
{
	struct stat sb;
	int rc;

	srv->lfd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
			  SOCK_NONBLOCK, 0);
	if (srv->lfd < 0)
		goto fail;
	/*
	 * Between bind and chmod the socket has the umask's mode; the
	 * SO_PEERCRED check refuses anyone but root and us meanwhile.
	 */
	if (bind(srv->lfd, (const struct sockaddr *) sa, sizeof(*sa)) ||
	    chmod(srv->path, 0600) || listen(srv->lfd, ENERGY_QUERY_BACKLOG) ||
	    stat(srv->path, &sb))
		goto fail;
	srv->dev = sb.st_dev;
	srv->ino = sb.st_ino;
	return 0;
fail:
	rc = -errno;
	snprintf(err, err_len, "cannot serve %s: %s", srv->path,
		 strerror(-rc));
	return rc;
}

static int _spawn(energy_query_server_t *srv)
{
	return se_thread_start(&srv->thread, _server_main, srv, "se-query");
}

/* Close what start opened; unlink the socket only if it is still ours. */
static void _server_free(energy_query_server_t *srv)
{
	struct stat sb;

	if (srv->lfd >= 0) {
		close(srv->lfd);
		if (srv->ino && !lstat(srv->path, &sb) &&
		    sb.st_dev == srv->dev && sb.st_ino == srv->ino)
			unlink(srv->path);
	}
	if (srv->landed >= 0) {
		sampler_set_notify_fd(srv->s, -1);
		close(srv->landed);
	}
	free(srv->snap_rep);
	energy_query_steps_free(srv->steps);
	if (srv->wake[0] >= 0)
		close(srv->wake[0]);
	if (srv->wake[1] >= 0)
		close(srv->wake[1]);
	free(srv);
}

/* ------------------------------------------------------------ public */

energy_query_server_t *energy_query_server_start(
	const char *path, sampler_t *s, uint64_t period_ns,
	uint64_t deadline_ns, const energy_query_hooks_t *hooks, char *err,
	size_t err_len)
{
	struct sockaddr_un sa;
	energy_query_server_t *srv;
	int rc;

	if (!s || !path) {
		snprintf(err, err_len, "energy query: no sampler or path");
		errno = EINVAL;
		return NULL;
	}
	if ((rc = energy_query_fill_addr(path, &sa))) {
		snprintf(err, err_len, "socket path too long for AF_UNIX (%zu bytes, at most %zu): choose a shorter SlurmdSpoolDir: %s",
			 strlen(path), sizeof(sa.sun_path) - 1, path);
		errno = -rc;
		return NULL;
	}
	if (!(srv = calloc(1, sizeof(*srv)))) {
		snprintf(err, err_len, "energy query: out of memory");
		return NULL;
	}
	strcpy(srv->path, path);
	srv->lfd = srv->wake[0] = srv->wake[1] = srv->landed = -1;
	srv->s = s;
	srv->period_ns = period_ns;
	srv->deadline_ns = deadline_ns;
	srv->hold_ns = period_ns + deadline_ns;
	if (srv->hold_ns > ENERGY_QUERY_SERVER_HOLD_MAX_NS)
		srv->hold_ns = ENERGY_QUERY_SERVER_HOLD_MAX_NS;
	srv->generation = energy_query_random_id();
	if (hooks)
		srv->hooks = *hooks;
	/* node mode: the server alone knows which steps run (they ask it);
	 * without the table the snapshot lists none, as before */
	srv->list_steps = !srv->hooks.share && !srv->hooks.steps_unlisted;
	srv->euid = geteuid();
	srv->rl = (se_ratelimit_t) SE_RATELIMIT_INIT(
		ENERGY_QUERY_LOG_INTERVAL_NS, ENERGY_QUERY_LOG_BURST);

	if ((rc = _clear_path(path, &sa, err, err_len)) ||
	    (rc = _listen(srv, &sa, err, err_len)))
		goto fail;
	if (pipe2(srv->wake, O_CLOEXEC | O_NONBLOCK) ||
	    (srv->landed = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
		rc = -errno;
		snprintf(err, err_len, "energy query: pipe: %s", strerror(-rc));
		goto fail;
	}
	sampler_set_notify_fd(s, srv->landed);
	if ((rc = _spawn(srv))) {
		snprintf(err, err_len, "energy query: thread: %s",
			 strerror(-rc));
		goto fail;
	}
	return srv;
fail:
	_server_free(srv);
	errno = -rc;
	return NULL;
}

void energy_query_server_stop(energy_query_server_t *srv)
{
	char c = 1;

	if (!srv)
		return;
	/* The pipe is empty and non-blocking: this write cannot block. */
	(void) !write(srv->wake[1], &c, 1);
	pthread_join(srv->thread, NULL);
	_server_free(srv);
}

void energy_query_server_counts(energy_query_server_t *srv,
				unsigned long *answered, unsigned long *refused)
{
	*answered = __atomic_load_n(&srv->answered, __ATOMIC_SEQ_CST);
	*refused = __atomic_load_n(&srv->refused, __ATOMIC_SEQ_CST);
}
