/*
 * gpu_logic.c - Slurm-free GPU logic: affinity, PCI order, env values,
 * per-task choice, energy helpers.  See gpu_logic.h.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "gpu_logic.h"

/* Private functions */

/* Append to buf at *pos; -ENOSPC when it does not fit. */
static int _append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int _append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*pos >= len)
		return -ENOSPC;
	va_start(ap, fmt);
	n = vsnprintf(buf + *pos, len - *pos, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t) n >= len - *pos)
		return -ENOSPC;
	*pos += n;
	return 0;
}

/* Parse "DDDD:BB:DD.F" into four numbers; -1 if malformed. */
static int _busid_parse(const char *s, unsigned long v[4])
{
	char *end;

	if (!s || !*s)
		return -1;
	for (int i = 0; i < 4; i++) {
		if (!isxdigit((unsigned char) *s))
			return -1;
		v[i] = strtoul(s, &end, 16);
		if (i < 2 && *end != ':')
			return -1;
		if (i == 2 && *end != '.')
			return -1;
		if (i == 3 && *end)
			return -1;
		s = end + (i < 3);
	}
	return 0;
}

/* Public functions */

int gpu_cpumask_to_range(const unsigned long *set, unsigned n, char *buf,
			 size_t len)
{
	const unsigned bits = sizeof(unsigned long) * 8;
	unsigned total = n * bits;
	const char *sep = "";
	size_t pos = 0;
	int ret;

	if (!buf || !len || (n && !set))
		return -EINVAL;
	buf[0] = '\0';
	for (unsigned c = 0; c < total; c++) {
		unsigned e = c;

		if (!(set[c / bits] & (1UL << (c % bits))))
			continue;
		while (e + 1 < total &&
		       (set[(e + 1) / bits] & (1UL << ((e + 1) % bits))))
			e++;
		if (e == c)
			ret = _append(buf, len, &pos, "%s%u", sep, c);
		else
			ret = _append(buf, len, &pos, "%s%u-%u", sep, c, e);
		if (ret)
			return ret;
		sep = ",";
		c = e;
	}
	return 0;
}

int gpu_pci_busid_cmp(const char *a, const char *b)
{
	unsigned long va[4], vb[4];
	int ea = _busid_parse(a, va), eb = _busid_parse(b, vb);

	if (ea || eb)
		return (ea && eb) ? 0 : (ea ? 1 : -1);
	for (int i = 0; i < 4; i++)
		if (va[i] != vb[i])
			return (va[i] < vb[i]) ? -1 : 1;
	return 0;
}

int gpu_pci_rank(const char *const *bus_ids, size_t n, int *rank)
{
	if (!bus_ids || !rank || n > GPU_LOGIC_MAX_GPUS)
		return -EINVAL;
	/* rank = number of devices strictly before, stable on ties. */
	for (size_t i = 0; i < n; i++) {
		int r = 0;

		for (size_t j = 0; j < n; j++) {
			int c = gpu_pci_busid_cmp(bus_ids[j], bus_ids[i]);

			if (c < 0 || (c == 0 && j < i))
				r++;
		}
		rank[i] = r;
	}
	return 0;
}

int gpu_visible_devices(const char *const *bus_ids, size_t n,
			const bool *visible, const bool *sel, char *buf,
			size_t len)
{
	const char *vis_ids[GPU_LOGIC_MAX_GPUS] = { NULL };
	int vis_of[GPU_LOGIC_MAX_GPUS];	/* device -> index among visible */
	int rank[GPU_LOGIC_MAX_GPUS];
	bool chosen[GPU_LOGIC_MAX_GPUS] = { false };
	size_t nvis = 0, pos = 0;
	const char *sep = "";
	int ret;

	if (!bus_ids || !sel || !buf || !len || n > GPU_LOGIC_MAX_GPUS)
		return -EINVAL;
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		vis_of[i] = -1;
		if (visible && !visible[i])
			continue;
		vis_of[i] = nvis;
		vis_ids[nvis++] = bus_ids[i];
	}
	if ((ret = gpu_pci_rank(vis_ids, nvis, rank)))
		return ret;
	for (size_t i = 0; i < n; i++) {
		if (!sel[i])
			continue;
		if (vis_of[i] < 0)
			return -EINVAL;
		chosen[rank[vis_of[i]]] = true;
	}
	for (size_t r = 0; r < nvis; r++) {
		if (!chosen[r])
			continue;
		if ((ret = _append(buf, len, &pos, "%s%zu", sep, r)))
			return ret;
		sep = ",";
	}
	return 0;
}

int gpu_device_path(const char *fmt, const char *host, unsigned minor,
		    char *buf, size_t len)
{
	size_t pos = 0;
	int ret = 0;

	if (!buf || !len)
		return -EINVAL;
	if (!fmt)
		fmt = "/dev/nvidia%u";
	buf[0] = '\0';
	for (const char *p = fmt; *p && !ret; p++) {
		if (*p != '%') {
			ret = _append(buf, len, &pos, "%c", *p);
			continue;
		}
		switch (*++p) {
		case 'u':
			ret = _append(buf, len, &pos, "%u", minor);
			break;
		case 'h':
			ret = _append(buf, len, &pos, "%s", host ? host : "");
			break;
		case '%':
			ret = _append(buf, len, &pos, "%%");
			break;
		default:
			return -EINVAL;
		}
	}
	return ret;
}

int gpu_links_string(const int *link_count, size_t n, size_t i, char *buf,
		     size_t len)
{
	size_t pos = 0;
	int ret;

	if (!link_count || !buf || !len || i >= n)
		return -EINVAL;
	buf[0] = '\0';
	for (size_t j = 0; j < n; j++) {
		int v = (j == i) ? -1 : link_count[i * n + j];

		if ((ret = _append(buf, len, &pos, "%s%d", j ? "," : "", v)))
			return ret;
	}
	return 0;
}

/* Parse "v,v*N,..." (base 0: 0x.. masks) into out->values. */
static int _parse_list(const char *s, gpu_bind_t *out)
{
	while (*s) {
		char *end;
		unsigned long v = strtoul(s, &end, 0), rep = 1;

		if (end == s)
			return -EINVAL;
		if (*end == '*') {
			const char *r = end + 1;

			rep = strtoul(r, &end, 10);
			if (end == r || !rep)
				return -EINVAL;
		}
		for (unsigned long k = 0; k < rep; k++) {
			if (out->n_values >= GPU_LOGIC_MAX_GPUS)
				return -EINVAL;
			out->values[out->n_values++] = v;
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -EINVAL;
		s = end;
	}
	return out->n_values ? 0 : -EINVAL;
}

int gpu_bind_parse(const char *spec, unsigned per_task, gpu_bind_t *out)
{
	if (!out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	if (!spec) {
		if (!per_task)
			return 0;
		out->type = GPU_BIND_PER_TASK;
		out->per_task = per_task;
		return 0;
	}
	if (!strncasecmp(spec, "verbose,", 8))
		spec += 8;
	if (!strcasecmp(spec, "closest") || !strcasecmp(spec, "verbose")) {
		out->type = strcasecmp(spec, "closest") ? GPU_BIND_NONE :
							   GPU_BIND_CLOSEST;
		return 0;
	}
	if (!strcasecmp(spec, "none"))
		return 0;
	if (!strncasecmp(spec, "map_gpu:", 8)) {
		out->type = GPU_BIND_MAP;
		return _parse_list(spec + 8, out);
	}
	if (!strncasecmp(spec, "mask_gpu:", 9)) {
		out->type = GPU_BIND_MASK;
		return _parse_list(spec + 9, out);
	}
	return -EINVAL;
}

int gpu_task_choose(const gpu_bind_t *bind, unsigned task, unsigned ntasks,
		    const bool *alloc, size_t n, const bool *task_cpus,
		    const bool *gpu_cpus, size_t ncpus, bool *out,
		    bool *local)
{
	size_t idx[GPU_LOGIC_MAX_GPUS], nalloc = 0;
	int chosen = 0;

	if (!bind || !alloc || !out || n > GPU_LOGIC_MAX_GPUS || !ntasks ||
	    task >= ntasks)
		return -EINVAL;
	if (local)
		*local = true;
	for (size_t i = 0; i < n; i++) {
		out[i] = false;
		if (alloc[i])
			idx[nalloc++] = i;
	}

	switch (bind->type) {
	case GPU_BIND_NONE:
		for (size_t k = 0; k < nalloc; k++)
			out[idx[k]] = true;
		return nalloc;
	case GPU_BIND_MAP: {
		unsigned long dev = bind->values[task % bind->n_values];

		if (dev < n && alloc[dev]) {
			out[dev] = true;
			chosen = 1;
		}
		return chosen;
	}
	case GPU_BIND_MASK: {
		unsigned long mask = bind->values[task % bind->n_values];

		for (size_t i = 0; i < n && i < 64; i++)
			if ((mask & (1UL << i)) && alloc[i]) {
				out[i] = true;
				chosen++;
			}
		return chosen;
	}
	case GPU_BIND_PER_TASK: {
		/* Task t gets the t-th group of per_task allocated GPUs. */
		size_t first = (size_t) task * bind->per_task;

		for (size_t k = 0; k < bind->per_task; k++) {
			if (!nalloc)
				break;
			out[idx[(first + k) % nalloc]] = true;
		}
		for (size_t i = 0; i < n; i++)
			chosen += out[i];
		return chosen;
	}
	case GPU_BIND_CLOSEST: {
		size_t best = 0, shared[GPU_LOGIC_MAX_GPUS] = { 0 };

		if (!task_cpus || !gpu_cpus)
			return -EINVAL;
		for (size_t k = 0; k < nalloc; k++) {
			for (size_t c = 0; c < ncpus; c++)
				if (task_cpus[c] && gpu_cpus[idx[k] * ncpus + c])
					shared[k]++;
			if (shared[k] > best)
				best = shared[k];
		}
		for (size_t k = 0; k < nalloc; k++)
			if (!best || shared[k] == best) {
				out[idx[k]] = true;
				chosen++;
			}
		if (!best && local)
			*local = false;
		return chosen;
	}
	}
	return -EINVAL;
}

uint32_t gpu_avg_watts(uint64_t energy_mj, uint64_t seconds,
		       uint64_t *carry_mj)
{
	uint64_t total = energy_mj + *carry_mj, w;

	if (!seconds) {
		*carry_mj = total;
		return 0;
	}
	w = total / (seconds * 1000);
	if (w > UINT32_MAX - 1)
		w = UINT32_MAX - 1;
	*carry_mj = total - w * seconds * 1000;
	return (uint32_t) w;
}

int gpu_job_energy(gpu_energy_between_fn fn, void *arg, const bool *gpus,
		   size_t n, uint64_t t0, uint64_t t1, uint64_t *mj)
{
	uint64_t sum = 0;

	if (!fn || !gpus || !mj)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		uint64_t e = 0;
		int ret;

		if (!gpus[i])
			continue;
		if ((ret = fn(arg, i, t0, t1, &e)))
			return ret;
		sum += e;
	}
	*mj = sum;
	return 0;
}
