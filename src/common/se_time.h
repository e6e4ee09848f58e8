/*
 * se_time.h - time as 64-bit nanosecond counts.
 *
 * Inside the suite every instant is a CLOCK_MONOTONIC count of nanoseconds
 * (never whole-second time_t: two samples in one second must not divide by
 * zero).  Wall-clock time is used only where Slurm or a file format asks.
 */
#ifndef SE_TIME_H
#define SE_TIME_H

#include <stdint.h>

#define SE_NS_PER_SEC	1000000000ULL
#define SE_NS_PER_MS	1000000ULL
#define SE_NS_PER_US	1000ULL

/* Monotonic time now, in ns (CLOCK_MONOTONIC; shared by all processes). */
uint64_t se_mono_ns(void);

/* Wall-clock time now, in ns since the Unix epoch (CLOCK_REALTIME). */
uint64_t se_wall_ns(void);

/* Convert a monotonic instant to wall-clock ns, using the current offset. */
uint64_t se_mono_to_wall_ns(uint64_t mono_ns);

/* Convert a wall-clock instant to monotonic ns, using the current offset. */
uint64_t se_wall_to_mono_ns(uint64_t wall_ns);

/* Sleep for ns (monotonic), resumed after signals. */
void se_sleep_ns(uint64_t ns);

#endif
