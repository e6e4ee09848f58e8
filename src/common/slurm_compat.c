/*
 * slurm_compat.c - which Slurm daemon runs us, and hostlist membership, in
 * every release (see slurm_compat.h).
 */
#include "config.h"	/* Slurm's: its headers depend on it */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "slurm_compat.h"
#ifdef SE_SLURM_HAVE_RUNNING_IN
#  include "src/common/run_in_daemon.h"
#endif

/* Public functions */

bool se_exe_is(const char *exe_path, const char *name)
{
	char buf[PATH_MAX];
	const char *base;
	ssize_t n;

	if (!exe_path) {
		n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
		if (n <= 0)
			return false;
		buf[n] = '\0';
		exe_path = buf;
	}
	base = strrchr(exe_path, '/');
	base = base ? base + 1 : exe_path;
	return !strcmp(base, name);
}

#ifdef SE_SLURM_HAVE_RUNNING_IN

bool se_in_slurmd(void)
{
	return running_in_slurmd();
}

bool se_in_slurmstepd(void)
{
	return running_in_slurmstepd();
}

bool se_in_slurmd_or_stepd(void)
{
	return running_in_slurmd_stepd();
}

#else	/* a tree whose run_in_daemon.h has no running_in_*() */

typedef enum {
	EXE_OTHER = 0,
	EXE_SLURMD,
	EXE_SLURMSTEPD,
} exe_role_t;

static pthread_once_t exe_once = PTHREAD_ONCE_INIT;
static exe_role_t exe_role;

static void _exe_role_init(void)
{
	if (se_exe_is(NULL, "slurmd"))
		exe_role = EXE_SLURMD;
	else if (se_exe_is(NULL, "slurmstepd"))
		exe_role = EXE_SLURMSTEPD;
	else
		exe_role = EXE_OTHER;
}

static exe_role_t _exe_role(void)
{
	pthread_once(&exe_once, _exe_role_init);
	return exe_role;
}

bool se_in_slurmd(void)
{
	return _exe_role() == EXE_SLURMD;
}

bool se_in_slurmstepd(void)
{
	return _exe_role() == EXE_SLURMSTEPD;
}

bool se_in_slurmd_or_stepd(void)
{
	return _exe_role() != EXE_OTHER;
}

#endif

int se_hostlist_contains(void *arg, const char *expr, const char *node)
{
	se_hostlist_t hl = hostlist_create(expr);
	int found;

	if (!hl)
		return -EINVAL;
	found = hostlist_find(hl, node) >= 0;
	hostlist_destroy(hl);
	return found;
}

const se_hostlist_ops_t se_slurm_hostlist_ops = {
	.contains = se_hostlist_contains,
	.count = se_hostlist_count,
};

long se_hostlist_count(void *arg, const char *const *exprs, size_t n)
{
	se_hostlist_t hl = hostlist_create(NULL);
	long count;

	(void) arg;
	if (!hl)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!hostlist_push(hl, exprs[i])) {
			hostlist_destroy(hl);
			return -EINVAL;
		}
	}
	hostlist_uniq(hl);
	count = hostlist_count(hl);
	hostlist_destroy(hl);
	return count;
}
