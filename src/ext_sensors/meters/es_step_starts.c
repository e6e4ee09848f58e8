/*
 * es_step_starts.c - the instants steps started (see es_step_starts.h).
 *
 * A small array searched linearly: it holds the steps in flight between
 * their start and their last node's completion, and entries older than
 * keep_ns (EnergyHistory) are pruned at every begin.  One lock, never held
 * across I/O.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "es_step_starts.h"
#include "se_time.h"

#define ES_STEP_SLACK_NS	(2 * SE_NS_PER_SEC) /* start_time to our call */

typedef struct {
	es_step_key_t key;
	uint64_t t_ns;
} es_step_t;

struct es_step_starts {
	pthread_mutex_t lock;
	uint64_t keep_ns;
	es_step_t *steps;
	size_t n_steps, cap_steps;
};

static bool _key_eq(const es_step_key_t *a, const es_step_key_t *b)
{
	return a->job_id == b->job_id && a->step_id == b->step_id &&
	       a->het_comp == b->het_comp;
}

/* Drop entries older than keep_ns (steps that never completed). */
static void _steps_prune(es_step_starts_t *s, uint64_t now_ns)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n_steps; i++)
		if (s->steps[i].t_ns + s->keep_ns >= now_ns)
			s->steps[k++] = s->steps[i];
	s->n_steps = k;
}

es_step_starts_t *es_step_starts_create(uint64_t keep_ns)
{
	es_step_starts_t *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->keep_ns = keep_ns;
	pthread_mutex_init(&s->lock, NULL);
	return s;
}

void es_step_starts_destroy(es_step_starts_t *s)
{
	if (!s)
		return;
	free(s->steps);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

int es_step_starts_begin(es_step_starts_t *s, const es_step_key_t *k,
			 uint64_t t_ns)
{
	int rc = 0;

	pthread_mutex_lock(&s->lock);
	_steps_prune(s, t_ns);
	for (size_t i = 0; i < s->n_steps; i++) {
		if (_key_eq(&s->steps[i].key, k)) {
			s->steps[i].t_ns = t_ns;
			goto out;
		}
	}
	if (s->n_steps == s->cap_steps) {
		size_t cap = s->cap_steps ? 2 * s->cap_steps : 64;
		es_step_t *p = realloc(s->steps, cap * sizeof(*p));

		if (!p) {
			rc = -ENOMEM;
			goto out;
		}
		s->steps = p;
		s->cap_steps = cap;
	}
	s->steps[s->n_steps++] = (es_step_t) { *k, t_ns };
out:
	pthread_mutex_unlock(&s->lock);
	return rc;
}

uint64_t es_step_starts_get(es_step_starts_t *s, const es_step_key_t *k,
			    uint64_t coarse_ns, bool forget)
{
	uint64_t t_ns = coarse_ns;

	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < s->n_steps; i++) {
		if (!_key_eq(&s->steps[i].key, k))
			continue;
		if (s->steps[i].t_ns >= coarse_ns &&
		    s->steps[i].t_ns < coarse_ns + ES_STEP_SLACK_NS)
			t_ns = s->steps[i].t_ns;
		if (forget)
			s->steps[i] = s->steps[--s->n_steps];
		break;
	}
	pthread_mutex_unlock(&s->lock);
	return t_ns;
}
