/*
 * gpu_minors.c - the NVIDIA GPUs a step holds, from Slurm's device list
 * (gpu_minors.h).
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <string.h>

#include "gpu_minors.h"

bool gpu_minors_is_gpu_path(const char *path)
{
	const char *name, *p;

	if (!path)
		return false;
	name = strrchr(path, '/');
	name = name ? name + 1 : path;
	if (strncmp(name, "nvidia", 6))
		return false;
	p = name + 6;
	if (!*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

void gpu_minors_add_device(gpu_minors_t *m, const char *path, int dev_num,
			   bool alloc)
{
	if (!gpu_minors_is_gpu_path(path))
		return;
	m->gpus++;
	if (!alloc)
		return;
	if (dev_num < 0 || energy_query_minors_add(m->set, dev_num))
		m->unusable++;
}

bool gpu_minors_known(const gpu_minors_t *m)
{
	return m->gpus && !m->unusable;
}
