/*
 * pcap_knob_cpufreq.c - the "cpufreq" knob, the fallback where a node has
 * no power limit: a frequency ceiling (scaling_max_freq of every cpuN that
 * has a cpufreq/ directory), as --cpu-freq's upper bound does.  There is no
 * power model here, so the admin gives the node's power range the ceiling
 * spans (measured with se-cpufreq-sweep): a cap in [min_w, max_w] maps
 * linearly to [cpuinfo_min_freq, cpuinfo_max_freq] of each CPU.  Options:
 *   root=DIR   default /sys/devices/system/cpu
 *   min_w=W    the node's draw at the lowest frequency (required)
 *   max_w=W    its draw at the highest (required, > min_w)
 * restore writes cpuinfo_max_freq back.  A slurmstepd restoring a step's
 * own --cpu-freq at its end writes scaling_max_freq too: the agent applies
 * its cap again on its next round.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pcap_knob_priv.h"

#define CPUFREQ_ROOT	"/sys/devices/system/cpu"

/* ---------------------------------------------------- private functions */

static int _cmp_cpu(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;

	return x < y ? -1 : x > y;
}

static int _add_cpu(pcap_knob_t *k, unsigned cpu, char *err, size_t err_len)
{
	char dir[4096], path[4096 + 32];
	uint64_t lo, hi;
	pcap_zone_t *z;
	int ret;

	snprintf(dir, sizeof(dir), "%s/cpu%u/cpufreq", k->root, cpu);
	snprintf(path, sizeof(path), "%s/cpuinfo_min_freq", dir);
	if ((ret = pcap_read_u64(k, path, &lo, err, err_len)))
		return ret;
	snprintf(path, sizeof(path), "%s/cpuinfo_max_freq", dir);
	if ((ret = pcap_read_u64(k, path, &hi, err, err_len)))
		return ret;
	if (!lo || hi < lo || hi > UINT32_MAX) {
		snprintf(err, err_len, "%s: %s: cpuinfo_min_freq %llu and "
			 "cpuinfo_max_freq %llu are not a range",
			 k->ops->name, dir, (unsigned long long)lo,
			 (unsigned long long)hi);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/scaling_max_freq", dir);
	z = &k->zone[k->n_zones++];
	z->path = strdup(path);
	z->lo = (uint32_t)lo;
	z->hi = (uint32_t)hi;
	return z->path ? 0 : -ENOMEM;
}

static int _scan(pcap_knob_t *k, char *err, size_t err_len)
{
	struct dirent *e;
	unsigned cpus[PCAP_KNOB_MAX_ZONES];
	size_t n = 0;
	int rv = 0;
	DIR *d = pcap_open_root(k, &rv, err, err_len);

	if (!d)
		return rv;
	while ((e = readdir(d))) {
		char tail, path[4096];
		unsigned cpu;
		struct stat st;

		if (sscanf(e->d_name, "cpu%u%c", &cpu, &tail) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpufreq", k->root,
			 e->d_name);
		if (stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (n == PCAP_KNOB_MAX_ZONES) {
			snprintf(err, err_len, "%s: more than %d CPUs with "
				 "cpufreq under %s", k->ops->name,
				 PCAP_KNOB_MAX_ZONES, k->root);
			rv = -E2BIG;
			break;
		}
		cpus[n++] = cpu;
	}
	closedir(d);
	if (rv)
		return rv;
	qsort(cpus, n, sizeof(cpus[0]), _cmp_cpu);
	for (size_t i = 0; i < n && !rv; i++)
		rv = _add_cpu(k, cpus[i], err, err_len);
	if (!rv && !n) {
		snprintf(err, err_len, "%s: no cpuN/cpufreq under %s",
			 k->ops->name, k->root);
		rv = -ENOENT;
	}
	return rv;
}

static int _write_all(pcap_knob_t *k, double f, char *err, size_t err_len)
{
	for (size_t i = 0; i < k->n_zones; i++) {
		pcap_zone_t *z = &k->zone[i];
		uint64_t khz = z->lo + (uint64_t)(f * (z->hi - z->lo) + 0.5);
		int ret = pcap_write_checked(k, z->path, khz, 0, err, err_len);

		if (ret)
			return ret;
	}
	return 0;
}

/* ------------------------------------------------------------ knob ops */

static int _cpufreq_open(pcap_knob_t *k, char *err, size_t err_len)
{
	const char *root = pcap_knob_opt(k, "root");
	uint32_t min_w, max_w;
	int ret;

	ret = pcap_opt_u32(k, "min_w", 0, 1, 100000, &min_w, err, err_len);
	if (!ret)
		ret = pcap_opt_u32(k, "max_w", 0, 1, 100000, &max_w, err,
				   err_len);
	if (ret)
		return ret;
	if (!min_w || !max_w || max_w <= min_w) {
		snprintf(err, err_len, "knob '%s': needs min_w=W and max_w=W "
			 "with max_w > min_w (the node's draw at the lowest "
			 "and highest frequency)", k->spec);
		return -EINVAL;
	}
	k->min_mw = min_w * 1000;
	k->max_mw = max_w * 1000;
	if (!(k->root = strdup(root ? root : CPUFREQ_ROOT)))
		return -ENOMEM;
	return _scan(k, err, err_len);
}

static int _cpufreq_apply(pcap_knob_t *k, uint32_t cap_mw, char *err,
			  size_t err_len)
{
	return _write_all(k, pcap_fraction(k, cap_mw), err, err_len);
}

/* The first CPU's ceiling, mapped back to the power range. */
static int _cpufreq_read(pcap_knob_t *k, uint32_t *cap_mw, char *err,
			 size_t err_len)
{
	pcap_zone_t *z = &k->zone[0];
	uint64_t khz;
	double f;
	int ret = pcap_read_u64(k, z->path, &khz, err, err_len);

	if (ret)
		return ret;
	f = z->hi > z->lo ? ((double)khz - z->lo) / (z->hi - z->lo) : 1.0;
	f = f < 0 ? 0 : f > 1 ? 1 : f;
	*cap_mw = k->min_mw + (uint32_t)(f * (k->max_mw - k->min_mw) + 0.5);
	return 0;
}

const pcap_knob_ops_t pcap_knob_cpufreq_ops = {
	.name = "cpufreq",
	.keys = "root min_w max_w",
	.open = _cpufreq_open,
	.apply = _cpufreq_apply,
	.read = _cpufreq_read,
};
