/*
 * se-bench-dlopen.c - what loading one plugin costs a fresh process, as
 * slurmstepd loads it for every step: the shared objects it brings and the
 * wall time of its dlopen.
 *
 *   se-bench-dlopen LIBSLURMFULL PLUGIN.so
 *
 * libslurmfull.so (Slurm's, in its plugin directory) is loaded first and
 * RTLD_GLOBAL, as slurmstepd has it, so that the plugin's Slurm symbols
 * resolve; then the plugin, RTLD_LAZY as Slurm's plugin loader does.
 * Prints "OBJECTS MILLISECONDS": the objects the plugin added to the
 * process (itself included) and the time of its dlopen.  One measurement
 * per process: bench/load/run.sh starts it many times.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>

#include "se_time.h"

static int _count(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void) info;
	(void) size;
	(*(int *) arg)++;
	return 0;
}

static int _objects(void)
{
	int n = 0;

	dl_iterate_phdr(_count, &n);
	return n;
}

int main(int argc, char **argv)
{
	uint64_t t0, t1;
	int n0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s LIBSLURMFULL PLUGIN.so\n", argv[0]);
		return 2;
	}
	if (!dlopen(argv[1], RTLD_LAZY | RTLD_GLOBAL)) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	n0 = _objects();
	t0 = se_mono_ns();
	if (!dlopen(argv[2], RTLD_LAZY)) {
		fprintf(stderr, "%s\n", dlerror());
		return 1;
	}
	t1 = se_mono_ns();
	printf("%d %.3f\n", _objects() - n0, (double) (t1 - t0) / 1e6);
	return 0;
}
