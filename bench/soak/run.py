#!/usr/bin/env python3
"""bench/soak/run.py - issue #14's soak: many short jobs of mixed shapes on
the test cluster with simulated Modbus meters, then the books are checked.

A benchmark, not a CI test.  One run, on its own instance of the namespaced
test cluster (contribs/cluster; 3 nodes, 2 fake GPUs each):

* meters: one se-modbus-sim on the bridge address (NET.1, port
  SE_SOAK_METER_PORT, default 15707) with a unit per node, unit N playing
  column nodeN of contribs/trace/examples/cluster.trace (60 s period: sines
  and a ramp, 120 to 400 W); acct_gather_energy/modbus reads it as an SDM630
  on the counter path (its float32 kWh energy register), every second, and
  takes each step's energy at its own boundaries (the settle in the
  plugin's fini(); no SPANK line for it since issue #30);
* DVFS policy: job_submit/, cli_filter/energy_policy and
  spank_energy_policy.so with an energy_policy.conf whose rule gives jobs
  that ask for no frequency 1.6 GHz; the other jobs ask --cpu-freq
  1.2, 2.0 or 2.4 GHz themselves;
* the soak: --jobs short jobs (default 500), drawn with a fixed seed: srun
  jobs (1-3 nodes, 1-5 s) and sbatch jobs (1-3 nodes) whose script runs 2
  or 3 srun steps of 1-2 s; half of them --gres=gpu:1 or gpu:2; every job
  --exclusive, so a node's meter is one job's at a time.  The bench places
  each job (-w) on nodes that are free, so the nodes stay busy (see
  run_soak).  Durations are sleeps: the nodes' power is the trace's.
  Every task prints its job, step, node, the cpufreq setspeed of its CPU
  and the wall-clock instants of its start and end.
* checks, from sacct once everything is recorded:
  - every job and every step (.batch included) has energy (> 0 J);
  - each step ran at the frequency it should (explicit, or the policy's);
  - per node, over the soak's window [A, B], every term measured: at A
    and at B the meter's own energy register is read over Modbus, and
    right after it slurmd's own node total (its figure: the sampler's
    running node energy) through the node's energy query socket
    (se-energy-query --fresh; the same figure id at A and B, else the
    node's figures do not subtract and it says so).  (a) slurmd's figure
    delta against the register delta, each beside the trace's exact
    integral (se-trace) over its own instants; (b) between = the figure
    delta minus the node's jobs (the steps' per-node figures, from the
    settle lines slurmstepd writes with DebugFlags=Energy, whose sum over
    the nodes is checked against sacct's step figure): the energy slurmd
    counted outside the jobs, against the trace's exact energy outside the
    steps' own windows (as long as the settle line says, around the tasks'
    marks) between the figure's instants; (c) the jobs against the trace
    over their windows; the identity (jobs + between) / register - 1,
    bound 1 % (it is figure delta / register delta - 1: slurmd's books
    against the meter's count; (b) and (c) say whether slurmd split them
    right between jobs and the time between them);
  - RSS (VmRSS) of slurmctld and the slurmds (pids from the cluster's pid
    files) before the first job, after every 10 % of the jobs, at the end;
* launch rate: `srun -nN true` steps (N: --launch-tasks, default 1) one
  after another in a one-node exclusive job, on two clusters up at once:
  the first restarted with the configuration under test
  (--launch-configs; "suite" is the soak's, less
  DebugFlags=Energy; "stock" there is an A/A check of the method;
  "floor" the suite's plugin set with plugins that do nothing in place of
  ours, see LAUNCH_CONFIGS), the
  second (stock_identity()) with stock Slurm's (AcctGatherEnergyType=
  acct_gather_energy/none, no plugin of ours).  --launch-blocks blocks of
  --launch-steps steps run on each, alternating between the clusters in
  ABBA order, so that the load of other work on the machine falls on both
  alike; the ratio of the two rates.

    bench/soak/run.py [--jobs 500] [--seed 14]
                      [--launch-configs stock,suite] [--launch-blocks 10]
                      [--launch-steps 20] [--skip-soak]

The cluster instance comes from SE_CLUSTER_*; unset ones default to the
soak's own (state /var/tmp/se-soak, net 10.199.7, bridge sebrsk, ports
26817-26819 and 26306), so that it never meets another test cluster.  It
must be down: the bench brings it up and always down again, and the
second one of the launch rate too (state dir STATE-stock, net NET+1,
ports +10).
Environment: SE_PLUGIN_DIR (default _build/stage/lib/slurm-energy),
SE_BIN_DIR (se-modbus-sim, se-trace; default _build/stage/bin),
SE_ENERGY_QUERY (default se-energy-query in SE_BIN_DIR/../sbin),
SE_BENCH_SHELL_DIR (the floor row's SPANK shells; default
_build/obj/bench/launch/.libs),
SE_SOAK_METER_PORT.  Prints markdown tables on stdout, progress on stderr.
"""
import argparse
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time

# The soak's own cluster instance, unless the caller chose one.
SOAK_CLUSTER = {
    "SE_CLUSTER_STATE": "/var/tmp/se-soak",
    "SE_CLUSTER_NET": "10.199.7",
    "SE_CLUSTER_BRIDGE": "sebrsk",
    "SE_CLUSTER_NS_PREFIX": "sesk-",
    "SE_CLUSTER_VETH_PREFIX": "seskv",
    "SE_CLUSTER_NAME": "soakcl",
    "SE_CLUSTER_CTLD_PORT": "26817",
    "SE_CLUSTER_SLURMD_PORT": "26818",
    "SE_CLUSTER_DBD_PORT": "26819",
    "SE_CLUSTER_DB_PORT": "26306",
}
for _k, _v in SOAK_CLUSTER.items():
    os.environ.setdefault(_k, _v)



def stock_identity():
    """The second cluster of the launch-rate comparison (stock Slurm), up
    beside the first: derived from the first's identity (net +1, ports
    +10, names with a 'k')."""
    e = os.environ
    net = e["SE_CLUSTER_NET"].split(".")
    return {
        "SE_CLUSTER_STATE": e["SE_CLUSTER_STATE"] + "-stock",
        "SE_CLUSTER_NET": "%s.%s.%d" % (net[0], net[1], int(net[2]) + 1),
        "SE_CLUSTER_BRIDGE": e["SE_CLUSTER_BRIDGE"][:13] + "k",
        "SE_CLUSTER_NS_PREFIX": e["SE_CLUSTER_NS_PREFIX"].rstrip("-") + "k-",
        "SE_CLUSTER_VETH_PREFIX": e["SE_CLUSTER_VETH_PREFIX"][:11] + "k",
        "SE_CLUSTER_NAME": e["SE_CLUSTER_NAME"] + "k",
        "SE_CLUSTER_CTLD_PORT": str(int(e["SE_CLUSTER_CTLD_PORT"]) + 10),
        "SE_CLUSTER_SLURMD_PORT": str(int(e["SE_CLUSTER_SLURMD_PORT"]) + 10),
        "SE_CLUSTER_DBD_PORT": str(int(e["SE_CLUSTER_DBD_PORT"]) + 10),
        "SE_CLUSTER_DB_PORT": str(int(e["SE_CLUSTER_DB_PORT"]) + 10),
    }


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "contribs", "python"))

from selab import energy  # noqa: E402
from selab.cluster import Cluster, poll  # noqa: E402
from selab.meters import ModbusSim, bin_dir, tool  # noqa: E402

PLUGIN_DIR = os.environ.get("SE_PLUGIN_DIR", os.path.join(
    REPO, "_build", "stage", "lib", "slurm-energy"))
TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")
# slurmd's own node total through its energy query socket (sbin, beside
# SE_BIN_DIR's bin)
ENERGY_QUERY = os.environ.get("SE_ENERGY_QUERY", os.path.join(
    os.path.dirname(bin_dir()), "sbin", "se-energy-query"))
NODES = ("node1", "node2", "node3")
# the floor row's SPANK shells (bench/Makefile.inc builds them)
SHELL_DIR = os.environ.get("SE_BENCH_SHELL_DIR", os.path.join(
    REPO, "_build", "obj", "bench", "launch", ".libs"))
NET = os.environ["SE_CLUSTER_NET"]
METER = (NET + ".1", int(os.environ.get("SE_SOAK_METER_PORT", "15707")))
FREQS = (1200000, 1600000, 2000000, 2400000)
POLICY_FREQ = 1600000
EXPLICIT_FREQS = (1200000, 2000000, 2400000)
SDM630_ENERGY_REG = 72          # 30073: total import kWh, float32 abcd

POLICY_CONF = ("Frequencies=%s\n"
               "Rule=soak Partition=debug DefaultFreq=%d AllowedMin=%d "
               "AllowedMax=%d AllowedGovernors=userspace,ondemand,performance "
               "OutOfRange=reject\n"
               % (",".join(str(f) for f in FREQS), POLICY_FREQ, FREQS[0],
                  FREQS[-1]))
# The same rule without a default: the policy plugins are loaded and check
# every job and step, but a step that asks for no frequency gets none (the
# launch rate of the suite loaded, without Slurm's own frequency work).
POLICY_CONF_NOFREQ = POLICY_CONF.replace("DefaultFreq=%d " % POLICY_FREQ, "")

# A task: marks its start (job, step, node, setspeed of its first CPU) and
# its end with wall-clock instants.
MARK = ('echo SE_M 0 $SLURM_JOB_ID $SLURM_STEP_ID $(hostname) '
        '$(date +%s.%N) $(cat /sys/devices/system/cpu/cpu$(awk '
        '"/^Cpus_allowed_list/{print \\$2}" /proc/self/status | cut -d, -f1 '
        '| cut -d- -f1)/cpufreq/scaling_setspeed)')
END = 'echo SE_M 1 $SLURM_JOB_ID $SLURM_STEP_ID $(hostname) $(date +%s.%N)'
MARK_RE = re.compile(r"^SE_M ([01]) (\d+) (\d+) (\S+) ([0-9.]+)(?: (\S+))?$",
                     re.M)
SETTLED_RE = re.compile(r"\[(\d+)\.(\d+|batch)\] .*step energy settled: "
                        r"(\d+) J over ([0-9.]+) s")
NOT_SETTLED_RE = re.compile(r"\[(\d+)\.(\d+|batch)\] .*step energy not "
                            r"settled")


def log(msg):
    print("# %s %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr,
          flush=True)


def task(seconds):
    return "%s; sleep %d; %s" % (MARK, seconds, END)


# ------------------------------------------------------------- the jobs
def make_specs(n, seed):
    rng = random.Random(seed)
    specs = []
    for i in range(n):
        kind = "sbatch" if rng.random() < 0.3 else "srun"
        nodes = rng.choices((1, 2, 3), weights=(5, 3, 2))[0]
        gpus = rng.choices((0, 1, 2), weights=(2, 1, 1))[0]
        freq = (rng.choice(EXPLICIT_FREQS) if rng.random() < 0.5 else None)
        if kind == "srun":
            steps = [rng.choice((1, 1, 1, 2, 2, 3, 4, 5))]
        else:
            steps = [rng.choice((1, 1, 2)) for _ in range(rng.choice((2, 3)))]
        specs.append(dict(i=i, kind=kind, nodes=nodes, gpus=gpus, freq=freq,
                          steps=steps, name="soak-%03d" % i))
    return specs


def job_args(spec):
    a = ["-J", spec["name"], "--exclusive", "-N", str(spec["nodes"]),
         "-w", ",".join(spec["on"])]
    if spec["gpus"]:
        a.append("--gres=gpu:%d" % spec["gpus"])
    if spec["freq"]:
        a.append("--cpu-freq=%d" % spec["freq"])
    return a


def launch(c, spec, outdir):
    """Start a job on spec["on"]; returns the Popen of its srun (which ends
    with the job) or of its sbatch (which ends at submission: the job's
    end is the script's last line in its output file)."""
    if spec["kind"] == "srun":
        return c.popen(["srun", *job_args(spec), "sh", "-c",
                        task(spec["steps"][0])])
    out = os.path.join(outdir, spec["name"] + ".out")
    spec["out"] = out
    script = "#!/bin/sh\n" + "".join(
        "srun sh -c '%s'\n" % task(s).replace("'", "'\\''")
        for s in spec["steps"]) + "echo SE_DONE\n"
    path = os.path.join(outdir, spec["name"] + ".sh")
    with open(path, "w") as f:
        f.write(script)
    return c.popen(["sbatch", "--parsable", "-o", out, *job_args(spec),
                    path])


def marks(text):
    """{(job, step): {node: (t0, t1, setspeed)}} from tasks' output."""
    starts, out = {}, {}
    for which, job, step, host, t, speed in MARK_RE.findall(text):
        key = (int(job), int(step))
        if which == "0":
            starts[(key, host)] = (float(t), speed)
        else:
            t0, speed0 = starts.pop((key, host))
            out.setdefault(key, {})[host] = (t0, float(t), speed0)
    if starts:
        raise ValueError("start marks without end: %s" % sorted(starts))
    return out


def _batch_done(spec):
    try:
        with open(spec["out"]) as f:
            text = f.read()
    except OSError:
        return None
    return text if "SE_DONE" in text else None


def run_soak(c, specs, outdir, rss_at, seed, lookahead=8, reserve_s=3.0):
    """Run the jobs, each on nodes the bench picks among those free (so
    every job starts at once and the nodes are kept busy: Slurm's FIFO
    main scheduler would hold every job behind a pending 3-node one, and
    backfill needs time limits).  A job that could not start at the head
    of the list gets the next free nodes after reserve_s seconds (nothing
    else starts meanwhile), so 3-node jobs are not starved.  Returns the
    RSS samples taken before the first job and after each count in
    rss_at."""
    rng = random.Random(seed + 1)
    pending = list(specs)
    running = []            # (spec, Popen or None, nodes)
    free = set(NODES)
    done = 0
    rss = [("before the first job", 0, rss_sample(c))]
    rss_next = list(rss_at)
    t_start = time.monotonic()
    head_since = None
    while pending or running:
        while pending:
            head = pending[0]
            if len(free) >= head["nodes"]:
                pick = 0
                head_since = None
            else:
                now = time.monotonic()
                head_since = head_since or now
                if now - head_since > reserve_s:
                    break
                pick = next((k for k, s in enumerate(pending[:lookahead])
                             if s["nodes"] <= len(free)), None)
                if pick is None:
                    break
            spec = pending.pop(pick)
            spec["on"] = sorted(rng.sample(sorted(free), spec["nodes"]))
            free -= set(spec["on"])
            spec["submitted"] = time.time()
            running.append([spec, launch(c, spec, outdir)])
        time.sleep(0.05)
        still = []
        for entry in running:
            spec, p = entry
            out = None
            if p is not None:
                if p.poll() is None:
                    still.append(entry)
                    continue
                out, err = p.communicate()
                spec["rc"], spec["stderr"] = p.returncode, err
                if spec["kind"] == "sbatch":
                    spec["jobid"] = (int(out.split(";")[0])
                                     if p.returncode == 0 and out.strip()
                                     else None)
                    if spec["jobid"]:
                        entry[1] = None     # now wait for the script
                        still.append(entry)
                        continue
            else:
                out = _batch_done(spec)
                if out is None:
                    if time.time() - spec["submitted"] > 300:
                        spec["rc"] = "batch script never ended"
                        out = ""
                    else:
                        still.append(entry)
                        continue
            spec["marks"] = marks(out or "")
            spec["ended"] = time.time()
            if spec["kind"] == "srun":
                jobs = {j for j, _ in spec["marks"]}
                spec["jobid"] = jobs.pop() if len(jobs) == 1 else None
            free |= set(spec["on"])
            done += 1
            if rss_next and done >= rss_next[0]:
                rss_next.pop(0)
                rss.append(("after %d jobs" % done, done, rss_sample(c)))
                log("%d/%d jobs done (%.0f s)" % (done, len(specs),
                                                  time.monotonic() - t_start))
        running = still
    return rss


# ----------------------------------------------------------------- RSS
def rss_sample(c):
    """{daemon: VmRSS kB} of slurmctld and each slurmd, from pid files."""
    out = {}
    for name, pid in sorted(c.pids().items()):
        if name != "slurmctld" and not name.startswith("slurmd-"):
            continue
        try:
            with open("/proc/%d/status" % pid) as f:
                m = re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M)
            out[name] = int(m.group(1))
        except OSError:
            out[name] = None
    return out


# ---------------------------------------------------------------- meter
def read_energy_register(unit, addr=METER):
    """The SDM630's total import (float32 kWh, input registers) over
    Modbus TCP, in joules; with the wall-clock instant of the read."""
    req = struct.pack(">HHHBBHH", unit, 0, 6, unit, 4, SDM630_ENERGY_REG, 2)
    with socket.create_connection(addr, timeout=2) as s:
        t0 = time.time()
        s.sendall(req)
        rep = b""
        while len(rep) < 13:
            chunk = s.recv(64)
            if not chunk:
                break
            rep += chunk
        t1 = time.time()
    if len(rep) < 13 or rep[7] != 4:
        raise RuntimeError("meter unit %d: bad reply %r" % (unit, rep))
    kwh, = struct.unpack(">f", rep[9:13])
    return kwh * 3.6e6, (t0 + t1) / 2


def read_total(c, node):
    """slurmd's own node total now (its figure: the sampler's running node
    energy, what it gives Slurm's energy RPC), through the node's energy
    query socket (se-energy-query --fresh: a meter reading kicked, the
    figure at a sample taken after the call).  The socket is a file in the
    node's spool dir under the cluster's state dir, which the host sees
    (the node's namespaces are its network, mount and UTS ones; an AF_UNIX
    socket is reached by its path).  Returns {"j": joules, "id": the
    figure's continuity, "t": wall-clock instant of the figure, "sample_t":
    of its sample}."""
    p = subprocess.run([ENERGY_QUERY, "--fresh", "--spool-dir",
                        os.path.join(c.state, "nodes", "%n", "spool"), node],
                       capture_output=True, text=True, timeout=30)
    # the tool's instants are CLOCK_MONOTONIC, as is time.monotonic()
    mono_to_wall = time.time() - time.monotonic()
    if p.returncode:
        raise RuntimeError("se-energy-query %s: exit %d: %s"
                           % (node, p.returncode, p.stderr.strip()))
    kv = dict(x.split("=", 1) for x in p.stdout.split())
    return {"j": int(kv["total_mj"]) / 1e3, "id": int(kv["total_id"]),
            "t": int(kv["at_ns"]) / 1e9 + mono_to_wall,
            "sample_t": int(kv["sample_ns"]) / 1e9 + mono_to_wall}


def read_books(c):
    """Per node, the meter's energy register and, right after it, slurmd's
    figure: ({node: (J, wall instant)}, {node: read_total()})."""
    reg, fig = {}, {}
    for i, node in enumerate(NODES, 1):
        reg[node] = read_energy_register(i)
        fig[node] = read_total(c, node)
    return reg, fig


# ------------------------------------------------------------- sacct
def sacct_all(c):
    fields = ("JobID", "JobName", "State", "NodeList", "ConsumedEnergyRaw",
              "ReqCPUFreqMin", "ReqCPUFreqMax", "ReqCPUFreqGov")
    p = c.run(["sacct", "-a", "-n", "-P", "-S", "now-2hours", "-o",
               ",".join(fields)], timeout=120)
    rows = {}
    for line in p.stdout.splitlines():
        if line.strip():
            r = dict(zip(fields, line.split("|")))
            rows[r["JobID"]] = r
    return rows


def settled_lines(c):
    """{(job, step): {node: J}} from the settle lines of slurmstepd, and
    the steps that kept their running figure."""
    got, unsettled = {}, set()
    for node in NODES:
        path = os.path.join(c.state, "log", "slurmd-%s.log" % node)
        with open(path, errors="replace") as f:
            for line in f:
                m = SETTLED_RE.search(line)
                if m:
                    got.setdefault((int(m.group(1)), m.group(2)), {})[
                        node] = (int(m.group(3)), float(m.group(4)))
                    continue
                m = NOT_SETTLED_RE.search(line)
                if m:
                    unsettled.add((int(m.group(1)), m.group(2), node))
    return got, unsettled


def expected_rows(spec):
    """sacct ids a job must have: the job, its srun steps, .batch."""
    j = spec["jobid"]
    want = [str(j)] + ["%d.%d" % (j, k) for k in range(len(spec["steps"]))]
    if spec["kind"] == "sbatch":
        want.append("%d.batch" % j)
    return want


def has_energy(row):
    return bool(row) and row["ConsumedEnergyRaw"].isdigit() and \
        int(row["ConsumedEnergyRaw"]) > 0


def wait_recorded(c, specs, timeout=180):
    """sacct rows once the queue is empty and every job and step has its
    energy, or after timeout (what is missing then stays missing)."""
    poll(lambda: not c.run(["squeue", "-h"]).stdout.strip(), timeout=timeout,
         what="the queue to empty")
    want = [w for s in specs if s.get("jobid") for w in expected_rows(s)]
    deadline = time.monotonic() + timeout
    while True:
        rows = sacct_all(c)
        if all(has_energy(rows.get(w)) for w in want) or \
                time.monotonic() > deadline:
            return rows
        time.sleep(2)


# ------------------------------------------------------------ configs
LAUNCH_CONFIGS = {
    # name: (the suite's parts in it, srun options of every step[, srun
    # options of the stock cluster's steps, default none]).  stock:
    # AcctGatherEnergyType=acct_gather_energy/none and no plugin of ours.
    # Parts: modbus (our meter plugin, which settles each step in its
    # fini(), EnergySettle=yes, issue #30), nosettle (EnergySettle=no),
    # settle (spank_energy_settle.so listed in plugstack.conf, as sites
    # configured before #30), policy / policy-nofreq (job_submit,
    # cli_filter and spank_energy_policy.so), shell-X (a SPANK plugin with
    # the hooks of ours and no work), plugindir.
    "stock": ((), ""),
    # the frequency the suite's policy gives these steps, asked explicitly
    "stock+cpufreq": ((), "--cpu-freq=%d" % POLICY_FREQ),
    # only the suite's plugin directory first in PluginDir: its gres/gpu
    # (and gpu/nvml) take stock's place, energy stays acct_gather/none
    "plugindir": (("plugindir",), ""),
    # Slurm's own cost of hosting the suite's srun and slurmstepd plugins:
    # the suite's plugin directory, cli_filter/none in place of our policy
    # plugins and a SPANK plugin with the hooks and options of ours and no
    # work (shell-policy, bench/launch/se_bench_spank_shell.c), energy
    # acct_gather_energy/none.  Since #30 the suite has one SPANK plugin;
    # floor-2spank is the fifth round's floor (a second shell in place of
    # the SPANK settle).
    "floor": (("shell-policy",), ""),
    "floor-2spank": (("shell-policy", "shell-settle"), ""),
    "floor+modbus": (("modbus", "shell-policy"), ""),
    # an energy-only site: the meter plugin, settle inside, no plugstack
    "modbus": (("modbus",), ""),
    "modbus-nosettle": (("modbus", "nosettle"), ""),
    # the same site as installed from packages: slurm-energy-modbus alone
    # (debian/slurm-energy-modbus.install), so PluginDir's first entry
    # holds acct_gather_energy_modbus.so and nothing else.  The rows above
    # put the whole suite's directory first, whose gres_gpu.so then takes
    # stock's place (the test cluster has GresTypes=gpu): a GPU package's
    # plugin an energy-only site does not install.
    "modbus-pkg": (("modbus", "pkg"), ""),
    "modbus+settle": (("modbus", "settle"), ""),
    "policy": (("policy",), ""),
    # a step that asks for a frequency: cli_filter checks it against the
    # rules (energy_policy.conf) instead of reading the job from slurmctld
    "policy+cpufreq": (("policy",), "--cpu-freq=%d" % POLICY_FREQ),
    "suite": (("modbus", "policy"), ""),
    # the fifth round's suite: the SPANK settle listed too
    "suite+settle": (("modbus", "settle", "policy"), ""),
    # the policy plugins loaded, choosing no frequency for these steps
    "policy-nofreq": (("policy-nofreq",), ""),
    "modbus+policy-nofreq": (("modbus", "policy-nofreq"), ""),
    # the suite loaded, its policy choosing no frequency for these steps
    "suite-nofreq": (("modbus", "policy-nofreq"), ""),
    # the suite against stock Slurm doing the same frequency work (the
    # policy gives these steps 1.6 GHz; Slurm's own --cpu-freq code sets
    # and restores it on every step, whoever chose it)
    "suite/stock+cpufreq": (("modbus", "policy"), "",
                            "--cpu-freq=%d" % POLICY_FREQ),
}


def launch_config(name):
    """(parts, srun options, the stock side's srun options)."""
    c = LAUNCH_CONFIGS[name]
    return c[0], c[1], c[2] if len(c) > 2 else ""


def _package_dir(work, parts):
    """The plugin directory of a row: the suite's, or for "pkg" rows a
    directory holding only what the row's package installs (its plugin
    linked from the suite's)."""
    if "pkg" not in parts:
        return PLUGIN_DIR
    pkg = os.path.join(work, "plugins-%s" % "-".join(parts))
    os.makedirs(pkg, exist_ok=True)
    so = "acct_gather_energy_modbus.so"
    if not os.path.exists(os.path.join(pkg, so)):
        os.symlink(os.path.join(os.path.abspath(PLUGIN_DIR), so),
                   os.path.join(pkg, so))
    return pkg


def suite_config(work, debug_flags=True, parts=("modbus", "policy")):
    """cluster.up_args() keywords: the soak's configuration (every part),
    or a part of it for the launch-rate rows."""
    if not parts:
        return dict(energy_type="acct_gather_energy/none", freqs=FREQS)
    mapf = os.path.join(work, "modbus.map")
    with open(mapf, "w") as f:
        for i, node in enumerate(NODES, 1):
            f.write("Nodes=%s Unit=%d\n" % (node, i))
    plugstack = os.path.join(work, "plugstack-%s.conf" % "-".join(parts))
    policy = "policy" in parts or "policy-nofreq" in parts
    shells = [p[len("shell-"):] for p in parts if p.startswith("shell-")]
    with open(plugstack, "w") as f:
        if policy:
            f.write("required %s/spank_energy_policy.so\n" % PLUGIN_DIR)
        if "settle" in parts:
            f.write("optional %s/spank_energy_settle.so\n" % PLUGIN_DIR)
        for shell in shells:
            f.write("required %s/spank_shell_%s.so\n" % (SHELL_DIR, shell))
    kw = dict(plugin_dirs=[_package_dir(work, parts)], freqs=FREQS,
              slurm_conf="")
    if "modbus" not in parts:
        kw["energy_type"] = "acct_gather_energy/none"
    if "shell-policy" in parts:
        kw["slurm_conf"] += "CliFilterPlugins=none\n"
    if "modbus" in parts:
        kw.update(energy_type="acct_gather_energy/modbus",
                  acct_gather_conf=(
                      "EnergyModbusDevice=tcp://%s:%d\n"
                      "EnergyModbusModel=sdm630\nEnergyModbusMap=%s\n"
                      "EnergyModbusFrequency=1\nEnergyModbusTimeout=500\n"
                      "%s" % (METER[0], METER[1], mapf,
                              "EnergySettle=no\n" if "nosettle" in parts
                              else "")))
    if policy:
        kw["slurm_conf"] += ("JobSubmitPlugins=energy_policy\n"
                             "CliFilterPlugins=energy_policy\n")
        kw["extra_confs"] = {"energy_policy.conf": POLICY_CONF if "policy"
                             in parts else POLICY_CONF_NOFREQ}
    if policy or "settle" in parts or shells:
        kw["slurm_conf"] += "PlugStackConfig=%s\n" % plugstack
    if debug_flags:
        kw["slurm_conf"] += "DebugFlags=Energy\n"
    return kw


def wait_power(c):
    poll(lambda: all(energy.node_power(c, n) for n in NODES), timeout=90,
         what="CurrentWatts on every node")


def plugin_proof(c):
    """Our plugin's start line in each slurmd log (Slurm falls back to a
    stock plugin of the same name silently)."""
    for node in NODES:
        with open(os.path.join(c.state, "log", "slurmd-%s.log" % node),
                  errors="replace") as f:
            text = f.read()
        if not re.search(r"acct_gather_energy/modbus: slurm-energy-plugins "
                         r".* started on node %s: .*counter path" % node,
                         text):
            raise RuntimeError("no counter-path start line of our modbus "
                               "plugin in slurmd-%s.log" % node)


# --------------------------------------------------------- launch rate
# The launch job: 5 warm-up steps, then a block of steps for each line the
# bench writes into the FIFO DIR/go (the block's number; "stop" ends the
# job); DIR/done.B gets the block's line.  Only the steps are timed, inside
# the job.  The job waits in read(2) on the FIFO, which it holds open for
# reading and writing (no EOF, and the bench's open never blocks): a job
# waiting for its turn costs the machine nothing, so the other cluster's
# block runs on a quiet machine (a poll loop of `sleep 0.02` cost 3 ms of
# CPU per step of the other side).
LAUNCH_SCRIPT = """#!/bin/sh
d=%(dir)s
exec 3<>$d/go
i=0; while [ $i -lt 5 ]; do srun %(args)s true; i=$((i+1)); done
touch $d/ready
while read -r b <&3; do
  [ "$b" = stop ] && exit 0
  t0=$(date +%%s.%%N)
  i=0; f=0
  while [ $i -lt %(n)d ]; do
    srun %(args)s true || f=$((f+1)); i=$((i+1))
  done
  t1=$(date +%%s.%%N)
  echo "SE_BLOCK $b %(n)d $f $t0 $t1" > $d/done.tmp; mv $d/done.tmp $d/done.$b
done
"""


def busy_cpu_s():
    """The machine's busy CPU time so far (all CPUs, /proc/stat: every
    state but idle and iowait), in seconds."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


class LaunchJob:
    """A one-node exclusive job on node1 of cluster c that runs blocks of
    `srun -n1 true` steps on demand (LAUNCH_SCRIPT)."""

    def __init__(self, c, work, tag, steps, srun_args=""):
        self.c, self.dir, self.tag = c, os.path.join(work, tag), tag
        os.makedirs(self.dir)
        os.mkfifo(os.path.join(self.dir, "go"))
        script = os.path.join(self.dir, "job.sh")
        with open(script, "w") as f:
            f.write(LAUNCH_SCRIPT % dict(dir=self.dir, args=srun_args,
                                         n=steps))
        self.out = os.path.join(self.dir, "job.out")
        self.jobid = c.sbatch("-J", "launch-" + tag, "-N1", "-w", "node1",
                              "--exclusive", "-o", self.out, script)
        self.block = 0
        poll(lambda: os.path.exists(os.path.join(self.dir, "ready")),
             timeout=120, what=lambda: "launch job %s to start (%s)"
             % (tag, self._text()))

    def _text(self):
        try:
            with open(self.out) as f:
                return f.read()
        except OSError:
            return ""

    def run_block(self, timeout=300):
        """(steps, failed, seconds, machine CPU seconds) of the next
        block; the CPU is the whole machine's busy time while the block
        ran (one block runs at a time: it is mostly this cluster's)."""
        b = self.block
        self.block += 1
        cpu0 = busy_cpu_s()
        self._tell(str(b))
        done = os.path.join(self.dir, "done.%d" % b)
        poll(lambda: os.path.exists(done), timeout=timeout, interval=0.05,
             what=lambda: "block %d of %s (%s)" % (b, self.tag, self._text()))
        cpu = busy_cpu_s() - cpu0
        with open(done) as f:
            _, _, n, fails, t0, t1 = f.read().split()
        return int(n), int(fails), float(t1) - float(t0), cpu

    def _tell(self, line):
        """A line into the job's FIFO (it holds it open: never blocks)."""
        fd = os.open(os.path.join(self.dir, "go"), os.O_WRONLY | os.O_NONBLOCK)
        try:
            os.write(fd, (line + "\n").encode())
        finally:
            os.close(fd)

    def stop(self):
        try:
            self._tell("stop")
        except OSError:         # the job is gone already (ENXIO)
            pass
        self.c.wait_job_gone(self.jobid, timeout=120)
        text = self._text()
        # srun waiting for the previous step's CPUs to be released
        return len(re.findall(r"temporarily disabled|nodes are busy", text))


def proc_cpu_s(pid):
    """CPU time (user + system) of process pid so far, in seconds; 0 when
    there is no such process (no meter in the row)."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            v = f.read().rsplit(")", 1)[1].split()
    except (OSError, TypeError):
        return 0.0
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def launch_compare(s_cluster, k_cluster, work, tag, blocks, steps,
                   srun_args, stock_args="", ntasks=1, meter_pid=None):
    """Blocks of steps alternately on s_cluster (the configuration under
    test) and k_cluster (stock), ABBA order, so that the machine's load
    (other work) falls on both alike.  Returns the blocks (each
    {"s": (steps, seconds, machine CPU seconds, meter CPU seconds), "k":
    (...)}), failures, busy waits.  The meter simulator's CPU (meter_pid)
    is part of the machine's here; a real meter's is not the node's."""
    tag = tag.replace("/", "-")
    js = LaunchJob(s_cluster, work, tag + "-s", steps,
                   "-n%d %s" % (ntasks, srun_args))
    jk = LaunchJob(k_cluster, work, tag + "-k", steps,
                   "-n%d %s" % (ntasks, stock_args))
    rows, fails = [], 0
    try:
        for b in range(blocks):
            pair = {}
            for who in (("s", "k") if b % 2 == 0 else ("k", "s")):
                m0 = proc_cpu_s(meter_pid)
                n, f, secs, cpu = (js if who == "s" else jk).run_block()
                pair[who] = (n, secs, cpu, proc_cpu_s(meter_pid) - m0)
                fails += f
            rows.append(pair)
    finally:
        busy = (js.stop(), jk.stop())
    return rows, fails, busy


def side_rate(rows, who):
    """Steps per second of one side ("s": under test, "k": stock): all its
    steps over all their time."""
    return sum(r[who][0] for r in rows) / sum(r[who][1] for r in rows)


def launch_ratio(rows):
    """This side's rate over stock's."""
    return side_rate(rows, "s") / side_rate(rows, "k")


def launch_interval(rows, draws=4000, seed=1):
    """95 % interval of launch_ratio(): the block pairs resampled with
    replacement (bootstrap; each pair ran seconds apart on the same
    machine, so the machine's drift stays inside a pair)."""
    rng = random.Random(seed)
    ratios = sorted(launch_ratio([rng.choice(rows) for _ in rows])
                    for _ in range(draws))
    return ratios[int(0.025 * draws)], ratios[int(0.975 * draws) - 1]


# --------------------------------------------------------------- main
def tj(column, epoch, t0, t1):
    return energy.trace_joules(TRACE, column, epoch, t0, t1)


def union(intervals):
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def check_ports():
    busy = subprocess.run(["ss", "-Htlnu"], capture_output=True,
                          text=True).stdout
    ports = [str(METER[1])]
    for ident in (os.environ, stock_identity()):
        ports += [ident["SE_CLUSTER_%s_PORT" % x]
                  for x in ("CTLD", "SLURMD", "DBD", "DB")]
    for port in ports:
        if re.search(r":%s\s" % port, busy):
            sys.exit("run.py: port %s is in use (another cluster or meter?)"
                     % port)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=500)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--launch-tasks", type=int, default=1,
                    help="tasks of each step (srun -nN; the nodes have 2 "
                    "CPUs: with 2 each step waits for the previous one's "
                    "completion)")
    ap.add_argument("--launch-steps", type=int, default=20,
                    help="steps per block")
    ap.add_argument("--launch-blocks", type=int, default=10,
                    help="blocks per cluster and configuration")
    ap.add_argument("--launch-configs", default="stock,suite",
                    help="configurations run against the stock cluster, "
                    "comma-separated (stock: the A/A check), of: "
                    + ",".join(LAUNCH_CONFIGS))
    ap.add_argument("--skip-soak", action="store_true")
    ap.add_argument("--soak-config", choices=("suite", "stock"),
                    default="suite",
                    help="stock: the same jobs on stock Slurm, for its "
                    "RSS (no energy, no policy: only the job and RSS "
                    "tables)")
    args = ap.parse_args()
    for path in (tool("se-modbus-sim"), tool("se-trace"),
                 os.path.join(PLUGIN_DIR, "acct_gather_energy_modbus.so"),
                 os.path.join(PLUGIN_DIR, "spank_energy_settle.so"),
                 os.path.join(PLUGIN_DIR, "job_submit_energy_policy.so"),
                 ENERGY_QUERY):
        if not os.path.exists(path):
            sys.exit("run.py: %s missing: build first" % path)
    c = Cluster()
    k = Cluster(state=stock_identity()["SE_CLUSTER_STATE"])
    k.env.update(stock_identity())
    for cl in (c, k):
        status = subprocess.run([cl.script, "status"], capture_output=True,
                                text=True, env=cl.env,
                                timeout=60).returncode
        if status != 3:
            sys.exit("run.py: cluster %s is (partly) up: the bench needs it "
                     "down (it brings it up and down itself)" % cl.state)
    check_ports()
    work = tempfile.mkdtemp(prefix="se-soak-", dir="/var/tmp")
    outdir = os.path.join(work, "out")
    os.makedirs(outdir)
    epoch = time.time()
    meter = None
    specs = make_specs(args.jobs, args.seed)
    report = {}
    wall0 = time.monotonic()
    try:
        def start_meter():
            return ModbusSim(TRACE, epoch, {i: n for i, n in
                                            enumerate(NODES, 1)},
                             ["--model", "sdm630"], tcp=METER,
                             workdir=os.path.join(work, "meter")).start()
        os.makedirs(os.path.join(work, "meter"))
        stock = args.soak_config == "stock"
        if not args.skip_soak:
            log("cluster up with the %s (soak configuration)"
                % ("stock configuration" if stock else "suite"))
            c.up(c.up_args(**suite_config(work, parts=() if stock else
                                          ("modbus", "policy"))))
            if not stock:
                meter = start_meter()
                wait_power(c)
                plugin_proof(c)
                time.sleep(2)
                a_reg, a_fig = read_books(c)
            A = time.time()
            log("soak: %d jobs" % len(specs))
            steps = [max(1, args.jobs * k // 10) for k in range(1, 11)]
            t = time.monotonic()
            rss = run_soak(c, specs, outdir, steps, args.seed)
            soak_s = time.monotonic() - t
            log("soak done in %.0f s; waiting for the records" % soak_s)
            rows = wait_recorded(c, specs, timeout=60 if stock else 180)
            B = time.time()
            rss.append(("end (records in)", args.jobs, rss_sample(c)))
            report.update(rows=rows, A=A, B=B, rss=rss, soak_s=soak_s,
                          stock=stock)
            if not stock:
                b_reg, b_fig = read_books(c)
                settled, unsettled = settled_lines(c)
                report.update(a_reg=a_reg, b_reg=b_reg, a_fig=a_fig,
                              b_fig=b_fig, settled=settled,
                              unsettled=unsettled)
        rates = []
        configs = [x for x in args.launch_configs.split(",") if x]
        if configs:
            log("launch rate: stock cluster %s up" % k.state)
            k.up(k.up_args(debug="info", **suite_config(work, parts=())))
        for run_no, cfg in enumerate(configs):
            log("launch rate: %s (against stock, %d blocks of %d steps each)"
                % (cfg, args.launch_blocks, args.launch_steps))
            if meter:
                meter.stop()
                meter = None
            parts, srun_args, stock_args = launch_config(cfg)
            c.restart(debug="info", **suite_config(work, debug_flags=False,
                                                   parts=parts))
            if "modbus" in parts:
                meter = start_meter()
                wait_power(c)
                plugin_proof(c)
            time.sleep(2)
            rows, fails, busy = launch_compare(
                c, k, work, "%d-%s" % (run_no, cfg), args.launch_blocks,
                args.launch_steps,
                srun_args, stock_args, args.launch_tasks,
                meter.pid if meter else None)
            rates.append((cfg, rows, fails, busy))
            log("  %s %.2f steps/s, stock %.2f steps/s: %.1f %%"
                % (cfg, side_rate(rows, "s"), side_rate(rows, "k"),
                   100 * launch_ratio(rows)))
        report["rates"] = rates
    finally:
        if meter:
            meter.stop()
        for cl in (c, k):
            try:
                cl.down()
            except Exception as e:      # noqa: BLE001 - say it, go on
                log("cluster %s down failed: %s" % (cl.state, e))
        log("cluster down; wall %.0f s; work dir %s"
            % (time.monotonic() - wall0, work))
    print_report(specs, epoch, report, args)
    shutil.rmtree(work, ignore_errors=True)


def print_report(specs, epoch, r, args):
    print("Run %s UTC; %s; load average at the end: %s\n" % (
        time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        subprocess.run(["uname", "-sr"], capture_output=True,
                       text=True).stdout.strip(),
        " ".join(open("/proc/loadavg").read().split()[:3])))
    if "rows" in r:
        print_soak(specs, epoch, r, args)
    print_rates(r.get("rates"), args)


def print_soak(specs, epoch, r, args):
    rows, settled = r["rows"], r.get("settled", {})
    # ---- the mix
    kinds = {}
    for s in specs:
        key = (s["kind"], s["nodes"])
        kinds[key] = kinds.get(key, 0) + 1
    print("**Jobs** (%d, seed %d; soak %.0f s, %.2f jobs/s)\n"
          % (len(specs), args.seed, r["soak_s"],
             len(specs) / r["soak_s"]))
    print("| shape | 1 node | 2 nodes | 3 nodes | with --gres=gpu | "
          "explicit --cpu-freq | policy's frequency |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind in ("srun", "sbatch"):
        ss = [s for s in specs if s["kind"] == kind]
        print("| %s | %d | %d | %d | %d | %d | %d |" % (
            kind + (" (1 step)" if kind == "srun" else " (2-3 srun steps)"),
            *(kinds.get((kind, n), 0) for n in (1, 2, 3)),
            sum(1 for s in ss if s["gpus"]),
            sum(1 for s in ss if s["freq"]),
            sum(1 for s in ss if not s["freq"])))
    print()

    # ---- missing energy, failures, frequencies
    failed = [s for s in specs if s.get("rc") or not s.get("jobid")]
    if r.get("stock"):
        print("Stock Slurm (AcctGatherEnergyType=acct_gather_energy/none, "
              "no plugin of ours: no energy, no policy): jobs that failed: "
              "%d\n" % len(failed))
        print_rss(r)
        return
    n_steps = missing_job = missing_step = 0
    missing = []
    freq_bad = []
    energy_mismatch = []
    for s in specs:
        j = s.get("jobid")
        if not j:
            continue
        for sid in expected_rows(s):
            ok = has_energy(rows.get(sid))
            if "." in sid:
                n_steps += 1
                missing_step += not ok
            else:
                missing_job += not ok
            if not ok:
                missing.append(sid)
        f = s["freq"] or POLICY_FREQ
        for (jj, k), per_node in s["marks"].items():
            for node, (_, _, speed) in per_node.items():
                if speed != str(f):
                    freq_bad.append("%d.%d@%s:%s!=%d" % (jj, k, node, speed,
                                                         f))
            st = rows.get("%d.%d" % (jj, k))
            logs = settled.get((jj, str(k)), {})
            if st and st["ConsumedEnergyRaw"].isdigit() and \
                    sum(j for j, _ in logs.values()) != \
                    int(st["ConsumedEnergyRaw"]):
                energy_mismatch.append("%d.%d" % (jj, k))
    print("| check | result |")
    print("|---|---|")
    print("| jobs that failed (srun/sbatch exit status, or no job id) | %d%s |"
          % (len(failed), (" (" + ", ".join(
              "%s rc=%s" % (s["name"], s.get("rc")) for s in failed[:5])
              + ")") if failed else ""))
    print("| jobs without energy in sacct (job line) | %d of %d |"
          % (missing_job, len(specs) - len(failed)))
    print("| steps without energy in sacct (.batch and srun steps) | %d of "
          "%d%s |" % (missing_step, n_steps,
                      (" (" + ", ".join(missing[:8]) + ")") if missing
                      else ""))
    print("| steps whose energy kept the running figure (not settled) | %d |"
          % len(r["unsettled"]))
    print("| srun steps whose sacct energy != the sum of their nodes' "
          "settle lines | %d%s |"
          % (len(energy_mismatch), (" (" + ", ".join(energy_mismatch[:8])
                                    + ")") if energy_mismatch else ""))
    n_tasks = sum(len(pn) for s in specs for pn in s["marks"].values())
    print("| tasks not at their frequency (setspeed seen by the task: "
          "explicit, or the policy's %d kHz) | %d of %d%s |"
          % (POLICY_FREQ, len(freq_bad), n_tasks,
             (" (" + ", ".join(freq_bad[:5]) + ")") if freq_bad else ""))
    print()

    # ---- the node identity, every term measured
    A, B = r["A"], r["B"]
    print("**Per node, over the soak's window** (%.0f s: A = before the "
          "first job, B = every record in).  At A and at B, per node, the "
          "meter's energy register is read over Modbus, and right after it "
          "slurmd's own node total (its *figure*: the sampler's running "
          "node energy, what it gives Slurm's energy RPC) through the "
          "node's energy query socket (`se-energy-query --fresh`: a "
          "reading kicked, the figure at a sample taken after the call).  "
          "(a) slurmd's count against the meter's own, each beside the "
          "trace's exact integral (se-trace) over its own two instants:\n"
          % (B - A))
    print("| node | figure id at A = at B | slurmd's figure delta J | "
          "trace over the figure's instants J | figure error | register "
          "delta J | trace over the reads' instants J | register error | "
          "figure delta / register delta - 1 |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    books = {}
    skew, sample_skew = [], []
    for node in NODES:
        fa, fb = r["a_fig"][node], r["b_fig"][node]
        (ra, ta), (rb, tb) = r["a_reg"][node], r["b_reg"][node]
        same = fa["id"] == fb["id"]
        fig = fb["j"] - fa["j"]
        fig_truth = tj(node, epoch, fa["t"], fb["t"])
        reg = rb - ra
        reg_truth = tj(node, epoch, ta, tb)
        books[node] = dict(same=same, fig=fig, fig_truth=fig_truth, reg=reg)
        skew += [fa["t"] - ta, fb["t"] - tb]
        sample_skew += [fa["sample_t"] - ta, fb["sample_t"] - tb]
        print("| %s | %s | %.1f | %.1f | %+.3f %% | %.1f | %.1f | %+.3f %% | "
              "%s |"
              % (node, "yes" if same else "**no** (%x, %x: slurmd restarted"
                 "; the figures do not subtract)" % (fa["id"], fb["id"]),
                 fig, fig_truth, 100 * energy.relative_error(fig, fig_truth),
                 reg, reg_truth, 100 * energy.relative_error(reg, reg_truth),
                 "%+.3f %%" % (100 * (fig / reg - 1)) if same else "-"))
    print()
    print("The figure's instant (slurmd's answer) after the register's read: "
          "%.0f ... %.0f ms; the figure's sample after the read: "
          "%.0f ... %.0f ms\n"
          % (1e3 * min(skew), 1e3 * max(skew), 1e3 * min(sample_skew),
             1e3 * max(sample_skew)))

    print("(b), (c) and the identity: jobs = the node's share of every "
          "srun step (its settle line: the step's figure; a batch "
          "script's own `.batch` step overlaps its srun steps and is not "
          "added); between = slurmd's figure delta - jobs, the energy "
          "slurmd counted outside the jobs, against the trace's exact "
          "energy outside the steps' windows (each the length of its "
          "settle line, around the tasks' marks) between the figure's "
          "instants; register = the meter's own count over [A, B]\n")
    print("| node | steps | jobs J | true J over the steps' windows | "
          "jobs error | between (slurmd) J | true J outside the windows | "
          "between error | jobs + between J | register J | "
          "(jobs + between) / register - 1 |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = 0.0
    excess_all = []
    for node in NODES:
        windows, jobs_j, n = [], 0, 0
        for s in specs:
            for (jj, k), per_node in s["marks"].items():
                if node not in per_node:
                    continue
                t0, t1, _ = per_node[node]
                got = settled.get((jj, str(k)), {}).get(node)
                if got:
                    # the step's own window is its settle line's length;
                    # the tasks' marks lie inside it (fork and exec before
                    # the first, exit and reaping after the last): the
                    # excess is put half before, half after the marks
                    excess = got[1] - (t1 - t0)
                    excess_all.append(excess)
                    t0, t1 = t0 - excess / 2, t1 + excess / 2
                    jobs_j += got[0]
                windows.append((t0, t1))
                n += 1
        u = union(windows)
        overlap = sum(b - a for a, b in windows) - sum(b - a for a, b in u)
        truth_w = sum(tj(node, epoch, a, b) for a, b in u)
        bk = books[node]
        between = bk["fig"] - jobs_j
        between_truth = bk["fig_truth"] - truth_w
        if bk["same"]:
            ident = (jobs_j + between) / bk["reg"] - 1
            worst = max(worst, abs(ident))
        print("| %s | %d | %d | %.0f | %+.3f %% | %.1f | %.1f | %+.1f J "
              "(%+.3f %%) | %.1f | %.1f | %s |"
              % (node, n, jobs_j, truth_w,
                 100 * energy.relative_error(jobs_j, truth_w), between,
                 between_truth, between - between_truth,
                 100 * energy.relative_error(between, between_truth),
                 jobs_j + between, bk["reg"],
                 "%+.3f %%" % (100 * ident) if bk["same"] else
                 "- (the figure restarted)"))
        if overlap > 1e-3:
            print("| %s: steps' windows overlap by %.3f s (not exclusive?) "
                  "|||||||||||" % (node, overlap))
    print()
    print("Largest |identity error|: %.3f %% (bound 1 %%)%s\n"
          % (100 * worst, "" if all(books[n]["same"] for n in NODES) else
             "; nodes whose figure restarted are not in it"))
    if excess_all:
        excess_all.sort()
        print("Step windows (settle lines) minus the tasks' marks: median "
              "%.0f ms, min %.0f ms, max %.0f ms over %d node-steps\n"
              % (1e3 * excess_all[len(excess_all) // 2],
                 1e3 * excess_all[0], 1e3 * excess_all[-1],
                 len(excess_all)))

    print_rss(r)


def print_rss(r):
    print("**RSS** (VmRSS, kB)\n")
    names = sorted(r["rss"][0][2])
    print("| when | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    for label, _, sample in r["rss"]:
        print("| %s | %s |" % (label, " | ".join(
            str(sample.get(n)) for n in names)))
    first, last = r["rss"][0][2], r["rss"][-1][2]
    mid_label, _, mid = r["rss"][len(r["rss"]) // 2]
    print("| end - %s | %s |" % (mid_label, " | ".join(
        "%+d" % (last[n] - mid[n]) if last.get(n) and mid.get(n) else "?"
        for n in names)))
    print("| end - before | %s |" % " | ".join(
        "%+d" % (last[n] - first[n]) if last.get(n) and first.get(n) else "?"
        for n in names))
    print()


def print_rates(rates, args):
    if not rates:
        return
    print("**Launch rate**: `srun -n%d true` steps one after another in a "
          "one-node exclusive job (node1), on two clusters up at once: "
          "stock Slurm (AcctGatherEnergyType=acct_gather_energy/none, no "
          "plugin of ours) and the configuration of the row; %d blocks of "
          "%d steps on each, alternating between the clusters (ABBA), "
          "timed inside the job; SlurmctldDebug/SlurmdDebug info on both\n"
          % (args.launch_tasks, args.launch_blocks, args.launch_steps))
    print("| config | its parts | srun options (this / stock) | steps/s "
          "| stock's steps/s "
          "| ratio | its 95 % interval (bootstrap over the block pairs) "
          "| per-block ratios: median (min ... max) | failed steps "
          "| steps that waited for the previous one's CPU (this / stock) "
          "| machine CPU per step, ms (this / stock) "
          "| of it the meter simulator's, ms per step |")
    print("|---|---|---|---:|---:|---:|---|---|---:|---:|---:|---:|")
    for cfg, rows, fails, busy in rates:
        parts, srun_args, stock_args = launch_config(cfg)
        rs, rk = side_rate(rows, "s"), side_rate(rows, "k")
        per = sorted((r["s"][0] / r["s"][1]) / (r["k"][0] / r["k"][1])
                     for r in rows)
        cpu = ["%.1f" % (1e3 * sum(r[w][2] for r in rows) /
                         sum(r[w][0] for r in rows)) for w in ("s", "k")]
        meter_ms = 1e3 * sum(r["s"][3] for r in rows) / \
            sum(r["s"][0] for r in rows)
        lo, hi = launch_interval(rows)
        print("| %s | %s | %s | %.2f | %.2f | %.1f %% | %.1f ... %.1f %% "
              "| %.1f %% (%.1f ... %.1f %%) | %d | %s | %s | %.2f |"
              % (cfg, " + ".join(parts) or "(none of ours)",
                 "%s / %s" % (srun_args or "-", stock_args or "-"),
                 rs, rk, 100 * rs / rk, 100 * lo, 100 * hi,
                 100 * per[len(per) // 2],
                 100 * per[0], 100 * per[-1], fails,
                 "%d / %d" % busy, " / ".join(cpu), meter_ms))
    print()


if __name__ == "__main__":
    main()
