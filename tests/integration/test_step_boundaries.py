"""A step's energy exact at its boundaries, for live meters (issue #19).

A step on a live meter (Modbus, BMC) takes its energy from slurmd's sampler
history: E(t1) - E(t0) once a reading after each boundary exists, each
boundary kicking that reading (src/common/energy_query.h,
se_energy_step_settle).  The energy plugin settles in its own fini() at the
step's end (EnergySettle, issue #30): the cluster here has no plugstack.conf
at all.  Without a settle, a step's end is the running figure, extrapolated
flat from the last sample: on an irregular load that is off by where the end
falls between samples.

Ten 30 s jobs on an irregular trace (random steps and ramps, 300-2500 W,
written into the test's tmp dir), submitted at staggered instants so that
their start and end phases spread over the 1 s poll period; they run
concurrently (3 nodes x their CPUs), so ten take about as long as two.
Each job's truth is the trace's integral over its task's own printed start
and end (selab.energy).

The bounds (issue #28) sit at about twice the worst figure measured over
repeated runs of this module (figures in the commit that set them), none
grows with the trace:

  counter  se-modbus-sim, custom map: float32 W power + uint32 mWh energy
           counter (the fine counter path): each job's error within
           COUNTER_MAX, and the ten jobs' mean (a bias: the step lives a
           few ms longer than its task's printed window) within
           COUNTER_MEAN
  power    the same meter read without its energy register: slurmd
           integrates instantaneous power sampled every second (the
           trapezoid), which on this trace (a step every 0.3-2 s) misses
           percents of a 30 s job whatever the boundaries do.  The
           simulator writes down every reading it served (--reads: unit,
           trace time, watts), so the test knows what slurmd was given,
           the kicks at the boundaries and the poll's jitter on a loaded
           host included: the figure must equal the trapezoid through
           those readings over the job's window, each job within
           READS_MAX, the ten's mean within COUNTER_MEAN (the same
           boundary error as the counter path's).  The table also shows
           the instrument's envelope (the trapezoid of the trace sampled
           every second at each phase of an ideal poll): an ideal poll's
           envelope is not the bound, as a poll delayed on a loaded host
           leaves it (0.458 % beyond in a CI run, 0.054 % off its reads);
  bmc      contribs/bmc-sim's DCMI power reading: the plugin reads the 1 s
           rolling average (DCMI 1.5 enhanced statistics, the sim's is the
           trace's exact integral over the second before the request) and
           stamps it half the window back (src/meters/bmc/
           bmc_meter_dcmi.c), every second and at the boundaries.  As for
           power, bmc-sim writes down every average it served (--reads:
           trace time, window, watts), and the figure must equal the
           trapezoid through those averages at their half-window stamps
           (same bounds as power).  The ideal poll's envelope is shown
           only: a poll delayed on a loaded CI host left it by 0.254 %
           while the code was right.

Run with -s to see the table: each job's error, its envelope, the bounds.
"""
import os
import random
import re
import secrets
import shutil
import tempfile
import time

import pytest

from selab import energy, fixtures
from selab.cluster import PLUGIN_DIR, poll, slurmd_log
from selab.meters import ModbusSim
from selab.trace import Trace
from selab.files import write_file

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
BUILD_DIR = os.environ.get("SE_BUILD_DIR", os.path.join(REPO, "_build"))
BMC_SIM = os.environ.get("SE_BMC_SIM", os.path.join(
    BUILD_DIR, "obj", "contribs", "bmc-sim", "bmc-sim"))
NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
HOST = NET + ".1"                      # host side of the cluster bridge
MODBUS_PORT = 15021
BMC_PORT_BASE = 19600 + 16 * (int(NET.split(".")[2]) % 256)
NODES = ("node1", "node2", "node3")
JOBS = 10
JOB_SECONDS = 30
STAGGER_S = 0.37                       # submissions: phases spread over 1 s
# Bounds (issue #28): about twice the worst measured over repeated runs
# (22.05, 2026-11-27, on a loaded host: counter worst +0.169 % and +0.065 %,
# means +0.067 % and +0.035 %), rounded up while those runs are few.
COUNTER_MAX = 0.004        # |error| of any job, counter path
COUNTER_MEAN = 0.0015      # |mean error| of the ten, counter path
# power and bmc, |figure - trapezoid through the meter's readings| of any
# job: power measured +0.024..+0.054 % (22.05, 2026-11-27; the bias the
# counter path shows), bmc +0.011..+0.043 % (22.05, 2026-11-30); bound as
# the counter path's worst on a loaded host, rounded up.  Dropping the bmc
# path's half-window stamp puts its jobs up to 1.40 % off the readings
# (measured 2026-11-30: 8 of 10 jobs beyond the bound).
READS_MAX = 0.0025
SAMPLING_PHASES = 20       # phases of the 1 s poll tried for the envelope
DCMI_WINDOW_S = 1.0        # the rolling average the plugin reads
SETTLE_MAX_S = 10
RESULTS = {}
READS = {}                 # path: the simulators' --reads files

# float32 watts at 0-1, uint32 mWh at 2-3 (holding registers, big-endian);
# the counter starts at 1,000 kWh, as a meter in service reads.
SIM_MAP = ["--kind", "holding", "--power-reg", "0", "--power-type",
           "float32", "--order", "abcd", "--power-scale", "1",
           "--energy-reg", "2", "--energy-type", "uint32",
           "--energy-scale", "3.6", "--energy-offset", "3600000000"]
CONF_MAP = ("EnergyModbusModel=custom\nEnergyModbusRegisterKind=holding\n"
            "EnergyModbusPowerRegister=0\nEnergyModbusPowerType=float32\n"
            "EnergyModbusWordOrder=abcd\n")
CONF_ENERGY = ("EnergyModbusEnergyRegister=2\nEnergyModbusEnergyType=uint32\n"
               "EnergyModbusEnergyScale=3.6\n")

pytestmark = pytest.mark.skipif(not PLUGIN_DIR,
                                reason="SE_PLUGIN_DIR not set "
                                       "(run contribs/test-all.sh)")


def irregular_trace(path, seed=19, period=600):
    """Random steps and ramps between 300 and 2500 W, every 0.3-2 s."""
    rng = random.Random(seed)
    lines = ["# irregular load for test_step_boundaries (seed %d)" % seed,
             "@repeat %d" % period, "time\t" + "\t".join(NODES)]
    t, power = 0.0, {n: rng.uniform(300, 2500) for n in NODES}
    while t < period - 2:
        lines.append("%.3f\t%s" % (t, "\t".join("%.1f" % power[n]
                                                 for n in NODES)))
        step = rng.random() < 0.6
        new = {n: rng.uniform(300, 2500) for n in NODES}
        if step:                        # the same instant twice: a step
            lines.append("%.3f\t%s" % (t, "\t".join("%.1f" % new[n]
                                                     for n in NODES)))
        power = new
        t += rng.uniform(0.3, 2.0)
    return write_file(path, "\n".join(lines) + "\n", 0o644)


# ------------------------------------------------------------ the meters
class Bmcs:
    """One bmc-sim (DCMI) per node, as in test_bmc_energy.py."""

    def __init__(self, workdir, trace, epoch, password_file):
        self.workdir, self.trace, self.epoch = workdir, trace, epoch
        self.password_file = password_file
        self.started = []

    def _sim(self, cmd, node, *extra):
        import subprocess
        return subprocess.run([BMC_SIM, cmd, "--state",
                               os.path.join(self.workdir, "bmc-" + node),
                               *extra], capture_output=True, text=True,
                              timeout=30)

    def reads(self, node):
        return os.path.join(self.workdir, "reads-" + node)

    def start(self):
        for i, node in enumerate(NODES, 1):
            p = self._sim("start", node, "--port", str(BMC_PORT_BASE + i),
                          "--trace", self.trace, "--column", node,
                          "--epoch", "%.6f" % self.epoch, "--addr", HOST,
                          "--password-file", self.password_file,
                          "--poll-ms", "1000", "--reads", self.reads(node))
            if p.returncode:
                self.stop()
                raise RuntimeError("bmc-sim start %s: %s%s"
                                   % (node, p.stdout, p.stderr))
            self.started.append(node)
        return self

    def stop(self):
        for node in self.started:
            self._sim("stop", node)
        self.started = []


def modbus_conf(workdir, path):
    map_file = write_file(os.path.join(workdir, "modbus.map"),
                          "".join("Nodes=%s Unit=%d\n" % (n, i)
                                  for i, n in enumerate(NODES, 1)), 0o644)
    return ("EnergyModbusDevice=tcp://%s:%d\n%s%sEnergyModbusMap=%s\n"
            "EnergyModbusFrequency=1\nEnergyModbusTimeout=500\n"
            "EnergySettleMaxWait=%d\n"
            % (HOST, MODBUS_PORT, CONF_MAP,
               CONF_ENERGY if path == "counter" else "", map_file,
               SETTLE_MAX_S))


def bmc_conf(workdir, password_file):
    map_file = write_file(os.path.join(workdir, "bmc.map"),
                          "".join("Nodes=%s Host=%s:%d\n"
                                  % (n, HOST, BMC_PORT_BASE + i)
                                  for i, n in enumerate(NODES, 1)), 0o644)
    return ("EnergyBMCMethod=dcmi\nEnergyBMCMap=%s\nEnergyBMCUser=admin\n"
            "EnergyBMCPasswordFile=%s\nEnergyBMCPrivilege=admin\n"
            "EnergyBMCWorkaroundFlags=opensesspriv\n"
            "EnergyBMCFrequency=1\nEnergyBMCTimeout=500\n"
            "EnergyBMCSdrCacheDir=%s\nEnergySettleMaxWait=%d\n"
            % (map_file, password_file,
               os.path.join(workdir, "sdr-cache-%n"), SETTLE_MAX_S))


# ------------------------------------------------------------ the runs
workdir = fixtures.workdir("se-boundaries-", mode=0o755)


@pytest.fixture(scope="module", params=["counter", "power", "bmc"])
def live_cluster(request, cluster, workdir):
    path = request.param
    if path == "bmc" and not (os.access(BMC_SIM, os.X_OK)
                              and shutil.which("ipmi_sim")):
        pytest.skip("bmc-sim or ipmi_sim missing")
    work = tempfile.mkdtemp(prefix=path + "-", dir=workdir)
    os.chmod(work, 0o755)
    trace = irregular_trace(os.path.join(work, "irregular.trace"))
    epoch = time.time()
    # what the truth is made of, for whoever reads this run afterwards
    write_file(os.path.join(work, "truth.env"),
               "%s %.6f %d\n" % (trace, epoch, JOB_SECONDS), 0o644)
    if path == "bmc":
        pwfile = write_file(os.path.join(work, "bmc.password"),
                            secrets.token_hex(8) + "\n", 0o600)
        meter = Bmcs(work, trace, epoch, pwfile)
        READS[path] = {n: meter.reads(n) for n in NODES}
        kw = dict(energy_type="acct_gather_energy/bmc",
                  acct_gather_conf=bmc_conf(work, pwfile))
    else:
        READS[path] = os.path.join(work, "reads")
        meter = ModbusSim(trace, epoch, {i: n for i, n in
                                         enumerate(NODES, 1)},
                          SIM_MAP, tcp=(HOST, MODBUS_PORT), workdir=work,
                          extra_args=["--reads", READS[path]])
        kw = dict(energy_type="acct_gather_energy/modbus",
                  acct_gather_conf=modbus_conf(work, path))
    with cluster.configured(plugin_dirs=[PLUGIN_DIR],
                            slurm_conf="DebugFlags=Energy\n", **kw) as c:
        conf = open(c.env["SLURM_CONF"]).read()
        assert "PlugStack" not in conf, "this module runs without SPANK"
        assert not os.path.exists(os.path.join(
            os.path.dirname(c.env["SLURM_CONF"]), "plugstack.conf"))
        meter.start()
        try:
            poll(lambda: all(energy.node_power(c, n) for n in NODES),
                 timeout=60, what="CurrentWatts on every node")
            yield c, epoch, trace, path
        finally:
            meter.stop()


def run_jobs(cluster, epoch, trace, tag):
    """Ten 30 s jobs at staggered instants; [(jobid, node, sacct J, truth
    J, error)]."""
    procs = []
    for i in range(JOBS):
        name = "%s-%d" % (tag, i)
        procs.append((name, cluster.popen(
            ["srun", "-J", name, "-n1",
             *energy.timed_command(JOB_SECONDS)])))
        time.sleep(STAGGER_S)
    out = []
    for name, proc in procs:
        stdout, stderr = proc.communicate(timeout=JOB_SECONDS * 4 + 120)
        assert proc.returncode == 0, "srun %s failed: %s" % (name, stderr)
        jobid = int(cluster.run(["sacct", "-n", "-X", "-P", "-o", "JobID",
                                 "--name", name]).stdout.split()[-1])
        windows = energy.windows(stdout)
        (node, _), = windows.items()
        recorded = energy.consumed_energy(cluster, jobid)["%d.0" % jobid]
        truth = energy.true_energy(trace, epoch, windows)
        out.append((jobid, node, recorded, truth,
                    energy.relative_error(recorded, truth), windows))
    return out


def sampled(tr, column, t0, t1, phase, path):
    """What slurmd integrates over [t0, t1] (trace time) when it reads the
    meter at t0 and t1 (each boundary kicks a reading) and every second
    at t0 + phase + k: the trapezoid through its (stamp, watts) points.
    power: the instantaneous power at the reading; bmc: DCMI's rolling
    average of the DCMI_WINDOW_S before the reading, stamped half a
    window back (so the points that bracket t0 and t1 come from readings
    up to a window later: the settle waits for them)."""
    reads = [t0, t1] + [t0 + phase + k for k in range(-2, int(t1 - t0) + 3)]
    pts = []
    for r in sorted(set(reads)):
        if path == "power":
            pts.append((r, tr.watts(column, r)))
        else:
            w = DCMI_WINDOW_S
            pts.append((r - w / 2, tr.joules(column, r - w, r) / w))
    return trapezoid(pts, t0, t1)


def trapezoid(pts, t0, t1):
    """The integral over [t0, t1] of the straight lines through the
    (time, watts) points."""
    pts = sorted(pts)
    total = 0.0
    for (ta, pa), (tb, pb) in zip(pts, pts[1:]):
        x, y = max(ta, t0), min(tb, t1)
        if y <= x:
            continue
        slope = (pb - pa) / (tb - ta)
        total += (y - x) * (pa + slope * ((x + y) / 2 - ta))
    return total


def served(reads_file):
    """{node: [(trace time, watts)]}: every reading the simulator
    answered (se-modbus-sim --reads)."""
    out = {n: [] for n in NODES}
    with open(reads_file) as handle:
        for line in handle:
            unit, t, watts = line.split()
            out[NODES[int(unit) - 1]].append((float(t), float(watts)))
    return out


def served_averages(reads_files):
    """{node: [(stamp, watts)]}: every 1 s DCMI average bmc-sim answered
    (--reads: trace time, window, watts), at the middle of its window
    (where the plugin stamps it)."""
    out = {}
    for node, path in reads_files.items():
        out[node] = []
        with open(path) as handle:
            for line in handle:
                t, window, watts = (float(v) for v in line.split())
                if window == DCMI_WINDOW_S:
                    out[node].append((t - window / 2, watts))
    return out


def through_reads(reads, epoch, windows):
    """What slurmd should have integrated over the job's windows from the
    readings it was actually served: the trapezoid through them, at the
    instants the meter computed them (the poll's jitter on a loaded host
    included)."""
    return sum(trapezoid(reads[node], w0 - epoch, w1 - epoch)
               for node, (w0, w1) in windows.items())


def envelope(trace, epoch, windows, path):
    """(lowest, highest) figure the sampling instrument of PATH can give
    over the job's windows, over the phase of its 1 s poll."""
    lo = hi = 0.0
    tr = Trace(trace)
    for node, (w0, w1) in windows.items():
        figs = [sampled(tr, node, w0 - epoch, w1 - epoch,
                        i / SAMPLING_PHASES, path)
                for i in range(SAMPLING_PHASES)]
        lo, hi = lo + min(figs), hi + max(figs)
    return lo, hi


def _table(path, rows):
    lines = ["", "step boundaries, %s path: %d jobs of %d s" %
             (path, len(rows), JOB_SECONDS)]
    if path == "counter":
        lines.append("  job    node    sacct J    true J    error")
    else:
        lines.append("  job    node    sacct J    true J    error     "
                     "sampling envelope          beyond it   through reads")
    for row in rows:
        jobid, node, rec, truth, err, _, env = row[:7]
        line = ("  %-6d %-6s %9d %9.0f %+8.3f %%"
                % (jobid, node, rec, truth, 100 * err))
        if env:
            line += ("   %+7.3f ... %+7.3f %%   %7.3f %%"
                     % (100 * (env[0] / truth - 1), 100 * (env[1] / truth - 1),
                        100 * _beyond(rec, truth, env)))
        if path != "counter":
            line += "   %+7.3f %%" % (100 * _off_reads(row))
        lines.append(line)
    errs = sorted(abs(r[4]) for r in rows)
    mean = sum(r[4] for r in rows) / len(rows)
    lines.append("  |error|: max %.3f %%, median %.3f %%; mean error %+.3f %%"
                 % (100 * errs[-1], 100 * errs[len(errs) // 2], 100 * mean))
    if path == "counter":
        lines.append("  bounds: |error| <= %.3f %%, |mean| <= %.3f %%"
                     % (100 * COUNTER_MAX, 100 * COUNTER_MEAN))
    else:
        lines.append("  off the trapezoid through the meter's readings: max "
                     "%.3f %%, mean %+.3f %%; bounds %.3f %%, %.3f %% (the "
                     "envelope: shown only; beyond it: max %.3f %%)"
                     % (100 * max(abs(_off_reads(r)) for r in rows),
                        100 * sum(_off_reads(r) for r in rows) / len(rows),
                        100 * READS_MAX, 100 * COUNTER_MEAN,
                        100 * max(_beyond(r[2], r[3], r[6]) for r in rows)))
    return "\n".join(lines)


def _off_reads(row):
    """How far (fraction of the truth) the figure lies from the trapezoid
    through the readings the meter served (power and bmc paths)."""
    return (row[2] - row[7]) / row[3]


def _beyond(rec, truth, env):
    """How far (fraction of the truth) a figure lies outside its envelope."""
    return max(env[0] - rec, rec - env[1], 0.0) / truth


def test_ten_jobs_exact_at_their_boundaries(live_cluster):
    c, epoch, trace, path = live_cluster
    started = time.monotonic()
    rows = run_jobs(c, epoch, trace, "sb-" + path)
    took = time.monotonic() - started
    rows = [r + ((envelope(trace, epoch, r[5], path)
                  if path != "counter" else None),) for r in rows]
    if path != "counter":
        reads = (served(READS[path]) if path == "power"
                 else served_averages(READS[path]))
        rows = [r + (through_reads(reads, epoch, r[5]),) for r in rows]
    RESULTS[path] = rows
    table = _table(path, rows)
    print(table + "\n  ten jobs took %.0f s" % took)
    if path == "counter":
        worst = max(abs(r[4]) for r in rows)
        mean = sum(r[4] for r in rows) / len(rows)
        assert worst <= COUNTER_MAX, (
            "counter: a job %.3f %% off, bound %.3f %%\n%s"
            % (100 * worst, 100 * COUNTER_MAX, table))
        assert abs(mean) <= COUNTER_MEAN, (
            "counter: mean error %+.3f %%, bound %.3f %%\n%s"
            % (100 * mean, 100 * COUNTER_MEAN, table))
    else:
        bad = [(r[0], "%+.3f %%" % (100 * _off_reads(r)))
               for r in rows if abs(_off_reads(r)) > READS_MAX]
        assert not bad, (
            "%s: off the trapezoid through the meter's own readings by "
            "more than %.3f %% (job, how far): %s\n%s"
            % (path, 100 * READS_MAX, bad, table))
        mean = sum(_off_reads(r) for r in rows) / len(rows)
        assert abs(mean) <= COUNTER_MEAN, (
            "%s: mean off the readings' trapezoid %+.3f %%, bound %.3f %%"
            "\n%s" % (path, 100 * mean, 100 * COUNTER_MEAN, table))


def _settle_lines(live_cluster, tail):
    """For each job of this path's run: (jobid, node, sacct J, the matches
    of `tail` on its step's settle lines in the node's slurmd log)."""
    c, _, _, path = live_cluster
    rows = RESULTS.get(path)
    if not rows:
        pytest.skip("no jobs ran")
    logs = {n: slurmd_log(c, n) for n in NODES}
    return [(jobid, node, recorded,
             re.findall(r"\[%d\.0\] .*step energy settled: %s" % (jobid, tail),
                        logs[node]))
            for jobid, node, recorded, *_ in rows]


def test_every_step_settled(live_cluster):
    """The numbers above came from the settle, not the running figure."""
    for jobid, node, recorded, settled in _settle_lines(live_cluster,
                                                        r"(\d+) J"):
        assert settled, "job %d: no settle line in slurmd-%s.log" % (
            jobid, node)
        assert int(settled[-1]) == recorded, (jobid, settled, recorded)


def test_steps_need_no_rpc(live_cluster):
    """Each step of a live source follows slurmd's node figure through the
    energy query socket, never Slurm's energy RPC (a munge credential each
    way on the step's launch and exit path): the settle line (DebugFlags=
    Energy) counts the RPCs the step had to fall back to, and these steps
    had none."""
    for jobid, _, _, rpcs in _settle_lines(live_cluster,
                                           r".*, (\d+) energy RPCs, "
                                           r"\d+ queries\)"):
        assert rpcs == ["0"], (jobid, rpcs)


def test_short_steps_ask_slurmd_little(live_cluster):
    """A short step asks slurmd's socket two questions while it runs: its
    first poll (its base, and the start of its window: a reading kicked)
    and its exit (slurmstepd polls twice as a task exits, a fraction of a
    millisecond apart: one question, one reading kicked); one more when a
    periodic poll (1 s) falls inside the step.  Each costs slurmd an answer
    and, kicked, the meter a read, on every step of a workflow of many
    short ones.  The exit's question, once every task is reaped and a
    settle is to come, is held until the reading after the end is in
    (Modbus: a reading's instant is the middle of its transaction), and
    the settle takes its answer: it asks nothing more (issue #30: one
    question at a step's end, not two).  A BMC's rolling average stamps
    its reading half its window back (0.5 s here), so one question's read
    is not past the end; slurmd holds each question at most 0.15 s and the
    settle asks again: 4 or 5 questions, each one BMC read (without the
    hold, pausing 1 ms, 2 ms, ... 160 ms between questions, it asked 10 or
    11; at 5 ms throughout about a hundred).  The settle line counts both;
    every step still settles.

    Whether a periodic poll falls inside a step is chance: the poll follows
    the wall clock's seconds, and a loaded machine stretches `srun true` to
    half a second or more, so about half the steps may ask three times (CI
    saw 3 of 6).  What no chance explains is a step with no poll inside
    asking more than two: the fewest questions any step asked must be two
    (ten steps: all ten catching a poll at 0.5 s each is 1 in 1000), and a
    change that asks once more on every step fails here."""
    c, _, _, path = live_cluster
    steps = 10
    jobid = c.sbatch("-J", "sb-short-" + path, "-N1", "-n1", "-o",
                     "/dev/null", script="#!/bin/sh\n"
                     "i=0; while [ $i -lt %d ]; do srun -n1 true; "
                     "i=$((i + 1)); done\n" % steps)
    c.wait_sacct(jobid, steps=[str(i) for i in range(steps)], timeout=120)
    logs = "".join(slurmd_log(c, n) for n in NODES)
    running, settling = {}, {}
    for step, before, settle in re.findall(
            r"\[%d\.(\d+)\] .*step energy settled: .*, 0 energy RPCs, "
            r"(\d+) queries\), .* settled in [0-9.]+ s \((\d+) queries\)"
            % jobid, logs):
        running[int(step)], settling[int(step)] = int(before), int(settle)
    assert sorted(running) == list(range(steps)), (
        "job %d: settle lines (step: questions) %s" % (jobid, running))
    assert all(n <= 3 for n in running.values()), running
    assert min(running.values()) == 2, running     # no poll inside: two
    assert all(n <= (7 if path == "bmc" else 2)
               for n in settling.values()), settling
    if path != "bmc":                   # most: none, the exit's answer
        assert sorted(settling.values())[steps // 2] == 0, settling


def test_summary():
    """All paths side by side (printed; the bounds are asserted above)."""
    for path, rows in RESULTS.items():
        print(_table(path, rows))
