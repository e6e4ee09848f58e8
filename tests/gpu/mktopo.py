#!/usr/bin/env python3
"""Write an hwloc 2 XML topology with GPUs on chosen NUMA nodes.

    mktopo.py NUMA CORES_PER_NUMA BUS@NUMA[,BUS@NUMA...] > out.xml

Each NUMA node is a Package with its cores (one PU each); each GPU is a
PCI device (class 0302, NVIDIA vendor id) behind a host bridge under its
NUMA node's package, with an OS device named nvidiaN (N in argument order)
so that PCI locality can be looked up by device file name.  Used to make the
checked-in tests/gpu/topo-*.xml files (see tests/gpu/README.md).
"""
import sys


def mask(bits):
    v = 0
    for b in bits:
        v |= 1 << b
    return "0x%08x" % v


def main():
    numa, cores = int(sys.argv[1]), int(sys.argv[2])
    gpus = [g.split("@") for g in sys.argv[3].split(",")]
    gp = [1000]

    def nxt():
        gp[0] += 1
        return gp[0]

    allcpu = mask(range(numa * cores))
    allnode = mask(range(numa))
    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<!DOCTYPE topology SYSTEM "hwloc2.dtd">',
           '<topology version="2.0">',
           '  <object type="Machine" os_index="0" cpuset="%s" complete_cpuset="%s" '
           'allowed_cpuset="%s" nodeset="%s" complete_nodeset="%s" allowed_nodeset="%s" gp_index="1">'
           % (allcpu, allcpu, allcpu, allnode, allnode, allnode)]
    for n in range(numa):
        cs = mask(range(n * cores, (n + 1) * cores))
        ns = mask([n])
        attrs = 'cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s"' % (cs, cs, ns, ns)
        out.append('    <object type="Package" os_index="%d" %s gp_index="%d">' % (n, attrs, nxt()))
        out.append('      <object type="NUMANode" os_index="%d" %s local_memory="1073741824" gp_index="%d"/>'
                   % (n, attrs, nxt()))
        for c in range(n * cores, (n + 1) * cores):
            one = mask([c])
            a1 = 'cpuset="%s" complete_cpuset="%s" nodeset="%s" complete_nodeset="%s"' % (one, one, ns, ns)
            out.append('      <object type="Core" os_index="%d" %s gp_index="%d">' % (c, a1, nxt()))
            out.append('        <object type="PU" os_index="%d" %s gp_index="%d"/>' % (c, a1, nxt()))
            out.append('      </object>')
        for i, (bus, node) in enumerate(gpus):
            if int(node) != n:
                continue
            dom, b = bus.split(":")[0:2]
            out.append('      <object type="Bridge" gp_index="%d" bridge_type="0-1" depth="0" '
                       'bridge_pci="%s:[%s-%s]">' % (nxt(), dom, b, b))
            out.append('        <object type="PCIDev" gp_index="%d" pci_busid="%s" '
                       'pci_type="0302 [10de:1db6] [10de:124a] a1" pci_link_speed="15.753846">'
                       % (nxt(), bus))
            out.append('          <object type="OSDev" gp_index="%d" name="nvidia%d" osdev_type="1"/>'
                       % (nxt(), i))
            out.append('        </object>')
            out.append('      </object>')
        out.append('    </object>')
    out.append('  </object>')
    out.append('</topology>')
    print("\n".join(out))


if __name__ == "__main__":
    main()
