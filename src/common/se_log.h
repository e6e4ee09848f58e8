/*
 * se_log.h - logging hook and rate limiting for the Slurm-free core.
 *
 * The core never calls Slurm's log functions; the plugin glue installs a
 * sink that routes each level to error()/info()/debug()/log_flag(ENERGY).
 * Tests install a sink that records messages.
 */
#ifndef SE_LOG_H
#define SE_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

typedef enum {
	SE_LOG_ERROR = 0,
	SE_LOG_INFO,
	SE_LOG_DEBUG,
	SE_LOG_SAMPLE,	/* per-sample chatter: Slurm's log_flag(ENERGY, ...) */
} se_log_level_t;

typedef void (*se_log_sink_t)(void *arg, se_log_level_t level, const char *msg);

/* Install the process-wide sink (NULL: messages go to stderr). */
void se_log_set_sink(se_log_sink_t sink, void *arg);

/*
 * Whether the sink would write a message of level now: se_log() does not
 * format one it would drop (the sampler's per-sample line, at every read
 * of every meter, while DebugFlags lacks the flag).  Called with the
 * sink's arg; must not log.
 */
typedef bool (*se_log_wants_t)(void *arg, se_log_level_t level);

/* se_log_set_sink() with a wants function (NULL: every level). */
void se_log_set_sink_wants(se_log_sink_t sink, se_log_wants_t wants,
			   void *arg);

/* Format a message (at most 1023 bytes kept) and hand it to the sink,
 * unless the sink's wants function refuses its level.  Thread-safe; the
 * sink is called without any core lock held.  se_log_limited() always
 * formats what its limiter lets through. */
void se_log(se_log_level_t level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A rate limiter: at most `burst` messages per `interval_ns` (fixed windows
 * opened by the first message after the previous one expired); the first
 * message let through after suppression ends with
 * " (N similar messages suppressed)".  interval_ns 0: no limit; burst 0
 * counts as 1.  Not locked: one limiter per thread, or the caller's lock.
 */
typedef struct {
	uint64_t interval_ns;
	unsigned burst;
	uint64_t window_start_ns;
	unsigned in_window;
	unsigned long suppressed;
} se_ratelimit_t;

#define SE_RATELIMIT_INIT(interval_ns, burst) { (interval_ns), (burst), 0, 0, 0 }

/* Log through a rate limiter; now_ns is monotonic time (se_mono_ns()).
 * Returns true when the message went out, false when it was suppressed. */
bool se_log_limited(se_ratelimit_t *rl, uint64_t now_ns, se_log_level_t level,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
