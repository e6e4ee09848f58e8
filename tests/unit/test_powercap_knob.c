/*
 * test_powercap_knob.c - the per-node power-cap knobs (src/powercap/
 * pcap_knob*.c) on fake trees: a powercap sysfs with two packages and their
 * DRAM subzones, a cpu/ tree with cpufreq; apply, read back, restore; the
 * errors named (unknown and not-built knobs, bad options, no zone, a file
 * the kernel refuses to write, a read-back that differs); the split of a
 * node's cap over its knobs, and a node's cap over two knobs (pcap_node.c).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pcap_knob.h"
#include "pcap_node.h"
#include "tmp_file.h"

static char _dir[256];

static void _mkdirf(const char *sub)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s", _dir, sub);
	ck_assert_int_eq(mkdir(path, 0755), 0);
}

static void _put(const char *zone, const char *file, const char *text)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/%s/%s", _dir, zone, file);
	tmp_file_write(path, text);
}

static unsigned long long _get(const char *zone, const char *file)
{
	char path[1024], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s/%s", _dir, zone, file);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s", path);
	ck_assert(fgets(buf, sizeof(buf), f) != NULL);
	fclose(f);
	return strtoull(buf, NULL, 10);
}

static void _rapl_zone(const char *zone, const char *name, const char *max)
{
	_mkdirf(zone);
	_put(zone, "name", name);
	_put(zone, "constraint_0_name", "long_term\n");
	_put(zone, "constraint_1_name", "short_term\n");
	_put(zone, "constraint_0_max_power_uw", max);
	_put(zone, "constraint_0_power_limit_uw", "150000000\n");
	_put(zone, "constraint_1_power_limit_uw", "180000000\n");
}

/* Two 150 W packages, each with a DRAM subzone whose max is 0 (as sysfs
 * often says), and a psys zone the knob must ignore. */
static void _rapl_tree(void)
{
	snprintf(_dir, sizeof(_dir), "/tmp/test_pcap_rapl.XXXXXX");
	ck_assert(mkdtemp(_dir) != NULL);
	_rapl_zone("intel-rapl:0", "package-0\n", "150000000\n");
	_rapl_zone("intel-rapl:0:0", "dram\n", "0\n");
	_rapl_zone("intel-rapl:1", "package-1\n", "150000000\n");
	_rapl_zone("intel-rapl:1:0", "dram\n", "0\n");
	_mkdirf("intel-rapl-mmio:0");
}

static void _cpu_tree(void)
{
	snprintf(_dir, sizeof(_dir), "/tmp/test_pcap_cpu.XXXXXX");
	ck_assert(mkdtemp(_dir) != NULL);
	for (int c = 0; c < 4; c++) {
		char cpu[32];

		snprintf(cpu, sizeof(cpu), "cpu%d", c);
		_mkdirf(cpu);
		strcat(cpu, "/cpufreq");
		_mkdirf(cpu);
		_put(cpu, "cpuinfo_min_freq", "800000\n");
		_put(cpu, "cpuinfo_max_freq", "3000000\n");
		_put(cpu, "scaling_max_freq", "3000000\n");
	}
	_mkdirf("cpu4");	/* offline: no cpufreq/ */
	_mkdirf("cpuidle");
}

static void _rm_tree(void)
{
	char cmd[300];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", _dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* "knob:root=DIR" followed by more options */
static pcap_knob_t *_open(const char *knob, const char *more, char *err,
			  size_t err_len)
{
	char spec[512];

	snprintf(spec, sizeof(spec), "%s:root=%s%s", knob, _dir, more);
	return pcap_knob_open(spec, err, err_len);
}

START_TEST(test_rapl_apply_read_restore)
{
	char err[512] = "";
	pcap_knob_t *k;
	uint32_t cap;

	_rapl_tree();
	k = _open("rapl", "", err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_uint_eq(k->n_zones, 2);
	ck_assert_uint_eq(k->min_mw, 150000);	/* 2 x 50 % of 150 W */
	ck_assert_uint_eq(k->max_mw, 300000);
	ck_assert_int_eq(pcap_knob_apply(k, 225000, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get("intel-rapl:0", "constraint_0_power_limit_uw"),
			  112500000);
	ck_assert_uint_eq(_get("intel-rapl:1", "constraint_0_power_limit_uw"),
			  112500000);
	/* the short-term limit is not ours */
	ck_assert_uint_eq(_get("intel-rapl:0", "constraint_1_power_limit_uw"),
			  180000000);
	ck_assert_int_eq(pcap_knob_read(k, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 225000);
	/* below the range: its min, never less */
	ck_assert_int_eq(pcap_knob_apply(k, 1000, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get("intel-rapl:0", "constraint_0_power_limit_uw"),
			  75000000);
	ck_assert_int_eq(pcap_knob_restore(k, err, sizeof(err)), 0);
	ck_assert_int_eq(pcap_knob_read(k, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 300000);
	pcap_knob_close(k);
	_rm_tree();
}
END_TEST

START_TEST(test_rapl_dram)
{
	char err[512] = "";
	pcap_knob_t *k;

	_rapl_tree();
	k = _open("rapl", ":dram=yes", err, sizeof(err));
	ck_assert(k == NULL);
	ck_assert_msg(strstr(err, "intel-rapl:0:0/constraint_0_max_power_uw "
			     "absent or 0: give the zone's maximum as "
			     "rapl:dram_max_w=W"), "%s", err);
	k = _open("rapl", ":dram=yes:dram_max_w=40:min_pct=25", err,
		  sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_uint_eq(k->n_zones, 4);
	ck_assert_uint_eq(k->max_mw, 380000);
	ck_assert_uint_eq(k->min_mw, 95000);
	/* half-way: every zone half-way through its own range */
	ck_assert_int_eq(pcap_knob_apply(k, 237500, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get("intel-rapl:0:0",
			       "constraint_0_power_limit_uw"), 25000000);
	ck_assert_uint_eq(_get("intel-rapl:1", "constraint_0_power_limit_uw"),
			  93750000);
	pcap_knob_close(k);
	_rm_tree();
}
END_TEST

START_TEST(test_rapl_errors_named)
{
	char err[512] = "", path[1024];
	pcap_knob_t *k;

	_rapl_tree();
	/* a file the kernel will not let even root write: a read-only sysfs
	 * attribute (kernfs refuses the open with EACCES) */
	snprintf(path, sizeof(path),
		 "%s/intel-rapl:1/constraint_0_power_limit_uw", _dir);
	ck_assert_int_eq(unlink(path), 0);
	if (access("/sys/devices/system/cpu/online", R_OK) == 0 &&
	    geteuid() == 0)
		ck_assert_int_eq(symlink("/sys/devices/system/cpu/online",
					 path), 0);
	else
		tmp_file_write_mode(path, "150000000\n", 0444);
	k = _open("rapl", "", err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_int_eq(pcap_knob_apply(k, 200000, err, sizeof(err)),
			 -EACCES);
	ck_assert_msg(strstr(err, "rapl: cannot write 100000000 to ") &&
		      strstr(err, "intel-rapl:1/constraint_0_power_limit_uw: "
			     "Permission denied"), "%s", err);
	pcap_knob_close(k);

	/* a limit that does not read back as written */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(symlink("/dev/null", path), 0);
	k = _open("rapl", "", err, sizeof(err));
	ck_assert_int_eq(pcap_knob_apply(k, 200000, err, sizeof(err)), -EIO);
	ck_assert_msg(strstr(err, "constraint_0_power_limit_uw is empty"),
		      "%s", err);
	pcap_knob_close(k);
	_rm_tree();

	/* no package zone */
	snprintf(_dir, sizeof(_dir), "/tmp/test_pcap_empty.XXXXXX");
	ck_assert(mkdtemp(_dir) != NULL);
	ck_assert(_open("rapl", "", err, sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "rapl: no intel-rapl:N package zone under "
			     "/tmp/test_pcap_empty."), "%s", err);
	_rm_tree();
	ck_assert(_open("rapl", "", err, sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "No such file or directory"), "%s", err);
}
END_TEST

START_TEST(test_spec_errors_named)
{
	char err[512] = "";

	ck_assert(pcap_knob_open("rapel", err, sizeof(err)) == NULL);
	ck_assert_str_eq(err, "unknown knob 'rapel' (known: rapl, cpufreq, "
			 "nvml, dcmi, redfish)");
	/* built here (libcurl, json-c) or not, never silently accepted */
	ck_assert(pcap_knob_open("redfish", err, sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "knob 'redfish' is not available in this "
			     "build (built: rapl, cpufreq, nvml") == err ||
		      strstr(err, "knob 'redfish': needs host=H and "
			     "control=") == err, "%s", err);
	ck_assert(pcap_knob_open("rapl:roots=/x", err, sizeof(err)) == NULL);
	ck_assert_str_eq(err, "knob 'rapl:roots=/x': unknown option 'roots' "
			 "(known: root dram min_pct max_w dram_max_w)");
	ck_assert(pcap_knob_open("rapl:dram", err, sizeof(err)) == NULL);
	ck_assert_str_eq(err, "knob 'rapl:dram': option 'dram' is not "
			 "key=value");
	ck_assert(pcap_knob_open("rapl:min_pct=0", err, sizeof(err)) == NULL);
	ck_assert_str_eq(err, "knob 'rapl:min_pct=0': min_pct=0 is not a "
			 "whole number in 1..100");
	ck_assert(pcap_knob_open("rapl:dram=maybe", err, sizeof(err)) == NULL);
	ck_assert_str_eq(err, "knob 'rapl:dram=maybe': dram=maybe is not yes "
			 "or no");
	ck_assert(pcap_knob_open("rapl:dram=yes:dram=no", err, sizeof(err)) ==
		  NULL);
	ck_assert_str_eq(err, "knob 'rapl:dram=yes:dram=no': option 'dram' "
			 "given twice");
	ck_assert(pcap_knob_open("dcmi:min_w=400:max_w=300", err,
				 sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "needs min_w=W and max_w=W with max_w > "
			     "min_w") || strstr(err, "not available in this "
						"build"), "%s", err);
	ck_assert(pcap_knob_open("cpufreq:min_w=300:max_w=100", err,
				 sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "needs min_w=W and max_w=W with max_w > "
			     "min_w"), "%s", err);
}
END_TEST

START_TEST(test_cpufreq_ceiling)
{
	char err[512] = "";
	pcap_knob_t *k;
	uint32_t cap;

	_cpu_tree();
	k = _open("cpufreq", ":min_w=100:max_w=300", err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	ck_assert_uint_eq(k->n_zones, 4);
	ck_assert_int_eq(pcap_knob_apply(k, 200000, err, sizeof(err)), 0);
	for (int c = 0; c < 4; c++) {
		char cpu[32];

		snprintf(cpu, sizeof(cpu), "cpu%d/cpufreq", c);
		ck_assert_uint_eq(_get(cpu, "scaling_max_freq"), 1900000);
	}
	ck_assert_int_eq(pcap_knob_read(k, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 200000);
	ck_assert_int_eq(pcap_knob_apply(k, 400000, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get("cpu0/cpufreq", "scaling_max_freq"), 3000000);
	ck_assert_int_eq(pcap_knob_apply(k, 50000, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get("cpu3/cpufreq", "scaling_max_freq"), 800000);
	ck_assert_int_eq(pcap_knob_restore(k, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get("cpu2/cpufreq", "scaling_max_freq"), 3000000);
	pcap_knob_close(k);

	/* a CPU whose range makes no sense */
	_put("cpu2/cpufreq", "cpuinfo_max_freq", "700000\n");
	ck_assert(_open("cpufreq", ":min_w=100:max_w=300", err,
			sizeof(err)) == NULL);
	ck_assert_msg(strstr(err, "cpu2/cpufreq: cpuinfo_min_freq 800000 and "
			     "cpuinfo_max_freq 700000 are not a range"),
		      "%s", err);
	_rm_tree();
}
END_TEST

START_TEST(test_split)
{
	/* node 100..500 W, knob 40..240 W */
	ck_assert_uint_eq(pcap_split(100000, 500000, 300000, 40000, 240000),
			  140000);
	ck_assert_uint_eq(pcap_split(100000, 500000, 100000, 40000, 240000),
			  40000);
	ck_assert_uint_eq(pcap_split(100000, 500000, 50000, 40000, 240000),
			  40000);
	ck_assert_uint_eq(pcap_split(100000, 500000, 500000, 40000, 240000),
			  240000);
	ck_assert_uint_eq(pcap_split(100000, 500000, 900000, 40000, 240000),
			  240000);
	ck_assert_uint_eq(pcap_split(100000, 500000, 200000, 40000, 240000),
			  90000);
}
END_TEST

START_TEST(test_node_over_knobs)
{
	char rapl[256], cpu[256], specs[700], err[512] = "", path[1024];
	pcap_node_knobs_t nk;
	uint32_t cap;

	_rapl_tree();
	snprintf(rapl, sizeof(rapl), "%s", _dir);
	_cpu_tree();
	snprintf(cpu, sizeof(cpu), "%s", _dir);
	snprintf(specs, sizeof(specs), "rapl:root=%s,cpufreq:root=%s:min_w=100"
		 ":max_w=300", rapl, cpu);

	/* node 200..600 W: at 400 W every knob half-way through its range */
	ck_assert_msg(pcap_node_open(&nk, specs, 200000, 600000, err,
				     sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(nk.n_knobs, 2);
	ck_assert_int_eq(pcap_node_apply(&nk, 400000, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get("cpu0/cpufreq", "scaling_max_freq"), 1900000);
	snprintf(_dir, sizeof(_dir), "%s", rapl);
	ck_assert_uint_eq(_get("intel-rapl:1", "constraint_0_power_limit_uw"),
			  112500000);
	ck_assert_int_eq(pcap_node_read(&nk, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 400000);

	/* one knob refuses: the other still capped, the first error told */
	snprintf(path, sizeof(path),
		 "%s/intel-rapl:0/constraint_0_power_limit_uw", rapl);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_eq(pcap_node_apply(&nk, 300000, err, sizeof(err)),
			 -EISDIR);
	ck_assert_msg(strstr(err, "rapl: cannot write 93750000 to "),
		      "%s", err);
	snprintf(_dir, sizeof(_dir), "%s", cpu);
	ck_assert_uint_eq(_get("cpu3/cpufreq", "scaling_max_freq"), 1350000);
	ck_assert_int_eq(rmdir(path), 0);
	tmp_file_write(path, "150000000\n");

	/* rapl's package 0 back at its max behind our back: rapl stands
	 * for 450 W now, cpufreq for 300 W; the node reads the lowest */
	ck_assert_int_eq(pcap_node_read(&nk, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 300000);
	ck_assert_int_eq(pcap_node_restore(&nk, err, sizeof(err)), 0);
	ck_assert_int_eq(pcap_node_read(&nk, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 600000);
	ck_assert_uint_eq(_get("cpu1/cpufreq", "scaling_max_freq"), 3000000);
	pcap_node_close(&nk);

	/* bad configurations, named */
	ck_assert_int_eq(pcap_node_open(&nk, specs, 600000, 600000, err,
					sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "PowerCapFloorWatts=600.000 is not below "
			 "PowerCapMaxWatts=600.000");
	snprintf(specs, sizeof(specs), "cpufreq:root=%s:min_w=100:max_w=300,"
		 "rapel", cpu);
	ck_assert_int_eq(pcap_node_open(&nk, specs, 200000, 600000, err,
					sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "unknown knob 'rapel'"), "%s", err);
	ck_assert_int_eq(pcap_node_open(&nk, "", 200000, 600000, err,
					sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "PowerCapKnobs=: no knob");
	_rm_tree();
	snprintf(_dir, sizeof(_dir), "%s", rapl);
	_rm_tree();
}
END_TEST

/* A GPU node: package 20..80 W, GPUs 80..320 W, node 100..400 W; the
 * split of cap by draw, last as given, is (package, GPUs). */
static void _split_is(uint32_t cap, const uint32_t *draw,
		      const uint32_t *last, uint32_t pkg, uint32_t gpus,
		      uint32_t *out)
{
	const uint32_t kmin[2] = { 20000, 80000 }, kmax[2] = { 80000, 320000 };

	pcap_split_drawn(2, 100000, 400000, cap, kmin, kmax, draw, last, 1000,
			 out);
	ck_assert_uint_eq(out[0], pkg);
	ck_assert_uint_eq(out[1], gpus);
}

START_TEST(test_split_drawn)
{
	uint32_t draw[2] = { 40000, 208000 }, last[2] = { 0, 0 }, out[2];

	/* at 260 W the linear shares are 52 + 208 W; the package draws 40:
	 * it keeps 42 W, the GPUs get the 10 W it frees */
	_split_is(260000, draw, last, 42000, 218000, out);
	/* the next round: still 40 W under its 42 W limit: the same */
	last[0] = out[0];
	last[1] = out[1];
	draw[1] = 218000;
	_split_is(260000, draw, last, 42000, 218000, out);
	/* its job wants more: at its limit, it gets its linear share back */
	draw[0] = 42000;
	_split_is(260000, draw, last, 52000, 208000, out);
	/* at the node's max the GPUs cannot take more: back to the package */
	draw[0] = 40000;
	last[0] = last[1] = 0;
	_split_is(400000, draw, last, 80000, 320000, out);
	/* never below a knob's min; every knob at its share: linear */
	draw[0] = 5000;
	_split_is(260000, draw, last, 20000, 240000, out);
	draw[0] = 52000;
	draw[1] = 208000;
	_split_is(260000, draw, last, 52000, 208000, out);
}
END_TEST

START_TEST(test_rapl_energy)
{
	char err[512] = "";
	pcap_knob_t *k;
	uint64_t mj;

	_rapl_tree();
	ck_assert_msg((k = _open("rapl", "", err, sizeof(err))) != NULL,
		      "%s", err);
	/* no energy_uj (a fake tree, an old kernel): no counter, said */
	ck_assert_int_eq(pcap_knob_energy(k, &mj, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "intel-rapl:0/energy_uj"), "%s", err);
	_put("intel-rapl:0", "energy_uj", "262000000000\n");
	_put("intel-rapl:1", "energy_uj", "1000000\n");
	_put("intel-rapl:0", "max_energy_range_uj", "262143328850\n");
	ck_assert_int_eq(pcap_knob_energy(k, &mj, err, sizeof(err)), 0);
	ck_assert_uint_eq(mj, 0);		/* counted from the first read */
	/* package 0 wraps: 143,328,850 uJ to its range, then 56,671,150 */
	_put("intel-rapl:0", "energy_uj", "56671150\n");
	_put("intel-rapl:1", "energy_uj", "51000000\n");
	ck_assert_int_eq(pcap_knob_energy(k, &mj, err, sizeof(err)), 0);
	ck_assert_uint_eq(mj, 200000 + 50000);
	pcap_knob_close(k);
	_rm_tree();
}
END_TEST

START_TEST(test_node_split_by_draw)
{
	char a[256], b[256], specs[600], err[512] = "";
	pcap_node_knobs_t nk;
	uint32_t cap;
	const char *z[2] = { "intel-rapl:0", "intel-rapl:1" };

	/* two knobs of two 150 W packages each (150..300 W a knob: a zone's
	 * min is 50 % of its max), node 300..600 W */
	_rapl_tree();
	snprintf(a, sizeof(a), "%s", _dir);
	for (int i = 0; i < 2; i++)
		_put(z[i], "energy_uj", "1000000000\n");
	_rapl_tree();
	snprintf(b, sizeof(b), "%s", _dir);
	for (int i = 0; i < 2; i++)
		_put(z[i], "energy_uj", "1000000000\n");
	snprintf(specs, sizeof(specs), "rapl:root=%s,rapl:root=%s", a, b);
	ck_assert_msg(pcap_node_open(&nk, specs, 300000, 600000, err,
				     sizeof(err)) == 0, "%s", err);
	pcap_node_measure(&nk, 1000000000);
	ck_assert(!nk.have_draw);		/* one read: no window yet */
	/* over the next second A draws 100 W, B 300 W */
	for (int i = 0; i < 2; i++)
		_put(z[i], "energy_uj", "1150000000\n");
	snprintf(_dir, sizeof(_dir), "%s", a);
	for (int i = 0; i < 2; i++)
		_put(z[i], "energy_uj", "1050000000\n");
	pcap_node_measure(&nk, 1050000000);	/* under 100 ms: ignored */
	ck_assert(!nk.have_draw);
	pcap_node_measure(&nk, 2000000000);
	ck_assert(nk.have_draw);
	ck_assert_uint_eq(nk.draw_mw[0], 100000);
	ck_assert_uint_eq(nk.draw_mw[1], 300000);
	/* 450 W: 225 W each linearly; A draws 100 W, so it keeps its min
	 * (150 W, above 102), and B takes the 75 W freed, to its max */
	ck_assert_int_eq(pcap_node_apply(&nk, 450000, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get(z[0], "constraint_0_power_limit_uw"),
			  75000000);
	snprintf(_dir, sizeof(_dir), "%s", b);
	ck_assert_uint_eq(_get(z[1], "constraint_0_power_limit_uw"),
			  150000000);
	ck_assert_uint_eq(nk.last_mw[0], 150000);
	ck_assert_uint_eq(nk.last_mw[1], 300000);
	/* the knobs hold that split: they read as the node's 450 W (not the
	 * 300 W A's limit alone stands for); A set behind our back: the
	 * lowest again */
	ck_assert_int_eq(pcap_node_read(&nk, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 450000);
	snprintf(_dir, sizeof(_dir), "%s", a);
	_put(z[0], "constraint_0_power_limit_uw", "112500000\n");
	ck_assert_int_eq(pcap_node_read(&nk, &cap, err, sizeof(err)), 0);
	ck_assert_uint_eq(cap, 375000);	/* A's 187.5 W stands for that */
	_put(z[0], "constraint_0_power_limit_uw", "75000000\n");
	snprintf(_dir, sizeof(_dir), "%s", b);
	/* the same cap next round: nothing to write while A stays under;
	 * A at its limit: the split moves back to linear (the agent writes
	 * the unchanged node cap again) */
	ck_assert(!pcap_node_split_moved(&nk, 450000));
	nk.draw_mw[0] = 150000;
	ck_assert(pcap_node_split_moved(&nk, 450000));
	/* B without its counter: the linear split again */
	_put(z[0], "energy_uj", "");
	pcap_node_measure(&nk, 3000000000);
	ck_assert(!nk.have_draw);
	ck_assert(nk.counter_error_new);	/* said once */
	ck_assert_msg(strstr(nk.counter_error, "intel-rapl:0/energy_uj"),
		      "%s", nk.counter_error);
	nk.counter_error_new = false;
	pcap_node_measure(&nk, 4000000000);
	ck_assert(!nk.counter_error_new);	/* the same failure: not again */
	ck_assert_int_eq(pcap_node_apply(&nk, 450000, err, sizeof(err)), 0);
	ck_assert_uint_eq(_get(z[1], "constraint_0_power_limit_uw"),
			  112500000);
	pcap_node_close(&nk);
	_rm_tree();
	snprintf(_dir, sizeof(_dir), "%s", a);
	_rm_tree();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("powercap_knob");
	TCase *tc = tcase_create("knob");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_rapl_apply_read_restore);
	tcase_add_test(tc, test_rapl_dram);
	tcase_add_test(tc, test_rapl_errors_named);
	tcase_add_test(tc, test_spec_errors_named);
	tcase_add_test(tc, test_cpufreq_ceiling);
	tcase_add_test(tc, test_split);
	tcase_add_test(tc, test_node_over_knobs);
	tcase_add_test(tc, test_split_drawn);
	tcase_add_test(tc, test_rapl_energy);
	tcase_add_test(tc, test_node_split_by_draw);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
