/*
 * fuzz_common.h - what every libFuzzer target of tests/fuzz/ shares.
 *
 * The parsers under test read files by path, as slurmd does: fuzz_file()
 * puts the input into an anonymous memory file (memfd) and returns a path
 * that opens it (/proc/self/fd/N), so no run touches the disk.
 * FUZZ_CHECK() is an invariant: a violation aborts with the reason, which
 * libFuzzer reports as a crash and saves as crash-<sha1>.
 */
#ifndef SE_FUZZ_COMMON_H
#define SE_FUZZ_COMMON_H

#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "se_log.h"

#define FUZZ_CHECK(cond, ...)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "invariant failed: %s: ", #cond); \
			fprintf(stderr, __VA_ARGS__);			\
			fputc('\n', stderr);				\
			abort();					\
		}							\
	} while (0)

static inline void fuzz_quiet_sink(void *arg, se_log_level_t level, const char *msg)
{
	(void) arg;
	(void) level;
	(void) msg;
}

/* Logs of the code under test would drown libFuzzer's own output. */
static inline void fuzz_quiet(void)
{
	se_log_set_sink(fuzz_quiet_sink, NULL);
}

/* The input as a file: a path valid until the next call. */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];

	if (fd < 0) {
		fd = memfd_create("fuzz-input", 0);
		if (fd < 0) {
			perror("memfd_create");
			abort();
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) !=
					 (ssize_t) size)) {
		perror("fuzz input file");
		abort();
	}
	return path;
}

/* A NUL-terminated copy of the input (free it). */
static inline char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
