"""acct_gather_energy/bmc with EnergyBMCMethod=redfish on the test cluster:
sacct energy vs the truth (issue #41).

Every node has its own Redfish BMC (contribs/redfish-sim, HTTPS with a CA
made here, sessions) on the host side of the cluster bridge (NET.1), one
port per node, found through an EnergyBMCMap of https URLs; each plays its
node's column of contribs/trace/examples/cluster.trace with a source
profile: an EnergyJoules counter, an EnergykWh counter read to 1 Wh (both
shaped by EnvironmentMetrics PowerWatts), or power alone.  The plugin runs
with its Redfish defaults (a read every 5 s, 4000 ms a request), the BMCs
refreshing their readings every 0.1 s (SENSING_S), and
spank_energy_settle.so listed (a slow BMC's settle does not hold srun).  The truth
of a job is the trace's exact integral over each task's own start and end
(selab.energy).

Bound: 1 % for this first version.  Measured (30 s jobs, three runs of
two jobs per profile): joules -0.021 % to +0.408 %, kwh -0.011 % to
+0.455 %, power -0.028 % to +0.376 %: not yet the counter paths' 0.1 %
(the BMC's 0.1 s refresh lag, unstamped in EnvironmentMetrics, is one
part); at twice the worst the bound would be 0.9 %, so 1 % stays until the
counter paths improve.
"""
import os
import shutil
import tempfile
import time

import pytest

from selab import energy
from selab import redfish_rig as rr
from selab.bmc_rig import BMC_ADDR, NODES, PORT_BASE, TRACE
from selab.cluster import PLUGIN_DIR, slurmd_log
from selab.files import write_file

JOB_SECONDS = 30
FINISH_S = JOB_SECONDS + 90
TOLERANCE = 0.01
# The BMC's sensors refresh every SENSING_S: a reading is up to that old
# when read, a lag the meter cannot see in EnvironmentMetrics (it has no
# ReadingTime) and that moves a boundary by up to SENSING_S x the power's
# change there.  0.1 s here, to measure the meter itself; real BMCs refresh
# every 1 s or more (acct_gather_energy_bmc(5), REDFISH).
SENSING_S = 0.1
# apart from test_bmc_energy's ports (PORT_BASE + 1..3)
PORT_OF = {n: PORT_BASE + 8 + i for i, n in enumerate(NODES, 1)}
SOURCES = {
    "joules": "EnvironmentMetrics EnergyJoules (counter) + "
              "EnvironmentMetrics PowerWatts",
    "kwh": "EnvironmentMetrics EnergykWh (counter) + EnvironmentMetrics "
           "PowerWatts",
    "power": "EnvironmentMetrics PowerWatts (power, integrated)",
}

pytestmark = pytest.mark.skipif(not PLUGIN_DIR, reason="SE_PLUGIN_DIR not "
                                "set (run contribs/test-all.sh)")


@pytest.fixture(scope="module")
def workdir():
    path = tempfile.mkdtemp(prefix="se-redfish-test-", dir="/var/tmp")
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module", params=sorted(SOURCES))
def rf_cluster(request, cluster, workdir):
    profile = request.param
    work = tempfile.mkdtemp(prefix=profile + "-", dir=workdir)
    certs = rr.make_certs(os.path.join(work, "pki"), ips=(BMC_ADDR,))
    epoch = time.time()
    sims = []
    try:
        for node in NODES:
            os.makedirs(os.path.join(work, node))
            sims.append(rr.RedfishSim(
                TRACE, epoch, column=node, profile=profile, certs=certs,
                addr=BMC_ADDR, port=PORT_OF[node],
                sensing_interval=SENSING_S,
                workdir=os.path.join(work, node)))
        bmc_map = write_file(os.path.join(work, "bmc.map"), "".join(
            "Nodes=%s Host=https://%s:%d\n" % (n, BMC_ADDR, PORT_OF[n])
            for n in NODES), 0o644)
        conf = ("EnergyBMCMethod=redfish\nEnergyBMCMap=%s\n"
                "EnergyBMCUser=%s\nEnergyBMCPasswordFile=%s\n"
                "EnergyBMCCAFile=%s\nEnergySettleMaxWait=15\n" % (
                    bmc_map, sims[0].user, sims[0].password_file,
                    certs["ca"]))
        # the SPANK settle listed, as for any slow meter before 26.05
        # (acct_gather_energy_bmc(5), REDFISH): srun returns while the
        # step's settle waits for a 3 s BMC's reading after its end
        plugstack = write_file(os.path.join(work, "plugstack.conf"),
                               "required %s/spank_energy_settle.so "
                               "max_wait=15\n" % PLUGIN_DIR, 0o644)
        with cluster.configured(plugin_dirs=[PLUGIN_DIR],
                                energy_type="acct_gather_energy/bmc",
                                acct_gather_conf=conf,
                                slurm_conf="DebugFlags=Energy\n"
                                "PlugStackConfig=%s\n" % plugstack) as c:
            for sim in sims:    # the bridge exists once the cluster is up
                sim.start()
            energy.wait_for_power(c, NODES)
            yield c, epoch, profile, sims
            logs = "".join(slurmd_log(c, n) for n in NODES)
            assert sims[0].password not in logs, "the password is in a log"
    finally:
        for sim in sims:
            sim.stop()


def test_source_said_in_slurmd_log(rf_cluster):
    """Each node's slurmd says the source it reads, once."""
    c, _, profile, _ = rf_cluster
    for node in NODES:
        lines = [l for l in slurmd_log(c, node).splitlines()
                 if "energy and power read from" in l]
        assert lines, "no source line in slurmd-%s.log" % node
        assert SOURCES[profile] in lines[-1], lines[-1]
        assert "https://%s:%d" % (BMC_ADDR, PORT_OF[node]) in lines[-1]


def test_single_node_jobs(rf_cluster):
    """node1 and node2 alone, at once, each on its own BMC."""
    c, epoch, profile, _ = rf_cluster
    procs = [(energy.run_timed(c, "rf-" + n, ["-w", n], JOB_SECONDS),
              "rf-" + n) for n in ("node1", "node2")]
    for proc, name in procs:
        jobid, windows = energy.finish(c, proc, name, FINISH_S)
        recorded = energy.consumed_energy(c, jobid)
        truth = energy.true_energy(TRACE, epoch, windows)
        step = recorded["%d.0" % jobid]
        print("job %d (%s) on %s: sacct %s J, true %.1f J, %+.3f%%" % (
            jobid, profile, ",".join(sorted(windows)), step, truth,
            100 * energy.relative_error(step or 0, truth)))
        assert step is not None, recorded
        assert abs(step - truth) <= TOLERANCE * truth, (step, truth)


def test_slow_bmc_never_blocks(rf_cluster):
    """node3's BMC answers in 3 s (a slow iDRAC): an `srun sleep 5` on it
    still takes under 5.2 s, and slurmd answers `scontrol show node` in
    under 0.1 s: the sampler thread owns all I/O, requests are answered
    from its samples, and the listed SPANK settle lets srun return while
    the step's settle waits for the BMC's reading after its end."""
    c, _, profile, sims = rf_cluster
    sim = sims[NODES.index("node3")]
    try:
        sim.fault("latency 3")
        time.sleep(4)
        t = time.monotonic()
        c.srun("-w", "node3", "sleep", "5", timeout=60)
        took = time.monotonic() - t
        t = time.monotonic()
        c.scontrol("show", "node", "node3")
        answer = time.monotonic() - t
    finally:
        sim.fault("")
    print("%s: srun sleep 5 on a 3 s BMC: %.2f s; scontrol show node: "
          "%.3f s" % (profile, took, answer))
    assert took < 5.2, took
    assert answer < 0.1, answer
