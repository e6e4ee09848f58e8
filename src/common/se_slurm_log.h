/*
 * se_slurm_log.h - route the core's log levels to Slurm's log functions.
 *
 * Slurm-side (includes Slurm headers): compiled into plugins only, never
 * into the Slurm-free core.  Each plugin installs one sink at init:
 *
 *	static se_slurm_log_t log_to = SE_SLURM_LOG(ENERGY);
 *	se_slurm_log_install(&log_to);
 *
 * Errors, info and debug go to error()/info()/debug() prefixed with the
 * plugin type; per-sample chatter goes out like log_flag(FLAG, ...), only
 * when DebugFlags has FLAG.
 */
#ifndef SE_SLURM_LOG_H
#define SE_SLURM_LOG_H

#include <stdbool.h>
#include <stdint.h>

#include "se_log.h"

typedef struct {
	const char *plugin_type;	/* prefix: "acct_gather_energy/modbus" */
	uint64_t debug_flag;		/* DEBUG_FLAG_ENERGY ...; 0: never */
	const char *flag_name;		/* "ENERGY": the log_flag() prefix */
} se_slurm_log_t;

/* A sink for the calling plugin, with per-sample chatter under DebugFlags=FLAG. */
#define SE_SLURM_LOG(flag) { plugin_type, DEBUG_FLAG_##flag, #flag }

/* se_log_sink_t for se_log_set_sink(); arg is a const se_slurm_log_t *. */
void se_slurm_log_sink(void *arg, se_log_level_t level, const char *msg);

/* se_log_wants_t beside it: the levels Slurm's log would write now (its
 * log level; per-sample chatter only under DebugFlags=FLAG). */
bool se_slurm_log_wants(void *arg, se_log_level_t level);

/* Install both (the plugins' one call at init). */
#define se_slurm_log_install(log_to) \
	se_log_set_sink_wants(se_slurm_log_sink, se_slurm_log_wants, (log_to))

#endif
