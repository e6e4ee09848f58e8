"""RRD energy on the test cluster: acct_gather_energy/rrd and ext_sensors/meters.

contribs/rrd-feeder plays contribs/trace/examples/cluster.trace into one RRD
file per node (node1..node3, 10 s step, DS "joules" = DERIVE of the energy
counter, as a PDU poller writes it), and a test-local trace into files for a
switch (sw1, power), a cold door (door1) and the nodes' temperatures.  The
truth of a job is the trace's exact integral over each task's own start and
end (selab.energy), as in test_modbus_energy.py.

    acct_gather_energy/rrd   slurmd reads its node's file (acct_gather.conf)
    ext_sensors/meters       slurmctld reads every file (ext_sensors.conf);
                             AcctGatherEnergyType=acct_gather_energy/none, so
                             the step energy sacct shows is the plugin's

Slurm 22.05 calls ext_sensors only when no node ping / acct-gather cycle
is in flight (is_ping_done(), src/slurmctld/controller.c); the cluster's
AcctGatherNodeFreq=1 starts such a cycle right before that check every
second.  ext_sensors/meters reads and publishes on its own clock whatever
slurmctld does (test_ext_sensors_starved.py runs it with
AcctGatherNodeFreq=1); here AcctGatherNodeFreq=0, so that slurmctld's own
update calls come and are exercised too.

The issue's bound is 1 % for jobs of 60 s and more at a 10 s RRD step.
acct_gather_energy/rrd meets it with its settle (in the plugin's fini(),
EnergySettle=yes, no plugstack.conf): each step's slurmstepd waits for the
rows around the step's end and computes the step's energy over its own
window (asserted).  The nodes are GPU nodes (the fake NVML, EnergyGPU=nvml,
node mode): a step's energy stays the rows', and its profile shows its GPU
part (issue #31).  ext_sensors has no such point: slurmctld records the
step as its completion arrives, before those rows exist; its test holds each job to the error bound that
ext_sensors_meters(5) documents, computed from the trace around the job's
start and end.
"""
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time

import pytest

from selab import energy
from selab.cluster import PLUGIN_DIR, poll
from selab.gpu_rig import GPU_DIR, TRACE as GPU_TRACE
from selab.gpu_rig import (nvml_env, played_j, profile_gpu_power,
                           profile_joules)
from selab.meters import kill_unfinished, tool
from selab.trace import Trace

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")
FEEDER = os.path.join(REPO, "contribs", "rrd-feeder", "rrd-feeder")
NODES = ("node1", "node2", "node3")
STEP = 10                       # RRD step and read period, seconds
# The "60 s and more"; not 60 itself, a multiple of the trace's
# periods, where the end errors of a window model cancel.
JOB_SECONDS = 65
FINISH_S = JOB_SECONDS + 120           # an srun's wait (energy.finish)
TOLERANCE = 0.01                # the 1 %
# A gross bound that still catches zero, missing or double-counted energy
# (-100 %, +100 %).  Not the documented one: with node1's 150 W swing an end
# held at a stale row's power for up to 25 s can be off by ~20 % of a 60 s
# job (measured: -18 % to +13 %; see the man pages' error bounds).
GROSS = 0.50

# Switch power, cold-door and node temperatures: values the cluster trace
# lacks.  The feeder names its gauge DS "watts" whatever it holds, so the
# temperatures are read through TempRRA=watts.
AUX_TRACE = """\
# test_rrd_energy.py: switch sw1 (W), cold door door1 and node temps (C)
@repeat 60
time\tsw1\tdoor1\ttnode
0\t150\t18\t40
30\t170\t20\t45
60\t150\t18\t40
"""
AUX_RANGE = {"sw1": (150, 170), "door1": (18, 20), "tnode": (40, 45)}

pytestmark = pytest.mark.skipif(not PLUGIN_DIR,
                                reason="SE_PLUGIN_DIR not set "
                                       "(run contribs/test-all.sh)")


# ------------------------------------------------------------- helpers
def trace_range(path, column):
    """(min, max) watts of a trace column (rows are the truth, linear
    between them, so the extremes are rows)."""
    values, names = [], None
    with open(path) as handle:
        for line in handle:
            if not line.strip() or line.startswith(("#", "@")):
                continue
            fields = line.split()
            if names is None:
                names = fields
                continue
            values.append(float(fields[names.index(column)]))
    return min(values), max(values)


class Feeder:
    """rrd-feeder start/stop (the wrapper stops se-rrd-feed by pid file)."""

    def __init__(self, rundir, trace, path, series, epoch, backfill=120):
        self.rundir = rundir
        self.args = ["--path", path, "--step", str(STEP), "--epoch",
                     str(epoch), "--backfill", str(backfill), trace,
                     *series]

    def start(self):
        env = dict(os.environ, SE_RRD_FEED=tool("se-rrd-feed"))
        subprocess.run([FEEDER, "start", self.rundir, "--", *self.args],
                       env=env, check=True, timeout=60)
        return self

    def stop(self):
        subprocess.run([FEEDER, "stop", self.rundir], check=True,
                       timeout=60)


@pytest.fixture(scope="module")
def feed():
    """Files for node1..3 (cluster trace), sw1, door1 and node temps."""
    work = tempfile.mkdtemp(prefix="se-rrd-test-", dir="/var/tmp")
    rrd = os.path.join(work, "rrd")
    aux = os.path.join(work, "aux")
    os.makedirs(rrd)
    os.makedirs(aux)
    aux_trace = os.path.join(work, "aux.trace")
    with open(aux_trace, "w") as handle:
        handle.write(AUX_TRACE)
    epoch = int(time.time())
    feeders = [
        Feeder(os.path.join(work, "feed-nodes"), TRACE,
               os.path.join(rrd, "%n.rrd"), list(NODES), epoch),
        Feeder(os.path.join(work, "feed-aux"), aux_trace,
               os.path.join(aux, "%n.rrd"),
               ["sw1", "door1", "node[1-3]=tnode"], epoch),
    ]
    started = []
    try:
        for feeder in feeders:
            started.append(feeder.start())
        # switch energy is read through EnergyPathRRD, like the nodes'
        os.symlink(os.path.join(aux, "sw1.rrd"), os.path.join(rrd, "sw1.rrd"))
        yield {"work": work, "rrd": rrd, "aux": aux, "epoch": epoch}
    finally:
        for feeder in started:
            feeder.stop()
    shutil.rmtree(work, ignore_errors=True)


def log_text(cluster, name):
    with open(os.path.join(cluster.state, "log", name + ".log")) as handle:
        return handle.read()


def daemons_alive(cluster):
    """The controller's and every node's daemon is still the one started."""
    pids = cluster.pids()
    for name in ("slurmctld",) + tuple("slurmd-" + n for n in NODES):
        os.kill(pids[name], 0)          # ProcessLookupError if it died
    return True


def job_errors(cluster, epoch, results):
    """{node: (sacct J, true J, relative error)} of srun-only jobs; the
    job row must carry its step's energy."""
    out = {}
    for node, (jobid, windows) in results.items():
        recorded = energy.consumed_energy(cluster, jobid)
        step, job = recorded["%d.0" % jobid], recorded[str(jobid)]
        assert step is not None and job == step, recorded
        truth = energy.true_energy(TRACE, epoch, windows)
        out[node] = (step, truth, energy.relative_error(step, truth))
    return out


def describe(errors):
    return ", ".join("%s: sacct %d J, true %.0f J (%+.2f%%)"
                     % (n, s, t, 100 * e)
                     for n, (s, t, e) in sorted(errors.items()))


def parallel_start(cluster, tag, seconds=JOB_SECONDS):
    """Starts one timed job per node, all at once: {node: srun Popen}."""
    return {n: energy.run_timed(cluster, "%s-%s" % (tag, n), ["-w", n],
                                seconds)
            for n in NODES}


def parallel_finish(cluster, tag, procs):
    """Waits for parallel_start's jobs: {node: (jobid, {host: (t0,
    t1)})}."""
    return {n: energy.finish(cluster, p, "%s-%s" % (tag, n), FINISH_S)
            for n, p in procs.items()}


# ------------------------------------------------ acct_gather_energy/rrd
SETTLE_MAX_S = 40       # > the two RRD steps the end needs, + slack
GPU_FACTOR = 1.05       # EnergyGPUFactor: the PDU's view of an NVML joule
# Samples whole seconds apart; measured -0.05 % and +0.24 % (the rows'
# stamps on the samples read -22 % and -41 %)
PROFILE_TOL = 0.02


def gpu_nodes(cluster, work):
    """The nodes are GPU nodes whose PDU outlets a monitoring system
    writes into RRD files: the fake NVML (tests/gpu) under every slurmd,
    each node's GPU i playing column gpu<i> of selab.gpu_rig's trace."""
    trace = os.path.join(work, "gpu.trace")
    with open(trace, "w") as handle:
        handle.write(GPU_TRACE)
    epoch = float(int(time.time()))
    state = os.path.join(work, "nvml.state")
    with open(os.path.join(GPU_DIR, "nvml-cluster-2gpu.state")) as handle:
        body = handle.read()
    with open(state, "w") as handle:
        handle.write(body + "epoch %.3f\ntrace %s\n" % (epoch, trace))
    hdf5 = os.path.join(work, "hdf5")
    os.chmod(work, 0o755)       # the steps write their profile below
    os.makedirs(hdf5)
    os.chmod(hdf5, 0o1777)
    return dict(trace=trace, epoch=epoch, hdf5=hdf5,
                env=nvml_env(cluster, state))


@pytest.fixture(scope="module")
def rrd_cluster(module_cluster, feed):
    cluster = module_cluster
    gpus = gpu_nodes(cluster, feed["work"])
    conf = ("EnergyRRDFile=%s\nEnergyRRDDataSource=joules\n"
            "EnergyRRDFrequency=%d\n"
            % (os.path.join(feed["rrd"], "%n.rrd"), STEP))
    # the plugin settles each step itself (EnergySettle=yes, the default):
    # no plugstack.conf
    conf += "EnergySettleMaxWait=%d\n" % SETTLE_MAX_S
    # node mode: a step's energy is the node's (the RRD rows); its GPUs'
    # part is what its profile shows as GPUPower
    conf += ("EnergyGPU=nvml\nEnergyGPUFactor=%g\nProfileHDF5Dir=%s\n"
             "ProfileHDF5Default=None\n" % (GPU_FACTOR, gpus["hdf5"]))
    c = cluster
    c.restart(plugin_dirs=[PLUGIN_DIR], energy_type="acct_gather_energy/rrd",
              acct_gather_conf=conf, node_env=gpus["env"],
              slurm_conf="DebugFlags=Energy\n"
              "AcctGatherProfileType=acct_gather_profile/hdf5\n")
    c.gpu = gpus
    poll(lambda: all(energy.node_power(c, n) for n in NODES),
         timeout=60, what="CurrentWatts on every node")
    return c


# node1's job in the round is a 1-GPU job whose energy is profiled every
# second: test_rrd_gpu_part_in_the_profile reads its GPU part from it (a
# job of its own cost the release lists a minute; node mode: the step's
# energy is the node's rows all the same)
GPU_NODE = "node1"
GPU_JOB_ARGS = ["--gres=gpu:1", "--profile=energy", "--acctg-freq=energy=1"]


@pytest.fixture(scope="module")
def rrd_runs(rrd_cluster):
    """65 s jobs on node1, node2, node3 at once: {node: (jobid, windows,
    srun's output)}."""
    c = rrd_cluster
    procs = {}
    for node in NODES:
        work = "sleep"
        args = ["-w", node]
        if node == GPU_NODE:
            work = "echo SE_GPU $SLURM_STEP_GPUS; sleep %d" % JOB_SECONDS
            args += GPU_JOB_ARGS
        procs[node] = c.popen(["srun", "-J", "rrd-" + node, *args,
                               *energy.timed_command(JOB_SECONDS, work)])
    runs = {}
    for node, proc in procs.items():
        out, err = proc.communicate(timeout=FINISH_S)
        assert proc.returncode == 0, "srun on %s: %s" % (node, err)
        jobid = int(c.run(["sacct", "-n", "-X", "-P", "-o", "JobID",
                           "--name", "rrd-" + node]).stdout.split()[-1])
        runs[node] = (jobid, energy.windows(out), out)
    return runs


@pytest.fixture(scope="module")
def rrd_jobs(rrd_cluster, feed, rrd_runs):
    """The round's energy (shared by three tests)."""
    return job_errors(rrd_cluster, feed["epoch"],
                      {n: r[:2] for n, r in rrd_runs.items()})


def test_rrd_plugin_is_ours(rrd_cluster, feed):
    for node in NODES:
        text = log_text(rrd_cluster, "slurmd-" + node)
        line = re.search(r"acct_gather_energy/rrd: slurm-energy-plugins .* "
                         r"started on node %s: meter rrd (\S+)" % node, text)
        assert line, "no start line of our plugin in slurmd-%s.log" % node
        assert line.group(1) == os.path.join(feed["rrd"], node + ".rrd")


def test_rrd_node_values(rrd_cluster):
    for node in NODES:
        low, high = trace_range(TRACE, node)
        current, average = energy.node_power(rrd_cluster, node)
        assert low - 1 <= current <= high + 1, (node, current, low, high)
        assert low - 1 <= average <= high + 1, (node, average, low, high)


def test_rrd_jobs_accounted(rrd_jobs):
    """Every job has its energy, near the truth (a gross bound)."""
    for node, (_, _, err) in rrd_jobs.items():
        assert abs(err) < GROSS, describe(rrd_jobs)


def test_rrd_60s_jobs_within_1pct(rrd_jobs):
    """The issue's bound: each step's energy is computed over its own
    window once the rows around its ends are written (the settle)."""
    assert max(abs(e) for _, _, e in rrd_jobs.values()) < TOLERANCE, \
        describe(rrd_jobs)


def test_rrd_settled_each_step(rrd_cluster, rrd_jobs):
    """Each node's slurmstepd waited for the rows and replaced its running
    figure with the window's energy (the number sacct shows)."""
    for node, (step_j, _, _) in rrd_jobs.items():
        text = log_text(rrd_cluster, "slurmd-" + node)
        settled = re.findall(r"step energy settled: (\d+) J over ([0-9.]+) "
                             r"s \(running total \d+ J\), data complete",
                             text)
        assert settled, "no settle line in slurmd-%s.log" % node
        assert int(settled[-1][0]) == step_j, (node, settled[-1], step_j)


def test_rrd_three_node_step_within_1pct(rrd_cluster, feed):
    """One step on three nodes: each node's slurmstepd settles its own
    window, the parent waits for its children, sacct sums the three."""
    proc = rrd_cluster.popen(["srun", "-J", "rrd-three", "-N3",
                              "-w", "node[1-3]",
                              *energy.timed_command(JOB_SECONDS)])
    jobid, windows = energy.finish(rrd_cluster, proc, "rrd-three", FINISH_S)
    assert sorted(windows) == list(NODES), windows
    recorded = energy.consumed_energy(rrd_cluster, jobid)
    step = recorded["%d.0" % jobid]
    truth = energy.true_energy(TRACE, feed["epoch"], windows)
    err = energy.relative_error(step, truth)
    assert abs(err) < TOLERANCE, "sacct %s J, true %.0f J (%+.2f%%)" % (
        step, truth, 100 * err)


def test_rrd_job_is_its_tasks_and_the_settle(rrd_cluster, rrd_jobs):
    """The job (its allocation ends with srun) lasts its tasks plus, at
    most, its step's settle: with the settle in the plugin (no SPANK line)
    slurmstepd waits in fini(), before srun is told the tasks ended (26.05:
    before the step's completion, which srun waits for too); the wait is
    the one the settle line reports, nothing more."""
    for node in NODES:
        out = rrd_cluster.run(["sacct", "-n", "-X", "-P", "-o",
                               "JobID,ElapsedRaw", "--name",
                               "rrd-" + node]).stdout
        jobid, elapsed = (int(x) for x in out.split()[-1].split("|"))
        waits = re.findall(r"\[%d\.0\] .*step energy settled: .*, data "
                           r"complete after ([0-9.]+) s" % jobid,
                           log_text(rrd_cluster, "slurmd-" + node))
        assert len(waits) == 1, (node, waits)
        print("%s: job %d %d s, settle %s s" % (node, jobid, elapsed,
                                               waits[0]))
        assert elapsed <= JOB_SECONDS + 5 + float(waits[0]), \
            (node, elapsed, waits)


# The side round: the tests below each need a job on one node only, so
# their jobs run at once, each alone on its node (node2: a step's
# libraries, then the batch job; node3: the truncated file), about 60 s
# of CI instead of 100 s one after the other.  After the three-node step,
# which needs every node.
@pytest.fixture(scope="module")
def side_jobs(rrd_cluster):
    """Starts the side round's jobs on node2; each test waits for its
    own.  node3's job is test_rrd_truncated_file_mid_job's."""
    c = rrd_cluster
    jobs = {
        # the task's parent is its slurmstepd (Cluster.step_libraries)
        "maps": c.popen(["srun", "-J", "rrd-maps", "-w", "node2", "-N1",
                         "-n1", *c.STEP_MAPS_COMMAND]),
    }
    script = "#!/bin/sh\nsrun %s\n" % " ".join(
        shlex.quote(a) for a in energy.timed_command(15))
    jobs["batch"] = c.sbatch("-J", "rrd-batch", "-w", "node2",
                             "-o", "/dev/null", script=script)
    yield jobs
    kill_unfinished([jobs["maps"]])


def side_output(side_jobs, name):
    """The stdout of the side round's srun *name*, which must succeed."""
    out, err = side_jobs[name].communicate(timeout=FINISH_S)
    assert side_jobs[name].returncode == 0, "srun %s: %s" % (name, err)
    return out


def test_rrd_truncated_file_mid_job(rrd_cluster, feed, side_jobs):
    """node3's file truncated 10 s into a job, restored 20 s later: no
    daemon dies, the failure is logged with the file's name, the job is
    accounted."""
    path = os.path.join(feed["rrd"], "node3.rrd")
    saved = path + ".saved"
    proc = energy.run_timed(rrd_cluster, "rrd-truncated", ["-w", "node3"], 40)
    time.sleep(10)
    shutil.copyfile(path, saved)
    with open(path, "r+b") as handle:
        handle.truncate(os.path.getsize(path) // 3)
    failed = re.compile(r"acct_gather_energy/rrd: .*%s.*failed"
                        % re.escape(path))
    poll(lambda: failed.search(log_text(rrd_cluster, "slurmd-node3")),
         timeout=3 * STEP, what="slurmd's line about node3's file")
    assert daemons_alive(rrd_cluster)
    time.sleep(max(0, 20 - STEP))
    os.rename(saved, path)                   # atomic: the feeder goes on
    jobid, _ = energy.finish(rrd_cluster, proc, "rrd-truncated", FINISH_S)
    recorded = energy.consumed_energy(rrd_cluster, jobid)
    assert recorded["%d.0" % jobid], recorded
    assert daemons_alive(rrd_cluster)


def test_librrd_not_in_a_running_step(rrd_cluster, side_jobs):
    """slurmd's sampler opens librrd; a step's slurmstepd maps it only if
    and when its settle reads the files, after the tasks: never while they
    run (librrd brings cairo, pango, X11: about 5.5 ms to map, in every step)."""
    daemon = rrd_cluster.mapped_libraries(rrd_cluster.pids()["slurmd-node2"])
    comm, step = rrd_cluster.step_maps(side_output(side_jobs, "maps"))
    assert comm == "slurmstepd", comm
    assert any(f.startswith("librrd.so") for f in daemon), sorted(daemon)
    assert "acct_gather_energy_rrd.so" in step, sorted(step)
    assert not [f for f in step if f.startswith(("librrd", "libcairo"))], \
        sorted(step)


def test_rrd_batch_step_does_not_wait(rrd_cluster, side_jobs):
    """In a batch job the srun step settles; the batch step, whose end is
    the job's end, does not wait."""
    jobid = side_jobs["batch"]
    rrd_cluster.wait_job_gone(jobid, timeout=120)
    text = log_text(rrd_cluster, "slurmd-node2")
    assert re.search(r"\[%d\.batch\] .*no settle for this step \(batch"
                     % jobid, text), "batch step of job %d" % jobid
    assert re.search(r"\[%d\.0\] .*step energy settled: \d+ J" % jobid,
                     text), "step %d.0" % jobid


def test_rrd_gpu_part_in_the_profile(rrd_cluster, rrd_runs):
    """Node mode on an RRD source with EnergyGPU=nvml: the step's energy
    is the node's rows, and its profile's GPUPower, sample by sample,
    integrates to what its GPU played over the same seconds (x the
    factor).  Its settle line says the GPUs' part of the step (the
    cluster trace's node rows do not follow the fake GPUs, so the part is
    not compared with the step's energy here; test_gpu_share.py's meter
    does follow them)."""
    c, gpu = rrd_cluster, rrd_cluster.gpu
    jobid, _, out = rrd_runs[GPU_NODE]
    index = int(re.search(r"SE_GPU (\d+)", out).group(1))
    pts = profile_gpu_power(c, jobid, gpu["hdf5"], gpu["hdf5"])
    assert len(pts) >= 15, pts
    got = profile_joules(pts)
    want = GPU_FACTOR * played_j(gpu["trace"], gpu["epoch"],
                                 "gpu%d" % index, [], pts[0][0], pts[-1][0])
    print("job %d (GPU %d): profile GPUPower %d samples, %.0f J; its GPU "
          "played x%.2f %.0f J over them (%+.2f %%, bound %.0f %%)"
          % (jobid, index, len(pts), got, GPU_FACTOR, want,
             100 * (got - want) / want, 100 * PROFILE_TOL))
    assert abs(got - want) <= PROFILE_TOL * want, (got, want, pts)
    part = re.findall(r"\[%d\.0\] .*step %d\.0: (\d+) J, of which (\d+) J "
                      r"its GPUs' \(minors (\S+)\)" % (jobid, jobid),
                      log_text(c, "slurmd-node1"))
    assert part and part[-1][2] == str(index), part
    print("settle: step %s J, of which its GPU %s J" % part[-1][:2])


# ------------------------------------------------------ ext_sensors/meters
def ext_sensors_conf(feed):
    return "\n".join([
        "JobData=energy",
        "NodeData=energy,temp",
        "SwitchData=energy",
        "ColdDoorData=temp",
        "Switches=sw1",
        "ColdDoors=door1",
        "EnergyRRA=joules",
        "TempRRA=watts",
        "EnergyPathRRD=%s" % os.path.join(feed["rrd"], "%n.rrd"),
        "TempPathRRD=%s" % os.path.join(feed["aux"], "%n.rrd"),
        "MaxWatt=2000",
        ""])


def ext_values(cluster, node):
    text = cluster.scontrol("show", "node", node).stdout
    match = re.search(r"ExtSensorsJoules=(\S+) ExtSensorsWatts=(\S+) "
                      r"ExtSensorsTemp=(\S+)", text)
    return match.groups() if match else None


@pytest.fixture(scope="module")
def es_cluster(module_cluster, feed):
    slurm_conf = ("ExtSensorsType=ext_sensors/meters\nExtSensorsFreq=%d\n"
                  "AcctGatherNodeFreq=0\nDebugFlags=ExtSensors\n" % STEP)
    c = module_cluster
    c.restart(plugin_dirs=[PLUGIN_DIR], energy_type="acct_gather_energy/none",
              slurm_conf=slurm_conf,
              extra_confs={"ext_sensors.conf": ext_sensors_conf(feed)})
    poll(lambda: all(ext_values(c, n) and ext_values(c, n)[0].isdigit()
                     for n in NODES),
         timeout=60, what="ExtSensorsJoules on every node")
    return c


@pytest.fixture(scope="module")
def es_procs(es_cluster):
    """The 65 s jobs, started as test_es_plugin_is_ours begins: its wait
    for slurmctld's first update call (~10 s) falls inside them."""
    procs = parallel_start(es_cluster, "es")
    yield procs
    kill_unfinished(procs.values())


@pytest.fixture(scope="module")
def es_runs(es_cluster, es_procs):
    return parallel_finish(es_cluster, "es", es_procs)


@pytest.fixture(scope="module")
def es_jobs(es_cluster, feed, es_runs):
    return job_errors(es_cluster, feed["epoch"], es_runs)


def test_es_plugin_is_ours(es_cluster, es_procs):
    text = log_text(es_cluster, "slurmctld")
    assert "ExtSensors meters plugin (slurm-energy-plugins) loaded" in text
    # the values come from the plugin's own pacer within seconds, before
    # slurmctld's first update call (ExtSensorsFreq after its loop starts)
    poll(lambda: re.search(r"ext_sensors/meters: update call \([0-9.]+ s "
                           r"after the previous one\): \d+ finished reads "
                           r"adopted; pacer round \d+: \d+ reads queued",
                           log_text(es_cluster, "slurmctld")),
         timeout=3 * STEP, what="slurmctld's update call line")
    shown = es_cluster.scontrol("show", "config").stdout
    assert re.search(r"ExtSensorsType\s*=\s*ext_sensors/meters", shown)


def test_es_node_values(es_cluster):
    low_t, high_t = AUX_RANGE["tnode"]
    for node in NODES:
        joules, watts, temp = ext_values(es_cluster, node)
        low, high = trace_range(TRACE, node)
        assert int(joules) > 0, (node, joules)
        assert low - 1 <= int(watts) <= high + 1, (node, watts, low, high)
        assert low_t - 1 <= int(temp) <= high_t + 1, (node, temp)


def test_es_switch_and_cold_door(es_cluster):
    """What upstream left as TODO: shown under 'External Sensors
    Configuration' of scontrol show config."""
    def shown():
        text = es_cluster.scontrol("show", "config").stdout
        sw = re.search(r"Switch:sw1\s*=\s*Joules=(\d+) Watts=(\d+)", text)
        door = re.search(r"ColdDoor:door1\s*=\s*Temp=([0-9.]+)", text)
        return (sw, door) if sw and door else None
    sw, door = poll(shown, timeout=30, what="sw1 and door1 values")
    low, high = AUX_RANGE["sw1"]
    assert int(sw.group(1)) > 0
    assert low - 1 <= int(sw.group(2)) <= high + 1, sw.group(0)
    low, high = AUX_RANGE["door1"]
    assert low - 0.5 <= float(door.group(1)) <= high + 0.5, door.group(0)


def test_es_jobs_accounted(es_jobs):
    """The in-band plugin is none: the energy sacct shows is ours."""
    for node, (_, _, err) in es_jobs.items():
        assert abs(err) < GROSS, describe(es_jobs)


def power_swing(node, epoch, t0, t1):
    """Largest minus smallest power (W) of *node*'s trace column over
    wall-clock [t0, t1], sampled every 0.1 s, and the largest (the tests'
    own reading of the trace, selab.trace, as for the truth)."""
    watts = [w for _, w in Trace(TRACE).series(node, t0 - epoch, t1 - epoch,
                                                0.1)]
    return max(watts) - min(watts), max(watts)


def es_bound_joules(node, epoch, window):
    """What ext_sensors_meters(5), ERROR BOUND, promises for one job step
    at a STEP-second RRD step and ExtSensorsFreq=STEP: the start placed at
    most half a step off (STEP/4 x the power change around it), the end
    held at the newest row's power over at most 1.5 STEP + ExtSensorsFreq
    (x the largest power change over that time, up to the completion's
    arrival, 1 s after the tasks at most), and the step's window wider than
    the tasks' run by the launch and the completion (1 s at most, at the
    highest power there)."""
    t0, t1 = window
    hold = 1.5 * STEP + STEP
    start_swing, start_max = power_swing(node, epoch, t0 - STEP, t0 + STEP)
    end_swing, end_max = power_swing(node, epoch, t1 - hold, t1 + 1)
    return (STEP / 4 * start_swing + hold * end_swing
            + 1.0 * max(start_max, end_max))


def test_es_60s_jobs_within_documented_bound(feed, es_runs, es_jobs):
    """ext_sensors cannot meet 1 % at a step's end on a varying power:
    slurmctld fixes a step's energy as its completion arrives, under the job
    write lock, and sends the record to slurmdbd at once; the rows covering
    the end are written a step or more later, so the end is extrapolated
    (ext_sensors_meters(5), ENERGY FROM AN RRD SERIES, says why nothing can
    wait there; acct_gather_energy/rrd with the settle meets 1 %, see
    test_rrd_60s_jobs_within_1pct).  What it does promise is the man page's
    error bound, computed here for each job from the trace around its start
    and end: a job off by more than that fails."""
    over = []
    for node, (recorded, truth, _) in sorted(es_jobs.items()):
        _, windows = es_runs[node]
        bound = es_bound_joules(node, feed["epoch"], windows[node])
        if abs(recorded - truth) > bound:
            over.append("%s: off by %.0f J, bound %.0f J (%.1f %%)"
                        % (node, recorded - truth, bound, 100 * bound / truth))
    assert not over, "%s; %s" % ("; ".join(over), describe(es_jobs))


def test_es_deleted_file_mid_job(es_cluster, feed):
    """node2's file deleted 10 s into a job and back 20 s later: no daemon
    dies, slurmctld logs the missing file, the job is accounted."""
    path = os.path.join(feed["rrd"], "node2.rrd")
    moved = os.path.join(feed["work"], "node2.rrd.away")
    proc = energy.run_timed(es_cluster, "es-deleted", ["-w", "node2"], 40)
    time.sleep(10)
    os.rename(path, moved)        # gone from its path, as after rm
    poll(lambda: re.search(r"ext_sensors/meters: node node2: energy "
                           r"skipped: .*%s" % re.escape(path),
                           log_text(es_cluster, "slurmctld")),
         timeout=3 * STEP, what="slurmctld's line about node2's file")
    t = time.monotonic()
    es_cluster.run(["sinfo"])
    assert time.monotonic() - t < 5, "slurmctld slow with a missing file"
    assert daemons_alive(es_cluster)
    time.sleep(10)
    os.rename(moved, path)
    jobid, _ = energy.finish(es_cluster, proc, "es-deleted", FINISH_S)
    recorded = energy.consumed_energy(es_cluster, jobid)
    assert recorded["%d.0" % jobid], recorded
    assert daemons_alive(es_cluster)
    poll(lambda: "node node2: energy readable again" in log_text(
        es_cluster, "slurmctld"), timeout=3 * STEP,
         what="slurmctld's line about node2's file being back")
