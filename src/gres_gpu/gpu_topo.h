/*
 * gpu_topo.h - PCI locality of GPUs from the hwloc topology (Slurm-free).
 *
 * The topology is the machine's, or an XML file (tests: HWLOC_XMLFILE or
 * the xml argument).  A GPU is found by its PCI bus id; its locality is the
 * CPU set of its first non-I/O ancestor (the package or NUMA domain its
 * host bridge hangs off).
 */
#ifndef SE_GPU_TOPO_H
#define SE_GPU_TOPO_H

#include <stdbool.h>
#include <stddef.h>

/*
 * For each bus_ids[i]: gpu_cpus[i * ncpus + c] = CPU c (OS index) is local
 * to it; numa[i] = OS index of its NUMA node (-1 when not known; then all
 * its CPUs are marked, as the GPU is equally far from every CPU).
 * xml NULL: the current machine (or $HWLOC_XMLFILE).  Returns 0, -ENOENT
 * when the topology cannot be loaded, -EINVAL for bad arguments.
 */
int gpu_topo_locality(const char *xml, const char *const *bus_ids, size_t n,
		      bool *gpu_cpus, size_t ncpus, int *numa);

/*
 * PCI bus id of the device behind each OS device name (e.g. "nvidia0" in a
 * topology whose GPUs carry such names): bus_ids[i] is filled
 * ("DDDD:BB:DD.F") or left "" when the name is not found.  Returns as
 * gpu_topo_locality.
 */
int gpu_topo_osdev_busids(const char *xml, const char *const *names, size_t n,
			  char (*bus_ids)[32]);

#endif
