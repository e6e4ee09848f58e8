/*
 * freq_options.h - the command-line options of the SPANK plugin
 * energy_policy (--energy-policy=NAME, --energy-tag=TAG), checked without
 * Slurm, as a key table (conf_desc.h) like every configuration of the
 * suite, so that one test walks them with the files' keys.
 *
 * Messages name the option and the value:
 *   command line: --energy-policy=fast: must be one of: none, performance,
 *   min_energy, min_time
 */
#ifndef SE_FREQ_OPTIONS_H
#define SE_FREQ_OPTIONS_H

#include "conf_desc.h"

#define FREQ_TAG_MAX	127	/* characters of --energy-tag */

typedef struct {
	char policy[32];		/* canonical name, "" if not given */
	char tag[FREQ_TAG_MAX + 1];	/* "" if not given */
} freq_options_t;

/* Keys "energy-policy" and "energy-tag" (the option names). */
extern const se_conf_desc_t freq_options_desc;

void freq_options_init(freq_options_t *o);
void freq_options_free(freq_options_t *o);

#endif
