/*
 * test_se_resolve.c - se_resolve(): a numeric host at once, an /etc/hosts
 * name, and a resolver that never answers: -ETIMEDOUT by the deadline, the
 * abandoned lookup frees itself, and a dead resolver cannot stack threads.
 *
 * The resolver tests run in a mount namespace of their own (hung_dns.h):
 * root only, skipped with the reason otherwise.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include "hung_dns.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "se_resolve.h"
#include "se_time.h"

#define DEADLINE_NS	(300 * SE_NS_PER_MS)
/* What a timed-out lookup may take past its deadline */
#define SLACK_NS	(100 * SE_NS_PER_MS)

static char addr[SE_RESOLVE_ADDR_LEN];

/* Wait (polling) until no abandoned lookup runs; false after limit. */
static bool _drained(uint64_t limit_ns)
{
	uint64_t end = se_mono_ns() + limit_ns;

	while (se_resolve_pending() && se_mono_ns() < end)
		se_sleep_ns(10 * SE_NS_PER_MS);
	return se_resolve_pending() == 0;
}

/* An address needs no resolver: it converts even past the deadline. */
START_TEST(test_numeric)
{
	uint64_t past = se_mono_ns() - 1;

	ck_assert_int_eq(se_resolve("127.0.0.1", SOCK_STREAM, past, addr,
				    sizeof(addr)), 0);
	ck_assert_str_eq(addr, "127.0.0.1");
	ck_assert_int_eq(se_resolve("::1", SOCK_DGRAM, past, addr,
				    sizeof(addr)), 0);
	ck_assert_str_eq(addr, "::1");
	ck_assert_uint_eq(se_resolve_pending(), 0);
}
END_TEST

START_TEST(test_bad_args)
{
	uint64_t dl = se_mono_ns() + DEADLINE_NS;

	ck_assert_int_eq(se_resolve("", SOCK_STREAM, dl, addr, sizeof(addr)),
			 -EINVAL);
	ck_assert_int_eq(se_resolve(NULL, SOCK_STREAM, dl, addr,
				    sizeof(addr)), -EINVAL);
	ck_assert_int_eq(se_resolve("127.0.0.1", SOCK_STREAM, dl, addr, 8),
			 -EINVAL);
}
END_TEST

START_TEST(test_hosts_name)
{
	uint64_t t0 = se_mono_ns();

	ck_assert_int_eq(se_resolve(HUNG_DNS_HOSTS_NAME, SOCK_STREAM,
				    t0 + DEADLINE_NS, addr, sizeof(addr)), 0);
	ck_assert_str_eq(addr, "127.0.0.1");
	ck_assert_uint_lt(se_mono_ns() - t0, DEADLINE_NS);
}
END_TEST

/* The resolver does not answer: back by the deadline, nothing left. */
START_TEST(test_hung_resolver)
{
	uint64_t t0 = se_mono_ns(), dt;
	int rc;

	rc = se_resolve(HUNG_DNS_HUNG_NAME, SOCK_STREAM, t0 + DEADLINE_NS,
			addr, sizeof(addr));
	dt = se_mono_ns() - t0;
	ck_assert_int_eq(rc, -ETIMEDOUT);
	ck_assert_uint_ge(dt, DEADLINE_NS);
	ck_assert_uint_le(dt, DEADLINE_NS + SLACK_NS);
	/* the abandoned lookup ends with the resolver's own timeout and
	 * frees itself */
	ck_assert_uint_eq(se_resolve_pending(), 1);
	ck_assert(_drained((HUNG_DNS_RESOLVER_S * 2 + 3) * SE_NS_PER_SEC));
	/* and names in /etc/hosts still resolve */
	ck_assert_int_eq(se_resolve(HUNG_DNS_HOSTS_NAME, SOCK_DGRAM,
				    se_mono_ns() + DEADLINE_NS, addr,
				    sizeof(addr)), 0);
}
END_TEST

/* A dead resolver: at most SE_RESOLVE_MAX_PENDING lookups left behind,
 * then -EBUSY at once, until they have ended. */
START_TEST(test_pending_cap)
{
	uint64_t t0;
	unsigned i;

	for (i = 0; i < SE_RESOLVE_MAX_PENDING; i++)
		ck_assert_int_eq(se_resolve(HUNG_DNS_HUNG_NAME, SOCK_STREAM,
					    se_mono_ns() + 20 * SE_NS_PER_MS,
					    addr, sizeof(addr)), -ETIMEDOUT);
	t0 = se_mono_ns();
	ck_assert_int_eq(se_resolve(HUNG_DNS_HUNG_NAME, SOCK_STREAM,
				    t0 + DEADLINE_NS, addr, sizeof(addr)),
			 -EBUSY);
	ck_assert_uint_lt(se_mono_ns() - t0, 10 * SE_NS_PER_MS);
	/* a numeric host is never refused */
	ck_assert_int_eq(se_resolve("127.0.0.1", SOCK_STREAM, t0, addr,
				    sizeof(addr)), 0);
	ck_assert(_drained((HUNG_DNS_RESOLVER_S * 2 + 3) * SE_NS_PER_SEC));
	ck_assert_int_eq(se_resolve(HUNG_DNS_HOSTS_NAME, SOCK_STREAM,
				    se_mono_ns() + DEADLINE_NS, addr,
				    sizeof(addr)), 0);
}
END_TEST

static Suite *_suite(bool hung_dns)
{
	Suite *s = suite_create("se_resolve");
	TCase *tc = tcase_create("plain");

	tcase_add_test(tc, test_numeric);
	tcase_add_test(tc, test_bad_args);
	suite_add_tcase(s, tc);
	if (hung_dns) {
		tc = tcase_create("hung_dns");
		tcase_set_timeout(tc, 30);
		tcase_add_test(tc, test_hosts_name);
		tcase_add_test(tc, test_hung_resolver);
		tcase_add_test(tc, test_pending_cap);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(void)
{
	char why[256] = "";
	bool hung = hung_dns_setup(why, sizeof(why));
	SRunner *sr;
	int failed;

	if (!hung)
		fprintf(stderr, "SKIP resolver tests: %s\n", why);
	sr = srunner_create(_suite(hung));
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	hung_dns_cleanup();
	return failed ? 1 : 0;
}
