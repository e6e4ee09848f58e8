"""The simulated BMCs of test_bmc_energy, test_secrets, test_examples and
test_faults_modbus_bmc: one bmc-sim (contribs/bmc-sim: OpenIPMI's ipmi_sim
over IPMI LAN 2.0) per node, on the host side of the cluster bridge
(NET.1), one port per node, each playing its node's column of
contribs/trace/examples/cluster.trace; bmc_conf() points the plugin at them
through an EnergyBMCMap file.

Works on any instance of the cluster: addresses and ports derive from
SE_CLUSTER_NET (default 10.199.0), so two instances do not collide.
"""
import os
import subprocess

from .cluster import REPO
from .files import write_file

TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")
BUILD_DIR = os.environ.get("SE_BUILD_DIR", os.path.join(REPO, "_build"))
BMC_SIM = os.environ.get("SE_BMC_SIM", os.path.join(
    BUILD_DIR, "obj", "contribs", "bmc-sim", "bmc-sim"))

NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
BMC_ADDR = NET + ".1"                  # host side of the cluster bridge
# One port per node, apart for every cluster instance (NET's last octet).
PORT_BASE = 19600 + 16 * (int(NET.split(".")[2]) % 256)
NODES = ("node1", "node2", "node3")
PORT_OF = {n: PORT_BASE + i for i, n in enumerate(NODES, 1)}
SENSOR_M = 4                           # W per raw count (bmc-sim --m)


def bmc_conf(workdir, method, password_file):
    lines = ["Nodes=%s Host=%s:%d" % (n, BMC_ADDR, PORT_OF[n])
             for n in NODES]
    map_file = write_file(os.path.join(workdir, "bmc.map"),
                          "# node -> its BMC\n" + "\n".join(lines) + "\n",
                          0o644)
    return ("EnergyBMCMethod=%s\nEnergyBMCMap=%s\nEnergyBMCUser=admin\n"
            "EnergyBMCPasswordFile=%s\nEnergyBMCPrivilege=admin\n"
            "EnergyBMCWorkaroundFlags=opensesspriv\n"
            "EnergyBMCFrequency=1\nEnergyBMCTimeout=500\n"
            "EnergyBMCSdrCacheDir=%s\n"
            % (method, map_file, password_file,
               os.path.join(workdir, "sdr-cache-%n")))


class Bmcs:
    """One bmc-sim per node; started and stopped by their own pid files."""

    def __init__(self, workdir, epoch, password_file, poll_ms=1000):
        self.workdir = workdir
        self.epoch = epoch
        self.password_file = password_file
        self.poll_ms = poll_ms
        self.started = []

    def state(self, node):
        return os.path.join(self.workdir, "bmc-" + node)

    def sim(self, cmd, node, *extra):
        return subprocess.run([BMC_SIM, cmd, "--state", self.state(node),
                               *extra], capture_output=True, text=True,
                              timeout=30)

    def start(self):
        for node in NODES:
            self.start_one(node)
        return self

    def start_one(self, node):
        p = self.sim("start", node, "--port", str(PORT_OF[node]),
                     "--trace", TRACE, "--column", node,
                     "--epoch", "%.6f" % self.epoch,
                     "--addr", BMC_ADDR,
                     "--password-file", self.password_file,
                     "--m", str(SENSOR_M),
                     "--poll-ms", str(self.poll_ms))
        if p.returncode != 0:
            self.stop()
            raise RuntimeError("bmc-sim start %s: %s%s"
                               % (node, p.stdout, p.stderr))
        self.started.append(node)

    def stop_one(self, node):
        self.sim("stop", node)
        self.started.remove(node)

    def stop(self):
        for node in self.started:
            self.sim("stop", node)
        self.started = []
