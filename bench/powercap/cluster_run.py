#!/usr/bin/python3
"""The power cap on the test cluster, first run (issue #45): not in CI.

slurm-energy-powercapd and one slurm-energy-powercap-agent per node (on
the host, each asking its node's slurmd query socket, the node's
spool/slurm-energy-NODE.sock, and writing a fake RAPL zone of its own),
the nodes metered by one se-modbus-sim whose units follow those zones'
limits (--cap: power = min(demand, cap)), read by acct_gather_energy/modbus
in every slurmd.  Demands (the trace below) sum to 130 % of the cap on
average.  One timed job per node runs the whole time; after it:

- per job: sacct's ConsumedEnergy against the truth of min(demand, cap)
  over the job's window, recomputed from the trace and the meter's cap log
  (selab.capped);
- the cluster's power in 1 s windows (exact: the same truth summed over
  the nodes) against the cap: windows over it, the worst excess, and
  when the last one ended after the agents first capped.

    sudo bench/powercap/cluster_run.py [--seconds 60] [--cap-w 692]
        [--period 1]

With --compare, jobs whose progress follows the cap (capped_job.py: a
fixed WORK, done at min(demand, cap)/demand of full speed) on a workload
of two CPU-bound nodes and a GPU node running a GPU-bound job, the same
demands three times on the same cluster: uncapped (no daemon), with the
greedy daemon, with the daemon's --uniform (cap/3 each).  The GPU node
(node3) has two GPUs of the fake NVML (tests/gpu, follow_limits: each
draws min(demand, its limit)), which its agent caps through the nvml knob
with its package through the rapl knob (one node cap, split by
pcap_split); the meter adds them to the node's power (se-modbus-sim
--gpus), and its job's progress follows the GPUs' limits.  Per phase: each job's runtime, the total slowdown (the sum of the
runtimes against the uncapped sum), the 1 s windows over the cap while
the jobs ran, and the controller's reaction (from the jobs' start, the
cluster then asking 130 % of the cap of nodes the greedy daemon had
released while they idled, to the end of its last 1 s window over the
cap).  A node whose job is done draws 50 W (capped_job.py writes its
--idle file, se-modbus-sim --idle), not its trace's demand.

    sudo bench/powercap/cluster_run.py --compare [--work 20] [--runs 2]

Runs a cluster of its own identity (state /var/tmp/slurm-energy-cluster-
pc45, network 10.199.145.0/24, ports 21317..) and takes it down at the end.
Needs the build (make; make install into _build/stage) and munged.
"""
import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

IDENTITY = {
    "STATE": "/var/tmp/slurm-energy-cluster-pc45", "NET": "10.199.145",
    "BRIDGE": "sebrpc45", "NS_PREFIX": "se-pc45-", "VETH_PREFIX": "sevpc",
    "NAME": "secluspc45", "CTLD_PORT": "21317", "SLURMD_PORT": "21318",
    "DBD_PORT": "21319", "DB_PORT": "21306",
}
for _k, _v in IDENTITY.items():
    os.environ.setdefault("SE_CLUSTER_" + _k, _v)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OBJ = os.environ.get("SE_BUILD_OBJ", os.path.join(REPO, "_build", "obj"))
STAGE = os.path.join(REPO, "_build", "stage")
os.environ.setdefault("SE_PLUGIN_DIR", os.path.join(STAGE, "lib",
                                                    "slurm-energy"))
os.environ.setdefault("SE_BIN_DIR", os.path.join(STAGE, "bin"))
sys.path.insert(0, os.path.join(REPO, "contribs", "python"))

from selab import energy                                   # noqa: E402
from selab.capped import (capped_joules, played_capped_joules,  # noqa
                          read_cap_log)
from selab.cluster import Cluster                          # noqa: E402
from selab.gpu_rig import col_switch                       # noqa: E402
from selab.meters import ModbusSim, stop_process           # noqa: E402
from selab.modbus_rig import METER, modbus_conf            # noqa: E402
from selab.powercap_rig import fake_rapl_zone, start_munged  # noqa: E402
from selab.trace import Trace                              # noqa: E402

DAEMON = os.path.join(OBJ, "src", "powercap", "slurm-energy-powercapd")
AGENT = os.path.join(OBJ, "src", "powercap", "slurm-energy-powercap-agent")
NODES = ["node1", "node2", "node3"]
UNIT = {n: i + 1 for i, n in enumerate(NODES)}
FLOOR_W, MAX_W = 100, 400
# a node whose --compare job is done draws this (se-modbus-sim --idle):
# the trace is the job's demand, and an idle node is uncapped (released)
IDLE_W = 50
# demands: flat 350 W; 300 +/- 100 W over 20 s; 150..350 W over 40 s
# (means 350 + 300 + 250 = 900 W: 130 % of a 692 W cap)
# --compare: CPU-bound, CPU-bound, and the GPU node: its package at 40 W,
# its two GPUs at 150 W each while its job runs (30 W idle); 1,100 W in
# all, flat, so every phase sees the same demand; the cap 130 % under it.
# The GPU node's knobs span the nodes' [FLOOR_W, MAX_W]: package 20..80 W
# (a zone of 80 W at min_pct 25), each GPU 40..160 W (its limit range).
GPU_NODE, GPU_COLS, GPU_IDLE_COL = "node3", ["g0", "g1"], "gidle"
COMPARE_DEMAND = {"node1": 380, "node2": 380, "node3": 40,
                  "g0": 150, "g1": 150, "gidle": 30}
GPU_NODE_PACKAGE_MAX_W, GPU_NODE_PACKAGE_IDLE_W = 80, 20
GPU_LIMIT_MIN_W, GPU_LIMIT_W = 40, 160
COMPARE_CAP_W = round(sum(COMPARE_DEMAND[c] for c in NODES + GPU_COLS)
                      / 1.3)
COMPARE_TRACE = "@repeat 10\ntime %s\n0 %s\n10 %s\n" % (
    " ".join(COMPARE_DEMAND), " ".join(str(w) for w in
                                       COMPARE_DEMAND.values()),
    " ".join(str(w) for w in COMPARE_DEMAND.values()))
FAKE_NVML = os.path.join(OBJ, "tests", "gpu", ".libs", "libnvidia-ml.so.1")
JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                   "capped_job.py")
TRACE = """@repeat 40
time node1 node2 node3
0  350 300 150
5  350 400 250
10 350 300 350
15 350 200 350
20 350 300 350
25 350 400 250
30 350 300 150
35 350 200 150
40 350 300 150
"""


class Procs:
    def __init__(self, workdir):
        self.dir, self.procs = workdir, {}

    def start(self, name, argv, env=None):
        log = open(os.path.join(self.dir, name + ".log"), "ab")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=log,
                                            stdin=subprocess.DEVNULL, env=env)

    def stop(self, names):
        for name in names:
            stop_process(self.procs.pop(name, None))

    def stop_all(self):
        for name, p in list(self.procs.items()):
            stop_process(p)
            del self.procs[name]

    def log(self, name):
        with open(os.path.join(self.dir, name + ".log"), errors="replace") \
                as f:
            return f.read()


def put(path, text):
    with open(path, "w") as f:
        f.write(text)


def wait_for(pred, what, timeout=30):
    end = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > end:
            raise RuntimeError("timed out waiting for " + what)
        time.sleep(0.1)


def powercap_conf(args, port):
    return ("PowerCapWatts=%d\nPowerCapPeriod=%g\nPowerCapHoldSeconds=10\n"
            "PowerCapRaiseGate=%d\nPowerCapFloorWatts=%d\n"
            "PowerCapMaxWatts=%d\nPowerCapNodes=%s\n"
            "PowerCapController=127.0.0.1:%d\n"
            % (args.cap_w, args.period, int(args.period * 500), FLOOR_W,
               MAX_W, ",".join(NODES), port))


def start_powercap(args, c, procs, work, munge, limits, uniform=False,
                   nvml_state=None):
    """The daemon (greedy, or --uniform) and one agent per node; with
    nvml_state, the GPU node's agent caps its GPUs too."""
    conf = powercap_conf(args, args.port)
    put(os.path.join(work, "powercapd.conf"), conf + "PowerCapKnobs=rapl\n")
    env = dict(os.environ, SLURM_CONF=c.env["SLURM_CONF"])
    procs.start("daemon", [DAEMON, "-v", "-f",
                           os.path.join(work, "powercapd.conf"),
                           "-l", "127.0.0.1", "--munge-socket", munge]
                + (["--uniform"] if uniform else []), env=env)
    for n in NODES:
        knobs = "rapl:root=%s:min_pct=25" % os.path.join(work, n)
        env = None
        if nvml_state and n == GPU_NODE:
            knobs += ",nvml:lib=" + FAKE_NVML
            env = dict(os.environ, FAKE_NVML_STATE=nvml_state)
        put(os.path.join(work, n + ".conf"),
            conf + "PowerCapKnobs=%s\n" % knobs)
        sock = os.path.join(c.node_dir(n), "spool",
                            "slurm-energy-%s.sock" % n)
        wait_for(lambda: os.path.exists(sock), sock)
        procs.start("agent-" + n, [AGENT, "-v", "-f",
                                   os.path.join(work, n + ".conf"),
                                   "-n", n, "-q", sock, "--munge-socket",
                                   munge, "-u", "root"], env=env)


class Truth:
    """What each node drew: min(demand, cap) of its trace column under
    its cap log, and on the GPU node its GPUs too (what they played,
    their col switches, under the fake NVML's cap log)."""

    def __init__(self, trace, histories, gpus=None):
        self.trace, self.histories = trace, histories
        self.gpus = gpus or []          # [(pieces, history)] per GPU

    def joules(self, node, a, b):
        j = capped_joules(self.trace, node, a, b, self.histories[node])
        if node == GPU_NODE:
            j += sum(played_capped_joules(self.trace, pieces, a, b, hist)
                     for pieces, hist in self.gpus)
        return j


def cluster_power(truth, t0, t1):
    """[(window start, mean watts)] over whole seconds of [t0, t1]."""
    out, t = [], t0
    while t + 1 <= t1:
        out.append((t, sum(truth.joules(n, t, t + 1) for n in NODES)))
        t += 1
    return out


def report(args, truth, epoch, jobs, first_cap_t, end_t):
    trace, histories = truth.trace, truth.histories
    print("| job node | sacct J | truth J (min(demand, cap)) | error | "
          "uncapped J |")
    print("|---|---|---|---|---|")
    for node, (jobid, windows, sacct) in sorted(jobs.items()):
        a, b = (w - epoch for w in windows[node])
        true_j = capped_joules(trace, node, a, b, histories[node])
        print("| %s (job %d, %.1f s) | %s | %.0f | %+.3f %% | %.0f |" % (
            node, jobid, b - a, sacct, true_j,
            100 * energy.relative_error(sacct, true_j) if sacct else
            float("nan"), trace.joules(node, a, b)))
    series = cluster_power(truth, first_cap_t, end_t)
    over = [(t, w) for t, w in series if w > args.cap_w]
    print("\ncap %d W; %d 1 s windows from the first cap (trace time "
          "%.2f s) to %.2f s" % (args.cap_w, len(series), first_cap_t, end_t))
    print("windows over the cap: %d; worst %.1f W over; last over-cap window "
          "ends %.1f s after the first cap" % (
              len(over), max((w - args.cap_w for _, w in over), default=0),
              (over[-1][0] + 1 - first_cap_t) if over else 0.0))
    ws = [w for _, w in series]
    print("cluster power (1 s means): min %.1f, mean %.1f, max %.1f W; "
          "uncapped demand mean %.1f W" % (
              min(ws), sum(ws) / len(ws), max(ws),
              sum(trace.joules(n, first_cap_t, end_t) for n in NODES) /
              (end_t - first_cap_t)))
    for n in NODES:
        print("%s: %d cap changes, caps %s" % (
            n, len(histories[n]) - 1,
            " ".join("%.0f" % w for _, w in histories[n][:12])))


def idle_file(work, node):
    """Where a --compare job says its node idles (capped_job.py)."""
    return os.path.join(work, node + ".idle")


def package_max_uw(node, gpus):
    """A node's package zone: the node's range, less the GPUs' on the GPU
    node."""
    w = GPU_NODE_PACKAGE_MAX_W if gpus and node == GPU_NODE else MAX_W
    return w * 1000000


def nvml_state(work, trace_path, epoch):
    """The GPU node's fake NVML: two GPUs playing GPU_COLS, obeying their
    limits (follow_limits); its cap log <state>.caplog, limits
    <state>.limits, control <state>.control."""
    path = os.path.join(work, "nvml.state")
    put(path, "epoch %.6f\ntrace %s\nfollow_limits yes\n" % (epoch,
                                                               trace_path)
        + "".join("gpu bus=0000:%02x:00.0 uuid=GPU-%d minor=%d col=%s "
                  "plimit=%d plimit_min=%d\n"
                  % (0x3b + 0x40 * i, i, i, col, GPU_LIMIT_W,
                     GPU_LIMIT_MIN_W) for i, col in enumerate(GPU_COLS)))
    return path


def gpu_limits_mw(state):
    """The fake NVML's limits now ({index: mW}; none before a set)."""
    try:
        with open(state + ".limits") as f:
            return {int(i): int(mw) for i, mw in
                    (line.split() for line in f)}
    except FileNotFoundError:
        return {}


def gpu_pieces(state, epoch):
    """Per GPU, what it played: [(from trace time, column)], its state
    file's column from -inf, then its control file's col switches."""
    pieces = [[(-math.inf, col)] for col in GPU_COLS]
    try:
        with open(state + ".control") as f:
            for line in f:
                node, kind, idx, col, wall = line.split()
                if kind == "col":
                    pieces[int(idx)].append((float(wall) - epoch, col))
    except FileNotFoundError:
        pass
    return [[p[0]] + sorted(p[1:]) for p in pieces]


def gpus_play(state, columns, lead=0.3):
    """The GPUs play columns from now + lead on (a col line each in the
    fake NVML's control file, as capped_job.py writes when done)."""
    wall = time.time() + lead
    for i, col in enumerate(columns):
        col_switch(state + ".control", "*", i, col, wall=wall)


def start_rig(c, procs, trace, gpus=False):
    """The cluster on the load-following meter playing trace: each node's
    fake RAPL zone, the Modbus plugin, the simulator following the zones'
    limits (its cap history in caps.log); with gpus, the GPU node's fake
    NVML, its GPUs added to its unit.  Returns work, the trace's path,
    limits, epoch, caplog, the started simulator and the NVML state (or
    None)."""
    work = procs.dir
    trace_path = os.path.join(work, "demand.trace")
    put(trace_path, trace)
    limits = {n: fake_rapl_zone(os.path.join(work, n),
                                package_max_uw(n, gpus),
                                package_max_uw(n, gpus)) for n in NODES}
    c.restart(plugin_dirs=[os.environ["SE_PLUGIN_DIR"]],
              energy_type="acct_gather_energy/modbus",
              acct_gather_conf=modbus_conf(
                  work, "counter", map_lines=["Nodes=%s Unit=%d" % (n, u)
                                              for n, u in UNIT.items()]),
              slurm_conf="DebugFlags=Energy\n")
    epoch = time.time()
    caplog = os.path.join(work, "caps.log")
    extra, env, state = ["--cap-log", caplog], None, None
    if gpus:
        state = nvml_state(work, trace_path, epoch)
        # the GPUs in its meter; its package's RAPL energy counter beside
        # its limit, so that its agent splits its cap by draw
        extra += ["--gpus", "%d:%s" % (UNIT[GPU_NODE], FAKE_NVML),
                  "--energy-uj", "%d:%s" % (UNIT[GPU_NODE], os.path.join(
                      os.path.dirname(limits[GPU_NODE]), "energy_uj"))]
        env = dict(os.environ, FAKE_NVML_STATE=state)
    sim = ModbusSim(trace_path, epoch, {u: n for n, u in UNIT.items()},
                    ["--model", "sdm630"], tcp=METER, workdir=work,
                    extra_args=sum((["--cap", "%d:%s" % (UNIT[n], limits[n]),
                                     "--idle", "%d:%s" % (UNIT[n],
                                                          idle_file(work, n))]
                                    for n in NODES), []) + extra, env=env)
    sim.start()
    return work, trace_path, limits, epoch, caplog, sim, state


def run(args, c, procs):
    work, trace_path, limits, epoch, caplog, sim, _ = start_rig(c, procs,
                                                                TRACE)
    try:
        energy.wait_for_power(c, NODES)
        munge = start_munged(work, procs.start)
        wait_for(lambda: os.path.exists(munge), "munged")
        start_powercap(args, c, procs, work, munge, limits)
        jobs = {n: energy.run_timed(c, "pc-" + n, ["-w", n], args.seconds)
                for n in NODES}
        done = {n: energy.finish(c, p, "pc-" + n, args.seconds + 120)
                for n, p in jobs.items()}
        end_t = time.time() - epoch
    finally:
        procs.stop_all()
        sim.stop()
    histories = {n: read_cap_log(caplog, UNIT[n]) for n in NODES}
    changes = [t for n in NODES for t, _ in histories[n][1:]]
    first_cap_t = min(changes) if changes else 0.0
    results = {n: (jobid, win, energy.consumed_energy(c, jobid).get(
        "%d.0" % jobid)) for n, (jobid, win) in done.items()}
    report(args, Truth(Trace(trace_path), histories), epoch, results,
           first_cap_t, end_t)


def read_uw(path):
    """A fake zone's limit; the knob truncates and writes the file, so an
    empty read is read again."""
    for _ in range(50):
        with open(path, encoding="ascii") as f:
            text = f.read().strip()
        if text:
            return int(text)
        time.sleep(0.005)
    raise RuntimeError("%s: empty" % path)


def connected(procs):
    """How many times the daemon's log says an agent connected."""
    try:
        return procs.log("daemon").count("agent connected")
    except FileNotFoundError:
        return 0


def compare_phase(args, c, procs, rig, mode):
    """One phase of --compare: the jobs under mode (uncapped, greedy,
    uniform); returns its figures (trace times)."""
    work, epoch, limits = rig["work"], rig["epoch"], rig["limits"]
    state = rig["nvml"]
    names = ["daemon"] + ["agent-" + n for n in NODES]
    if mode != "uncapped":
        before = connected(procs)
        start_powercap(args, c, procs, work, rig["munge"], limits,
                       uniform=mode == "uniform", nvml_state=state)
        # the nodes idle (their last jobs done): greedy releases them, so
        # no cap comes before the jobs; uniform caps them at once
        wait_for(lambda: connected(procs) - before >= len(NODES),
                 "the agents connected", 60)
        if mode == "uniform":
            wait_for(lambda: all(read_uw(limits[n]) < package_max_uw(n, True)
                                 for n in NODES), "the first caps", 60)
    t_jobs = time.time() - epoch
    for n in NODES:     # busy again: the trace's demand
        if os.path.exists(idle_file(work, n)):
            os.unlink(idle_file(work, n))
    gpus_play(state, GPU_COLS)
    jobs = {n: c.popen(["srun", "-J", "cmp-%s-%s" % (mode, n), "-w", n,
                        "/usr/bin/python3", JOB, "--trace", rig["trace"],
                        "--column", n, "--epoch", "%.6f" % epoch,
                        "--cap-file", limits[n], "--work",
                        "%g" % args.work, "--idle-file", idle_file(work, n),
                        "--idle-watts", "%g" % (
                            GPU_NODE_PACKAGE_IDLE_W if n == GPU_NODE
                            else IDLE_W)]
                       + (["--gpu-limits", state + ".limits",
                           "--gpu-columns", ",".join(GPU_COLS),
                           "--gpu-control", state + ".control",
                           "--gpu-idle-column", GPU_IDLE_COL]
                          if n == GPU_NODE else [])) for n in NODES}
    runtimes, windows = {}, {}
    for n, p in jobs.items():
        out, err = p.communicate(timeout=args.work * 4 + 120)
        if p.returncode != 0:
            raise RuntimeError("job on %s failed: %s" % (n, err))
        fields = [ln.split() for ln in out.splitlines()
                  if ln.startswith("SE_WORK ")][0]
        runtimes[n] = float(fields[3])
        windows[n] = [w - epoch for w in energy.windows(out)[fields[1]]]
    procs.stop(names)
    # the agents stopped restore their knobs: every one back at its default
    wait_for(lambda: all(read_uw(limits[n]) == package_max_uw(n, True)
                         for n in NODES)
             and all(mw == GPU_LIMIT_W * 1000
                     for mw in gpu_limits_mw(state).values()),
             "the knobs' defaults", 30)
    return {"mode": mode, "runtimes": runtimes, "t_jobs": t_jobs,
            "t0": min(w[0] for w in windows.values()),
            "t1": max(w[1] for w in windows.values())}


def compare_report(args, truth, phases):
    print("| run | phase | job runtimes node1 / node2 / node3 (s) | sum (s) "
          "| slowdown vs uncapped | 1 s windows over the cap while the "
          "jobs ran | worst excess (W) | reaction (s) | cluster power "
          "mean / max (W) |")
    print("|---|---|---|---|---|---|---|---|---|")
    base = None
    for run, ph in phases:
        total = sum(ph["runtimes"].values())
        if ph["mode"] == "uncapped":
            base = total
        series = cluster_power(truth, ph["t0"], ph["t1"])
        over = [w - args.cap_w for _, w in series if w > args.cap_w + 0.5]
        react = "-"
        if ph["mode"] != "uncapped":
            # from the jobs' start on idle (released) nodes, the cluster
            # then asking 130 % of the cap, to the end of its last 1 s
            # window over the cap up to the jobs' end
            pre = cluster_power(truth, ph["t_jobs"], ph["t1"])
            late = [t for t, w in pre if w > args.cap_w + 0.5]
            react = "%.1f" % ((late[-1] + 1 - ph["t_jobs"]) if late
                              else 0.0)
        ws = [w for _, w in series]
        print("| %d | %s | %s | %.1f | %s | %d of %d | %.1f | %s | "
              "%.1f / %.1f |" % (
                  run, ph["mode"], " / ".join(
                      "%.1f" % ph["runtimes"][n] for n in NODES), total,
                  "%+.1f %%" % (100 * (total / base - 1)) if base else "-",
                  len(over), len(series), max(over, default=0.0), react,
                  sum(ws) / len(ws), max(ws)))
    demand = sum(COMPARE_DEMAND[c] for c in NODES + GPU_COLS)
    print("\nwork %g s per job; demands node1 %d, node2 %d, node3 %d + "
          "GPUs %s W (%d W, %.0f %% of the %d W cap); period %g s" % (
              args.work, COMPARE_DEMAND["node1"], COMPARE_DEMAND["node2"],
              COMPARE_DEMAND["node3"], " + ".join(
                  str(COMPARE_DEMAND[c]) for c in GPU_COLS),
              demand, 100 * demand / args.cap_w, args.cap_w, args.period))
    for i, (_, hist) in enumerate(truth.gpus):
        print("GPU %d: %d limit changes, lowest %.0f W" % (
            i, len(hist) - 1, min(w for _, w in hist)))


def run_compare(args, c, procs):
    work, trace_path, limits, epoch, caplog, sim, state = start_rig(
        c, procs, COMPARE_TRACE, gpus=True)
    phases = []
    try:
        energy.wait_for_power(c, NODES)
        munge = start_munged(work, procs.start)
        wait_for(lambda: os.path.exists(munge), "munged")
        rig = {"work": work, "epoch": epoch, "limits": limits,
               "munge": munge, "trace": trace_path, "nvml": state}
        for run in range(1, args.runs + 1):
            for mode in ("uncapped", "greedy", "uniform"):
                phases.append((run, compare_phase(args, c, procs, rig,
                                                  mode)))
                print("run %d %s: %s" % (run, mode, phases[-1][1]),
                      flush=True)
    finally:
        procs.stop_all()
        sim.stop()
    histories = {n: read_cap_log(caplog, UNIT[n]) for n in NODES}
    gpus = list(zip(gpu_pieces(state, epoch),
                    (read_cap_log(state + ".caplog", i)
                     for i in range(len(GPU_COLS)))))
    compare_report(args, Truth(Trace(trace_path), histories, gpus), phases)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--cap-w", type=int,
                    help="the cap (default 692 W; --compare: %d W, the "
                    "demand over 1.3)" % COMPARE_CAP_W)
    ap.add_argument("--period", type=float, default=1.0)
    ap.add_argument("--port", type=int, default=21400,
                    help="the daemon's port on loopback")
    ap.add_argument("--compare", action="store_true",
                    help="jobs whose progress follows the cap: uncapped, "
                    "greedy and uniform on the same workload")
    ap.add_argument("--work", type=float, default=20,
                    help="--compare: each job's work, seconds at full speed")
    ap.add_argument("--runs", type=int, default=2,
                    help="--compare: the three phases this many times")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (logs, cap log)")
    args = ap.parse_args()
    if args.cap_w is None:
        args.cap_w = COMPARE_CAP_W if args.compare else 692
    work = tempfile.mkdtemp(prefix="se-pc-cluster-")
    os.chmod(work, 0o755)     # munged wants its socket's dirs searchable
    procs = Procs(work)
    c = Cluster()
    try:
        (run_compare if args.compare else run)(args, c, procs)
    finally:
        procs.stop_all()
        try:
            c.down()
        finally:
            if args.keep:
                print("work directory:", work)
            else:
                shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
