/*
 * se_slurm_log.c - route the core's log levels to Slurm's log functions.
 */
#include "config.h"		/* Slurm's, for its headers */

#include "src/common/log.h"
#include "src/common/read_config.h"

#include "se_slurm_log.h"

bool se_slurm_log_wants(void *arg, se_log_level_t level)
{
	const se_slurm_log_t *to = arg;

	switch (level) {
	case SE_LOG_ERROR:
		return true;
	case SE_LOG_INFO:
		return get_log_level() >= LOG_LEVEL_INFO;
	case SE_LOG_DEBUG:
		return get_log_level() >= LOG_LEVEL_DEBUG;
	case SE_LOG_SAMPLE:
	default:
		return to->debug_flag &&
		       (slurm_conf.debug_flags & to->debug_flag) &&
		       get_log_level() >= LOG_LEVEL_VERBOSE;
	}
}

void se_slurm_log_sink(void *arg, se_log_level_t level, const char *msg)
{
	const se_slurm_log_t *to = arg;

	switch (level) {
	case SE_LOG_ERROR:
		error("%s: %s", to->plugin_type, msg);
		break;
	case SE_LOG_INFO:
		info("%s: %s", to->plugin_type, msg);
		break;
	case SE_LOG_DEBUG:
		debug("%s: %s", to->plugin_type, msg);
		break;
	case SE_LOG_SAMPLE:
	default:
		/* as log_flag(): verbose level, "FLAG: " prefix */
		if (to->debug_flag && (slurm_conf.debug_flags & to->debug_flag))
			verbose("%s: %s: %s", to->flag_name, to->plugin_type,
				msg);
		break;
	}
}
