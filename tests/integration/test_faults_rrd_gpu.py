"""Faults on the cluster for acct_gather_energy/rrd and /gpu (issue #14).

RRD: contribs/rrd-feeder writes one file per node from FAULT_TRACE (5 s
step, DS "joules" = DERIVE of the energy counter, as a PDU poller writes
it, created with --no-min so that whatever the collector writes reaches the
file); its control file injects the faults as a collector would write them.
Steps settle over their own window; plugstack.conf still lists
spank_energy_settle.so, as on a site configured before the settle moved into
the plugin (issue #30): each step settles once.

GPU: the fake NVML (tests/gpu) on 2 GPUs per node, explicit gres.conf (no
AutoDetect: only the energy plugin calls NVML in slurmd), its control file
injecting faults per node and GPU.  The energy counter is the exact
integral of GPU_TRACE, so the truth of a 2-GPU job is the sum of the two
columns over its window.

Each round runs one job per node at once, a different fault on each node
(or one of the whole cluster), and asserts for every job (selab.faults):
it completes on time; no daemon died and `scontrol show node` answered in
under 1 s all through (a watchdog); its energy is not below the step's
figure measured as the fault began and is within the tolerance of the
truth plus what the man page says the estimate across the fault may miss;
the fault is marked once in the node's slurmd log.

Clock step: the nodes share the host's kernel clock, which must not be
stepped; tests/clockstep is preloaded into node3's slurmd (selab.faults.
FakeClock): the node's wall clock steps +40 s mid-job, its monotonic clock
does not, as with an NTP step.  The collector's rows keep the true time
(the RRD files are written on the host), so the node sees them 40 s older;
a GPU's counter does not follow the node's clock at all.  (Rows whose own
time stamps jump would test the collector, not the plugin.)
"""
import os
import re
import shutil
import subprocess
import tempfile
import time

import pytest

from selab import energy, faults
from selab.cluster import PLUGIN_DIR, poll
from selab.meters import tool
from selab.files import write_file

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
GPU_DIR = os.path.join(REPO, "tests", "gpu")
FEEDER = os.path.join(REPO, "contribs", "rrd-feeder", "rrd-feeder")
FAKE_NVML_DIR = os.environ.get(
    "SE_FAKE_NVML_DIR",
    os.path.normpath(os.path.join(PLUGIN_DIR, "..", "..", "..", "obj",
                                  "tests", "gpu", ".libs")))
NODES = ("node1", "node2", "node3")
SLACK_S = 15            # launch and teardown; a hung energy RPC adds 20+ s

pytestmark = pytest.mark.skipif(not PLUGIN_DIR, reason="SE_PLUGIN_DIR not "
                                "set (run contribs/test-all.sh)")

# Piecewise linear, so that a gap bridged linearly misses only what
# chord_error says (the corners), each node its own level.
FAULT_TRACE = """\
# test_faults_rrd_gpu.py: node power (W)
@repeat 120
time\tnode1\tnode2\tnode3
0\t200\t300\t150
60\t300\t250\t250
120\t200\t300\t150
"""

GPU_TRACE = """\
@repeat 80
time gpu0 gpu1
0    150  100
40   250  200
80   150  100
"""


def _jobid(cluster, name):
    return int(poll(lambda: cluster.run(
        ["squeue", "-h", "-n", name, "-o", "%i"]).stdout.strip(),
        timeout=30, what="job %s in the queue" % name))


class NodeJob:
    """One node's timed job in a round, and its fault's figures."""

    def __init__(self, cluster, node, tag, seconds, args=()):
        self.c, self.node, self.seconds = cluster, node, seconds
        self.name = "%s-%s" % (tag, node)
        self.mark = faults.LogMark(cluster, "slurmd-%s" % node)
        self.before = None
        self.started = time.monotonic()
        self.proc = cluster.popen(["srun", "-J", self.name, "-w", node,
                                   *args, *energy.timed_command(seconds)])
        self.jobid = None

    def fault_begins(self):
        """The step's own figure as the fault begins (sstat)."""
        self.before = faults.step_energy_now(self.c, self.jobid)
        assert self.before is not None, "%s: no energy before the fault" \
            % self.name

    def finish(self):
        out, err = self.proc.communicate(timeout=self.seconds + 120)
        assert self.proc.returncode == 0, "srun %s: %s" % (self.name, err)
        self.took = faults.job_on_time(self.started, self.seconds, SLACK_S)
        (self.window,) = energy.windows(out).values()
        return self

    def recorded(self):
        rec = energy.consumed_energy(self.c, self.jobid)
        step, job = rec["%d.0" % self.jobid], rec[str(self.jobid)]
        assert job == step, rec
        return step


class Round(faults.Round):
    """One job per node, a watchdog around them, faults at given times
    (time 0: every task has started, so the step figures exist)."""

    def __init__(self, cluster, tag, seconds, args=()):
        super().__init__(cluster, NODES, tag)
        self.seconds, self.args = seconds, args

    def start_jobs(self):
        jobs = {n: NodeJob(self.c, n, self.tag, self.seconds, self.args)
                for n in NODES}
        for job in jobs.values():
            job.jobid = _jobid(self.c, job.name)
        poll(lambda: all(faults.step_energy_now(self.c, j.jobid) is not None
                         for j in jobs.values()), timeout=30,
             what="energy of every step")
        return jobs


def _marked(job, start, end=None, at_most=1):
    """The fault's first line (and its end's) once, not once per read."""
    faults.assert_marked(job.mark, start, at_most, "%s fault" % job.name)
    if end:
        faults.assert_marked(job.mark, end, at_most, "%s fault end"
                             % job.name)


# ================================================================= RRD
STEP = 5
RRD_JOB_S = 30
RRD_TOLERANCE = 0.01            # settled windows (test_rrd_energy: < 1 %)
RRD_MAX_W = 2000                # EnergyRRDMaxWatt: rows above are dropped
SETTLE_MAX_S = 20
WRAP_AT = 22                    # trace time of node3's 32-bit counter wrap


def _trace_span(trace, node, epoch, t0, t1):
    """(min, max) W of a node's trace column over wall-clock [t0, t1]."""
    out = subprocess.run([tool("se-trace"), "series", trace, node,
                          "%.3f" % (t0 - epoch), "%.3f" % (t1 - epoch),
                          "0.5"], capture_output=True, text=True,
                         check=True).stdout
    watts = [float(l.split()[1]) for l in out.splitlines()]
    return min(watts), max(watts)


@pytest.fixture(scope="module")
def rrd(module_cluster):
    """Each node's source is unusable as its slurmd starts: node1's file
    is missing, node2's is not an RRD, node3's path is a directory; the
    collector starts afterwards (a file appears, two are replaced)."""
    work = tempfile.mkdtemp(prefix="se-faults-rrd-", dir="/var/tmp")
    rrd_dir = os.path.join(work, "rrd")
    os.makedirs(os.path.join(rrd_dir, "node3.rrd"))
    write_file(os.path.join(rrd_dir, "node2.rrd"), "not an RRD file\n",
               atomic=True)
    trace = write_file(os.path.join(work, "fault.trace"), FAULT_TRACE,
                       atomic=True)
    control = os.path.join(work, "feed.control")
    plugstack = write_file(os.path.join(work, "plugstack.conf"),
                           "required %s/spank_energy_settle.so max_wait=%d\n"
                           % (PLUGIN_DIR, SETTLE_MAX_S), atomic=True)
    conf = ("EnergyRRDFile=%s\nEnergyRRDDataSource=joules\n"
            "EnergyRRDFrequency=%d\nEnergyRRDMaxWatt=%d\n"
            % (os.path.join(rrd_dir, "%n.rrd"), STEP, RRD_MAX_W))
    feed_run = os.path.join(work, "feed")
    fed = False
    c = module_cluster
    c.restart(plugin_dirs=[PLUGIN_DIR], energy_type="acct_gather_energy/rrd",
              acct_gather_conf=conf,
              slurm_conf="DebugFlags=Energy\nPlugStackConfig=%s\n" % plugstack)
    try:
        # marks at the logs' start (`up` made them), node3's at its
        # restart with the clock library
        marks = {n: faults.LogMark(c, "slurmd-%s" % n) for n in NODES}
        for node in ("node1", "node2"):
            marks[node].offset = 0
        clock = faults.FakeClock(c, "node3", work)
        clock.install()
        faults.restart(c, "slurmd-node3")
        # the sources are unusable; slurmd must still answer.  The
        # fault is marked (error) at its second failed read in a row,
        # one EnergyRRDFrequency after the first: wait for it, or a
        # single failed read would be all the collector leaves
        for node in NODES:
            poll(lambda: marks[node].lines(r"\] error: .*read failed"),
                 timeout=60, what="slurmd-%s's fault marked" % node)
        for node in NODES:
            assert faults.show_node_s(c, node) < \
                faults.SHOW_NODE_BOUND_S
        assert not faults.dead_daemons(c)
        start_marks = {n: faults.LogMark(c, "slurmd-%s" % n)
                       for n in NODES}
        # the collector comes: node3's counter will wrap mid-job
        os.rmdir(os.path.join(rrd_dir, "node3.rrd"))
        os.unlink(os.path.join(rrd_dir, "node2.rrd"))
        epoch = int(time.time())
        write_file(control, "node3 wrap 32 %d\n" % WRAP_AT, atomic=True)
        env = dict(os.environ, SE_RRD_FEED=tool("se-rrd-feed"))
        subprocess.run([FEEDER, "start", feed_run, "--",
                        "--path", os.path.join(rrd_dir, "%n.rrd"),
                        "--step", str(STEP), "--epoch", str(epoch),
                        "--backfill", "60", "--no-min", "--control",
                        control, trace, *NODES],
                       env=env, check=True, timeout=60)
        fed = True
        poll(lambda: all(energy.node_power(c, n) for n in NODES),
             timeout=60, what="CurrentWatts on every node")
        yield dict(c=c, work=work, rrd=rrd_dir, trace=trace,
                   control=control, epoch=epoch, clock=clock,
                   marks=marks, start_marks=start_marks)
    finally:
        if fed:
            subprocess.run([FEEDER, "stop", feed_run], timeout=60)
    shutil.rmtree(work, ignore_errors=True)


def _rrd_check(r, job, gap=None, held=None, extra_j=0.0):
    """Energy of a settled RRD step against the trace's truth.
    gap: wall-clock (t0, t1) bridged linearly between valid rows (the
    chord of the trace over it may be missed); held: seconds held at the
    nearest valid row (its span of the trace may be missed)."""
    t0, t1 = job.window
    truth = energy.trace_joules(r["trace"], job.node, r["epoch"], t0, t1)
    if gap:
        a, b = max(gap[0], t0 - STEP), min(gap[1], t1 + STEP)
        extra_j += energy.chord_error(r["trace"], job.node, r["epoch"],
                                      a, b) if b > a else 0.0
    if held:
        low, high = _trace_span(r["trace"], job.node, r["epoch"], t0, t1)
        extra_j += held * (high - low)
    line = faults.check_bounds(job.name, job.recorded(), truth, job.before,
                               RRD_TOLERANCE, extra_j)
    print("%s (took %.1f s; before the fault %s J)" % (line, job.took,
                                                        job.before))


def _settled(job):
    """The step's settle line in its node's log (its complete flag)."""
    lines = job.mark.lines(r"\[%d\.0\].*step energy settled" % job.jobid)
    # plugstack.conf lists spank_energy_settle.so: still once (issue #30)
    assert len(lines) == 1, "%s: settle lines %s" % (job.name, lines)
    return lines[-1]


def test_rrd_unreachable_at_start_and_wrap(rrd):
    """Sources unusable as slurmd started: each slurmd ran, answered and
    said so once; once the collector wrote the files, jobs are accounted.
    node3's PDU counter wraps at 2^32 mid-job (a row of a huge negative
    power in the file: dropped, bridged)."""
    c = rrd["c"]
    for node in NODES:
        # a fault is marked at error at its second failed read in a row
        # (one failed read alone loses nothing: the sampler's policy)
        _marked(type("J", (), {"mark": rrd["marks"][node],
                               "name": "start-" + node}),
                r"\] error: .*read failed: .*\(2 in a row\)")
        faults.assert_marked(rrd["start_marks"][node],
                             r"reading again after", 1,
                             "%s: readings resume" % node)
    with Round(c, "rrd-start", RRD_JOB_S) as rnd:
        rnd.at(1)
        rnd["node3"].fault_begins()
    wrap = rrd["epoch"] + WRAP_AT
    for node in NODES:
        job = rnd[node]
        _rrd_check(rrd, job, gap=(wrap - 2 * STEP, wrap + STEP)
                   if node == "node3" else None)
        assert "data complete" in _settled(job), _settled(job)
    t0, t1 = rnd["node3"].window
    assert t0 < wrap < t1, "the wrap was not inside node3's job"
    _marked(rnd["node3"], r"row.*dropped")


def test_rrd_bad_rows(rrd):
    """NaN rows (node1), an absurd and a negative reading (node2), the
    PDU's counter reset to 0 (node3): dropped, bridged, marked once."""
    c = rrd["c"]
    with Round(c, "rrd-rows", RRD_JOB_S) as rnd:
        rnd.at(7)
        for job in rnd.jobs.values():
            job.fault_begins()
        t_a = time.time()
        write_file(rrd["control"], "node3 wrap 32 %d\nnode1 nan\n"
                   "node2 watts 50000\nnode3 reset\n" % WRAP_AT, atomic=True)
        rnd.at(7 + 2 * STEP)
        write_file(rrd["control"], "node3 wrap 32 %d\nnode2 watts -300\n"
                   % WRAP_AT, atomic=True)
        rnd.at(7 + 3 * STEP)
        write_file(rrd["control"], "node3 wrap 32 %d\n" % WRAP_AT, atomic=True)
        t_b = time.time()
    for node in NODES:
        _rrd_check(rrd, rnd[node], gap=(t_a - 2 * STEP, t_b + 2 * STEP))
    for node in NODES:
        _marked(rnd[node], r"row.*dropped")


def test_rrd_file_faults(rrd):
    """node1's file replaced by one without the data source, node2's
    truncated, both restored 10 s later (atomically, as a collector's
    rename); node3's file re-created empty by the collector for good (its
    rows before are gone: the window's start is held at the first row)."""
    c = rrd["c"]
    path = {n: os.path.join(rrd["rrd"], n + ".rrd") for n in NODES}
    saved = {n: p + ".saved" for n, p in path.items()}
    with Round(c, "rrd-files", RRD_JOB_S) as rnd:
        rnd.at(7)
        for job in rnd.jobs.values():
            job.fault_begins()
        t_a = time.time()
        shutil.copyfile(path["node1"], saved["node1"])
        other = path["node1"] + ".nods"
        subprocess.run(["rrdtool", "create", other, "--step", str(STEP),
                        "DS:watts:GAUGE:%d:U:U" % (3 * STEP),
                        "RRA:AVERAGE:0.5:1:1000"], check=True)
        os.replace(other, path["node1"])
        shutil.copyfile(path["node2"], saved["node2"])
        with open(path["node2"], "r+b") as handle:
            handle.truncate(os.path.getsize(path["node2"]) // 3)
        fresh = path["node3"] + ".new"
        subprocess.run(["rrdtool", "create", fresh, "--step", str(STEP),
                        "--start", str(int(time.time()) - 1),
                        "DS:watts:GAUGE:%d:U:U" % (3 * STEP),
                        "DS:joules:DERIVE:%d:U:U" % (3 * STEP),
                        "RRA:AVERAGE:0.5:1:1000"], check=True)
        os.replace(fresh, path["node3"])
        t_replaced = time.time()
        rnd.at(17)
        os.replace(saved["node1"], path["node1"])
        os.replace(saved["node2"], path["node2"])
        t_b = time.time()
    for node in ("node1", "node2"):
        _rrd_check(rrd, rnd[node], gap=(t_a - 2 * STEP, t_b + 2 * STEP))
    t0, _ = rnd["node3"].window
    _rrd_check(rrd, rnd["node3"], held=t_replaced - t0 + 2 * STEP)
    _marked(rnd["node1"], r"\] error: .*no data source \"joules\"")
    _marked(rnd["node2"], r"\] error: .*node2\.rrd: read failed")
    for node in ("node1", "node2"):
        _marked(rnd[node], r"reading again after")


def test_rrd_daemons_and_clock(rrd):
    """slurmd restarted on node1, node3's wall clock stepped +40 s, then
    `scontrol reconfigure` and slurmctld restarted, all mid-job."""
    c = rrd["c"]
    ctld = faults.LogMark(c, "slurmctld")
    with Round(c, "rrd-daemons", RRD_JOB_S) as rnd:
        rnd.at(5)
        for job in rnd.jobs.values():
            job.fault_begins()
        rnd.dog.pause()     # its pid file changes hands on purpose
        faults.restart(c, "slurmd-node1")
        rnd.dog.resume()
        rrd["clock"].step(40)
        rnd.at(11)
        c.scontrol("reconfigure")
        rnd.at(16)
        rnd.dog.pause()
        faults.restart(c, "slurmctld")
        rnd.dog.resume()
    try:
        for node in NODES:
            _rrd_check(rrd, rnd[node])
    finally:
        rrd["clock"].step(-40)
    assert ctld.lines(r"started on cluster")


# ================================================================= GPU
GPU_JOB_S = 24
GPU_TOLERANCE = 0.01            # the counter is exact: test_gpu.py's bound
GPU_STATE = os.path.join(GPU_DIR, "nvml-cluster-2gpu.state")
GPU_COLS = ("gpu0", "gpu1")     # NVML index 0, 1 (minor 0, 1) of the state


@pytest.fixture(scope="module")
def gpu(module_cluster):
    """node1's NVML fails as its slurmd starts (the driver not loaded yet),
    then comes: the plugin retries in the background."""
    if not os.path.exists(os.path.join(FAKE_NVML_DIR, "libnvidia-ml.so.1")):
        pytest.skip("no fake NVML in %s" % FAKE_NVML_DIR)
    work = tempfile.mkdtemp(prefix="se-faults-gpu-", dir="/var/tmp")
    trace = write_file(os.path.join(work, "gpu.trace"), GPU_TRACE, atomic=True)
    epoch = float(int(time.time()))
    with open(GPU_STATE) as handle:
        body = handle.read()
    state = write_file(os.path.join(work, "nvml.state"),
                       body + "epoch %.3f\ntrace %s\nlog %s\n"
                       % (epoch, trace, os.path.join(work, "nvml.log")),
                       atomic=True)
    control = state + ".control"
    write_file(control, "node1 init DRIVER_NOT_LOADED\n", atomic=True)
    node_env = {
        "LD_LIBRARY_PATH": FAKE_NVML_DIR,
        "FAKE_NVML_STATE": state,
        "SLURM_ENERGY_NVML_DEVICE_PATH":
            os.path.join(module_cluster.state, "nodes", "%h", "dev",
                         "nvidia%u"),
    }
    c = module_cluster
    c.restart(nodes=3, gpus=2, plugin_dirs=[PLUGIN_DIR],
              energy_type="acct_gather_energy/gpu",
              slurm_conf="DebugFlags=Energy\n", node_env=node_env,
              hwloc_xml=os.path.join(GPU_DIR, "topo-cluster-2gpu.xml"))
    start = faults.LogMark(c, "slurmd-node1")
    start.offset = 0
    clock = faults.FakeClock(c, "node3", work)
    clock.install()
    faults.restart(c, "slurmd-node3")
    yield dict(c=c, work=work, trace=trace, epoch=epoch,
               control=control, clock=clock, start=start)
    shutil.rmtree(work, ignore_errors=True)


def _gpu_faults(g, lines):
    """Replace the fake NVML's control file (the faults now)."""
    write_file(g["control"], "".join(l + "\n" for l in lines), atomic=True)


def _gpu_check(g, job, gap=None, extra_j=0.0):
    """A 2-GPU step's energy against the sum of its GPUs' truth; gap:
    wall-clock (t0, t1) filled from the power readings (chord allowed)."""
    t0, t1 = job.window
    truth = sum(energy.trace_joules(g["trace"], col, g["epoch"], t0, t1)
                for col in GPU_COLS)
    if gap:
        a, b = max(gap[0], t0), min(gap[1], t1)
        if b > a:
            extra_j += sum(energy.chord_error(g["trace"], col, g["epoch"],
                                              a, b) for col in GPU_COLS)
    line = faults.check_bounds(job.name, job.recorded(), truth, job.before,
                               GPU_TOLERANCE, extra_j)
    print("%s (took %.1f s; before the fault %s J)" % (line, job.took,
                                                        job.before))


def _same_scale(rnd):
    """No step took a figure for another scale: a figure corrected after
    a fault, or one from a restarted slurmd, goes on from the same base."""
    for job in rnd.jobs.values():
        lines = job.mark.lines(r"below the step's base")
        assert not lines, "%s: %s" % (job.name, lines)


def test_gpu_nvml_missing_at_start(gpu):
    """node1's slurmd started while nvmlInit failed: it said so once,
    answered, and sampled the GPUs once NVML was there; a job is
    accounted exactly."""
    c = gpu["c"]
    faults.assert_marked(gpu["start"], r"\] error: .*no GPU energy on this "
                         r"node yet: nvmlInit: Driver Not Loaded", 1,
                         "node1 NVML at start")
    assert faults.show_node_s(c, "node1") < faults.SHOW_NODE_BOUND_S
    _gpu_faults(gpu, [])
    poll(lambda: gpu["start"].lines(r"NVML available after \d+ tries"),
         timeout=30, what="node1's GPU energy after NVML came")
    with Round(c, "gpu-start", GPU_JOB_S, ("--gres=gpu:2",)) as rnd:
        pass
    for node in NODES:
        _gpu_check(gpu, rnd[node])


def test_gpu_read_faults(gpu):
    """NVML_ERROR_TIMEOUT on node1's GPU 0, node2's GPU 1 lost (off the
    bus, its handle too), node3's GPU 0 reads hanging 5 s: the counter
    bridges the gap exactly when readings resume."""
    c = gpu["c"]
    with Round(c, "gpu-reads", GPU_JOB_S, ("--gres=gpu:2",)) as rnd:
        rnd.at(6)
        for job in rnd.jobs.values():
            job.fault_begins()
        _gpu_faults(gpu, ["node1 error 0 TIMEOUT", "node2 lost 1",
                          "node3 hang 0 5"])
        rnd.at(14)
        _gpu_faults(gpu, [])
    for node in NODES:
        _gpu_check(gpu, rnd[node])
    _same_scale(rnd)
    _marked(rnd["node1"], r"\] error: .*GPU 0 .*read failed: .*Timeout",
            r"GPU 0 .*reading again after")
    _marked(rnd["node2"], r"\] error: .*GPU 1 .*(read|open) failed",
            r"GPU 1 .*reading again after")
    faults.assert_marked(rnd["node3"].mark, r"GPU 0 .*overran its", 3,
                         "node3 hung reads")


def test_gpu_counter_faults(gpu):
    """node1's GPU 0 counter reset (a driver reload), node2's GPU 0 one
    garbled read (+1 GJ), node3's GPU 1 power absurd (2^32-1 mW) for 3 s:
    nothing of it counted, the reset filled from the power readings."""
    c = gpu["c"]
    with Round(c, "gpu-counters", GPU_JOB_S, ("--gres=gpu:2",)) as rnd:
        rnd.at(6)
        for job in rnd.jobs.values():
            job.fault_begins()
        t_reset = time.time()
        _gpu_faults(gpu, ["node1 reset 0 %.3f" % t_reset,
                          "node2 spike 0 1e12",
                          "node3 power 1 4294967295"])
        rnd.at(9)
        _gpu_faults(gpu, ["node1 reset 0 %.3f" % t_reset])
    _gpu_check(gpu, rnd["node1"], gap=(t_reset - 1, t_reset + 3))
    _gpu_check(gpu, rnd["node2"])
    _gpu_check(gpu, rnd["node3"], gap=(t_reset - 1, t_reset + 4))
    _marked(rnd["node1"], r"GPU 0 .*counter reset")
    _marked(rnd["node2"], r"GPU 0 .*counter reading rejected")


def test_gpu_daemons_and_clock(gpu):
    """slurmd restarted on node1, node3's wall clock stepped +40 s, then
    `scontrol reconfigure` and slurmctld restarted, all mid-job: the GPUs'
    scales are kept in the spool directory, so the counter counts the
    time slurmd was down exactly (acct_gather_energy_gpu.5, FAULTS)."""
    c = gpu["c"]
    with Round(c, "gpu-daemons", GPU_JOB_S, ("--gres=gpu:2",)) as rnd:
        rnd.at(5)
        for job in rnd.jobs.values():
            job.fault_begins()
        rnd.dog.pause()     # its pid file changes hands on purpose
        faults.restart(c, "slurmd-node1")
        rnd.dog.resume()
        gpu["clock"].step(40)
        rnd.at(9)
        c.scontrol("reconfigure")
        rnd.at(13)
        rnd.dog.pause()
        faults.restart(c, "slurmctld")
        rnd.dog.resume()
    try:
        for node in NODES:
            _gpu_check(gpu, rnd[node])
    finally:
        gpu["clock"].step(-40)
    # node1's slurmd went on from the scale its predecessor kept (its GPU
    # 0 counter restarted in test_gpu_counter_faults: that slurmd's figure
    # is no longer the raw counter's)
    _same_scale(rnd)
    spool = os.path.join(c.node_dir("node1"), "spool")
    assert rnd["node1"].mark.lines(r"energy scale is kept across slurmd "
                                   r"restarts in %s" % re.escape(spool))
    for i in (0, 1):
        assert os.path.exists(os.path.join(
            spool, "slurm-energy-gpu%d.scale" % i))
