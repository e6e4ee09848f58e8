/*
 * se_clockstep.c - step one process tree's wall clock, as an NTP step would,
 * without touching the machine's clock (a test double, LD_PRELOAD only).
 *
 * The test cluster's nodes share the host kernel's CLOCK_REALTIME, which
 * must not be stepped (every daemon of the machine would see it), and time
 * namespaces offset only the monotonic and boot clocks.  Preloaded into one
 * node's slurmd (its slurmstepds inherit it), this library adds an offset to
 * every wall-clock reading of the process and leaves CLOCK_MONOTONIC alone,
 * as a real step does:
 *
 *   SE_CLOCKSTEP_FILE=PATH   PATH holds the offset in seconds ("-120",
 *                            "+3600.5"); re-read when it changes (checked
 *                            at most every 50 ms); missing or bad: 0.
 *
 * After a real step, time() and the kernel's absolute CLOCK_REALTIME
 * deadlines agree again; so deadlines computed from the faked clock are
 * moved back into the kernel's clock where a wait takes one
 * (pthread_cond_timedwait on a CLOCK_REALTIME condition variable,
 * clock_nanosleep and sem_timedwait with CLOCK_REALTIME, TIMER_ABSTIME):
 * a wait for "time() + 5 s" still lasts 5 s.  (A wait already under way
 * when the offset changes keeps its deadline: a real step would move it.)
 *
 * Why not libfaketime (Debian's faketime 0.9.10): with
 * FAKETIME_DONT_FAKE_MONOTONIC=1 every absolute CLOCK_MONOTONIC wait fails
 * (clock_nanosleep returns EINVAL, a monotonic pthread_cond_timedwait
 * returns at once, measured here), so slurmd's threads would spin; without
 * it, a step moves CLOCK_MONOTONIC too, which no real clock step does.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define NS_PER_SEC	1000000000LL
#define RECHECK_NS	(50 * 1000000LL)
/* glibc's pthread_cond_t keeps its clock in bit 1 of __wrefs (nptl,
 * pthread_cond_common.c: __PTHREAD_COND_CLOCK_MONOTONIC_MASK). */
#define COND_CLOCK_MONOTONIC_MASK 2u

static _Atomic int64_t _offset_ns;
static _Atomic int64_t _next_check_ns;
static struct timespec _file_mtime;
static off_t _file_size = -1;
static pthread_mutex_t _reload_lock = PTHREAD_MUTEX_INITIALIZER;

/* The kernel's clocks, past every interposer (and the vDSO). */
static int _real_gettime(clockid_t clk, struct timespec *ts)
{
	return (int) syscall(SYS_clock_gettime, clk, ts);
}

static int64_t _ns(const struct timespec *ts)
{
	return ts->tv_sec * NS_PER_SEC + ts->tv_nsec;
}

static struct timespec _ts(int64_t ns)
{
	struct timespec ts = { ns / NS_PER_SEC, ns % NS_PER_SEC };

	if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += NS_PER_SEC;
	}
	return ts;
}

/* Parse "[+-]SECONDS[.FRACTION]" without stdio (no locale, no malloc). */
static int64_t _parse_offset(const char *s)
{
	int64_t whole = 0, frac = 0, scale = NS_PER_SEC;
	int neg = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	for (; *s >= '0' && *s <= '9'; s++)
		whole = whole * 10 + (*s - '0');
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9' && scale > 1; s++) {
			scale /= 10;
			frac += (*s - '0') * scale;
		}
	return (neg ? -1 : 1) * (whole * NS_PER_SEC + frac);
}

/* Re-read the offset file when it changed (at most every RECHECK_NS). */
static void _reload(void)
{
	const char *path = getenv("SE_CLOCKSTEP_FILE");
	struct timespec now;
	struct stat st;
	char buf[64];
	ssize_t n;
	int fd;

	if (!path || _real_gettime(CLOCK_MONOTONIC, &now))
		return;
	if (_ns(&now) < atomic_load(&_next_check_ns) ||
	    pthread_mutex_trylock(&_reload_lock))
		return;
	atomic_store(&_next_check_ns, _ns(&now) + RECHECK_NS);
	if (stat(path, &st)) {
		atomic_store(&_offset_ns, 0);
		_file_size = -1;
	} else if (st.st_size != _file_size ||
		   st.st_mtim.tv_sec != _file_mtime.tv_sec ||
		   st.st_mtim.tv_nsec != _file_mtime.tv_nsec) {
		_file_size = st.st_size;
		_file_mtime = st.st_mtim;
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
			n = read(fd, buf, sizeof(buf) - 1);
			close(fd);
			buf[n > 0 ? n : 0] = '\0';
			atomic_store(&_offset_ns, _parse_offset(buf));
		}
	}
	pthread_mutex_unlock(&_reload_lock);
}

static int _is_wall(clockid_t clk)
{
	return clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE ||
	       clk == CLOCK_TAI;
}

static int64_t _offset(void)
{
	_reload();
	return atomic_load(&_offset_ns);
}

/* A faked absolute CLOCK_REALTIME deadline in the kernel's clock. */
static struct timespec _to_kernel(const struct timespec *abstime)
{
	return _ts(_ns(abstime) - _offset());
}

/* ------------------------------------------------------ the wall clock */

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	int rc = _real_gettime(clk, ts);

	if (!rc && _is_wall(clk))
		*ts = _ts(_ns(ts) + _offset());
	return rc;
}

int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
	struct timespec ts;

	(void) tz;
	if (clock_gettime(CLOCK_REALTIME, &ts))
		return -1;
	tv->tv_sec = ts.tv_sec;
	tv->tv_usec = ts.tv_nsec / 1000;
	return 0;
}

time_t time(time_t *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (t)
		*t = ts.tv_sec;
	return ts.tv_sec;
}

/* ------------------------------------------- absolute wall-clock waits */

int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req,
		    struct timespec *rem)
{
	struct timespec k;

	if ((flags & TIMER_ABSTIME) && _is_wall(clk)) {
		k = _to_kernel(req);
		req = &k;
	}
	return (int) (syscall(SYS_clock_nanosleep, clk, flags, req, rem) ?
		      errno : 0);
}

int pthread_cond_timedwait(pthread_cond_t *restrict cond,
			   pthread_mutex_t *restrict mutex,
			   const struct timespec *restrict abstime)
{
	static int (*real)(pthread_cond_t *, pthread_mutex_t *,
			   const struct timespec *);
	struct timespec k;

	if (!real)
		real = dlvsym(RTLD_NEXT, "pthread_cond_timedwait",
			      "GLIBC_2.3.2");
	if (!real)
		return EINVAL;
	if (!(cond->__data.__wrefs & COND_CLOCK_MONOTONIC_MASK)) {
		k = _to_kernel(abstime);
		abstime = &k;
	}
	return real(cond, mutex, abstime);
}

int sem_timedwait(sem_t *restrict sem, const struct timespec *restrict abstime)
{
	static int (*real)(sem_t *, const struct timespec *);
	struct timespec k;

	if (!real)
		real = dlsym(RTLD_NEXT, "sem_timedwait");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	k = _to_kernel(abstime);
	return real(sem, &k);
}
