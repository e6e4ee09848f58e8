/*
 * se_time.c - monotonic and wall-clock nanoseconds.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdint.h>
#include <time.h>

#include "se_time.h"

static uint64_t _clock_ns(clockid_t id)
{
	struct timespec ts;

	/* Cannot fail for these clocks on Linux with a valid pointer. */
	clock_gettime(id, &ts);
	return (uint64_t) ts.tv_sec * SE_NS_PER_SEC + (uint64_t) ts.tv_nsec;
}

uint64_t se_mono_ns(void)
{
	return _clock_ns(CLOCK_MONOTONIC);
}

uint64_t se_wall_ns(void)
{
	return _clock_ns(CLOCK_REALTIME);
}

/*
 * wall - mono, as a signed offset.  Both clocks are read back to back; the
 * error is the few tens of ns between the two reads, far below any meter's
 * resolution.
 */
static int64_t _wall_minus_mono_ns(void)
{
	uint64_t mono = se_mono_ns();
	uint64_t wall = se_wall_ns();

	return (int64_t) (wall - mono);
}

/* Add a signed offset, saturating at 0 (an instant before either epoch). */
static uint64_t _shift_ns(uint64_t t_ns, int64_t off_ns)
{
	if (off_ns < 0 && (uint64_t) -off_ns > t_ns)
		return 0;
	return t_ns + (uint64_t) off_ns;
}

uint64_t se_mono_to_wall_ns(uint64_t mono_ns)
{
	return _shift_ns(mono_ns, _wall_minus_mono_ns());
}

uint64_t se_wall_to_mono_ns(uint64_t wall_ns)
{
	return _shift_ns(wall_ns, -_wall_minus_mono_ns());
}

void se_sleep_ns(uint64_t ns)
{
	struct timespec until;
	uint64_t t = se_mono_ns() + ns;

	until.tv_sec = (time_t) (t / SE_NS_PER_SEC);
	until.tv_nsec = (long) (t % SE_NS_PER_SEC);
	/* a signal: sleep on to the same instant */
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until,
			       NULL) == EINTR)
		;
}
