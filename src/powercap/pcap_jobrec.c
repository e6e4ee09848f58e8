/*
 * pcap_jobrec.c - each running job's power cap record (pcap_jobrec.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_jobrec.h"

#define TOKEN	"powercap="

void pcap_jobrecs_init(pcap_jobrecs_t *j)
{
	memset(j, 0, sizeof(*j));
}

void pcap_jobrecs_free(pcap_jobrecs_t *j)
{
	free(j->v);
	pcap_jobrecs_init(j);
}

/* Where job_id is, or would go, in the sorted records. */
static size_t _pos(const pcap_jobrecs_t *j, uint32_t job_id)
{
	size_t lo = 0, hi = j->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (j->v[mid].job_id < job_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The lowest cap over the job's nodes that is below the node's maximum;
 * 0: none capped. */
static uint32_t _min_cap(const pcap_job_t *job, const uint32_t *cap_mw,
			 const uint32_t *max_mw, size_t n_nodes)
{
	uint32_t min = 0;

	for (size_t k = 0; k < job->n_nodes; k++) {
		size_t i = job->nodes[k];

		if (i < n_nodes && cap_mw[i] < max_mw[i] &&
		    (!min || cap_mw[i] < min))
			min = cap_mw[i];
	}
	return min;
}

/* Room for n more records. */
static int _reserve(pcap_jobrecs_t *j, size_t n)
{
	pcap_jobrec_t *v;
	size_t cap = j->cap ? j->cap : 64;

	while (cap < j->n + n)
		cap *= 2;
	if (cap == j->cap)
		return 0;
	if (!(v = realloc(j->v, cap * sizeof(*v))))
		return -ENOMEM;
	j->v = v;
	j->cap = cap;
	return 0;
}

int pcap_jobrecs_round(pcap_jobrecs_t *j, int64_t now_ns,
		       const pcap_job_t *jobs, size_t n_jobs,
		       const uint32_t *cap_mw, const uint32_t *max_mw,
		       size_t n_nodes, pcap_jobrec_end_fn end, void *arg)
{
	size_t out = 0;

	if (_reserve(j, n_jobs))
		return -ENOMEM;
	for (size_t k = 0; k < j->n; k++)
		j->v[k].seen = false;
	/* the jobs known: charged for (last, now], then this round's state */
	for (size_t q = 0; q < n_jobs; q++) {
		size_t p = _pos(j, jobs[q].job_id);
		pcap_jobrec_t *r = &j->v[p];
		uint32_t min;

		if (p == j->n || r->job_id != jobs[q].job_id || r->seen)
			continue;	/* new (below), or listed twice */
		if (r->capped && now_ns > r->last_ns)
			r->capped_ns += now_ns - r->last_ns;
		min = _min_cap(&jobs[q], cap_mw, max_mw, n_nodes);
		r->capped = min != 0;
		if (min && (!r->min_cap_mw || min < r->min_cap_mw))
			r->min_cap_mw = min;
		r->last_ns = now_ns;
		r->seen = true;
	}
	/* the jobs gone: handed over, dropped */
	for (size_t k = 0; k < j->n; k++) {
		if (!j->v[k].seen) {
			if (end)
				end(arg, &j->v[k]);
			continue;
		}
		j->v[out++] = j->v[k];
	}
	j->n = out;
	/* the new jobs, in order (room reserved above) */
	for (size_t q = 0; q < n_jobs; q++) {
		size_t p = _pos(j, jobs[q].job_id);
		uint32_t min;

		if (p < j->n && j->v[p].job_id == jobs[q].job_id)
			continue;
		memmove(&j->v[p + 1], &j->v[p], (j->n - p) * sizeof(*j->v));
		j->n++;
		min = _min_cap(&jobs[q], cap_mw, max_mw, n_nodes);
		j->v[p] = (pcap_jobrec_t){ .job_id = jobs[q].job_id,
					   .min_cap_mw = min,
					   .capped = min != 0,
					   .last_ns = now_ns, .seen = true };
	}
	return 0;
}

int pcap_jobrec_token(const pcap_jobrec_t *r, char *buf, size_t len)
{
	int n;

	if (!r->min_cap_mw)
		return 0;
	n = snprintf(buf, len, TOKEN "capped:%llds,min:%uW",
		     (long long)((r->capped_ns + 500000000) / 1000000000),
		     (unsigned)((r->min_cap_mw + 500) / 1000));
	return n < 0 || (size_t)n >= len ? 0 : n;
}

bool pcap_jobrec_due(const pcap_jobrec_t *r, int64_t now_ns,
		     int64_t every_ns)
{
	if (!r->min_cap_mw)
		return false;
	if (!r->written || r->min_cap_mw < r->written_min_mw)
		return true;
	return r->capped_ns > r->written_capped_ns &&
	       now_ns - r->written_ns >= every_ns;
}

void pcap_jobrec_written(pcap_jobrec_t *r, int64_t now_ns)
{
	r->written = true;
	r->written_ns = now_ns;
	r->written_min_mw = r->min_cap_mw;
	r->written_capped_ns = r->capped_ns;
}

/* The start of old's "powercap=" word, or NULL. */
static const char *_find_token(const char *old)
{
	size_t tl = strlen(TOKEN);

	for (const char *p = old; (p = strstr(p, TOKEN)); p += tl)
		if (p == old || p[-1] == ' ')
			return p;
	return NULL;
}

char *pcap_jobrec_comment(const char *old, const char *token)
{
	const char *at = old ? _find_token(old) : NULL;
	size_t len = (old ? strlen(old) : 0) + strlen(token) + 2;
	char *s = malloc(len);

	if (!s)
		return NULL;
	if (at) {	/* old's word replaced, the rest kept */
		const char *after = at + strcspn(at, " ");

		snprintf(s, len, "%.*s%s%s", (int)(at - old), old, token,
			 after);
	} else if (old && *old) {
		snprintf(s, len, "%s %s", old, token);
	} else {
		snprintf(s, len, "%s", token);
	}
	return s;
}
