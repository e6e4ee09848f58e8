/*
 * se_log.c - the core's logging hook and a rate limiter.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "se_log.h"

#define SE_LOG_MSG_MAX	1024

static pthread_mutex_t _sink_lock = PTHREAD_MUTEX_INITIALIZER;
static se_log_sink_t _sink;
static se_log_wants_t _wants;
static void *_sink_arg;

static const char *const _level_names[] = {
	[SE_LOG_ERROR] = "error",
	[SE_LOG_INFO] = "info",
	[SE_LOG_DEBUG] = "debug",
	[SE_LOG_SAMPLE] = "sample",
};

void se_log_set_sink_wants(se_log_sink_t sink, se_log_wants_t wants,
			   void *arg)
{
	pthread_mutex_lock(&_sink_lock);
	_sink = sink;
	_wants = sink ? wants : NULL;
	_sink_arg = arg;
	pthread_mutex_unlock(&_sink_lock);
}

void se_log_set_sink(se_log_sink_t sink, void *arg)
{
	se_log_set_sink_wants(sink, NULL, arg);
}

/* The sink as installed now (one copy under the lock: the sink and its
 * wants function are called without it, so that a sink may itself log or
 * be replaced meanwhile). */
typedef struct {
	se_log_sink_t sink;
	se_log_wants_t wants;
	void *arg;
} sink_now_t;

static sink_now_t _sink_now(void)
{
	sink_now_t now;

	pthread_mutex_lock(&_sink_lock);
	now = (sink_now_t) { _sink, _wants, _sink_arg };
	pthread_mutex_unlock(&_sink_lock);
	return now;
}

/* Whether the sink would write a message of level (see se_log()). */
static bool _wanted(se_log_level_t level)
{
	sink_now_t now = _sink_now();

	return !now.wants || now.wants(now.arg, level);
}

/* Hand a formatted message to the sink, or to stderr without one. */
static void _emit(se_log_level_t level, const char *msg)
{
	sink_now_t now = _sink_now();

	if (now.sink) {
		now.sink(now.arg, level, msg);
		return;
	}
	if ((unsigned) level > SE_LOG_SAMPLE)
		level = SE_LOG_ERROR;
	fprintf(stderr, "%s: %s\n", _level_names[level], msg);
}

static void _vlog(se_log_level_t level, const char *suffix, const char *fmt,
		  va_list ap)
{
	char msg[SE_LOG_MSG_MAX];
	int len;

	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	if (suffix && len >= 0 && (size_t) len < sizeof(msg))
		snprintf(msg + len, sizeof(msg) - len, "%s", suffix);
	_emit(level, msg);
}

void se_log(se_log_level_t level, const char *fmt, ...)
{
	va_list ap;

	if (!_wanted(level))
		return;
	va_start(ap, fmt);
	_vlog(level, NULL, fmt, ap);
	va_end(ap);
}

/*
 * Fixed windows: the first message at or after interval_ns past the window
 * start opens a new window.  Returns true when this message may go out.
 */
static int _ratelimit_pass(se_ratelimit_t *rl, uint64_t now_ns)
{
	unsigned burst = rl->burst ? rl->burst : 1;

	if (!rl->interval_ns)
		return 1;
	if (!rl->in_window || now_ns < rl->window_start_ns ||
	    now_ns - rl->window_start_ns >= rl->interval_ns) {
		rl->window_start_ns = now_ns;
		rl->in_window = 0;
	}
	if (rl->in_window >= burst) {
		rl->suppressed++;
		return 0;
	}
	rl->in_window++;
	return 1;
}

bool se_log_limited(se_ratelimit_t *rl, uint64_t now_ns, se_log_level_t level,
		    const char *fmt, ...)
{
	char suffix[64] = "";
	va_list ap;

	if (!_ratelimit_pass(rl, now_ns))
		return false;
	if (rl->suppressed) {
		snprintf(suffix, sizeof(suffix),
			 " (%lu similar messages suppressed)", rl->suppressed);
		rl->suppressed = 0;
	}

	va_start(ap, fmt);
	_vlog(level, suffix, fmt, ap);
	va_end(ap);
	return true;
}
