/*
 * energy_query_fixture.h - a node's energy query server over the sampler of a
 * meter that reads a constant EQF_POWER_MW (defined by the test before
 * including this), with a period so long that no tick falls in a test: reads
 * happen only when a test asks.  The sampler's ticks are multiples of its
 * period on the monotonic clock (time since boot), so "long" means longer than
 * any uptime: with 100 s a tick fell inside a test once in a while (CI of
 * stop 39, ASan: a second read in test_known_query_kicks_no_reading).
 * Shared by the server's tests (test_energy_query.c) and the
 * se-energy-query tool's (test_energy_query_tool.c).
 */
#ifndef SE_TEST_ENERGY_QUERY_FIXTURE_H
#define SE_TEST_ENERGY_QUERY_FIXTURE_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "energy_query.h"
#include "sampler.h"
#include "se_time.h"

#ifndef EQF_POWER_MW
#error "define EQF_POWER_MW (the fake meter's constant power) first"
#endif

/* 10^9 s (31 years): no machine's uptime reaches the first tick. */
#define EQF_PERIOD_NS	(1000000000ULL * SE_NS_PER_SEC)
#define EQF_DEADLINE_NS	(200 * SE_NS_PER_MS)

static int eqf_reads_count;	/* atomic builtins */

static int eqf_read(void *dev, meter_reading_t *out, uint64_t deadline_ns,
		    char *msg, size_t msg_len)
{
	(void) dev;
	(void) deadline_ns;
	(void) msg;
	(void) msg_len;
	out->has_power = true;
	out->power_mw = EQF_POWER_MW;
	__atomic_add_fetch(&eqf_reads_count, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static const meter_ops_t eqf_ops = { .name = "fake", .read = eqf_read };

typedef struct {
	char dir[64];
	char path[160];
	sampler_t *s;
	energy_query_server_t *srv;
} fixture_t;

static inline int eqf_reads(void)
{
	return __atomic_load_n(&eqf_reads_count, __ATOMIC_SEQ_CST);
}

/* Poll (never a fixed sleep) until n reads happened, at most 2 s. */
static inline void eqf_wait_reads(int n)
{
	uint64_t limit = se_mono_ns() + 2 * SE_NS_PER_SEC;

	while (eqf_reads() < n && se_mono_ns() < limit)
		se_sleep_ns(SE_NS_PER_MS);
	ck_assert_int_ge(eqf_reads(), n);
}

/* The server again, at the same path, with hooks (NULL: none): they are
 * fixed at start (energy_query.h). */
static inline void eqf_serve(fixture_t *f, const energy_query_hooks_t *hooks)
{
	char err[256] = "";

	energy_query_server_stop(f->srv);
	f->srv = energy_query_server_start(f->path, f->s, EQF_PERIOD_NS,
					   EQF_DEADLINE_NS, hooks, err,
					   sizeof(err));
	ck_assert_msg(f->srv, "server: %s", err);
}

/* The sampler (its first read done) and the server, without hooks, on a
 * socket in a new directory made from dir_template ("/tmp/se-eq-XXXXXX"). */
static inline void eqf_up(fixture_t *f, const char *dir_template)
{
	sampler_config_t cfg = {
		.period_ns = EQF_PERIOD_NS,	/* no tick in a test */
		.deadline_ns = EQF_DEADLINE_NS,
		.acc = { .history = 64 },
		.label = "test",
	};
	char err[256] = "";

	__atomic_store_n(&eqf_reads_count, 0, __ATOMIC_SEQ_CST);
	snprintf(f->dir, sizeof(f->dir), "%s", dir_template);
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	ck_assert_int_eq(energy_query_socket_path(f->dir, "n1", f->path,
					sizeof(f->path)), 0);
	f->s = sampler_start(&eqf_ops, NULL, &cfg);
	ck_assert_ptr_nonnull(f->s);
	eqf_wait_reads(1);
	f->srv = energy_query_server_start(f->path, f->s, cfg.period_ns,
					   cfg.deadline_ns, NULL, err,
					   sizeof(err));
	ck_assert_msg(f->srv, "server: %s", err);
}

static inline void eqf_down(fixture_t *f)
{
	energy_query_server_stop(f->srv);
	sampler_stop(f->s);
	rmdir(f->dir);
}

#endif
