/*
 * se_munge_pool.c - messages sealed or opened by several threads at once
 * (se_munge_pool.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_munge.h"
#include "se_munge_pool.h"
#include "se_thread.h"

struct se_munge_pool {
	unsigned n_threads;
	void *ctx[SE_MUNGE_POOL_MAX_THREADS];	/* [0]: the caller's */
	pthread_t thread[SE_MUNGE_POOL_MAX_THREADS];
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	/* the batch being worked on, under lock (next: taken without) */
	uint64_t batch;		/* its number: a new one wakes the workers */
	bool open;		/* open, else seal */
	se_munge_item_t *items;
	size_t n;
	atomic_size_t next;	/* the next item to take */
	unsigned busy;		/* workers not yet done with the batch */
	bool stop;
};

/* ---------------------------------------------------- private functions */

static void _one(void *ctx, bool open, se_munge_item_t *it)
{
	se_sealer_t s = se_munge_sealer(ctx);

	if (open) {
		it->payload_len = sizeof(it->payload);
		it->rc = s.open(ctx, it->text, it->payload, &it->payload_len,
				&it->uid, it->err, sizeof(it->err));
		return;
	}
	it->sealed = NULL;
	it->rc = s.seal(ctx, it->buf, it->len, &it->sealed, it->err,
			sizeof(it->err));
	if (!it->rc) {	/* the credential's NUL becomes its newline */
		it->sealed_len = strlen(it->sealed) + 1;
		it->sealed[it->sealed_len - 1] = '\n';
	}
}

/* Take items until none is left. */
static void _drain(se_munge_pool_t *p, void *ctx)
{
	size_t i;

	while ((i = atomic_fetch_add(&p->next, 1)) < p->n)
		_one(ctx, p->open, &p->items[i]);
}

static void *_worker(void *arg)
{
	void **slot = arg;
	se_munge_pool_t *p = slot[0];
	void *ctx = slot[1];
	uint64_t seen = 0;

	free(slot);
	pthread_mutex_lock(&p->lock);
	for (;;) {
		while (!p->stop && p->batch == seen)
			pthread_cond_wait(&p->work, &p->lock);
		if (p->stop)
			break;
		seen = p->batch;
		pthread_mutex_unlock(&p->lock);
		_drain(p, ctx);
		pthread_mutex_lock(&p->lock);
		if (--p->busy == 0)
			pthread_cond_signal(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static void _run(se_munge_pool_t *p, bool open, se_munge_item_t *items,
		 size_t n)
{
	if (p->n_threads == 1 || n < 2) {	/* not worth a wake-up */
		for (size_t i = 0; i < n; i++)
			_one(p->ctx[0], open, &items[i]);
		return;
	}
	pthread_mutex_lock(&p->lock);
	p->open = open;
	p->items = items;
	p->n = n;
	atomic_store(&p->next, 0);
	p->busy = p->n_threads - 1;
	p->batch++;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	_drain(p, p->ctx[0]);
	pthread_mutex_lock(&p->lock);
	while (p->busy)
		pthread_cond_wait(&p->done, &p->lock);
	pthread_mutex_unlock(&p->lock);
}

/* ----------------------------------------------------- public functions */

se_munge_pool_t *se_munge_pool_new(const char *socket, unsigned n_threads,
				   char *err, size_t err_len)
{
	se_munge_pool_t *p;

	if (n_threads < 1 || n_threads > SE_MUNGE_POOL_MAX_THREADS) {
		snprintf(err, err_len, "%u MUNGE threads (1 to %d)", n_threads,
			 SE_MUNGE_POOL_MAX_THREADS);
		return NULL;
	}
	if (!(p = calloc(1, sizeof(*p)))) {
		snprintf(err, err_len, "out of memory");
		return NULL;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned t = 0; t < n_threads; t++) {
		void **slot;
		int rv;

		if (!(p->ctx[t] = se_munge_new(socket, err, err_len))) {
			se_munge_pool_free(p);
			return NULL;
		}
		if (!t) {
			p->n_threads = 1;	/* what free() must undo */
			continue;
		}
		if (!(slot = malloc(2 * sizeof(*slot)))) {
			se_munge_free(p->ctx[t]);
			p->ctx[t] = NULL;
			snprintf(err, err_len, "out of memory");
			se_munge_pool_free(p);
			return NULL;
		}
		slot[0] = p;
		slot[1] = p->ctx[t];
		if ((rv = se_thread_start(&p->thread[t], _worker, slot,
					  "se-munge"))) {
			free(slot);
			se_munge_free(p->ctx[t]);
			p->ctx[t] = NULL;
			snprintf(err, err_len, "a MUNGE thread: %s",
				 strerror(-rv));
			se_munge_pool_free(p);
			return NULL;
		}
		p->n_threads = t + 1;
	}
	return p;
}

void se_munge_pool_free(se_munge_pool_t *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (unsigned t = 0; t < p->n_threads; t++) {
		if (t && p->ctx[t])
			pthread_join(p->thread[t], NULL);
		se_munge_free(p->ctx[t]);
	}
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	free(p);
}

void se_munge_pool_seal(se_munge_pool_t *p, se_munge_item_t *items,
			size_t n)
{
	_run(p, false, items, n);
}

void se_munge_pool_open(se_munge_pool_t *p, se_munge_item_t *items,
			size_t n)
{
	_run(p, true, items, n);
}
