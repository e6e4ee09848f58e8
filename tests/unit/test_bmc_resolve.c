/*
 * test_bmc_resolve.c - EnergyBMCHost's name is looked up by the open's
 * deadline, for both methods, and FreeIPMI gets the address.
 *
 * A resolver that never answers (hung_dns.h, root only, skipped with the
 * reason otherwise): open() returns -ETIMEDOUT by its deadline.  A name
 * from /etc/hosts and an address reach the BMC's port: a UDP socket of the
 * test stands for the BMC and sees the session's first datagram (it never
 * answers, so the open itself times out: no ipmi_sim needed).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include "hung_dns.h"

#include <check.h>
#include <poll.h>

#include "bmc_conf.h"
#include "bmc_meter.h"
#include "bmc_meter_priv.h"
#include "se_time.h"

#define OPEN_NS		(300 * SE_NS_PER_MS)
#define SLACK_NS	(150 * SE_NS_PER_MS)

static char sdr_dir[64];

/* A meter for host (NULL: in-band) with the given method. */
static bmc_meter_t *_meter(const char *method, const char *host)
{
	bmc_conf_t c;
	bmc_meter_t *m;
	char err[512];

	bmc_conf_init(&c);
#define SET(k, v) ck_assert_msg(!se_conf_set(&bmc_conf_desc, &c, "test", k, \
					     v, err, sizeof(err)), "%s", err)
	SET("EnergyBMCMethod", method);
	if (host)
		SET("EnergyBMCHost", host);
	SET("EnergyBMCTimeout", "200");
	SET("EnergyBMCSdrCacheDir", sdr_dir);
#undef SET
	ck_assert_msg(!bmc_conf_finish(&c, "test", "n1", err, sizeof(err)),
		      "%s", err);
	m = bmc_meter_create(&c);
	ck_assert_ptr_nonnull(m);
	bmc_conf_free(&c);
	return m;
}

/* A UDP socket on 127.0.0.1 standing for the BMC; its port in *port. */
static int _fake_bmc(unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert(!bind(fd, (struct sockaddr *) &sa, sizeof(sa)));
	ck_assert(!getsockname(fd, (struct sockaddr *) &sa, &len));
	*port = ntohs(sa.sin_port);
	return fd;
}

static bool _got_datagram(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

/* What FreeIPMI is given for each form of EnergyBMCHost. */
START_TEST(test_lan_host_forms)
{
	static const struct {
		const char *host, *lib;
	} cases[] = {
		{ "10.1.2.3", "10.1.2.3" },
		{ "10.1.2.3:1623", "10.1.2.3:1623" },
		{ "localhost", "localhost" },	/* in-band to ipmimonitoring */
		{ "127.0.0.1", "127.0.0.1" },
		{ "[::1]:623", "[::1]:623" },
		{ "fe80::1", "fe80::1" },
	};
	uint64_t past = se_mono_ns() - 1;	/* no lookup is needed */
	bmc_meter_t *m;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		m = _meter("dcmi", cases[i].host);
		ck_assert_int_eq(bmc_lan_host(m, past), 0);
		ck_assert_str_eq(bmc_lib_host(m), cases[i].lib);
		ck_assert_str_eq(bmc_where(m), cases[i].host);
		bmc_meter_destroy(m);
	}
	m = _meter("dcmi", NULL);
	ck_assert_int_eq(bmc_lan_host(m, past), 0);
	ck_assert_ptr_null(bmc_lib_host(m));
	bmc_meter_destroy(m);
}
END_TEST

/* An address goes to the BMC's port as before. */
START_TEST(test_address_reaches_bmc)
{
	char host[64];
	unsigned port;
	int fd = _fake_bmc(&port);
	bmc_meter_t *m;

	snprintf(host, sizeof(host), "127.0.0.1:%u", port);
	m = _meter("dcmi", host);
	ck_assert_int_eq(bmc_meter_ops.open(m, se_mono_ns() + OPEN_NS),
			 -ETIMEDOUT);
	ck_assert(_got_datagram(fd));
	bmc_meter_destroy(m);
	close(fd);
}
END_TEST

/* The resolver does not answer: open() is back by its deadline. */
static void _hung(const char *method)
{
	bmc_meter_t *m = _meter(method, HUNG_DNS_HUNG_NAME);
	uint64_t t0 = se_mono_ns(), dt;
	int rc = bmc_meter_ops.open(m, t0 + OPEN_NS);

	dt = se_mono_ns() - t0;
	ck_assert_int_eq(rc, -ETIMEDOUT);
	ck_assert_uint_le(dt, OPEN_NS + SLACK_NS);
	bmc_meter_destroy(m);
	/* the abandoned lookup ends with the resolver's own timeout */
	t0 = se_mono_ns();
	while (se_resolve_pending() &&
	       se_mono_ns() - t0 < (HUNG_DNS_RESOLVER_S * 2 + 3) * SE_NS_PER_SEC)
		se_sleep_ns(10 * SE_NS_PER_MS);
	ck_assert_uint_eq(se_resolve_pending(), 0);
}

START_TEST(test_hung_resolver_dcmi)
{
	_hung("dcmi");
}
END_TEST

START_TEST(test_hung_resolver_sensors)
{
	_hung("sensors");
}
END_TEST

/* A name from /etc/hosts: FreeIPMI gets its address and the port. */
static void _hosts_name(const char *method)
{
	char host[64], want[64];
	meter_reading_t r;
	unsigned port;
	int fd = _fake_bmc(&port);
	bmc_meter_t *m;
	int rc;

	snprintf(host, sizeof(host), "bmc.hosts.test:%u", port);
	snprintf(want, sizeof(want), "127.0.0.1:%u", port);
	m = _meter(method, host);
	rc = bmc_meter_ops.open(m, se_mono_ns() + OPEN_NS);
	ck_assert_str_eq(bmc_lib_host(m), want);
	ck_assert_str_eq(bmc_where(m), host);	/* logs keep the name */
	if (!rc)	/* sensors: open does no I/O, a read does */
		rc = bmc_meter_ops.read(m, &r, se_mono_ns() + OPEN_NS, NULL,
					0);
	ck_assert_int_eq(rc, -ETIMEDOUT);
	ck_assert(_got_datagram(fd));
	bmc_meter_destroy(m);
	close(fd);
}

START_TEST(test_hosts_name_dcmi)
{
	_hosts_name("dcmi");
}
END_TEST

START_TEST(test_hosts_name_sensors)
{
	_hosts_name("sensors");
}
END_TEST

static Suite *_suite(bool hung_dns)
{
	Suite *s = suite_create("bmc_resolve");
	TCase *tc = tcase_create("plain");

	tcase_add_test(tc, test_lan_host_forms);
	tcase_add_test(tc, test_address_reaches_bmc);
	suite_add_tcase(s, tc);
	if (hung_dns) {
		tc = tcase_create("hung_dns");
		tcase_set_timeout(tc, 20);
		tcase_add_test(tc, test_hung_resolver_dcmi);
		tcase_add_test(tc, test_hung_resolver_sensors);
		tcase_add_test(tc, test_hosts_name_dcmi);
		tcase_add_test(tc, test_hosts_name_sensors);
		suite_add_tcase(s, tc);
	}
	return s;
}

int main(void)
{
	char why[256] = "", cmd[128];
	bool hung = hung_dns_setup(why, sizeof(why));
	SRunner *sr;
	int failed;

	if (!hung)
		fprintf(stderr, "SKIP resolver tests: %s\n", why);
	snprintf(sdr_dir, sizeof(sdr_dir), "/tmp/se-bmc-resolve.XXXXXX");
	if (!mkdtemp(sdr_dir))
		return 99;
	sr = srunner_create(_suite(hung));
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	hung_dns_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", sdr_dir);
	if (system(cmd))
		failed++;
	return failed ? 1 : 0;
}
