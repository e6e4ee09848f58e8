/*
 * rf_probe_util.h - what the Redfish probes (rf_probe.c, rf_poll_probe.c)
 * share: the password file's first line, the thread's CPU and the wall
 * clock, for their printed lines.
 */
#ifndef SE_RF_PROBE_UTIL_H
#define SE_RF_PROBE_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The first line of path (exit 2 when it cannot be read). */
static inline char *probe_password(const char *path)
{
	static char line[256];
	FILE *f = fopen(path, "r");

	if (!f || !fgets(line, sizeof(line), f)) {
		perror(path);
		exit(2);
	}
	fclose(f);
	line[strcspn(line, "\r\n")] = '\0';
	return line;
}

static inline uint64_t probe_thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static inline double probe_unix_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#endif
