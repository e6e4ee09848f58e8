#!/usr/bin/env python3
"""A Modbus power meter whose power follows the real CPU load of a node.

For each unit (one per test-cluster node) the meter samples, HZ times a
second, the CPU time of every process of that node from the node's own
cgroup v1 tree (contribs/cluster: each node's hierarchies are directories
CLUSTER-NODE bound over /sys/fs/cgroup/CTRL in the node), and serves

    power = IDLE_W + W_PER_CPU x (CPUs busy in the node's tree)

through a real register map (a built-in model of pymodbus_meter.py, e.g. the
SDM630's float32 power and kWh registers), so acct_gather_energy/modbus
reads it unchanged, on the counter path or the power path.

    load_meter.py --unit 1:node1:CPUACCT_DIR:CPUSET_DIR [--unit ...]
        --idle-watts 60 --watts-per-cpu 90 [--hz 10]
        --host 10.199.2.1 --port 15021 --model sdm630
        --trace-out node.trace --truth-out truth.json [--pidfile F]

Or its power follows the CPU frequency Slurm set on a node (the cpufreq
tests): --freq-unit 1:node1:NODE_DIR reads the node's fake cpufreq tree
(NODE_DIR/cpu/cpuN/cpufreq, the host side of contribs/cluster's bind
mounts) at every sample and serves

    power = IDLE_W + sum over its N CPUs of DYN_W / N x (f_cpu / F_MAX) ** 3

(--dyn-watts, --f-max-khz; f_cpu is scaling_setspeed under the userspace
governor, scaling_max_freq otherwise).  Its truth file has each node's
energy and power; the trace is written the same way.

How power and energy relate (exact, not sampled twice): the CPU time the
node used in one sampling interval [t(i-1), t(i)] sets the power of the
next, [t(i), t(i+1)]; the power register holds it during that interval and
the energy register holds the integral of that step function (E(t(i)) +
P x (now - t(i)) at a request).  The same step function is written to
--trace-out in the shared trace format (contribs/trace/FORMAT.md: a step
row pair at each sample), so `se-trace joules` gives the meter's energy
over any interval exactly.

The truth of each job (--truth-out, JSON, rewritten every second and at
exit) is computed here from the cgroups, independently of any plugin:

- cpu_j: W_PER_CPU x the CPU time of the job's cgroup (job_J in the node's
  cpuacct tree, all its steps and tasks) in each interval: the energy its
  load added to the meter (served one interval later, as above);
- idle_node_j: IDLE_W x dt x cores_j / cores_of_node: the idle power split
  by allocated cores over all the node's cores (the cores nobody holds stay
  unattributed);
- idle_alloc_j: IDLE_W x dt x cores_j / cores allocated on the node: the
  idle power split among the jobs present only;

first and last: the trace times of the first and the last sample that saw
the job's cgroup; before: the sample before first, gone: the first sample
that no longer saw it (a sample late on a loaded host widens these gaps).

cores_j from the job's cpuset (job_J/cpuset.cpus; task/cgroup with
ConstrainCores=yes makes it the job's allocation).  A job counts in an
interval when its cgroup exists at the interval's end.  Per node the file
has the meter's energy since the epoch and the CPU time of the whole tree
(slurmd and slurmstepd included: their load is the node's, no job's).

The epoch (trace time 0) is the meter's start, in Unix seconds, written in
the truth file and as a comment at the top of the trace.

GPUs (issue #31): a unit's power can also carry its node's GPUs as the
fake NVML (tests/gpu/fake_nvml.c) plays them, seen through the node's PSUs:

    --gpu-trace GPU.trace --gpu-epoch S --gpu-cols 1:gpu0,gpu1[;2:gpu2]
    --psu-factor F [--gpu-control NVML_STATE.control]

GPU i of a unit plays the i-th column listed for it (NVML index order, as
the fake's "gpu" lines give them col=), from wall-clock S = GPU trace time
0 (the fake's "epoch").  The meter's clock is cut into ticks of 1/HZ s
from its epoch; during tick k the unit serves F x (the GPUs' exact joules
over the tick) / the tick's length on top of its CPU power, so at every
tick boundary the GPUs have added exactly F x their joules since the
meter's epoch to its energy (within a tick, at most F x the swing of their
power over one tick).  Unlike the CPU part the GPU part has no lag: the
GPU trace is known ahead.  The served trace gets a step at every tick
boundary, so se-trace still gives the meter's energy exactly.

--gpu-control names the fake NVML's control file: its "NODE col IDX
COLUMN WALL" lines (only those; NODE "*" or the unit's node name, IDX "*"
or the GPU's index) switch GPU IDX to COLUMN from WALL on, as the fake
does, so the meter follows the GPU that actually got the heavy column.
The file is re-read when it changes, at each sample; a switch changes
only the ticks the meter has not begun, so WALL must be at least two
ticks ahead of now when the line is written (selab/gpu_rig.py col_switch).

Each unit with GPUs gains in the truth file: gpu_j {GPU index: its exact
NVML joules from the meter's epoch to "t"}, gpu_cols [the column each GPU
plays at "t"], and gpu_meter_j (the part of energy_j the GPUs added:
F x their joules up to the last tick boundary, plus the tick begun);
psu_factor and gpu_epoch are at the top.
"""
import argparse
import asyncio
import glob
import json
import math
import os
import re
import signal
import sys
import threading
import time
from fractions import Fraction

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# the trace semantics written from FORMAT.md (selab, beside this tree)
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from selab.trace import Trace  # noqa: E402

JOB_DIR = re.compile(r"^job_(\d+)$")
# the Modbus side (pymodbus) is imported by main() only: the model and its
# GPU part are tested without it (tests/unit/test_load_meter_gpus.py)


def read_int(path):
    with open(path) as f:
        return int(f.read().split()[0])


def count_cpus(cpulist):
    """Number of CPUs in a cpuset list such as '0-1,4'."""
    n = 0
    for part in cpulist.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        n += int(hi or lo) - int(lo) + 1
    return n


def job_dirs(root):
    """{job id: directory} of the job_J cgroups under a node's tree
    (slurm_NODE/uid_U/job_J, at any depth up to that)."""
    out = {}
    for dirpath, dirnames, _ in os.walk(root):
        depth = dirpath[len(root):].count(os.sep)
        for d in list(dirnames):
            m = JOB_DIR.match(d)
            if m:
                out[m.group(1)] = os.path.join(dirpath, d)
                dirnames.remove(d)          # steps and tasks: not needed
        if depth >= 2:
            dirnames[:] = []
    return out


class Node:
    """One unit: the node's cgroup tree, its power and energy, its jobs."""

    def __init__(self, name, cpuacct, cpuset):
        self.name, self.cpuacct, self.cpuset = name, cpuacct, cpuset
        with open(os.path.join(cpuset, "cpuset.cpus")) as f:
            self.cores = count_cpus(f.read())
        self.usage = read_int(os.path.join(cpuacct, "cpuacct.usage"))
        self.cpu_s = 0.0          # CPU time of the whole tree since start
        self.energy_j = 0.0       # the meter's energy since the epoch
        self.power_w = None       # set by the first sample
        self.job_usage = {}       # job id -> last cpuacct.usage seen (ns)
        self.jobs = {}            # job id -> truth record


def effective_khz(cpu_dir):
    """A CPU's frequency as Slurm set it: scaling_setspeed under the
    userspace governor, scaling_max_freq otherwise (0: unreadable)."""
    def rd(name):
        with open(os.path.join(cpu_dir, "cpufreq", name)) as f:
            return f.read().strip()
    try:
        if rd("scaling_governor") == "userspace":
            return int(rd("scaling_setspeed"))
        return int(rd("scaling_max_freq"))
    except (OSError, ValueError):
        return 0


class FreqNode:
    """One unit whose power follows its CPUs' frequencies (--freq-unit)."""

    def __init__(self, name, node_dir, dyn_w, f_max_khz):
        self.name, self.dyn_w, self.f_max = name, dyn_w, f_max_khz
        self.cpus = sorted(glob.glob(os.path.join(node_dir, "cpu",
                                                  "cpu[0-9]*")))
        self.cores = len(self.cpus)
        self.cpu_s = 0.0
        self.energy_j = 0.0
        self.power_w = None
        self.jobs = {}

    def dynamic_w(self):
        return sum(self.dyn_w / self.cores *
                   (effective_khz(c) / self.f_max) ** 3 for c in self.cpus)


class GpuRig:
    """The GPU trace the fake NVML plays and its column switches (the
    control file's "col" lines): what GPU IDX of a node plays when."""

    def __init__(self, trace_path, epoch, factor, control=None):
        self.trace = Trace(trace_path)
        self.epoch, self.factor, self.control = epoch, factor, control
        self.switches = []        # (node, idx or None, column, from), in order
        self._seen = None         # the control file's (mtime, size) read

    def refresh(self):
        """Re-read the control file's "col" lines if it changed."""
        if not self.control:
            return
        try:
            st = os.stat(self.control)
            seen = (st.st_mtime_ns, st.st_size)
            if seen == self._seen:
                return
            with open(self.control) as f:
                text = f.read()
        except OSError:
            seen, text = None, ""          # no file: no switch (as the fake)
        self._seen = seen
        self.switches = []
        for line in text.splitlines():
            f = line.split()
            if len(f) < 5 or f[0].startswith("#") or f[1] != "col" or \
                    f[3] not in self.trace.columns:
                continue        # not a switch, or one the fake ignores
            try:
                idx = None if f[2] == "*" else int(f[2])
                self.switches.append((f[0], idx, f[3],
                                      float(f[4]) - self.epoch))
            except ValueError:
                continue

    def schedule(self, node, idx, column):
        """[(from, column)] GPU idx of node plays: column from -inf, then its
        switches by time (sorted stably: of two at one instant, the later
        line wins, as in the fake)."""
        mine = [(t, c) for n, i, c, t in self.switches
                if n in ("*", node) and i in (None, idx)]
        return [(-math.inf, column)] + sorted(mine, key=lambda x: x[0])

    def joules(self, plan, a, b):
        """Exact joules of a schedule over GPU trace time [a, b]."""
        total = 0.0
        for j, (start, column) in enumerate(plan):
            end = plan[j + 1][0] if j + 1 < len(plan) else math.inf
            x, y = max(a, start), min(b, end)
            if y > x:
                total += self.trace.joules(column, x, y)
        return total


class NodeGpus:
    """A unit's GPUs on the meter's ticks (k / HZ s of meter time): during
    tick k they add F x their exact joules over the tick / its length.  A
    tick's joules are frozen when first asked for, so a switch read later
    never changes energy already served."""

    def __init__(self, rig, node, columns, meter_epoch, hz):
        self.rig, self.node, self.columns = rig, node, columns
        self.shift = meter_epoch - rig.epoch    # meter time -> GPU time
        self.hz = hz
        self.ticks = {}          # tick -> the GPUs' joules over it (frozen)
        self.cum_k, self.cum_j = 0, 0.0    # joules of the ticks before cum_k
        self.t_seen = 0.0        # never back: the energy stays monotonic

    def tick_of(self, t):
        """The tick t lies in (a boundary starts its tick)."""
        k = math.floor(t * self.hz)
        if (k + 1) / self.hz <= t:
            k += 1
        elif k / self.hz > t:
            k -= 1
        return k

    def plans(self):
        return [self.rig.schedule(self.node, i, c)
                for i, c in enumerate(self.columns)]

    def tick_j(self, k):
        if k not in self.ticks:
            a, b = k / self.hz + self.shift, (k + 1) / self.hz + self.shift
            self.ticks[k] = sum(self.rig.joules(p, a, b)
                                for p in self.plans())
        return self.ticks[k]

    def watts(self, k):
        """The GPUs' power served during tick k (F applied)."""
        return self.rig.factor * self.tick_j(k) * self.hz

    def energy_j(self, t):
        """What the GPUs added to the meter from its epoch to t (F
        applied): whole ticks, then the tick begun pro rata."""
        t = self.t_seen = max(t, self.t_seen)
        k = self.tick_of(t)
        while self.cum_k < k:
            self.cum_j += self.tick_j(self.cum_k)
            self.cum_k += 1
        part = self.tick_j(k) * (t - k / self.hz) * self.hz
        return self.rig.factor * (self.cum_j + part)

    def forget_before(self, k):
        for old in [x for x in self.ticks if x < k]:
            del self.ticks[old]

    def played_j(self, t):
        """{GPU index: its exact NVML joules from the meter's epoch to t}."""
        return {str(i): self.rig.joules(p, self.shift, t + self.shift)
                for i, p in enumerate(self.plans())}

    def playing(self, t):
        """The column each GPU plays at meter time t."""
        return [[c for start, c in p if start <= t + self.shift][-1]
                for p in self.plans()]


class LoadMeter:
    def __init__(self, nodes, idle_w, w_per_cpu, trace_out, truth_out,
                 gpus=None, epoch=None):
        """gpus: GpuRig and {node name: [its GPUs' columns]}, or None."""
        self.nodes, self.idle_w, self.k = nodes, idle_w, w_per_cpu
        self.truth_out = truth_out
        self.lock = threading.RLock()     # the SIGTERM handler dumps too
        self.epoch = time.time() if epoch is None else epoch
        self.t_last = 0.0          # trace time of the last sample
        self.rig = gpus[0] if gpus else None
        for n in nodes:
            n.power_w = idle_w + (n.dynamic_w() if isinstance(n, FreqNode)
                                  else 0.0)
            n.gpus, n.gpu_e = None, 0.0   # GPU energy served up to t_last
            if gpus and n.name in gpus[1]:
                n.gpus = NodeGpus(self.rig, n.name, gpus[1][n.name],
                                  self.epoch, gpus[2])
        self.trace = open(trace_out, "w")
        self.trace.write("# load_meter.py: idle %g W + %g W per busy CPU, "
                         "epoch %.6f\n" % (idle_w, w_per_cpu, self.epoch))
        if self.rig:
            self.trace.write("# + %g x the GPUs' power per tick of %g s, "
                             "GPU epoch %.6f\n" % (self.rig.factor,
                                                   1.0 / gpus[2],
                                                   self.rig.epoch))
        self.trace.write("time " + " ".join(n.name for n in nodes) + "\n")
        self._row(0.0, [n.power_w + self._gpu_w(n, 0) for n in nodes])
        self.trace.flush()

    def _gpu_w(self, node, k):
        return node.gpus.watts(k) if node.gpus else 0.0

    def _gpu_rows(self, t_from, t_to, watts):
        """Steps of the GPU part at the tick boundaries inside (t_from,
        t_to), under the CPU power then served (watts, per node)."""
        grid = next((n.gpus for n in self.nodes if n.gpus), None)
        if grid is None:
            return
        for k in range(grid.tick_of(t_from) + 1, grid.tick_of(t_to) + 1):
            g = k / grid.hz
            if g >= t_to:
                break
            self._row(g, [w + self._gpu_w(n, k - 1)
                          for w, n in zip(watts, self.nodes)])
            self._row(g, [w + self._gpu_w(n, k)
                          for w, n in zip(watts, self.nodes)])

    def _row(self, t, watts):
        self.trace.write("%.6f %s\n" % (t, " ".join("%.6f" % w
                                                     for w in watts)))

    # -------------------------------------------------------- sampling
    def _jobs_now(self, node):
        """{job id: (cpuacct.usage ns, allocated cores)} of jobs present."""
        out = {}
        sets = job_dirs(node.cpuset)
        for job, d in job_dirs(node.cpuacct).items():
            try:
                usage = read_int(os.path.join(d, "cpuacct.usage"))
                cores = node.cores
                if job in sets:
                    with open(os.path.join(sets[job], "cpuset.cpus")) as f:
                        cores = count_cpus(f.read()) or node.cores
            except (OSError, ValueError, IndexError):
                continue                   # removed while we looked
            out[job] = (usage, cores)
        return out

    def _sample_node(self, node, t, dt):
        usage = read_int(os.path.join(node.cpuacct, "cpuacct.usage"))
        busy_s = max(usage - node.usage, 0) / 1e9
        node.usage = usage
        node.cpu_s += busy_s
        node.energy_j += node.power_w * dt      # the interval just served
        jobs = self._jobs_now(node)
        alloc = sum(c for _, c in jobs.values())
        for job, (u, cores) in jobs.items():
            last = node.job_usage.get(job)
            # a job's cgroup made again (a new step after none): from 0
            d_ns = u - last if last is not None and u >= last else u
            node.job_usage[job] = u
            rec = node.jobs.setdefault(job, dict(
                cpu_s=0.0, cpu_j=0.0, idle_node_j=0.0, idle_alloc_j=0.0,
                core_s=0.0, cores=cores, first=t, last=t, before=t - dt))
            rec["cpu_s"] += d_ns / 1e9
            rec["cpu_j"] += self.k * d_ns / 1e9
            if last is not None:       # present over the whole interval
                rec["idle_node_j"] += self.idle_w * dt * cores / node.cores
                rec["idle_alloc_j"] += self.idle_w * dt * cores / alloc
                rec["core_s"] += cores * dt
            rec["cores"], rec["last"] = cores, t
        for job in list(node.job_usage):
            if job not in jobs:
                del node.job_usage[job]
                node.jobs[job]["gone"] = t
        # the next interval's power: this interval's load
        node.power_w = self.idle_w + self.k * busy_s / dt

    def _sample_freq(self, node, dt):
        node.energy_j += node.power_w * dt      # the interval just served
        node.power_w = self.idle_w + node.dynamic_w()

    def sample(self, t=None):
        """One sample at meter time t (default: now)."""
        with self.lock:
            if t is None:
                t = time.time() - self.epoch
            dt = t - self.t_last
            if dt <= 0:
                return
            if self.rig:
                self.rig.refresh()
            before = [n.power_w for n in self.nodes]
            self._gpu_rows(self.t_last, t, before)
            for n in self.nodes:
                if isinstance(n, FreqNode):
                    self._sample_freq(n, dt)
                else:
                    self._sample_node(n, t, dt)
                self._sample_gpus(n, t)
            # the GPU power just before t (the tick ending at t, if t is a
            # boundary), then from t
            k_at = [n.gpus.tick_of(t) if n.gpus else 0 for n in self.nodes]
            k_before = [k - 1 if n.gpus and k / n.gpus.hz == t else k
                        for k, n in zip(k_at, self.nodes)]
            self._row(t, [w + self._gpu_w(n, k) for w, n, k
                          in zip(before, self.nodes, k_before)])  # a step
            self._row(t, [n.power_w + self._gpu_w(n, k)
                          for n, k in zip(self.nodes, k_at)])
            for n, k in zip(self.nodes, k_before):
                if n.gpus:
                    n.gpus.forget_before(k)
            self.t_last = t
            self.trace.flush()

    def _sample_gpus(self, node, t):
        if node.gpus:
            e = node.gpus.energy_j(t)
            node.energy_j += e - node.gpu_e     # the interval just served
            node.gpu_e = e

    def run(self, hz):
        period = 1.0 / hz
        next_t = time.monotonic()
        next_dump = next_t + 1.0
        while True:
            next_t += period
            delay = next_t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            else:
                next_t = time.monotonic()          # late: do not bunch up
            self.sample()
            if time.monotonic() >= next_dump:
                self.dump()
                next_dump += 1.0

    # --------------------------------------------------------- serving
    def reading(self, node, t=None):
        """(watts, joules since the epoch) now (or at meter time t), as the
        registers hold them."""
        with self.lock:
            if t is None:
                t = time.time() - self.epoch
            t = max(t, self.t_last)
            watts = node.power_w
            joules = node.energy_j + node.power_w * (t - self.t_last)
            if node.gpus:
                watts += node.gpus.watts(node.gpus.tick_of(t))
                joules += node.gpus.energy_j(t) - node.gpu_e
            return watts, joules

    def _node_truth(self, n):
        rec = dict(cores=n.cores, cpu_s=n.cpu_s, energy_j=n.energy_j,
                   power_w=n.power_w, jobs=n.jobs)
        if n.gpus:
            rec.update(gpu_j=n.gpus.played_j(self.t_last),
                       gpu_cols=n.gpus.playing(self.t_last),
                       gpu_meter_j=n.gpu_e)
        return rec

    def dump(self):
        with self.lock:
            doc = dict(epoch=self.epoch, idle_watts=self.idle_w,
                       watts_per_cpu=self.k, t=self.t_last,
                       nodes={n.name: self._node_truth(n)
                              for n in self.nodes})
            if self.rig:
                doc.update(psu_factor=self.rig.factor,
                           gpu_epoch=self.rig.epoch)
        tmp = self.truth_out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
        os.replace(tmp, self.truth_out)


def make_device(unit, node, meter, load):
    from pymodbus_meter import device_of
    return device_of(unit, meter, lambda: load.reading(node))


def parse_gpu_cols(specs):
    """--gpu-cols 'UNIT:COL[,COL][;UNIT:COL...]' (repeatable) ->
    {unit id: [columns, in NVML index order]}."""
    out = {}
    for spec in specs:
        for part in filter(None, spec.split(";")):
            unit, _, cols = part.partition(":")
            if not unit.isdigit() or not cols or int(unit) in out:
                raise ValueError("--gpu-cols %s: want UNIT:COL[,COL] once "
                                 "per unit" % part)
            out[int(unit)] = cols.split(",")
    return out


def gpu_options(p, args, node_of_unit):
    """(GpuRig, {node: columns}, HZ) from the --gpu-* options, or None."""
    if not args.gpu_cols:
        if args.gpu_trace or args.gpu_control:
            p.error("--gpu-trace and --gpu-control need --gpu-cols")
        return None
    if not args.gpu_trace or args.gpu_epoch is None:
        p.error("--gpu-cols needs --gpu-trace and --gpu-epoch")
    if args.psu_factor < 0:
        p.error("--psu-factor must be >= 0")
    try:
        cols = parse_gpu_cols(args.gpu_cols)
        rig = GpuRig(args.gpu_trace, args.gpu_epoch, args.psu_factor,
                     args.gpu_control)
    except (OSError, ValueError) as e:
        p.error(str(e))
    by_node = {}
    for unit, columns in cols.items():
        if unit not in node_of_unit:
            p.error("--gpu-cols: no unit %d" % unit)
        for c in columns:
            if c not in rig.trace.columns:
                p.error("--gpu-cols: %s has no column %r"
                        % (args.gpu_trace, c))
        by_node[node_of_unit[unit].name] = columns
    return rig, by_node, args.hz


def main():
    from pymodbus_meter import MODELS, Meter
    from pymodbus.server import ModbusTcpServer

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--unit", action="append", default=[],
                   help="ID:NODE:CPUACCT_DIR:CPUSET_DIR, repeatable")
    p.add_argument("--freq-unit", action="append", default=[],
                   help="ID:NODE:NODE_DIR (power from the CPU frequency), "
                        "repeatable")
    p.add_argument("--idle-watts", type=float, required=True)
    p.add_argument("--watts-per-cpu", type=float, default=0.0)
    p.add_argument("--dyn-watts", type=float, default=240.0)
    p.add_argument("--f-max-khz", type=int, default=2400000)
    p.add_argument("--hz", type=float, default=10.0)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--model", choices=sorted(MODELS), default="sdm630")
    p.add_argument("--energy-start-kwh", type=Fraction)
    p.add_argument("--trace-out", required=True)
    p.add_argument("--truth-out", required=True)
    p.add_argument("--pidfile")
    p.add_argument("--gpu-trace", help="the trace the fake NVML plays")
    p.add_argument("--gpu-epoch", type=float,
                   help="wall-clock seconds that are GPU trace time 0")
    p.add_argument("--gpu-cols", action="append", default=[],
                   help="UNIT:COL[,COL][;UNIT:COL...]: the columns its GPUs "
                        "play, in NVML index order")
    p.add_argument("--psu-factor", type=float, default=1.0,
                   help="meter watts per GPU watt (PSU loss; 0: GPUs not "
                        "seen)")
    p.add_argument("--gpu-control",
                   help="the fake NVML's control file (its col lines)")
    args = p.parse_args()
    if args.idle_watts < 0 or args.watts_per_cpu < 0 or args.hz <= 0:
        p.error("--idle-watts and --watts-per-cpu must be >= 0, --hz > 0")
    if not args.unit and not args.freq_unit:
        p.error("give --unit or --freq-unit")

    nodes, units = [], []
    for spec in args.unit:
        parts = spec.split(":")
        if len(parts) != 4 or not parts[0].isdigit():
            p.error("--unit %s: want ID:NODE:CPUACCT_DIR:CPUSET_DIR" % spec)
        for d, f in ((parts[2], "cpuacct.usage"), (parts[3], "cpuset.cpus")):
            if not os.path.exists(os.path.join(d, f)):
                p.error("--unit %s: no %s in %s" % (spec, f, d))
        nodes.append(Node(parts[1], parts[2], parts[3]))
        units.append(int(parts[0]))
    for spec in args.freq_unit:
        parts = spec.split(":")
        if len(parts) != 3 or not parts[0].isdigit():
            p.error("--freq-unit %s: want ID:NODE:NODE_DIR" % spec)
        node = FreqNode(parts[1], parts[2], args.dyn_watts, args.f_max_khz)
        if not node.cpus:
            p.error("--freq-unit %s: no cpu/cpuN in %s" % (spec, parts[2]))
        nodes.append(node)
        units.append(int(parts[0]))

    gpus = gpu_options(p, args, dict(zip(units, nodes)))

    # Meter() wants the pymodbus_meter options of a model
    margs = argparse.Namespace(model=args.model, max_regs_given=None,
                               energy_start_kwh=args.energy_start_kwh)
    meter = Meter(margs)
    load = LoadMeter(nodes, args.idle_watts, args.watts_per_cpu,
                     args.trace_out, args.truth_out, gpus=gpus)
    load.dump()
    devices = [make_device(u, n, meter, load) for u, n in zip(units, nodes)]

    def stop(*_):
        load.dump()
        load.trace.flush()
        os._exit(0)
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    threading.Thread(target=load.run, args=(args.hz,), daemon=True).start()

    async def serve():
        server = ModbusTcpServer(devices, address=(args.host, args.port))
        if args.pidfile:
            with open(args.pidfile, "w") as f:
                f.write("%d\n" % os.getpid())
        await server.serve_forever()

    asyncio.run(serve())


if __name__ == "__main__":
    main()
