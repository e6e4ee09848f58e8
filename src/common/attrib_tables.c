/*
 * attrib_tables.c - the bottom of the attribution (attrib_priv.h): the
 * job and step tables, scratch weights, a step's presence in an interval,
 * and the one way energy is divided, attrib_apportion.
 *
 * Model: attrib.h.  Invariant every split above rests on: attrib_apportion
 * gives exactly total, in integer mJ, in proportion to the weights; the
 * roundings' remainder (less than n mJ) goes one mJ each to the largest
 * remainders, ties to the lower index.  Nothing is clipped here.  With all
 * weights 0 it gives nothing and says so (false): the caller decides where
 * that energy goes.  Calls nothing of attrib.c or attrib_gpus.c.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "attrib_priv.h"
#include "se_array.h"

/* ------------------------------------------------------------ apportion */

typedef struct {
	uint64_t rem;		/* remainder numerator */
	size_t i;
} at_rem_t;

static int _rem_cmp(const void *x, const void *y)
{
	const at_rem_t *a = x, *b = y;

	if (a->rem != b->rem)
		return a->rem > b->rem ? -1 : 1;
	return a->i < b->i ? -1 : (a->i > b->i);
}

bool attrib_apportion(uint64_t total, const uint64_t *w, size_t n,
		      uint64_t *out)
{
	unsigned __int128 sum = 0;
	uint64_t given = 0, left;
	at_rem_t *r;
	size_t i;

	for (i = 0; i < n; i++) {
		sum += w[i];
		out[i] = 0;
	}
	if (!sum)
		return false;
	r = malloc(n * sizeof(*r));
	for (i = 0; i < n; i++) {
		unsigned __int128 x = (unsigned __int128) total * w[i];

		out[i] = (uint64_t) (x / sum);
		given += out[i];
		/* remainder / sum < 1: scaled to 64 bits for ordering */
		if (r)
			r[i] = (at_rem_t) { .rem = (uint64_t) (
				((x % sum) << 32) / sum), .i = i };
	}
	left = total - given;		/* < n */
	if (r)
		qsort(r, n, sizeof(*r), _rem_cmp);
	for (i = 0; i < left; i++)
		out[r ? r[i].i : i]++;
	free(r);
	return true;
}

/* ------------------------------------------------------------ tables */

at_job_t *attrib_find_job(attrib_t *a, uint32_t job_id, bool create)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->jobs[i].job_id == job_id)
			return &a->jobs[i];
	if (!create)
		return NULL;
	if (se_array_room(&a->jobs, a->n, &a->cap, sizeof(a->jobs[0]), 16))
		return NULL;
	memset(&a->jobs[a->n], 0, sizeof(a->jobs[0]));
	a->jobs[a->n].job_id = job_id;
	return &a->jobs[a->n++];
}

at_step_t *attrib_find_step(at_job_t *j, uint32_t step_id, bool create)
{
	for (size_t i = 0; i < j->n; i++)
		if (j->steps[i].step_id == step_id)
			return &j->steps[i];
	if (!create)
		return NULL;
	if (se_array_room(&j->steps, j->n, &j->cap, sizeof(j->steps[0]), 4))
		return NULL;
	memset(&j->steps[j->n], 0, sizeof(j->steps[0]));
	j->steps[j->n].step_id = step_id;
	return &j->steps[j->n++];
}

/* Scratch arrays of n weights and results. */
int attrib_scratch(attrib_t *a, size_t n)
{
	if (n <= a->w_cap)
		return 0;
	free(a->w);
	free(a->out);
	a->w = calloc(n, sizeof(*a->w));
	a->out = calloc(n, sizeof(*a->out));
	a->w_cap = (a->w && a->out) ? n : 0;
	return a->w_cap ? 0 : -ENOMEM;
}

/* ------------------------------------------------------------ presence */

/* A step that took part in the interval [t0, t1]. */
bool attrib_step_present(const at_step_t *s, uint64_t t0, uint64_t t1)
{
	if (s->seen || s->was_seen)
		return true;
	if (s->ever_seen || s->closed)
		return false;	/* its cgroup came and went: over */
	return s->begin_ns && s->begin_ns <= t1 &&
	       (!s->end_ns || s->end_ns >= t0);
}
