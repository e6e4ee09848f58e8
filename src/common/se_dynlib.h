/*
 * se_dynlib.h - a meter's client library, loaded on first use.
 *
 * Slurm-free.  Why: Slurm loads an acct_gather_energy plugin in every
 * process that accounts energy, slurmstepd included (one per step, batch
 * and extern steps too), but only slurmd's sampler talks to the meter.  A
 * plugin linked against its meter's library maps that library and all of
 * its dependencies into every slurmstepd before the task can start:
 * librrd brings 44 more libraries (cairo, pango, X11, ICU: 5.4-5.7 ms
 * per slurmstepd here), libfreeipmi and libipmimonitoring with libgcrypt
 * 0.8-1.1 ms, libmodbus 0.05 ms (bench/load/run.sh).  So the plugins
 * carry small wrappers with the library's own function names
 * (src/meters/<meter>/ *_dl.c, guarded by se_dynlib_ready()), and the
 * library is opened the first time one is called: in slurmd when the
 * meter is made, in slurmstepd only for the RRD settle that reads the
 * files itself.  Unit tests and tools link the library directly and never
 * see the wrappers.
 *
 * A load is tried once per process: a missing library or entry point is
 * the same answer every time (the admin installs the package and restarts
 * the daemon), and a sampler retrying each period must not dlopen each
 * period.
 */
#ifndef SE_DYNLIB_H
#define SE_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* One entry point: its name in the library, and the function pointer that
 * receives its address (a pointer to that pointer, as void *). */
typedef struct {
	const char *name;
	void *slot;
} se_dynlib_sym_t;

typedef struct {
	const char *soname;	/* e.g. "libmodbus.so.5" (configure's) */
	const se_dynlib_sym_t *syms;
	size_t n_syms;
	/* private: set by se_dynlib_load */
	pthread_mutex_t lock;
	int state;		/* 0 not tried, 1 loaded, -1 failed */
	char error[512];
} se_dynlib_t;

#define SE_DYNLIB_INIT(soname_, syms_)					\
	{ .soname = (soname_), .syms = (syms_),				\
	  .n_syms = sizeof(syms_) / sizeof((syms_)[0]),			\
	  .lock = PTHREAD_MUTEX_INITIALIZER }

/*
 * Load the library and fill every slot: 0, or -1 with the reason in
 * se_dynlib_error() (the library's file name and dlerror's words, or
 * the missing entry point).  Thread-safe; the first
 * call decides for the life of the process.  The library is never
 * unloaded: a sampler thread left past its deadline may still be in it.
 */
int se_dynlib_load(se_dynlib_t *lib);

/* Why the load failed ("" before a failure). */
const char *se_dynlib_error(se_dynlib_t *lib);

/* se_dynlib_load(), with the reason of a failure copied into err: what a
 * plugin calls before it makes its meter. */
int se_dynlib_require(se_dynlib_t *lib, char *err, size_t err_len);

/* The guard of a wrapper: true when the library is loaded; false, with
 * errno = ELIBACC, when it cannot be (the call then fails as the
 * library's own failures do). */
bool se_dynlib_ready(se_dynlib_t *lib);

#endif
