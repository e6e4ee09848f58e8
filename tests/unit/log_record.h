/*
 * log_record.h - the log lines of the Slurm-free core, recorded for a unit
 * test to look at (test_sampler, test_sampler_log, test_rrd_meter).
 *
 * _setup() (a Check fixture) clears the record and installs the sink;
 * _teardown() removes it.  Each line is "LEVEL|message\n" in log_text;
 * per-sample chatter (SE_LOG_SAMPLE) is left out; log_errors counts the
 * error-level lines.  Everything is under log_lock: a sampler thread a
 * previous test abandoned may still log while the next test starts.
 */
#ifndef SE_TEST_LOG_RECORD_H
#define SE_TEST_LOG_RECORD_H

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "se_log.h"

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_text[16384];
static int log_errors;

static void _log_sink(void *arg, se_log_level_t level, const char *msg)
{
	size_t len;

	(void) arg;
	if (level == SE_LOG_SAMPLE)
		return;
	pthread_mutex_lock(&log_lock);
	len = strlen(log_text);
	snprintf(log_text + len, sizeof(log_text) - len, "%d|%s\n", level,
		 msg);
	if (level == SE_LOG_ERROR)
		log_errors++;
	pthread_mutex_unlock(&log_lock);
}

static void _setup(void)
{
	pthread_mutex_lock(&log_lock);
	log_text[0] = '\0';
	log_errors = 0;
	pthread_mutex_unlock(&log_lock);
	se_log_set_sink(_log_sink, NULL);
}

static void _teardown(void)
{
	se_log_set_sink(NULL, NULL);
}

#endif
