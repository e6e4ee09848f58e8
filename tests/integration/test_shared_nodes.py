"""Issue #13 on the cluster: honest energy on shared nodes.

The cluster runs proctrack/cgroup + task/cgroup (+ jobacct_gather/cgroup),
each node in its own cgroup v1 tree (contribs/cluster).  Every node reads
its own unit of a load-following meter (contribs/modbus-sim/load_meter.py,
SDM630 register map, counter path): power = IDLE_W + W_PER_CPU x the CPU
use of the node's cgroup tree, sampled at 10 Hz.  The meter writes the
power it served (a trace) and, per job, the true share computed from the
cgroups on its own: W_PER_CPU x the job's CPU time + the idle power split
by allocated cores over the node's cores (EnergyIdle=share as
acct_gather.conf(5) documents it).

Jobs run a duty cycle of busy and sleeping wall-clock time for a fixed
time (selab.meters.DUTY_CYCLE_PY); the CPU time they get depends on what
else the machine's two cores run, which the meter and the truth follow
(each task also prints the CPU time it got, for the meter's own check).

Proofs (issue #13, "Proven when", cluster part), with bounds (issue #28)
at about twice the worst figure measured over repeated runs of this module
(the figures are in the commit that set them; each test prints its own):
- two jobs of different load on one node at once: each job's sacct energy
  within SHARE_TOL of its true share (the issue asks 5 %); the two plus the
  unattributed part within SUM_TOL of the meter;
- a batch job with an srun step counts its energy once: .batch + .0 are
  the job line less its launch and teardown (STEPS_OUTSIDE_TOL of it);
- an exclusive job's figure is the meter's energy over it (within
  EXCLUSIVE_TOL) in share mode and in node mode, and the two agree within
  SAME_TOL;
- the mode survives `scontrol reconfigure` and a slurmd restart.
Before them, the meter itself is checked against what it must show (a
job's CPU time, the trace against its own counter, node mode's figures).
"""
import os
import subprocess
import time

import pytest

from selab import energy, fixtures
from selab.cluster import PLUGIN_DIR, poll
from selab.meters import LoadMeter, node_cgroup_dir, write_duty_cycle

NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
METER = (NET + ".1", 15031)
UNITS = {1: "node1", 2: "node2", 3: "node3"}
IDLE_W = 40.0           # the meter's idle power, also EnergyIdleWatts
W_PER_CPU = 200.0       # what one busy CPU adds
# Bounds (issue #28): about twice the worst figure measured over repeated
# runs (the figures in the commit message that set them).
SHARE_TOL = 0.05        # a job's share against its truth (the 5 %
                        # binds: measured up to +3.6 % on a loaded host)
SUM_TOL = 0.004         # shares + unattributed against the meter
                        # (measured -0.02 %, -0.15 %)
EXCLUSIVE_TOL = 0.005   # exclusive job, either mode, against the meter
                        # (measured share/node: 1.0000/0.9996, 0.9989/1.0003,
                        # 1.0010/0.9977 in a clean-clone run)
SAME_TOL = 0.005        # exclusive job, share vs node mode (measured 0.0004,
                        # 0.0014, 0.0033: the two runs cannot last exactly
                        # as long on two shared cores)
STEPS_OUTSIDE_TOL = 0.02  # a job's share outside its steps (launch, end)
STEPS_OVER_J = 2.0      # .batch + .0 over the line: sacct's rounding only
NODE_TOL = 0.01         # node mode: a step against the meter over its life
STEP_SLACK_S = 1.0      # a step's life around its task's printed window
JOB_S = 20              # seconds of work per job

pytestmark = [fixtures.NEEDS_PLUGINS, fixtures.NEEDS_LOAD_METER]

def _so_has(name, text):
    path = os.path.join(PLUGIN_DIR, name)
    try:
        with open(path, "rb") as f:
            return text.encode() in f.read()
    except OSError:
        return False


# The attribution mode is in the build when the plugin knows its key (a
# build without it runs only the node-mode checks).
SHARE_BUILT = _so_has("acct_gather_energy_modbus.so", "EnergyAttribution")
needs_share = pytest.mark.skipif(
    not SHARE_BUILT, reason="acct_gather_energy/modbus of this build has no "
    "EnergyAttribution (issue #13's share mode not built)")


def acct_conf(workdir, mode):
    map_file = os.path.join(workdir, "modbus.map")
    with open(map_file, "w") as f:
        f.write("".join("Nodes=%s Unit=%d\n" % (n, u)
                        for u, n in sorted(UNITS.items())))
    text = ("EnergyModbusDevice=tcp://%s:%d\nEnergyModbusModel=sdm630\n"
            "EnergyModbusMap=%s\nEnergyModbusFrequency=1\n"
            "EnergyModbusTimeout=500\n" % (METER[0], METER[1], map_file))
    if SHARE_BUILT:
        text += ("EnergyAttribution=%s\nEnergyIdle=share\n"
                 "EnergyIdleWatts=%g\n" % (mode, IDLE_W))
    return text


class Bench:
    """The cluster in one attribution mode, the load meter, job helpers."""

    def __init__(self, cluster, workdir, mode):
        self.c, self.workdir, self.mode = cluster, workdir, mode
        self.load_py = write_duty_cycle(workdir)
        self.meter = None

    def start_meter(self):
        self.meter = LoadMeter(self.c.state, UNITS, METER[0], METER[1],
                               IDLE_W, W_PER_CPU,
                               workdir=os.path.join(self.workdir,
                                                    "meter-" + self.mode))
        os.makedirs(self.meter.workdir, exist_ok=True)
        self.meter.start()
        # every node's plugin reads it (its first samples may have failed
        # while the meter was not up yet)
        for node in UNITS.values():
            poll(lambda: self.current_watts(node) >= IDLE_W * 0.9,
                 timeout=30, what="%s to read the load meter" % node)
        return self

    def current_watts(self, node):
        out = self.c.scontrol("show", "node", node).stdout
        for word in out.split():
            if word.startswith("CurrentWatts="):
                value = word.split("=", 1)[1]       # "n/s": no sample yet
                return int(value) if value.isdigit() else 0
        return 0

    def submit(self, node, tasks, duty, seconds=JOB_S, exclusive=False):
        """A batch job running one srun step of TASKS tasks at DUTY."""
        out = os.path.join(self.workdir, "job-%s-%%j.out" % node)
        script = ("#!/bin/sh\nsrun -n%d python3 %s %g %g\n"
                  % (tasks, self.load_py, duty, seconds))
        args = ["-w", node, "-N1", "-n", str(tasks), "-o", out]
        if exclusive:
            args.append("--exclusive")
        jobid = self.c.sbatch(*args, script=script)
        return Job(self, jobid, node, out.replace("%j", str(jobid)),
                   tasks * duty * seconds)

    def truth(self, job):
        """The meter's record of a job, once its cgroups are gone and the
        meter has written a file after that."""
        def ready():
            t = self.meter.truth()
            rec = t["nodes"][job.node]["jobs"].get(str(job.id))
            return rec if rec and t["t"] > rec["last"] + 1.0 else None
        return poll(ready, timeout=30, what="the meter's truth of job %s"
                    % job.id)

    @staticmethod
    def true_share(job):
        return job.truth["cpu_j"] + job.truth["idle_node_j"]

    def meter_joules(self, node, t0, t1):
        """What the meter counted on NODE over wall-clock [t0, t1]."""
        return energy.trace_joules(self.meter.trace, node,
                                   self.meter.truth()["epoch"], t0, t1)

    def totals(self, node):
        """slurmd's totals of NODE (Cluster.attribution), as numbers, once
        rewritten after this call (a sample taken from now on)."""
        kv = self.c.attribution(node, since=time.time())
        return {k: (v if k == "idle" else float(v)) for k, v in kv.items()}

    def stop(self):
        if self.meter:
            self.meter.stop()


class Job:
    def __init__(self, bench, jobid, node, out, cpu_s):
        self.bench, self.id, self.node = bench, jobid, node
        self.out, self.cpu_s = out, cpu_s
        self.rows = self.truth = None

    def wait(self):
        c = self.bench.c
        self.rows = c.wait_sacct(self.id, steps=("batch", "0"),
                                 fields=("JobID", "JobName", "State",
                                         "ExitCode", "NodeList",
                                         "ConsumedEnergyRaw"),
                                 timeout=JOB_S * 4)
        return self

    def energy(self, step=None):
        """sacct's ConsumedEnergyRaw of the job line (step None) or a
        step ("batch", "extern", "0")."""
        want = str(self.id) if step is None else "%s.%s" % (self.id, step)
        for r in self.rows:
            if r["JobID"] == want:
                return float(r["ConsumedEnergyRaw"] or 0)
        raise AssertionError("no sacct row %s in %s" % (want, self.rows))

    def output(self):
        with open(self.out) as f:
            return f.read()

    def window(self):
        return energy.windows(self.output())[self.node]


def _err(got, want):
    return (got - want) / want


workdir = fixtures.workdir("se-shared-", mode=0o755)


def _finish(bench, jobs):
    """Wait for the jobs' records and the meter's truth of each."""
    t = time.monotonic()
    for j in jobs.values():
        j.wait()
        j.truth = bench.truth(j)
    print("%s: jobs %s done in %.1f s" % (bench.mode, sorted(jobs),
                                         time.monotonic() - t))
    return jobs


@pytest.fixture(scope="module")
def runs(cluster, workdir):
    """All jobs of the module, in one cluster configuration block:

    share  (share mode) node1: a = 1.0 CPU (a batch job with an srun step)
           and b = 0.5 CPU at once; node2: m = 0.75 CPU (the meter's own
           check); node3: x = 2 x 0.5 CPU, exclusive; all concurrently.
    again  `scontrol reconfigure`, slurmd of node2 restarted, then
           node1: c = 1.0 + d = 0.25, node2: e = 1.0 + f = 0.5 at once.
    node   (node mode, cluster restarted) node1: a, b; node3: x as above.
    """
    conf = dict(plugin_dirs=[PLUGIN_DIR],
                energy_type="acct_gather_energy/modbus",
                slurm_conf="PrologFlags=Contain\nDebugFlags=Energy\n")
    out = {}
    with cluster.configured(acct_gather_conf=acct_conf(workdir, "share"),
                            **conf):
        b = Bench(cluster, workdir, "share")
        try:
            b.start_meter()
            b.totals_before = b.totals("node1")
            b.jobs = _finish(b, dict(a=b.submit("node1", 1, 1.0),
                                     b=b.submit("node1", 1, 0.5),
                                     m=b.submit("node2", 1, 0.75),
                                     x=b.submit("node3", 2, 0.5,
                                                exclusive=True)))
            b.totals_after = b.totals("node1")
            out["share"] = b
            b.config_before = cluster.scontrol("show", "config").stdout
            cluster.scontrol("reconfigure")
            r = subprocess.run([cluster.script, "restart", "slurmd-node2"],
                               env=cluster.env, capture_output=True,
                               text=True, timeout=120)
            assert r.returncode == 0, r.stdout + r.stderr
            poll(lambda: b.current_watts("node2") >= IDLE_W * 0.9,
                 timeout=30, what="node2 to read the meter again")
            b.config_after = cluster.scontrol("show", "config").stdout
            b.again = _finish(b, dict(c=b.submit("node1", 1, 1.0, 12),
                                      d=b.submit("node1", 1, 0.25, 12),
                                      e=b.submit("node2", 1, 1.0, 12),
                                      f=b.submit("node2", 1, 0.5, 12)))
        finally:
            b.stop()
        n = Bench(cluster, workdir, "node")
        cluster.restart(acct_gather_conf=acct_conf(workdir, "node"), **conf)
        try:
            n.start_meter()
            n.jobs = _finish(n, dict(a=n.submit("node1", 1, 1.0),
                                     b=n.submit("node1", 1, 0.5),
                                     x=n.submit("node3", 2, 0.5,
                                                exclusive=True)))
            out["node"] = n
        finally:
            n.stop()
        yield out


@pytest.fixture(scope="module")
def share(runs):
    return runs["share"]


@pytest.fixture(scope="module")
def node_mode(runs):
    return runs["node"]


# ------------------------------------------------------------ the cluster
def test_cgroup_plugins_in_each_nodes_own_tree(share):
    """Slurm runs the cgroup plugins, and a job's cgroups are in its node's
    own tree (not another node's, not another cluster's)."""
    c = share.c
    conf = c.scontrol("show", "config").stdout
    assert "proctrack/cgroup" in conf and "task/cgroup" in conf
    for node in ("node1", "node3"):
        out = c.srun("-w", node, "-n1", "cat", "/proc/self/cgroup").stdout
        cpuacct = [l for l in out.splitlines() if ":cpuacct:" in l][0]
        tree = node_cgroup_dir(c.state, node, "cpuacct")
        # the host path of the node's tree ends in CLUSTER-NODE
        assert "/%s/slurm_%s/uid_0/job_" % (os.path.basename(tree), node) \
            in cpuacct, out


# --------------------------------------------------------------- the meter
def test_meter_sees_the_jobs_cpu_time(share):
    """The meter's CPU time of a job is what the job burnt (its own clock),
    and the power it served during the job is idle + k x that load."""
    m = share.jobs["m"]
    burnt = float(m.output().split("SE_CPU", 1)[1].split()[1])
    rec = m.truth
    assert abs(rec["cpu_s"] - burnt) <= 0.03 * burnt + 0.1, (rec, burnt)
    assert rec["cores"] == 1
    t0, t1 = m.window()
    watts = share.meter_joules("node2", t0 + 1, t1 - 1) / (t1 - t0 - 2)
    want = IDLE_W + W_PER_CPU * burnt / (t1 - t0)
    assert abs(watts - want) <= 0.05 * want, (watts, want)


def test_meter_trace_is_its_counter(share):
    """The trace it wrote integrates to the energy it counted."""
    t = share.meter.truth()
    for node, rec in t["nodes"].items():
        traced = float(subprocess.run(
            [energy.tool("se-trace"), "joules", share.meter.trace, node,
             "0", "%.6f" % t["t"]], capture_output=True, text=True,
            check=True).stdout)
        assert abs(traced - rec["energy_j"]) <= 0.01 + 1e-9 * traced, node


# -------------------------------------------------------- share mode proofs
@needs_share
def test_two_jobs_each_get_their_share(share):
    """node1: 1.0 and 0.5 CPU at once; each job's line within 5 % of its
    true share (as node mode charges each the node's whole delta, both
    would be far above it)."""
    for key in ("a", "b"):
        j = share.jobs[key]
        got, want = j.energy(), share.true_share(j)
        print("job %s (%s): sacct %.0f J, true share %.0f J (%+.2f %%, "
              "bound %.1f %%)" % (j.id, key, got, want, 100 * _err(got, want),
                                  100 * SHARE_TOL))
        assert abs(_err(got, want)) <= SHARE_TOL, \
            "job %s (%s): sacct %.0f J, true share %.0f J (%+.1f %%)" % (
                j.id, key, got, want, 100 * _err(got, want))


@needs_share
def test_batch_job_with_srun_step_counted_once(share):
    """Job a is a batch job with an srun step: its line is its share, and
    its .batch and .0 steps split it (they add up to the line, not twice
    it)."""
    j = share.jobs["a"]
    line, batch, step = j.energy(), j.energy("batch"), j.energy("0")
    print("job a: line %.0f J, .batch %.0f J + .0 %.0f J = %.1f %% of it"
          % (line, batch, step, 100 * (batch + step) / line))
    assert abs(_err(line, share.true_share(j))) <= SHARE_TOL
    # Counted once: node mode would give .batch and .0 each about the
    # whole line (2x).  What the steps do not hold is the job's share
    # while only its extern step existed (launch before .batch, teardown
    # after it: acct_gather_energy_attribution(5), "extern"): a fraction
    # of a second of its idle share and slurmstepd's CPU out of JOB_S.
    outside = 1 - (batch + step) / line
    print("job a: outside its steps %.2f %% of the line (bound %.2f %%), "
          "over it by %.0f J (bound %.0f J)"
          % (100 * outside, 100 * STEPS_OUTSIDE_TOL,
             max(batch + step - line, 0), STEPS_OVER_J))
    assert batch + step <= line + STEPS_OVER_J, (line, batch, step)
    assert outside <= STEPS_OUTSIDE_TOL, \
        "job a: .batch %.0f J + .0 %.0f J = %.2f %% of its line %.0f J " \
        "(bound %.2f %% outside)" % (batch, step, 100 * (1 - outside), line,
                                     100 * (1 - STEPS_OUTSIDE_TOL))
    assert step > 0.5 * line      # the work ran in .0


@needs_share
def test_shares_and_unattributed_add_up_to_the_meter(share):
    """node1's slurmd totals: charged + unattributed == measured to the mJ
    at every read-out; over jobs a and b (the only jobs on node1 then),
    the two job lines plus what stayed unattributed are the meter's
    energy between the two read-outs within 1 % (SUM_TOL), and the
    charged part is the two lines (sacct rounds each to a joule, and
    fixes it at the job's end, inside a sample interval)."""
    t0, t1 = share.totals_before, share.totals_after
    for t in (t0, t1):
        assert t["charged_mj"] + t["unattributed_mj"] == t["measured_mj"], t
    lines = sum(share.jobs[k].energy() for k in ("a", "b"))
    charged = (t1["charged_mj"] - t0["charged_mj"]) / 1000.0
    unattributed = (t1["unattributed_mj"] - t0["unattributed_mj"]) / 1000.0
    measured = (t1["measured_mj"] - t0["measured_mj"]) / 1000.0
    meter = share.meter_joules("node1", t0["time"], t1["time"])
    # sacct fixed each line as its extern step ended; slurmd's split still
    # charges the job the part of the sample interval that holds that end
    print("node1: jobs a + b %.0f J (charged %.3f J) + unattributed %.3f J "
          "= %.0f J, meter %.0f J (%+.2f %%); slurmd measured %.3f J"
          % (lines, charged, unattributed, lines + unattributed, meter,
             100 * _err(lines + unattributed, meter), measured)
          + " (bound %.2f %%)" % (100 * SUM_TOL))
    assert abs(charged - lines) <= 0.005 * lines + 2.0, (charged, lines)
    assert abs(_err(lines + unattributed, meter)) <= SUM_TOL, \
        "node1: jobs a + b %.0f J + unattributed %.0f J vs meter %.0f J " \
        "(%+.3f %%, bound %.2f %%; slurmd measured %.0f J)" % (
            lines, unattributed, meter,
            100 * _err(lines + unattributed, meter), 100 * SUM_TOL, measured)


@needs_share
def test_mode_survives_reconfigure_and_slurmd_restart(share):
    """After `scontrol reconfigure` (all nodes) and a restart of node2's
    slurmd, two pairs of jobs on node1 and node2 still get their shares."""
    for conf in (share.config_before, share.config_after):
        assert any(l.split() == ["EnergyAttribution", "=", "share"]
                   for l in conf.splitlines()), conf
    for key, j in sorted(share.again.items()):
        got, want = j.energy(), share.true_share(j)
        print("again: job %s (%s on %s): sacct %.0f J, true share %.0f J "
              "(%+.2f %%, bound %.1f %%)" % (j.id, key, j.node, got, want,
                                             100 * _err(got, want),
                                             100 * SHARE_TOL))
        assert abs(_err(got, want)) <= SHARE_TOL, \
            "job %s (%s on %s): sacct %.0f J, true share %.0f J (%+.1f %%)" \
            % (j.id, key, j.node, got, want, 100 * _err(got, want))


# ----------------------------------------------------------- node mode
def test_node_mode_step_is_the_nodes_delta(node_mode):
    """Slurm's behaviour (node mode): each step is charged the meter's
    energy over its life, whoever else ran; the meter's record of it."""
    for key in ("a", "b", "x"):
        j = node_mode.jobs[key]
        t0, t1 = j.window()
        # The step lives a little longer than its task's printed window
        # (slurmstepd sets up before the task's Python prints, and ends
        # after it): at least the meter over the window, at most the meter
        # over the window widened by STEP_SLACK_S on each side.
        inner = node_mode.meter_joules(j.node, t0, t1)
        outer = node_mode.meter_joules(j.node, t0 - STEP_SLACK_S,
                                       t1 + STEP_SLACK_S)
        got = j.energy("0")
        print("node mode: job %s (%s) .0 %.0f J = %.4f x the meter over "
              "the task, %.4f x with %g s more each side"
              % (j.id, key, got, got / inner, got / outer, STEP_SLACK_S))
        assert (1 - NODE_TOL) * inner <= got <= (1 + NODE_TOL) * outer, \
            "job %s (%s) .0: sacct %.0f J, meter %.0f J over the task, " \
            "%.0f J with %g s more each side" % (j.id, key, got, inner,
                                                 outer, STEP_SLACK_S)


def _presence_joules(bench, job):
    """The meter's energy on the job's node while the job was there."""
    t = bench.meter.truth()
    t0, t1 = energy.presence(job.truth)
    return energy.trace_joules(bench.meter.trace, job.node, t["epoch"],
                               t["epoch"] + t0, t["epoch"] + t1)


@needs_share
def test_exclusive_job_same_in_share_and_node_modes(share, node_mode):
    """The same exclusive job (node3, 2 x 0.5 CPU) in each mode: each
    figure is the node's energy over the job, within EXCLUSIVE_TOL of what
    the meter counted while it ran (the job alone on its node: its share
    is the whole node), and the two agree within SAME_TOL once each is
    divided by that (the two runs cannot last exactly as long on a machine
    whose two cores other work shares)."""
    s, n = share.jobs["x"], node_mode.jobs["x"]
    rs = s.energy() / _presence_joules(share, s)
    rn = n.energy() / _presence_joules(node_mode, n)
    msg = ("exclusive job: share mode %.0f J = %.4f x the meter over it, "
           "node mode %.0f J = %.4f x (bounds: each within %.4f of 1, "
           "%.4f apart; the meter's gaps at arrival and departure: share "
           "mode %s, node mode %s)"
           % (s.energy(), rs, n.energy(), rn, EXCLUSIVE_TOL, SAME_TOL,
              energy.presence_gaps(s.truth), energy.presence_gaps(n.truth)))
    print(msg)
    assert abs(rs - 1) <= EXCLUSIVE_TOL, msg
    assert abs(rn - 1) <= EXCLUSIVE_TOL, msg
    assert abs(rs - rn) <= SAME_TOL, msg
