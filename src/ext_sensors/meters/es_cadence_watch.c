/*
 * es_cadence_watch.c - the cadence of slurmctld's update calls (see
 * es_cadence_watch.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <string.h>

#include "es_cadence_watch.h"

void es_cadence_init(es_cadence_t *cd, uint64_t period_ns)
{
	memset(cd, 0, sizeof(*cd));
	cd->period_ns = period_ns;
}

void es_cadence_arm(es_cadence_t *cd, uint64_t now_ns)
{
	if (cd->armed)
		return;
	cd->armed = true;
	cd->last_ns = now_ns;
}

uint64_t es_cadence_call(es_cadence_t *cd, uint64_t now_ns)
{
	uint64_t gap = cd->armed && now_ns > cd->last_ns ?
		       now_ns - cd->last_ns : 0;

	cd->armed = true;
	cd->last_ns = now_ns;
	cd->calls++;
	return gap;
}

bool es_cadence_starved(es_cadence_t *cd, uint64_t now_ns, uint64_t *gap_ns)
{
	uint64_t limit = ES_STARVED_FACTOR * cd->period_ns, gap;

	if (limit < ES_STARVED_MIN_NS)
		limit = ES_STARVED_MIN_NS;
	if (cd->warned || !cd->armed || !cd->period_ns ||
	    now_ns <= cd->last_ns)
		return false;
	gap = now_ns - cd->last_ns;
	if (gap <= limit)
		return false;
	cd->warned = true;
	if (gap_ns)
		*gap_ns = gap;
	return true;
}
