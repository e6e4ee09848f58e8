/*
 * pcap_knob_rapl.c - the "rapl" knob: Linux powercap sysfs (Documentation/
 * power/powercap/powercap.rst), RAPL's long-term limit (PL1) of every
 * package zone intel-rapl:N and, with dram=yes, of every DRAM subzone
 * intel-rapl:N:M (its "name" file says "dram").  Options:
 *   root=DIR      default /sys/class/powercap
 *   dram=yes|no   DRAM subzones too (default no)
 *   min_pct=P     a zone's lowest limit, P % of its max (default 50)
 *   max_w=W       a package's max where constraint_K_max_power_uw is
 *                 absent or 0
 *   dram_max_w=W  the same for DRAM zones (often 0 in sysfs)
 * A zone's default, written back by restore, is its max: the firmware's
 * PL1 is the package's TDP, which is what max_power_uw reports.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcap_knob_priv.h"

#define RAPL_ROOT	"/sys/class/powercap"
#define RAPL_MAX_CONSTRAINTS 4

/* ---------------------------------------------------- private functions */

static int _cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "intel-rapl:N" (1) or "intel-rapl:N:M" (2); else 0. */
static int _zone_depth(const char *name)
{
	unsigned a, b;
	char tail;

	if (sscanf(name, "intel-rapl:%u:%u%c", &a, &b, &tail) == 2)
		return 2;
	if (sscanf(name, "intel-rapl:%u%c", &a, &tail) == 1)
		return 1;
	return 0;
}

static bool _file_is(const char *path, const char *word)
{
	char buf[64] = "";
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return !strcmp(buf, word);
}

/* The index K of the zone's "long_term" constraint. */
static int _long_term(const pcap_knob_t *k, const char *zdir, char *err,
		      size_t err_len)
{
	char path[4096];

	for (int c = 0; c < RAPL_MAX_CONSTRAINTS; c++) {
		snprintf(path, sizeof(path), "%s/constraint_%d_name", zdir, c);
		if (_file_is(path, "long_term"))
			return c;
	}
	snprintf(err, err_len, "%s: %s has no long_term constraint "
		 "(constraint_N_name)", k->ops->name, zdir);
	return -ENOENT;
}

/* The zone's max in mW: constraint_K_max_power_uw, else the option. */
static int _zone_max(const pcap_knob_t *k, const char *zdir, int c,
		     bool dram, uint32_t *max_mw, char *err, size_t err_len)
{
	const char *key = dram ? "dram_max_w" : "max_w";
	char path[4096];
	uint64_t uw = 0;
	uint32_t w;
	int ret;

	snprintf(path, sizeof(path), "%s/constraint_%d_max_power_uw", zdir, c);
	if (!pcap_read_u64(k, path, &uw, err, err_len) && uw) {
		*max_mw = (uint32_t)(uw / 1000);
		return 0;
	}
	ret = pcap_opt_u32(k, key, 0, 1, 100000, &w, err, err_len);
	if (ret)
		return ret;
	if (!w) {
		snprintf(err, err_len, "%s: %s absent or 0: give the zone's "
			 "maximum as %s:%s=W", k->ops->name, path,
			 k->ops->name, key);
		return -EINVAL;
	}
	*max_mw = w * 1000;
	return 0;
}

static int _add_zone(pcap_knob_t *k, const char *zdir, bool dram,
		     uint32_t min_pct, char *err, size_t err_len)
{
	char path[4096];
	uint32_t max_mw;
	pcap_zone_t *z;
	int c, ret;

	if ((c = _long_term(k, zdir, err, err_len)) < 0)
		return c;
	ret = _zone_max(k, zdir, c, dram, &max_mw, err, err_len);
	if (ret)
		return ret;
	if (k->n_zones == PCAP_KNOB_MAX_ZONES) {
		snprintf(err, err_len, "%s: more than %d zones under %s",
			 k->ops->name, PCAP_KNOB_MAX_ZONES, k->root);
		return -E2BIG;
	}
	snprintf(path, sizeof(path), "%s/constraint_%d_power_limit_uw",
		 zdir, c);
	z = &k->zone[k->n_zones++];
	z->path = strdup(path);
	z->hi = max_mw;
	z->lo = (uint32_t)((uint64_t)max_mw * min_pct / 100);
	k->min_mw += z->lo;
	k->max_mw += z->hi;
	return z->path ? 0 : -ENOMEM;
}

/* The zones under root, in name order (intel-rapl:0 before :0:0, :1). */
static int _scan(pcap_knob_t *k, bool dram, uint32_t min_pct, char *err,
		 size_t err_len)
{
	struct dirent *e;
	char *names[256];
	size_t n = 0;
	int rv = 0;
	DIR *d = pcap_open_root(k, &rv, err, err_len);

	if (!d)
		return rv;
	while ((e = readdir(d)) && n < 256)
		if (_zone_depth(e->d_name))
			names[n++] = strdup(e->d_name);
	closedir(d);
	qsort(names, n, sizeof(names[0]), _cmp_str);
	for (size_t i = 0; i < n; i++) {
		char zdir[4096], name_path[4096 + 8];
		int depth = _zone_depth(names[i]);

		snprintf(zdir, sizeof(zdir), "%s/%s", k->root, names[i]);
		snprintf(name_path, sizeof(name_path), "%s/name", zdir);
		if (!rv && depth == 1)
			rv = _add_zone(k, zdir, false, min_pct, err, err_len);
		else if (!rv && dram && _file_is(name_path, "dram"))
			rv = _add_zone(k, zdir, true, min_pct, err, err_len);
		free(names[i]);
	}
	if (!rv && !k->n_zones) {
		snprintf(err, err_len, "%s: no intel-rapl:N package zone "
			 "under %s", k->ops->name, k->root);
		rv = -ENOENT;
	}
	return rv;
}

/* ------------------------------------------------------------ knob ops */

static int _rapl_open(pcap_knob_t *k, char *err, size_t err_len)
{
	const char *root = pcap_knob_opt(k, "root");
	const char *dram = pcap_knob_opt(k, "dram");
	uint32_t min_pct;
	int ret;

	if (dram && strcmp(dram, "yes") && strcmp(dram, "no")) {
		snprintf(err, err_len, "knob '%s': dram=%s is not yes or no",
			 k->spec, dram);
		return -EINVAL;
	}
	ret = pcap_opt_u32(k, "min_pct", 50, 1, 100, &min_pct, err, err_len);
	if (ret)
		return ret;
	if (!(k->root = strdup(root ? root : RAPL_ROOT)))
		return -ENOMEM;
	return _scan(k, dram && !strcmp(dram, "yes"), min_pct, err, err_len);
}

static int _rapl_write_all(pcap_knob_t *k, double f, char *err,
			   size_t err_len)
{
	for (size_t i = 0; i < k->n_zones; i++) {
		pcap_zone_t *z = &k->zone[i];
		uint64_t uw = (uint64_t)((z->lo + f * (z->hi - z->lo)) * 1000
					 + 0.5);
		int ret = pcap_write_checked(k, z->path, uw, 1000000, err,
					     err_len);

		if (ret)
			return ret;
	}
	return 0;
}

static int _rapl_apply(pcap_knob_t *k, uint32_t cap_mw, char *err,
		       size_t err_len)
{
	return _rapl_write_all(k, pcap_fraction(k, cap_mw), err, err_len);
}

static int _rapl_read(pcap_knob_t *k, uint32_t *cap_mw, char *err,
		      size_t err_len)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < k->n_zones; i++) {
		uint64_t uw;
		int ret = pcap_read_u64(k, k->zone[i].path, &uw, err, err_len);

		if (ret)
			return ret;
		sum += uw / 1000;
	}
	*cap_mw = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
	return 0;
}

/* A zone's file NAME beside the limit file it writes. */
static void _zone_file(const pcap_zone_t *z, const char *name, char *out,
		       size_t len)
{
	const char *slash = strrchr(z->path, '/');
	int dir = slash ? (int)(slash - z->path) : 0;

	snprintf(out, len, "%.*s/%s", dir, z->path, name);
}

/*
 * The zones' energy_uj summed, unwrapped: each counter wraps at its
 * max_energy_range_uj (about 262 kJ on many packages, minutes at full
 * power), so a counter below its last read went round once (the agent
 * reads every period, far more often).  Root only on kernels since 5.10
 * (CVE-2020-8694), as the agent runs.
 */
static int _rapl_energy(pcap_knob_t *k, uint64_t *mj, char *err,
			size_t err_len)
{
	for (size_t i = 0; i < k->n_zones; i++) {
		pcap_zone_t *z = &k->zone[i];
		char path[4096];
		uint64_t uj, range = 0;
		int ret;

		_zone_file(z, "energy_uj", path, sizeof(path));
		if ((ret = pcap_read_u64(k, path, &uj, err, err_len)))
			return ret;
		if (z->energy_seen && uj < z->energy_last) {
			_zone_file(z, "max_energy_range_uj", path,
				   sizeof(path));
			if ((ret = pcap_read_u64(k, path, &range, err,
						 err_len)))
				return ret;
			k->energy_uj += range - z->energy_last + uj;
		} else if (z->energy_seen) {
			k->energy_uj += uj - z->energy_last;
		}
		z->energy_last = uj;
		z->energy_seen = true;
	}
	*mj = k->energy_uj / 1000;
	return 0;
}

const pcap_knob_ops_t pcap_knob_rapl_ops = {
	.name = "rapl",
	.keys = "root dram min_pct max_w dram_max_w",
	.open = _rapl_open,
	.apply = _rapl_apply,
	.read = _rapl_read,
	.energy = _rapl_energy,
};
