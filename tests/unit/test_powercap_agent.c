/*
 * test_powercap_agent.c - the node agent's core (src/powercap/
 * pcap_agent.c) over a cpufreq knob on a fake tree: restore at start, a
 * cap applied and reported, a misrouted cap refused, the lease lapsing,
 * RESTORE (written once when repeated), a limit reset behind the agent's
 * back written again at the next report, a job's end, a knob failing then
 * recovering; the cap in force over a report's window.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcap_agent.h"
#include "tmp_file.h"

#define S 1000000000LL

static char _dir[64];

static void _put(const char *dir, const char *file, const char *text)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	tmp_file_write(path, text);
}

static void _tree(void)
{
	char path[256];

	snprintf(_dir, sizeof(_dir), "/tmp/test_pcap_agent.XXXXXX");
	ck_assert(mkdtemp(_dir) != NULL);
	snprintf(path, sizeof(path), "%s/cpu0", _dir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	strcat(path, "/cpufreq");
	ck_assert_int_eq(mkdir(path, 0755), 0);
	_put(path, "cpuinfo_min_freq", "1000000\n");
	_put(path, "cpuinfo_max_freq", "3000000\n");
	_put(path, "scaling_max_freq", "1500000\n");	/* a cap left behind */
}

static unsigned long _ceiling(void)
{
	char path[256], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu0/cpufreq/scaling_max_freq", _dir);
	f = fopen(path, "r");
	ck_assert(f != NULL);
	ck_assert(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	return strtoul(buf, NULL, 10);
}

static pcap_cap_msg_t _cap(const char *node, uint64_t seq, double w,
			   uint32_t lease_ms)
{
	pcap_cap_msg_t m = { .seq = seq, .cap_mw = (uint32_t)(w * 1000),
			     .lease_ms = lease_ms };

	snprintf(m.node, sizeof(m.node), "%s", node);
	return m;
}

/* Agent n7 over a cpufreq knob of a fresh tree, node 100..300 W. */
static void _agent(pcap_node_knobs_t *nk, pcap_agent_t *a)
{
	char specs[256], err[512] = "";

	_tree();
	snprintf(specs, sizeof(specs), "cpufreq:root=%s:min_w=100:max_w=300",
		 _dir);
	ck_assert_msg(!pcap_node_open(nk, specs, 100000, 300000, err,
				      sizeof(err)), "%s", err);
	pcap_agent_init(a, "n7", nk, 30 * S);
}

static void _agent_done(pcap_node_knobs_t *nk)
{
	char cmd[128];

	pcap_node_close(nk);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", _dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_agent_life)
{
	char path[256];
	pcap_node_knobs_t nk;
	pcap_agent_t a;
	pcap_report_msg_t r;
	pcap_cap_msg_t m;

	_agent(&nk, &a);

	/* start: the cap left behind is gone */
	ck_assert_int_eq(pcap_agent_start(&a, 0), 0);
	ck_assert_uint_eq(_ceiling(), 3000000);

	/* a cap: applied, reported */
	m = _cap("n7", 1, 200, 10000);
	ck_assert_int_eq(pcap_agent_cap(&a, 1 * S, &m), 0);
	ck_assert_uint_eq(_ceiling(), 2000000);
	pcap_agent_report(&a, 190000, 1000, 0, &r);
	ck_assert_str_eq(r.node, "n7");
	ck_assert_uint_eq(r.seq, 1);
	ck_assert_uint_eq(r.cap_mw, 200000);
	ck_assert_uint_eq(r.power_mw, 190000);
	ck_assert_uint_eq(r.flags, PCAP_REPORT_ENFORCED);
	ck_assert(!a.rewritten);

	/* the limit reset behind the agent's back (another tool): the next
	 * report writes the cap again and says what it found */
	snprintf(path, sizeof(path), "%s/cpu0/cpufreq", _dir);
	_put(path, "scaling_max_freq", "3000000\n");
	pcap_agent_report(&a, 190000, 1000, 0, &r);
	ck_assert(a.rewritten);
	ck_assert_uint_eq(a.rewritten_from_mw, 300000);
	ck_assert_uint_eq(_ceiling(), 2000000);
	ck_assert_uint_eq(r.cap_mw, 200000);
	ck_assert_uint_eq(r.flags, PCAP_REPORT_ENFORCED);

	/* misrouted: nothing applied, the report unchanged */
	m = _cap("n8", 2, 120, 10000);
	ck_assert_int_eq(pcap_agent_cap(&a, 2 * S, &m), -EINVAL);
	ck_assert_uint_eq(_ceiling(), 2000000);
	pcap_agent_report(&a, 0, 1000, 0, &r);
	ck_assert_uint_eq(r.flags, PCAP_REPORT_ENFORCED);

	/* the lease (10 s from 1 s) lapses: defaults back */
	ck_assert_int_eq(pcap_agent_tick(&a, 10 * S), 0);
	ck_assert_uint_eq(_ceiling(), 2000000);
	ck_assert_int_eq(pcap_agent_tick(&a, 11 * S), 0);
	ck_assert_uint_eq(_ceiling(), 3000000);

	/* RESTORE from the controller, and a job's end without a lease */
	m = _cap("n7", 3, 150, 10000);
	pcap_agent_cap(&a, 12 * S, &m);
	ck_assert_uint_eq(_ceiling(), 1500000);
	m.seq = 4;
	m.flags = PCAP_CAP_RESTORE;
	ck_assert_int_eq(pcap_agent_cap(&a, 13 * S, &m), 0);
	ck_assert_uint_eq(_ceiling(), 3000000);
	/* RESTORE again (an idle node's, every round): not written again by
	 * the message; a value put there behind the agent's back is seen by
	 * the report, which writes the defaults again */
	snprintf(path, sizeof(path), "%s/cpu0/cpufreq", _dir);
	_put(path, "scaling_max_freq", "2500000\n");
	ck_assert_int_eq(pcap_agent_cap(&a, 13 * S + 1, &m), 0);
	ck_assert_uint_eq(_ceiling(), 2500000);
	pcap_agent_report(&a, 0, 1000, 0, &r);
	ck_assert(a.rewritten);
	ck_assert_uint_eq(a.rewritten_from_mw, 250000);
	ck_assert_uint_eq(_ceiling(), 3000000);
	ck_assert_uint_eq(r.cap_mw, 300000);
	pcap_agent_report(&a, 0, 1000, 0, &r);
	ck_assert(!a.rewritten);
	m = _cap("n7", 5, 150, 1000);
	pcap_agent_cap(&a, 14 * S, &m);
	ck_assert_int_eq(pcap_agent_tick(&a, 14 * S + 1), 0);
	ck_assert_uint_eq(_ceiling(), 1500000);		/* lease runs */
	ck_assert_int_eq(pcap_agent_tick(&a, 16 * S), 0);
	ck_assert_uint_eq(_ceiling(), 3000000);		/* lapsed */

	/* a knob failing: reported not enforced, with its error; then back */
	snprintf(path, sizeof(path), "%s/cpu0/cpufreq/scaling_max_freq", _dir);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	m = _cap("n7", 6, 200, 10000);
	ck_assert_int_eq(pcap_agent_cap(&a, 20 * S, &m), -EISDIR);
	pcap_agent_report(&a, 0, 1000, 0, &r);
	ck_assert_uint_eq(r.flags & PCAP_REPORT_ENFORCED, 0);
	ck_assert_msg(strstr(r.error, "cpufreq: cannot write 2000000 to "),
		      "%s", r.error);
	ck_assert_int_eq(rmdir(path), 0);
	tmp_file_write(path, "3000000\n");
	m = _cap("n7", 7, 200, 10000);
	ck_assert_int_eq(pcap_agent_cap(&a, 21 * S, &m), 0);
	pcap_agent_report(&a, 0, 1000, 0, &r);
	ck_assert_uint_eq(r.flags, PCAP_REPORT_ENFORCED);
	ck_assert_str_eq(r.error, "");
	_agent_done(&nk);
}
END_TEST

/* The caps in force over a report's window: their time mean, the knobs'
 * defaults (the node's max) before the first cap and after a RESTORE. */
START_TEST(test_window_cap)
{
	pcap_node_knobs_t nk;
	pcap_agent_t a;
	pcap_report_msg_t r;
	pcap_cap_msg_t m;

	_agent(&nk, &a);
	ck_assert_uint_eq(pcap_agent_window_cap(&a, 0, S), 0);	/* none */
	pcap_agent_start(&a, 0);			/* 300 W from 0 */
	m = _cap("n7", 1, 150, 10000);
	pcap_agent_cap(&a, 1 * S, &m);			/* 150 W from 1 s */
	m = _cap("n7", 2, 250, 10000);
	pcap_agent_cap(&a, 2 * S, &m);			/* 250 W from 2 s */
	m = _cap("n7", 3, 250, 10000);
	pcap_agent_cap(&a, 2500000000LL, &m);		/* renewed: no change */
	ck_assert_uint_eq(a.n_cap_hist, 3);
	/* [0.5 s, 2.5 s): 0.5 s at 300, 1 s at 150, 0.5 s at 250 */
	ck_assert_uint_eq(pcap_agent_window_cap(&a, S / 2, 5 * S / 2), 212500);
	pcap_agent_report(&a, 190000, 2000, 5 * S / 2, &r);
	ck_assert_uint_eq(r.window_cap_mw, 212500);
	/* the newest cap holds on; before the oldest, the oldest, in a
	 * window that reaches it (one wholly before it: unknown) */
	ck_assert_uint_eq(pcap_agent_window_cap(&a, 3 * S, 4 * S), 250000);
	ck_assert_uint_eq(pcap_agent_window_cap(&a, -S, S / 2), 300000);
	ck_assert_uint_eq(pcap_agent_window_cap(&a, -S, 0), 0);
	/* no window: unknown */
	pcap_agent_report(&a, 190000, 0, 5 * S / 2, &r);
	ck_assert_uint_eq(r.window_cap_mw, 0);
	/* RESTORE: the max again, from then */
	m = _cap("n7", 4, 0, 10000);
	m.flags = PCAP_CAP_RESTORE;
	pcap_agent_cap(&a, 3 * S, &m);
	ck_assert_uint_eq(pcap_agent_window_cap(&a, 2 * S, 4 * S), 275000);
	/* the ring keeps the last 16 changes: the oldest then stands for
	 * what came before it, and a window before all of them is unknown */
	for (int i = 0; i < 20; i++) {
		m = _cap("n7", 10 + i, i % 2 ? 200 : 100, 10000);
		pcap_agent_cap(&a, (10 + i) * S, &m);
	}
	ck_assert_uint_eq(pcap_agent_window_cap(&a, 0, 14 * S), 0);
	ck_assert_uint_eq(pcap_agent_window_cap(&a, 13 * S, 16 * S), 133333);
	ck_assert_uint_eq(pcap_agent_window_cap(&a, 28 * S, 30 * S), 150000);
	_agent_done(&nk);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_agent");
	TCase *tc = tcase_create("agent");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_agent_life);
	tcase_add_test(tc, test_window_cap);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
