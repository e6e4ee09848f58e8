/*
 * energy_query.c - the node's energy history over an AF_UNIX socket.
 *
 * See energy_query.h for the model.  The wire format is two fixed-size
 * structs in host byte order (both ends are on the same machine); magic,
 * version and size guard against anything else talking to the socket.
 * SOCK_SEQPACKET keeps each message whole, so a short or long read is a bad
 * request, not a partial one.
 *
 * Both ends need not be the same build: a step started before an upgrade
 * keeps running beside the new slurmd, and the other way round.  Each
 * version-4 struct is its version-3 struct followed by a tail, so version 3
 * is a truncation: the server reads either size and answers in the
 * version asked (the first bytes of its reply), and a client refused by an
 * old server (a version-3 refusal) asks again in 3.  Version 3 must stay
 * byte for byte as it is (the size asserts below).
 *
 * The server thread takes no lock of its own beyond the sampler's short
 * one, and serves one connection at a time: each is bounded by
 * EQ_SERVER_IO_TIMEOUT_NS, and an answer takes microseconds, so queued
 * clients wait little.  It never blocks slurmd: it is its own thread, and
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "energy_query.h"
#include "se_log.h"
#include "se_time.h"

#define EQ_MAGIC_REQ	0x53455131u	/* "SEQ1" */
#define EQ_MAGIC_REP	0x53455231u	/* "SER1" */
#define EQ_VERSION	4	/* 2: a step's share (attribution);
				 * 3: the owner's figure;
				 * 4: the step's GPUs and their part */
#define EQ_VERSION_OLD	3	/* still served, and asked when refused */
#define EQ_BACKLOG	64

/* reply flags */
#define EQ_COMPLETE0	0x1
#define EQ_COMPLETE1	0x2
#define EQ_KICKED	0x4
#define EQ_SHARE	0x8	/* share_* answer the step asked about */
#define EQ_FIGURE	0x10	/* figure_* hold the owner's figure */

/* request flags */
#define EQ_REQ_STEP	0x1	/* job_id/step_id name a step */
#define EQ_REQ_BEGIN	0x2	/* ... that began at t0 */
#define EQ_REQ_END	0x4	/* ... that ended at t1 */
#define EQ_REQ_NO_KICK	0x8	/* what is known now: no reading for it
				 * (a server that predates the flag kicks,
				 * which only costs a read) */
#define EQ_REQ_GPUS	0x10	/* v4: the minor sets are the step's GPUs
				 * (maybe empty); without it, not said */

/* reply gpu_flags (v4) */
#define EQ_GPU_METERED	0x1	/* the node's GPUs are metered: gpu_count */
#define EQ_GPU_PART	0x2	/* gpu_part_mj, gpu_e0/e1_mj answer the step */

/* Refused peers: a few log lines a minute. */
#define EQ_LOG_INTERVAL_NS	(60 * SE_NS_PER_SEC)
#define EQ_LOG_BURST		3

/* The request of version 3, and the head of version 4's. */
typedef struct {
	uint32_t magic;
	uint16_t version;
	uint16_t size;		/* the size of the version's struct */
	uint64_t t0_ns;
	uint64_t t1_ns;
	uint32_t flags;		/* EQ_REQ_* */
	uint32_t job_id;
	uint32_t step_id;
	uint32_t ncpus;
} energy_query_wire_req3_t;

typedef struct {
	energy_query_wire_req3_t v3;
	uint64_t step_minors[EQ_MINOR_WORDS];	/* with EQ_REQ_GPUS */
	uint64_t job_minors[EQ_MINOR_WORDS];
} energy_query_wire_req_t;

/* The reply of version 3, and the head of version 4's. */
typedef struct {
	uint32_t magic;
	uint16_t version;
	uint16_t size;		/* the size of the version's struct */
	int32_t status;		/* 0, -EACCES (peer refused), -EPROTO,
				 * -EINVAL (bad request) */
	uint32_t flags;		/* EQ_COMPLETE0 | EQ_COMPLETE1 | EQ_KICKED */
	int32_t rc0;
	int32_t rc1;
	uint64_t generation;
	uint64_t e0_mj;
	uint64_t e1_mj;
	uint64_t last_sample_ns;
	uint64_t period_ns;
	uint64_t deadline_ns;
	int32_t share_rc;	/* the share hook's result */
	uint32_t pad;
	uint64_t share_mj;
	uint64_t share_last_ns;
	uint64_t figure_id;
	uint64_t figure_mj;
	uint64_t figure_power_mw;
	uint64_t figure_sample_ns;
} energy_query_wire_rep3_t;

typedef struct {
	energy_query_wire_rep3_t v3;
	uint32_t gpu_flags;	/* EQ_GPU_* */
	uint32_t gpu_count;
	uint64_t gpu_part_mj;
	uint64_t gpu_e0_mj;
	uint64_t gpu_e1_mj;
} energy_query_wire_rep_t;

/* The sizes running steps and slurmds of older builds send and expect. */
_Static_assert(sizeof(energy_query_wire_req3_t) == 40, "v3 request changed");
_Static_assert(sizeof(energy_query_wire_rep3_t) == 128, "v3 reply changed");
_Static_assert(sizeof(energy_query_wire_req_t) == 104, "v4 request changed");
_Static_assert(sizeof(energy_query_wire_rep_t) == 160, "v4 reply changed");

struct energy_query_server {
	char path[sizeof(((struct sockaddr_un *) 0)->sun_path)];
	int lfd;
	int wake[2];		/* stop writes, the thread polls */
	dev_t dev;		/* the socket file we bound, to unlink */
	ino_t ino;		/* only that one at stop */
	pthread_t thread;
	sampler_t *s;
	uint64_t period_ns;
	uint64_t deadline_ns;
	uint64_t generation;
	energy_query_share_fn share_fn;	/* atomic builtins: set after start */
	void *share_arg;
	energy_query_figure_fn figure_fn;	/* same */
	void *figure_arg;
	energy_query_gpu_fn gpu_fn;		/* same */
	void *gpu_arg;
	energy_query_kick_fn kick_fn;		/* same */
	void *kick_arg;
	uint64_t figure_id;
	uid_t euid;
	unsigned long answered;	/* atomic builtins */
	unsigned long refused;
	se_ratelimit_t rl;	/* server thread only */
};

/* ------------------------------------------------------------ helpers */

/* A reading now, and the kick hook's companions (energy_query.h). */
static void _kick(energy_query_server_t *srv)
{
	energy_query_kick_fn fn = __atomic_load_n(&srv->kick_fn,
						  __ATOMIC_ACQUIRE);

	sampler_kick(srv->s);
	if (fn)
		fn(__atomic_load_n(&srv->kick_arg, __ATOMIC_ACQUIRE));
}

static int _fill_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (!path || !*path)
		return -EINVAL;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* Wait for events on fd until the monotonic deadline.  1 ready, 0 timed
 * out, -errno. */
static int _wait_fd(int fd, short events, uint64_t deadline_ns)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		uint64_t now = se_mono_ns();
		int ms, rc;

		if (now >= deadline_ns)
			return 0;
		ms = (int) ((deadline_ns - now + SE_NS_PER_MS - 1) /
			    SE_NS_PER_MS);
		rc = poll(&p, 1, ms);
		if (rc > 0)
			return 1;
		if (rc < 0 && errno != EINTR)
			return -errno;
	}
}

static size_t _req_size(unsigned version)
{
	return version == EQ_VERSION_OLD ? sizeof(energy_query_wire_req3_t) :
					   sizeof(energy_query_wire_req_t);
}

static size_t _rep_size(unsigned version)
{
	return version == EQ_VERSION_OLD ? sizeof(energy_query_wire_rep3_t) :
					   sizeof(energy_query_wire_rep_t);
}

/* The version of a message (a request, or a reply) of n bytes whose head
 * holds magic, version and size: EQ_VERSION or EQ_VERSION_OLD when all
 * three agree with each other and with n, else 0. */
static unsigned _version_of(uint32_t magic, uint16_t version, uint16_t size,
			    uint32_t want_magic, ssize_t n, bool reply)
{
	unsigned v;

	if (magic != want_magic)
		return 0;
	if (version == EQ_VERSION)
		v = EQ_VERSION;
	else if (version == EQ_VERSION_OLD)
		v = EQ_VERSION_OLD;
	else
		return 0;
	if ((size_t) size != (reply ? _rep_size(v) : _req_size(v)) ||
	    n != (ssize_t) size)
		return 0;
	return v;
}

/* ------------------------------------------------------------ server */

/* Send rep in version's layout: a version-3 reply is the head alone. */
static void _reply(int fd, energy_query_wire_rep_t *rep, unsigned version)
{
	size_t size = _rep_size(version);

	rep->v3.magic = EQ_MAGIC_REP;
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
	step->begin = h->flags & EQ_REQ_BEGIN;
	step->end = h->flags & EQ_REQ_END;
	if (version < EQ_VERSION || !(h->flags & EQ_REQ_GPUS))
		return;
	step->gpus_known = true;
	memcpy(step->step_minors, req->step_minors, sizeof(step->step_minors));
	memcpy(step->job_minors, req->job_minors, sizeof(step->job_minors));
}

/* A step's share, when the server has a share hook and was asked. */
static void _answer_share(energy_query_server_t *srv,
			  const energy_query_wire_req3_t *req,
			  const energy_query_step_t *step,
			  energy_query_wire_rep3_t *rep, energy_query_gpu_t *gpu)
{
	energy_query_share_fn fn = __atomic_load_n(&srv->share_fn,
						   __ATOMIC_ACQUIRE);

	if (!fn || !(req->flags & EQ_REQ_STEP))
		return;
	rep->share_rc = fn(__atomic_load_n(&srv->share_arg, __ATOMIC_ACQUIRE),
			   step, req->t0_ns, req->t1_ns, &rep->share_mj,
			   &rep->share_last_ns, gpu);
	rep->flags |= EQ_SHARE;
	/* the split after t1 is the one a settle waits for: read now */
	if (!rep->share_rc && rep->share_last_ns < req->t1_ns)
		_kick(srv);
}

/* The step's GPU part from the GPU hook (a version-4 step query only: an
 * older reply has no room for it). */
static void _answer_gpus(energy_query_server_t *srv,
			 const energy_query_wire_req3_t *req,
			 const energy_query_step_t *step, energy_query_gpu_t *gpu)
{
	energy_query_gpu_fn fn = __atomic_load_n(&srv->gpu_fn, __ATOMIC_ACQUIRE);
	energy_query_gpu_t got = *gpu;

	if (!fn || !(req->flags & EQ_REQ_STEP))
		return;
	if (!fn(__atomic_load_n(&srv->gpu_arg, __ATOMIC_ACQUIRE), step,
		req->t0_ns, req->t1_ns, &got))
		*gpu = got;
}

/* The GPU part into the version-4 tail. */
static void _pack_gpus(const energy_query_gpu_t *gpu,
		       energy_query_wire_rep_t *rep)
{
	rep->gpu_flags = (gpu->metered ? EQ_GPU_METERED : 0) |
			 (gpu->part ? EQ_GPU_PART : 0);
	rep->gpu_count = gpu->count;
	rep->gpu_part_mj = gpu->part_mj;
	rep->gpu_e0_mj = gpu->e0_mj;
	rep->gpu_e1_mj = gpu->e1_mj;
}

/* The owner's figure, when the server has a figure hook. */
static void _answer_figure(energy_query_server_t *srv,
			   energy_query_wire_rep3_t *rep)
{
	energy_query_figure_fn fn = __atomic_load_n(&srv->figure_fn,
						    __ATOMIC_ACQUIRE);

	if (!fn || fn(__atomic_load_n(&srv->figure_arg, __ATOMIC_ACQUIRE),
		      &rep->figure_mj, &rep->figure_power_mw,
		      &rep->figure_sample_ns))
		return;
	rep->figure_id = __atomic_load_n(&srv->figure_id, __ATOMIC_ACQUIRE);
	rep->flags |= EQ_FIGURE;
}

/*
 * Answer from the sampler, for a request of version (its tail, if any,
 * filled only then).  The newest sample's instant is taken first: a sample
 * recorded between that and the energies only makes them better, never
 * "complete" wrongly (complete is judged on the older view).
 */
static void _answer(energy_query_server_t *srv,
		    const energy_query_wire_req_t *req, unsigned version,
		    energy_query_wire_rep_t *rep)
{
	const energy_query_wire_req3_t *q = &req->v3;
	energy_query_wire_rep3_t *r = &rep->v3;
	energy_query_gpu_t gpu = { 0 };
	energy_query_step_t step;
	sampler_status_t st;
	bool c0, c1;

	sampler_status(srv->s, &st);
	c0 = _instant(srv, q->t0_ns, st.last_sample_ns, &r->e0_mj, &r->rc0);
	c1 = _instant(srv, q->t1_ns, st.last_sample_ns, &r->e1_mj, &r->rc1);
	r->flags = (c0 ? EQ_COMPLETE0 : 0) | (c1 ? EQ_COMPLETE1 : 0);
	/* An instant past the newest sample: read now, do not wait a tick.
	 * (An instant older than the history will never complete.) */
	if (!(q->flags & EQ_REQ_NO_KICK) &&
	    ((!c0 && r->rc0 != -ERANGE) || (!c1 && r->rc1 != -ERANGE))) {
		_kick(srv);
		r->flags |= EQ_KICKED;
	}
	_request_step(req, version, &step);
	_answer_share(srv, q, &step, r, &gpu);
	_answer_figure(srv, r);
	r->generation = srv->generation;
	r->last_sample_ns = st.last_sample_ns;
	r->period_ns = srv->period_ns;
	r->deadline_ns = srv->deadline_ns;
	if (version < EQ_VERSION)
		return;
	_answer_gpus(srv, q, &step, &gpu);
	_pack_gpus(&gpu, rep);
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

/* One connection: one request, one reply, bounded in time. */
static void _serve(energy_query_server_t *srv, int fd)
{
	uint64_t deadline = se_mono_ns() + EQ_SERVER_IO_TIMEOUT_NS;
	energy_query_wire_req_t req = { 0 };
	energy_query_wire_rep_t rep = { 0 };
	unsigned version;
	char why[96];
	uid_t uid;
	ssize_t n;

	if (_wait_fd(fd, POLLIN, deadline) <= 0) {
		/* connected and said nothing: not worth a log line each */
		__atomic_add_fetch(&srv->refused, 1, __ATOMIC_SEQ_CST);
		return;
	}
	/*
	 * MSG_TRUNC: a longer message shows its real length, and is refused.
	 * The request is read before any refusal: a unix socket closed with
	 * unread data resets its peer, whose recv() then fails with
	 * ECONNRESET instead of returning the refusal queued for it.
	 */
	n = recv(fd, &req, sizeof(req), MSG_DONTWAIT | MSG_TRUNC);
	if (n == 0)
		return;		/* a probe (start's stale check): gone */
	version = _version_of(req.v3.magic, req.v3.version, req.v3.size,
			      EQ_MAGIC_REQ, n, false);
	if (!_peer_allowed(srv, fd, &uid)) {
		snprintf(why, sizeof(why), "peer uid %ld is neither root nor %ld",
			 (long) uid, (long) srv->euid);
		_refuse(srv, fd, version ? version : EQ_VERSION, -EACCES, why);
		return;
	}
	/* Anything else is refused in our newest layout: a newer client
	 * reads in it which version to ask again in. */
	if (!version) {
		_refuse(srv, fd, EQ_VERSION, -EPROTO,
			"not an energy query of version 3 or 4");
		return;
	}
	if (req.v3.t0_ns > req.v3.t1_ns) {
		_refuse(srv, fd, version, -EINVAL, "t0 after t1");
		return;
	}
	_answer(srv, &req, version, &rep);
	_reply(fd, &rep, version);
	__atomic_add_fetch(&srv->answered, 1, __ATOMIC_SEQ_CST);
}

static void *_server_main(void *arg)
{
	energy_query_server_t *srv = arg;

	for (;;) {
		struct pollfd p[2] = {
			{ .fd = srv->wake[0], .events = POLLIN },
			{ .fd = srv->lfd, .events = POLLIN },
		};
		int fd;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			se_log(SE_LOG_ERROR, "energy query %s: poll: %s; server stopped",
			       srv->path, strerror(errno));
			break;
		}
		if (p[0].revents)
			break;
		fd = accept4(srv->lfd, NULL, NULL,
			     SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;	/* the client left, or EMFILE: next */
		_serve(srv, fd);
		close(fd);
	}
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
	    chmod(srv->path, 0600) || listen(srv->lfd, EQ_BACKLOG) ||
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
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&srv->thread, NULL, _server_main, srv);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -rc;
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
	if (srv->wake[0] >= 0)
		close(srv->wake[0]);
	if (srv->wake[1] >= 0)
		close(srv->wake[1]);
	free(srv);
}

/* ------------------------------------------------------------ public */

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

energy_query_server_t *energy_query_server_start(const char *path, sampler_t *s,
						 uint64_t period_ns,
						 uint64_t deadline_ns,
						 char *err, size_t err_len)
{
	struct sockaddr_un sa;
	energy_query_server_t *srv;
	int rc;

	if (!s || !path) {
		snprintf(err, err_len, "energy query: no sampler or path");
		errno = EINVAL;
		return NULL;
	}
	if ((rc = _fill_addr(path, &sa))) {
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
	srv->lfd = srv->wake[0] = srv->wake[1] = -1;
	srv->s = s;
	srv->period_ns = period_ns;
	srv->deadline_ns = deadline_ns;
	srv->generation = energy_query_random_id();
	srv->euid = geteuid();
	srv->rl = (se_ratelimit_t) SE_RATELIMIT_INIT(EQ_LOG_INTERVAL_NS,
						     EQ_LOG_BURST);

	if ((rc = _clear_path(path, &sa, err, err_len)) ||
	    (rc = _listen(srv, &sa, err, err_len)))
		goto fail;
	if (pipe2(srv->wake, O_CLOEXEC | O_NONBLOCK)) {
		rc = -errno;
		snprintf(err, err_len, "energy query: pipe: %s", strerror(-rc));
		goto fail;
	}
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

void energy_query_server_set_share(energy_query_server_t *srv,
				   energy_query_share_fn fn, void *arg)
{
	__atomic_store_n(&srv->share_arg, arg, __ATOMIC_RELEASE);
	__atomic_store_n(&srv->share_fn, fn, __ATOMIC_RELEASE);
}

void energy_query_server_set_figure(energy_query_server_t *srv,
				    energy_query_figure_fn fn, void *arg,
				    uint64_t figure_id)
{
	__atomic_store_n(&srv->figure_id, figure_id, __ATOMIC_RELEASE);
	__atomic_store_n(&srv->figure_arg, arg, __ATOMIC_RELEASE);
	__atomic_store_n(&srv->figure_fn, fn, __ATOMIC_RELEASE);
}

void energy_query_server_set_gpus(energy_query_server_t *srv,
				  energy_query_gpu_fn fn, void *arg)
{
	__atomic_store_n(&srv->gpu_arg, arg, __ATOMIC_RELEASE);
	__atomic_store_n(&srv->gpu_fn, fn, __ATOMIC_RELEASE);
}

void energy_query_server_set_kick(energy_query_server_t *srv,
				  energy_query_kick_fn fn, void *arg)
{
	__atomic_store_n(&srv->kick_arg, arg, __ATOMIC_RELEASE);
	__atomic_store_n(&srv->kick_fn, fn, __ATOMIC_RELEASE);
}

void energy_query_server_counts(energy_query_server_t *srv,
				unsigned long *answered, unsigned long *refused)
{
	*answered = __atomic_load_n(&srv->answered, __ATOMIC_SEQ_CST);
	*refused = __atomic_load_n(&srv->refused, __ATOMIC_SEQ_CST);
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
} eq_old_server = { .lock = PTHREAD_MUTEX_INITIALIZER };

static bool _server_is_old(const char *path)
{
	bool old;

	pthread_mutex_lock(&eq_old_server.lock);
	old = se_mono_ns() < eq_old_server.until_ns &&
	      !strcmp(eq_old_server.path, path);
	pthread_mutex_unlock(&eq_old_server.lock);
	return old;
}

static void _remember_old_server(const char *path)
{
	pthread_mutex_lock(&eq_old_server.lock);
	snprintf(eq_old_server.path, sizeof(eq_old_server.path), "%s", path);
	eq_old_server.until_ns = se_mono_ns() + EQ_OLD_SERVER_REMEMBER_NS;
	pthread_mutex_unlock(&eq_old_server.lock);
}

/*
 * The reply to a request of version asked, n bytes in rep: its status, or
 * -EPROTO when it is not one.  A reply comes in the version asked, except
 * an old server's refusal of a newer request, which comes in its own:
 * *old_server tells it (-EPROTO: ask again in EQ_VERSION_OLD).
 */
static int _check_reply(const energy_query_wire_rep_t *rep, ssize_t n,
			unsigned asked, bool *old_server)
{
	const energy_query_wire_rep3_t *h = &rep->v3;
	unsigned v = _version_of(h->magic, h->version, h->size, EQ_MAGIC_REP, n,
				 true);

	*old_server = false;
	if (v == asked)
		return h->status;
	if (v == EQ_VERSION_OLD && asked == EQ_VERSION && h->status) {
		*old_server = h->status == -EPROTO;
		return h->status;
	}
	return -EPROTO;		/* an old server's answer is no answer */
}

/* One connection: req sent in version asked, its reply into rep. */
static int _exchange(const struct sockaddr_un *sa, energy_query_wire_req_t *req,
		     unsigned asked, energy_query_wire_rep_t *rep,
		     uint64_t deadline_ns, bool *old_server)
{
	size_t size = _req_size(asked);
	ssize_t n;
	int fd, rc;

	*old_server = false;
	req->v3.magic = EQ_MAGIC_REQ;
	req->v3.version = asked;
	req->v3.size = size;
	/* Non-blocking: a full backlog is -EAGAIN at once, not a wait. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *) sa, sizeof(*sa))) {
		rc = -errno;
		goto out;
	}
	/*
	 * A server that refuses us (our uid) replies and closes at once,
	 * maybe before our request is sent: its reply is still ours to read.
	 */
	if (send(fd, req, size, MSG_NOSIGNAL) != (ssize_t) size &&
	    errno != EPIPE && errno != ECONNRESET) {
		rc = errno == EAGAIN ? -ETIMEDOUT : -errno;
		goto out;
	}
	if ((rc = _wait_fd(fd, POLLIN, deadline_ns)) <= 0) {
		rc = rc ? rc : -ETIMEDOUT;
		goto out;
	}
	memset(rep, 0, sizeof(*rep));
	n = recv(fd, rep, sizeof(*rep), MSG_TRUNC);
	if (n < 0)
		rc = -errno;
	else if (n == 0)
		rc = -ECONNRESET;	/* closed unanswered */
	else
		rc = _check_reply(rep, n, asked, old_server);
out:
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
	out->complete0 = h->flags & EQ_COMPLETE0;
	out->complete1 = h->flags & EQ_COMPLETE1;
	out->kicked = h->flags & EQ_KICKED;
	out->last_sample_ns = h->last_sample_ns;
	out->period_ns = h->period_ns;
	out->deadline_ns = h->deadline_ns;
	out->share = h->flags & EQ_SHARE;
	out->share_rc = h->share_rc;
	out->share_mj = h->share_mj;
	out->share_last_ns = h->share_last_ns;
	out->figure = h->flags & EQ_FIGURE;
	out->figure_id = h->figure_id;
	out->figure_mj = h->figure_mj;
	out->figure_power_mw = h->figure_power_mw;
	out->figure_sample_ns = h->figure_sample_ns;
	out->version = version;
	if (version < EQ_VERSION)
		return;
	out->gpu.metered = rep->gpu_flags & EQ_GPU_METERED;
	out->gpu.part = rep->gpu_flags & EQ_GPU_PART;
	out->gpu.count = rep->gpu_count;
	out->gpu.part_mj = rep->gpu_part_mj;
	out->gpu.e0_mj = rep->gpu_e0_mj;
	out->gpu.e1_mj = rep->gpu_e1_mj;
}

/*
 * One request (req's instants, flags and step filled) and its answer, in
 * version 4, or in 3 to a server known to refuse 4.  A refusal by an old
 * server is learnt once per EQ_OLD_SERVER_REMEMBER_NS: it costs a second
 * connection, within the same timeout.
 */
static int _query(const char *path, energy_query_wire_req_t *req,
		  uint64_t timeout_ns, energy_query_answer_t *out)
{
	uint64_t deadline = se_mono_ns() + timeout_ns;
	energy_query_wire_rep_t rep;
	struct sockaddr_un sa;
	unsigned asked;
	bool old;
	int rc;

	if (!out || req->v3.t0_ns > req->v3.t1_ns)
		return -EINVAL;
	if ((rc = _fill_addr(path, &sa)))
		return rc;
	asked = _server_is_old(path) ? EQ_VERSION_OLD : EQ_VERSION;
	rc = _exchange(&sa, req, asked, &rep, deadline, &old);
	if (old) {
		_remember_old_server(path);
		asked = EQ_VERSION_OLD;
		rc = _exchange(&sa, req, asked, &rep, deadline, &old);
	}
	if (!rc)
		_unpack(&rep, asked, out);
	return rc;
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
	req->v3.flags |= EQ_REQ_STEP | (step->begin ? EQ_REQ_BEGIN : 0) |
			 (step->end ? EQ_REQ_END : 0);
	req->v3.job_id = step->job_id;
	req->v3.step_id = step->step_id;
	req->v3.ncpus = step->ncpus;
	if (!step->gpus_known)
		return;
	req->v3.flags |= EQ_REQ_GPUS;
	memcpy(req->step_minors, step->step_minors, sizeof(req->step_minors));
	memcpy(req->job_minors, step->job_minors, sizeof(req->job_minors));
}

int energy_query(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		 uint64_t timeout_ns, energy_query_answer_t *out)
{
	return energy_query_step(path, t0_ns, t1_ns, NULL, timeout_ns, out);
}

int energy_query_known(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		       uint64_t timeout_ns, energy_query_answer_t *out)
{
	return energy_query_step_known(path, t0_ns, t1_ns, NULL, timeout_ns,
				       out);
}

int energy_query_step(const char *path, uint64_t t0_ns, uint64_t t1_ns,
		      const energy_query_step_t *step, uint64_t timeout_ns,
		      energy_query_answer_t *out)
{
	energy_query_wire_req_t req;

	_request(&req, t0_ns, t1_ns, step, 0);
	return _query(path, &req, timeout_ns, out);
}

int energy_query_step_known(const char *path, uint64_t t0_ns, uint64_t t1_ns,
			    const energy_query_step_t *step,
			    uint64_t timeout_ns, energy_query_answer_t *out)
{
	energy_query_wire_req_t req;

	_request(&req, t0_ns, t1_ns, step, EQ_REQ_NO_KICK);
	return _query(path, &req, timeout_ns, out);
}

/* ------------------------------------------------------------ minors */

int energy_query_minors_add(uint64_t set[EQ_MINOR_WORDS], unsigned minor)
{
	if (minor >= EQ_MINORS_MAX)
		return -ERANGE;
	set[minor / 64] |= (uint64_t) 1 << (minor % 64);
	return 0;
}

bool energy_query_minors_has(const uint64_t set[EQ_MINOR_WORDS],
			     unsigned minor)
{
	return minor < EQ_MINORS_MAX &&
	       (set[minor / 64] >> (minor % 64)) & 1;
}
