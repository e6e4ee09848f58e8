"""acct_gather_energy/modbus on the test cluster: sacct energy vs the truth.

Every node reads a simulated meter that plays contribs/trace/examples/
cluster.trace; the truth of a job is the trace's exact integral over each
task's own start and end (selab.energy).  Layout in every configuration:

    node1          -> unit 1, its own meter            (column node1)
    node2, node3   -> unit 2, one chassis meter split   (column chassis,
                      equally: each node is billed half)

(selab.modbus_rig: the layout, the configuration and the 1 % check, which
test_modbus_faults.py uses too.)

Each configuration runs against our simulator (se-modbus-sim) and against
an independent Modbus server (pymodbus), on the counter path (the meter's
energy register) and on the power path (power register only, integrated).
An RTU line and a dying meter are in test_modbus_faults.py.
"""
import os
import time

import pytest

from selab import energy
from selab.cluster import PLUGIN_DIR, slurmd_log
from selab.meters import ModbusSim, PymodbusMeter
from selab.modbus_rig import (FINISH_S, JOB_SECONDS, METER, SDM630_SIM,
                              TOLERANCE, TRACE, UNITS, check_energy,
                              modbus_conf)

# The same SDM630 map (selab.modbus_rig) for pymodbus: power at 30053 -> 52
# in watts, total import energy at 30073 -> 72 in kWh.
SDM630_PYMODBUS = ["--power-reg", "52", "--power-type", "float32",
                   "--energy-reg", "72", "--energy-type", "float32",
                   "--energy-scale", "3600000", "--order", "abcd"]

pytestmark = pytest.mark.skipif(not PLUGIN_DIR,
                                reason="SE_PLUGIN_DIR not set "
                                       "(run contribs/test-all.sh)")


def start_meter(server, epoch):
    if server == "ours":
        return ModbusSim(TRACE, epoch, UNITS, SDM630_SIM, tcp=METER).start()
    python = os.environ.get("SE_PYMODBUS_PYTHON")
    if not python:
        pytest.skip("SE_PYMODBUS_PYTHON not set (contribs/test-all.sh sets "
                    "up a venv with pymodbus)")
    return PymodbusMeter(TRACE, epoch, UNITS, METER[0], METER[1],
                         SDM630_PYMODBUS, python=python).start()


def plugin_log_line(cluster, node):
    return [l for l in slurmd_log(cluster, node).splitlines()
            if "acct_gather_energy/modbus: slurm-energy-plugins" in l
            and "started on node" in l]


@pytest.fixture(scope="module", params=[("ours", "counter"),
                                        ("ours", "power"),
                                        ("pymodbus", "counter"),
                                        ("pymodbus", "power")],
                ids=lambda p: "%s-%s" % p)
def modbus_cluster(request, module_cluster, tmp_path_factory):
    server, path = request.param
    workdir = str(tmp_path_factory.mktemp("modbus-%s-%s" % (server, path)))
    epoch = time.time()
    c = module_cluster
    c.restart(plugin_dirs=[PLUGIN_DIR],
              energy_type="acct_gather_energy/modbus",
              acct_gather_conf=modbus_conf(workdir, path),
              slurm_conf="DebugFlags=Energy\n")
    meter = start_meter(server, epoch)
    try:
        energy.wait_for_power(c, ("node1", "node2", "node3"))
        yield c, epoch, meter, server, path
    finally:
        meter.stop()


@pytest.fixture(scope="module")
def node_jobs(modbus_cluster):
    """One job per node, all at once, each alone on its node: node1 on its
    own meter, node2 and node3 each billed half the chassis meter (the
    split is static, Share=equal: the other half's job changes nothing).
    {name: (job id, windows)}; the two tests below share the round (30 s
    of CI instead of 60 s)."""
    c = modbus_cluster[0]
    procs = {name: energy.run_timed(c, name, ["-w", node], JOB_SECONDS)
             for name, node in (("own-meter", "node1"),
                                ("chassis-half", "node2"),
                                ("split", "node3"))}
    return {name: energy.finish(c, proc, name, FINISH_S)
            for name, proc in procs.items()}


def test_our_plugin_is_loaded(modbus_cluster):
    """Slurm silently falls back to stock plugins: prove ours runs, with
    the path this configuration asked for."""
    c, _, _, _, path = modbus_cluster
    for node in ("node1", "node2", "node3"):
        lines = plugin_log_line(c, node)
        assert lines, "no start line of our plugin in slurmd-%s.log" % node
        assert ("(counter path)" in lines[-1]) == (path == "counter"), lines


def test_libmodbus_only_in_slurmd(modbus_cluster):
    """slurmd's sampler opens libmodbus; a step's slurmstepd loads our
    plugin but only asks slurmd, so it never maps the library
    (src/common/se_dynlib.h)."""
    c = modbus_cluster[0]
    daemon = c.mapped_libraries(c.pids()["slurmd-node1"])
    step = c.step_libraries("node1")
    assert any(f.startswith("libmodbus.so") for f in daemon), sorted(daemon)
    assert "acct_gather_energy_modbus.so" in step, sorted(step)
    assert not [f for f in step if f.startswith("libmodbus")], sorted(step)


def test_single_node_jobs_within_1pct(modbus_cluster, node_jobs):
    """node1 alone, and node2 alone (billed half the chassis meter), at once."""
    c, epoch, _, _, _ = modbus_cluster
    for name in ("own-meter", "chassis-half"):
        jobid, windows = node_jobs[name]
        check_energy(c, epoch, jobid, windows)


def test_chassis_split_is_half_of_the_meter(modbus_cluster, node_jobs):
    """The split is the point: billing node3 the whole chassis would be 2x."""
    c, epoch, _, _, _ = modbus_cluster
    jobid, windows = node_jobs["split"]
    recorded = energy.consumed_energy(c, jobid)["%d.0" % jobid]
    (t0, t1), = windows.values()
    whole = energy.trace_joules(TRACE, "chassis", epoch, t0, t1)
    assert recorded == pytest.approx(whole / 2, rel=TOLERANCE)


def test_three_node_job_within_1pct(modbus_cluster):
    c, epoch, _, _, _ = modbus_cluster
    proc = energy.run_timed(c, "three-nodes", ["-N3"], JOB_SECONDS)
    jobid, windows = energy.finish(c, proc, "three-nodes", FINISH_S)
    assert sorted(windows) == ["node1", "node2", "node3"]
    check_energy(c, epoch, jobid, windows)
