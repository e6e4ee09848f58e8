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

cores_j from the job's cpuset (job_J/cpuset.cpus; task/cgroup with
ConstrainCores=yes makes it the job's allocation).  A job counts in an
interval when its cgroup exists at the interval's end.  Per node the file
has the meter's energy since the epoch and the CPU time of the whole tree
(slurmd and slurmstepd included: their load is the node's, no job's).

The epoch (trace time 0) is the meter's start, in Unix seconds, written in
the truth file and as a comment at the top of the trace.
"""
import argparse
import asyncio
import glob
import json
import os
import re
import signal
import sys
import threading
import time
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pymodbus_meter import MODELS, Meter, device_of  # noqa: E402
from pymodbus.server import ModbusTcpServer  # noqa: E402

JOB_DIR = re.compile(r"^job_(\d+)$")


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


class LoadMeter:
    def __init__(self, nodes, idle_w, w_per_cpu, trace_out, truth_out):
        self.nodes, self.idle_w, self.k = nodes, idle_w, w_per_cpu
        self.truth_out = truth_out
        self.lock = threading.RLock()     # the SIGTERM handler dumps too
        self.epoch = time.time()
        self.t_last = 0.0          # trace time of the last sample
        for n in nodes:
            n.power_w = idle_w + (n.dynamic_w() if isinstance(n, FreqNode)
                                  else 0.0)
        self.trace = open(trace_out, "w")
        self.trace.write("# load_meter.py: idle %g W + %g W per busy CPU, "
                         "epoch %.6f\n" % (idle_w, w_per_cpu, self.epoch))
        self.trace.write("time " + " ".join(n.name for n in nodes) + "\n")
        self._row(0.0, [n.power_w for n in nodes])
        self.trace.flush()

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
                core_s=0.0, cores=cores, first=t, last=t))
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
        # the next interval's power: this interval's load
        node.power_w = self.idle_w + self.k * busy_s / dt

    def _sample_freq(self, node, dt):
        node.energy_j += node.power_w * dt      # the interval just served
        node.power_w = self.idle_w + node.dynamic_w()

    def sample(self):
        with self.lock:
            t = time.time() - self.epoch
            dt = t - self.t_last
            if dt <= 0:
                return
            before = [n.power_w for n in self.nodes]
            for n in self.nodes:
                if isinstance(n, FreqNode):
                    self._sample_freq(n, dt)
                else:
                    self._sample_node(n, t, dt)
            self.t_last = t
            self._row(t, before)                      # a step at t
            self._row(t, [n.power_w for n in self.nodes])
            self.trace.flush()

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
    def reading(self, node):
        """(watts, joules since the epoch) now, as the registers hold them."""
        with self.lock:
            t = time.time() - self.epoch
            return node.power_w, node.energy_j + node.power_w * max(
                t - self.t_last, 0.0)

    def dump(self):
        with self.lock:
            doc = dict(epoch=self.epoch, idle_watts=self.idle_w,
                       watts_per_cpu=self.k, t=self.t_last,
                       nodes={n.name: dict(cores=n.cores, cpu_s=n.cpu_s,
                                           energy_j=n.energy_j,
                                           power_w=n.power_w,
                                           jobs=n.jobs)
                              for n in self.nodes})
        tmp = self.truth_out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
        os.replace(tmp, self.truth_out)


def make_device(unit, node, meter, load):
    return device_of(unit, meter, lambda: load.reading(node))


def main():
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

    # Meter() wants the pymodbus_meter options of a model
    margs = argparse.Namespace(model=args.model, max_regs_given=None,
                               energy_start_kwh=args.energy_start_kwh)
    meter = Meter(margs)
    load = LoadMeter(nodes, args.idle_watts, args.watts_per_cpu,
                     args.trace_out, args.truth_out)
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
