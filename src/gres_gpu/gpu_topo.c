/*
 * gpu_topo.c - PCI locality of GPUs through hwloc.  See gpu_topo.h.
 */
#ifdef HAVE_CONFIG_H
#include "se_config.h"
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <hwloc.h>

#include "gpu_topo.h"

/*
 * The machine's topology with its PCI and OS devices, or xml's (a saved
 * one: tests).  0, -ENOMEM, or -ENOENT (nothing left to destroy).
 */
static int _topo_load(hwloc_topology_t *topo, const char *xml)
{
	if (hwloc_topology_init(topo))
		return -ENOMEM;
	hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_ALL);
	if ((xml && hwloc_topology_set_xml(*topo, xml)) ||
	    hwloc_topology_load(*topo)) {
		hwloc_topology_destroy(*topo);
		return -ENOENT;
	}
	return 0;
}

/* Public functions */

int gpu_topo_locality(const char *xml, const char *const *bus_ids, size_t n,
		      bool *gpu_cpus, size_t ncpus, int *numa)
{
	hwloc_topology_t topo;
	int rv;

	if (!bus_ids || !gpu_cpus || !numa)
		return -EINVAL;
	if ((rv = _topo_load(&topo, xml)))
		return rv;

	for (size_t i = 0; i < n; i++) {
		hwloc_obj_t pci = NULL, anc;
		int c;

		memset(&gpu_cpus[i * ncpus], 0, ncpus * sizeof(bool));
		numa[i] = -1;
		if (bus_ids[i] && bus_ids[i][0])
			pci = hwloc_get_pcidev_by_busidstring(topo,
							      bus_ids[i]);
		anc = pci ? hwloc_get_non_io_ancestor_obj(topo, pci) : NULL;
		if (!anc || !anc->cpuset) {
			for (size_t k = 0; k < ncpus; k++)
				gpu_cpus[i * ncpus + k] = true;
			continue;
		}
		hwloc_bitmap_foreach_begin(c, anc->cpuset) {
			if ((size_t) c < ncpus)
				gpu_cpus[i * ncpus + c] = true;
		} hwloc_bitmap_foreach_end();
		if (anc->nodeset && hwloc_bitmap_weight(anc->nodeset) == 1)
			numa[i] = hwloc_bitmap_first(anc->nodeset);
	}
	hwloc_topology_destroy(topo);
	return 0;
}

int gpu_topo_osdev_busids(const char *xml, const char *const *names, size_t n,
			  char (*bus_ids)[32])
{
	hwloc_topology_t topo;
	hwloc_obj_t os = NULL;
	int rv;

	if (!names || !bus_ids)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		bus_ids[i][0] = '\0';
	if ((rv = _topo_load(&topo, xml)))
		return rv;
	while ((os = hwloc_get_next_osdev(topo, os))) {
		hwloc_obj_t p = os->parent;

		if (!os->name || !p || p->type != HWLOC_OBJ_PCI_DEVICE)
			continue;
		for (size_t i = 0; i < n; i++)
			if (names[i] && !strcmp(names[i], os->name))
				snprintf(bus_ids[i], 32,
					 "%04x:%02x:%02x.%01x",
					 p->attr->pcidev.domain,
					 p->attr->pcidev.bus,
					 p->attr->pcidev.dev,
					 p->attr->pcidev.func);
	}
	hwloc_topology_destroy(topo);
	return 0;
}
