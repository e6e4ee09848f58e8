"""Issue #31 on the cluster: GPU nodes, the node meter and the GPUs' own
counters together.

Every node reads its unit of a load-following meter
(contribs/modbus-sim/load_meter.py, SDM630, counter path) whose power is
IDLE_W + W_PER_CPU x the CPU use of the node's cgroup tree + PSU x the
power its two fake GPUs play (the fake NVML, tests/gpu, plays a trace
column per GPU; load_meter.py --gpu-* plays the same columns and follows
the same "col" switches).  The energy plugin (modbus, share mode) also
reads the GPUs through NVML (EnergyGPU=nvml, EnergyGPUFactor=PSU): each
GPU's energy goes to the step that holds it, the rest of the node is split
by CPU time as before.

The truth of a job: the meter's CPU share (W_PER_CPU x its CPU time + the
idle power split by allocated cores, as test_shared_nodes) + PSU x the
joules its GPU played while the job's cgroup existed (selab.gpu_rig
played_j across the switch the test made when the job had its GPU).

Proofs (issue #31, "Proven when", first bullet): two jobs on node1, one
GPU each: A runs one core at 10 % and gets the heavy GPU column, B runs one
core at 100 % with its GPU idle; each job's sacct energy within SHARE_TOL
of its truth, and A + B + what slurmd left unattributed within SUM_TOL of
the meter.  The CPU split alone (what the node meter gave before #31)
would charge A about a tenth of the GPUs' energy it caused.
"""
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from selab import energy
from selab.cluster import PLUGIN_DIR, poll
from selab.gpu_rig import FAKE_NVML_DIR, GPU_DIR, col_switch, played_j
from selab.meters import LoadMeter

NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
METER = (NET + ".1", 15041)
UNITS = {1: "node1", 2: "node2", 3: "node3"}
IDLE_W = 40.0           # the meter's idle power without the GPUs
W_PER_CPU = 200.0
PSU = 1.08              # the meter's view of one NVML joule, in both
JOB_S = 30
SHARE_TOL = 0.05        # the bound
SUM_TOL = 0.01          # the bound

# Two columns, repeating every 20 s: a GPU at rest and one at work (ramps,
# so that energy is not power x time).
TRACE = """\
@repeat 20
time idle heavy
0    38   250
10   44   300
20   38   250
"""

LOAD = r'''
import socket, sys, time
duty, seconds = float(sys.argv[1]), float(sys.argv[2])
c0, t0, slot = time.process_time(), time.monotonic(), 0.1
for i in range(int(round(seconds / slot))):
    start = t0 + slot * i
    while time.monotonic() < start + duty * slot:
        pass
    d = start + slot - time.monotonic()
    if d > 0:
        time.sleep(d)
'''

pytestmark = [
    pytest.mark.skipif(not PLUGIN_DIR, reason="SE_PLUGIN_DIR not set "
                       "(run contribs/test-all.sh)"),
    pytest.mark.skipif(not os.environ.get("SE_PYMODBUS_PYTHON"),
                       reason="SE_PYMODBUS_PYTHON not set (the load meter "
                       "runs on pymodbus; contribs/test-all.sh makes the venv)"),
]


def _nvml_state(workdir):
    """The fake NVML's state: the cluster's 2-GPU template with both GPUs
    playing "idle", this module's trace, epoch now."""
    trace = os.path.join(workdir, "gpu.trace")
    with open(trace, "w") as f:
        f.write(TRACE)
    epoch = float(int(time.time()))
    with open(os.path.join(GPU_DIR, "nvml-cluster-2gpu.state")) as f:
        body = re.sub(r"col=\S+", "col=idle", f.read())
    state = os.path.join(workdir, "nvml.state")
    with open(state, "w") as f:
        f.write(body + "epoch %.3f\ntrace %s\nlog %s\n"
                % (epoch, trace, os.path.join(workdir, "nvml.log")))
    return state, trace, epoch


def _acct_conf(workdir):
    map_file = os.path.join(workdir, "modbus.map")
    with open(map_file, "w") as f:
        f.write("".join("Nodes=%s Unit=%d\n" % (n, u)
                        for u, n in sorted(UNITS.items())))
    return ("EnergyModbusDevice=tcp://%s:%d\nEnergyModbusModel=sdm630\n"
            "EnergyModbusMap=%s\nEnergyModbusFrequency=1\n"
            "EnergyModbusTimeout=500\n"
            "EnergyAttribution=share\nEnergyIdle=share\n"
            "EnergyIdleWatts=%g\nEnergyGPU=nvml\nEnergyGPUFactor=%g\n"
            % (METER[0], METER[1], map_file, IDLE_W, PSU))


def _totals(c, node, since):
    path = os.path.join(c.state, "nodes", node, "spool",
                        "slurm-energy-%s.attribution" % node)

    def fresh():
        try:
            with open(path) as f:
                kv = dict(w.split("=", 1) for w in f.read().split())
        except (OSError, ValueError):
            return None
        return kv if float(kv["time"]) > since else None
    return poll(fresh, timeout=30, what="a fresh %s" % path)


class GpuJob:
    """A batch job on node1 with one GPU running one srun step of LOAD."""

    def __init__(self, c, workdir, name, duty):
        self.c, self.name, self.duty = c, name, duty
        self.out = os.path.join(workdir, "job-%s.out" % name)
        script = ("#!/bin/sh\necho SE_GPU $SLURM_JOB_GPUS\n"
                  "srun -n1 --gres=gpu:1 python3 %s %g %d\n"
                  % (os.path.join(workdir, "load.py"), duty, JOB_S))
        self.id = c.sbatch("-w", "node1", "-N1", "-n1", "--gres=gpu:1",
                           "-o", self.out, script=script)
        self.gpu = self.switch = self.rows = self.truth = None

    def learn_gpu(self):
        """The job's GPU (gres index = nvidiaN = NVML index in this
        cluster), once its script printed it."""
        def printed():
            try:
                with open(self.out) as f:
                    return re.search(r"^SE_GPU (\d+)$", f.read(), re.M)
            except OSError:
                return None
        self.gpu = int(poll(printed, timeout=30,
                            what="job %s's GPU" % self.id).group(1))
        return self.gpu

    def wait(self):
        self.rows = self.c.wait_sacct(
            self.id, steps=("batch", "0"),
            fields=("JobID", "State", "ConsumedEnergyRaw"),
            timeout=JOB_S * 4)
        return self

    def energy(self):
        for r in self.rows:
            if r["JobID"] == str(self.id):
                return float(r["ConsumedEnergyRaw"] or 0)
        raise AssertionError("no sacct row %s in %s" % (self.id, self.rows))


@pytest.fixture(scope="module")
def workdir():
    d = tempfile.mkdtemp(prefix="se-gpu-share-")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="module")
def run(cluster, workdir):
    state, trace, epoch = _nvml_state(workdir)
    control = state + ".control"
    with open(os.path.join(workdir, "load.py"), "w") as f:
        f.write(LOAD)
    node_env = {
        "LD_LIBRARY_PATH": FAKE_NVML_DIR,
        "FAKE_NVML_STATE": state,
        "SLURM_ENERGY_NVML_DEVICE_PATH":
            os.path.join(cluster.state, "nodes", "%h", "dev", "nvidia%u"),
    }
    conf = dict(plugin_dirs=[PLUGIN_DIR],
                energy_type="acct_gather_energy/modbus",
                acct_gather_conf=_acct_conf(workdir), node_env=node_env,
                slurm_conf="PrologFlags=Contain\nDebugFlags=Energy\n")
    with cluster.configured(**conf):
        meter = LoadMeter(cluster.state, UNITS, METER[0], METER[1], IDLE_W,
                          W_PER_CPU, workdir=os.path.join(workdir, "meter"),
                          gpu_trace=trace, gpu_epoch=epoch,
                          gpu_cols={u: ["idle", "idle"] for u in UNITS},
                          psu_factor=PSU, gpu_control=control)
        os.makedirs(meter.workdir, exist_ok=True)
        meter.start()
        try:
            since = time.time()
            before = _totals(cluster, "node1", since)
            a = GpuJob(cluster, workdir, "a", 0.1)
            b = GpuJob(cluster, workdir, "b", 1.0)
            a.learn_gpu(), b.learn_gpu()
            assert a.gpu != b.gpu, (a.gpu, b.gpu)
            a.switch = col_switch(control, "node1", a.gpu, "heavy")
            for j in (a, b):
                j.wait()
            after = _totals(cluster, "node1", time.time())

            def settled(j):
                t = meter.truth()
                rec = t["nodes"]["node1"]["jobs"].get(str(j.id))
                return rec if rec and t["t"] > rec["last"] + 1.0 else None
            for j in (a, b):
                j.truth = poll(lambda: settled(j), timeout=30,
                               what="the meter's truth of job %s" % j.id)
            yield dict(c=cluster, meter=meter, a=a, b=b, before=before,
                       after=after, trace=trace, epoch=epoch)
        finally:
            meter.stop()


def _gpu_truth_j(run, job):
    switches = [(job.switch, "heavy")] if job.switch else []
    # the truth's instants count from the meter's epoch
    at = run["meter"].truth()["epoch"]
    return PSU * played_j(run["trace"], run["epoch"], "idle", switches,
                          at + job.truth["first"], at + job.truth["last"])


def _true_j(run, job):
    return job.truth["cpu_j"] + job.truth["idle_node_j"] + \
        _gpu_truth_j(run, job)


def test_each_job_charged_its_gpu_and_its_share(run):
    for key in ("a", "b"):
        j = run[key]
        got, want = j.energy(), _true_j(run, j)
        print("job %s (%s, GPU %d): sacct %.0f J, truth %.0f J "
              "(its GPU %.0f J) %+.2f %% (bound %.0f %%)"
              % (j.id, key, j.gpu, got, want, _gpu_truth_j(run, j),
                 100 * (got - want) / want, 100 * SHARE_TOL))
        assert abs(got - want) <= SHARE_TOL * want, (key, got, want)


def test_charged_plus_unattributed_is_the_meter(run):
    a, b = run["a"], run["b"]
    before, after = run["before"], run["after"]
    unattributed = (float(after["unattributed_mj"]) -
                    float(before["unattributed_mj"])) / 1000
    measured = (float(after["measured_mj"]) -
                float(before["measured_mj"])) / 1000
    charged = (float(after["charged_mj"]) -
               float(before["charged_mj"])) / 1000
    # slurmd's own identity, to the mJ
    assert int(after["charged_mj"]) + int(after["unattributed_mj"]) == \
        int(after["measured_mj"])
    # the jobs' lines and what slurmd left unattributed against the meter
    # over the same stretch of totals
    meter_j = energy.trace_joules(run["meter"].trace, "node1",
                                  run["meter"].truth()["epoch"],
                                  float(before["time"]), float(after["time"]))
    jobs = a.energy() + b.energy()
    print("node1 over the run: meter %.0f J, slurmd measured %.0f J, "
          "charged %.0f J (jobs' lines %.0f J) + unattributed %.0f J; "
          "GPU part charged %.0f J of %.0f J read"
          % (meter_j, measured, charged, jobs, unattributed,
             (float(after.get("gpu_charged_mj", 0)) -
              float(before.get("gpu_charged_mj", 0))) / 1000,
             (float(after.get("gpu_raw_mj", 0)) -
              float(before.get("gpu_raw_mj", 0))) / 1000))
    assert abs(jobs + unattributed - meter_j) <= SUM_TOL * meter_j, \
        (jobs, unattributed, meter_j)
