#!/usr/bin/env python3
"""bench/bmc/run.py - acct_gather_energy/bmc against Slurm's stock
acct_gather_energy/ipmi, side by side on the same simulated BMCs and traces.

One run, on the namespaced test cluster (contribs/cluster) with 6 nodes:

* two BMCs (contribs/bmc-sim: OpenIPMI's ipmi_sim over IPMI LAN 2.0, Watts
  sensors fed from the trace, DCMI from the trace), the same for every
  configuration (same ports, password, traces and epoch): "constant" plays
  constant.trace (200 W) for node1-3, "square" plays square.trace
  (100/300 W, 20 s period) for node4-6.  They are restarted before each
  configuration (ipmi_sim allows a user 10 sessions; stopped slurmds leave
  theirs open until it times them out) and are up before slurmd starts:
  the stock plugin gives up for good when its first read at slurmd start
  fails.  (A UDP socket bound to the bridge address NET.1 keeps working
  when the cluster's restart re-creates the bridge.);
* for each plugin configuration the cluster is restarted with it and three
  jobs per trace run at once (10 s, 30 s, 120 s: one per node), started at
  the same phase of the square wave in every configuration; the error is
  sacct's ConsumedEnergyRaw against the trace's exact integral over the
  task's own start and end (selab.energy);
* then the "constant" BMC is frozen (SIGSTOP) and a 5 s step is timed on
  node1: its completion latency (srun's wall time minus 5 s), the time of
  `scontrol show node`, and the energy recorded for it.

Configurations: ours with EnergyBMCMethod=dcmi and =sensors (1 s), and the
stock plugin at its defaults (EnergyIPMIFrequency=30, the sum of the two
PSU sensors).  The stock plugin has no key for a BMC host (its `hostname`
variable is fixed to NULL, in-band); bench/bmc/stock_ipmi_host.so, preloaded
into slurmd, sets that variable to the node's BMC by ELF symbol
interposition and changes nothing else (see the file).

    bench/bmc/run.py [--phases ours-dcmi,ours-sensors,stock]

Environment: SE_CLUSTER_* (which cluster instance; it must be down: the
bench brings it up and down itself), SE_PLUGIN_DIR (our plugins, default
_build/stage/lib/slurm-energy), SE_BUILD_DIR (default _build), SE_BIN_DIR.
Prints markdown tables (paste into BENCHMARKS.md).  About 10 minutes.
"""
import argparse
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "contribs", "python"))

from selab import energy  # noqa: E402
from selab.cluster import Cluster, poll  # noqa: E402

BUILD = os.environ.get("SE_BUILD_DIR", os.path.join(REPO, "_build"))
PLUGIN_DIR = os.environ.get("SE_PLUGIN_DIR", os.path.join(
    BUILD, "stage", "lib", "slurm-energy"))
BMC_SIM = os.path.join(BUILD, "obj", "contribs", "bmc-sim", "bmc-sim")
SHIM = os.path.join(BUILD, "obj", "bench", "bmc", ".libs",
                    "stock_ipmi_host.so")
EXAMPLES = os.path.join(REPO, "contribs", "trace", "examples")

NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
ADDR = NET + ".1"
PORT_BASE = 19600 + 16 * (int(NET.split(".")[2]) % 256) + 8
BMCS = {  # name: (trace, column, port, nodes)
    "constant": (os.path.join(EXAMPLES, "constant.trace"), "n1",
                 PORT_BASE, ("node1", "node2", "node3")),
    "square": (os.path.join(EXAMPLES, "square.trace"), "n1",
               PORT_BASE + 1, ("node4", "node5", "node6")),
}
DURATIONS = (10, 30, 120)
SQUARE_PERIOD = 20.0
START_PHASE = 5.0          # jobs start 5 s into a square-wave period
FROZEN_STEP = 5


def log(msg):
    print("# %s %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr,
          flush=True)


def bmc_sim(cmd, state, *extra):
    p = subprocess.run([BMC_SIM, cmd, "--state", state, *extra],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError("bmc-sim %s %s: %s%s" % (cmd, state, p.stdout,
                                                    p.stderr))
    return p


def node_of_bmc():
    return {n: (ADDR, port) for _, _, port, nodes in BMCS.values()
            for n in nodes}


def phase_config(name, work, password, pwfile):
    """cluster.restart() keywords of a configuration."""
    hosts = node_of_bmc()
    if name.startswith("ours-"):
        map_file = os.path.join(work, "bmc.map")
        with open(map_file, "w") as f:
            for node, (a, p) in sorted(hosts.items()):
                f.write("Nodes=%s Host=%s:%d\n" % (node, a, p))
        conf = ("EnergyBMCMethod=%s\nEnergyBMCMap=%s\nEnergyBMCUser=admin\n"
                "EnergyBMCPasswordFile=%s\nEnergyBMCPrivilege=admin\n"
                "EnergyBMCWorkaroundFlags=opensesspriv\n"
                "EnergyBMCFrequency=1\nEnergyBMCTimeout=500\n"
                "EnergyBMCSdrCacheDir=%s\n"
                % (name[5:], map_file, pwfile,
                   os.path.join(work, "sdr-%n")))
        return dict(plugin_dirs=[PLUGIN_DIR],
                    energy_type="acct_gather_energy/bmc",
                    acct_gather_conf=conf)
    # stock at its defaults (30 s poll), what it needs to reach ipmi_sim:
    # IPMI 2.0 (1), admin (2), cipher suite 3, opensesspriv (0x10), and
    # the two PSU sensors (record ids 1, 2) summed as the node's power.
    conf = ("EnergyIPMIUsername=admin\nEnergyIPMIPassword=%s\n"
            "EnergyIPMIProtocolVersion=1\nEnergyIPMIPrivilegeLevel=2\n"
            "EnergyIPMICipherSuiteId=3\nEnergyIPMIWorkaroundFlags=16\n"
            "EnergyIPMIPowerSensors=Node=1,2\n" % password)
    return dict(energy_type="acct_gather_energy/ipmi", acct_gather_conf=conf,
                node_env={"LD_PRELOAD": SHIM,
                          "SE_STOCK_IPMI_HOSTS": " ".join(
                              "%s=%s:%d" % (n, a, p)
                              for n, (a, p) in sorted(hosts.items()))})


def wait_phase(epoch):
    """Sleep until START_PHASE seconds into a square-wave period."""
    now = time.time() - epoch
    wait = (START_PHASE - now) % SQUARE_PERIOD
    time.sleep(wait if wait > 1 else wait + SQUARE_PERIOD)


def run_jobs(c, phase, epoch):
    jobs = []
    wait_phase(epoch)
    for bmc, (trace, column, _, nodes) in BMCS.items():
        for node, secs in zip(nodes, DURATIONS):
            name = "%s-%s-%d" % (phase, bmc, secs)
            jobs.append((bmc, trace, column, secs, name, c.popen(
                ["srun", "-J", name, "-w", node,
                 *energy.timed_command(secs)])))
    rows = []
    for bmc, trace, column, secs, name, proc in jobs:
        out, err = proc.communicate(timeout=secs + 180)
        if proc.returncode:
            raise RuntimeError("srun %s: %s" % (name, err))
        jobid = int(c.run(["sacct", "-n", "-X", "-P", "-o", "JobID",
                           "--name", name]).stdout.split()[-1])
        (t0, t1), = energy.windows(out).values()
        truth = energy.trace_joules(trace, column, epoch, t0, t1)
        got = energy.consumed_energy(c, jobid)["%d.0" % jobid]
        rows.append((bmc, secs, got, truth))
    return rows


def timed(fn):
    t = time.monotonic()
    fn()
    return time.monotonic() - t


def frozen_latency(c, phase, state):
    """(step latency ok, step latency frozen, scontrol s, energy J)."""
    step = ["srun", "-w", "node1", "sleep", str(FROZEN_STEP)]
    ok = timed(lambda: c.run(["srun", "-J", phase + "-ok", *step[1:]],
                             timeout=300)) - FROZEN_STEP
    bmc_sim("freeze", state)
    try:
        time.sleep(3)                # the next BMC reads now hang
        proc = c.popen(["srun", "-J", phase + "-frozen", *step[1:]])
        t = time.monotonic()
        time.sleep(1)
        show = timed(lambda: c.scontrol("show", "node", "node1",
                                        timeout=120))
        proc.communicate(timeout=300)
        frozen = time.monotonic() - t - FROZEN_STEP
    finally:
        bmc_sim("thaw", state)
    jobid = int(c.run(["sacct", "-n", "-X", "-P", "-o", "JobID", "--name",
                       phase + "-frozen"]).stdout.split()[-1])
    joules = energy.consumed_energy(c, jobid)["%d.0" % jobid]
    return ok, frozen, show, joules


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--phases", default="ours-dcmi,ours-sensors,stock")
    args = ap.parse_args()
    phases = args.phases.split(",")
    for path in (BMC_SIM, SHIM, os.path.join(PLUGIN_DIR,
                                             "acct_gather_energy_bmc.so")):
        if not os.path.exists(path):
            sys.exit("run.py: %s missing: build first" % path)
    c = Cluster()
    if c.is_up():
        sys.exit("run.py: cluster %s is up: the bench needs it down "
                 "(it brings it up and down itself)" % c.state)

    work = tempfile.mkdtemp(prefix="se-bench-bmc-", dir="/var/tmp")
    password = secrets.token_hex(8)
    pwfile = os.path.join(work, "bmc.password")
    with open(os.open(pwfile, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(password + "\n")
    epoch = time.time()
    states = {}
    results, latency = {}, {}
    try:
        c.up(c.up_args(nodes=6))        # the bridge: NET.1 for the BMCs
        for phase in phases:
            log("%s: restarting the BMCs and the cluster" % phase)
            for bmc, (trace, column, port, _) in BMCS.items():
                states[bmc] = os.path.join(work, "bmc-" + bmc)
                bmc_sim("stop", states[bmc])
                bmc_sim("start", states[bmc], "--port", str(port),
                        "--trace", trace, "--column", column, "--epoch",
                        "%.6f" % epoch, "--addr", ADDR, "--password-file",
                        pwfile)
            c.restart(nodes=6, slurm_conf="DebugFlags=Energy\n",
                      **phase_config(phase, work, password, pwfile))
            poll(lambda: all(energy.node_power(c, "node%d" % i)
                             for i in range(1, 7)), timeout=90,
                 what="CurrentWatts on every node")
            log("%s: jobs" % phase)
            results[phase] = run_jobs(c, phase, epoch)
            log("%s: frozen BMC" % phase)
            latency[phase] = frozen_latency(c, phase, states["constant"])
    finally:
        for state in states.values():
            subprocess.run([BMC_SIM, "stop", "--state", state],
                           capture_output=True, timeout=60)
        c.down()
        shutil.rmtree(work, ignore_errors=True)

    print("| plugin | trace | job | sacct J | true J | error |")
    print("|---|---|---:|---:|---:|---:|")
    for phase in phases:
        for bmc, secs, got, truth in results[phase]:
            err = ("%+.2f %%" % (100 * energy.relative_error(got, truth))
                   if got is not None else "n/a")
            print("| %s | %s | %d s | %s | %.0f | %s |"
                  % (phase, bmc, secs, got, truth, err))
    print()
    print("| plugin | %d s step, BMC ok: latency | %d s step, BMC frozen: "
          "latency | scontrol show node (frozen) | energy of the frozen "
          "step |" % (FROZEN_STEP, FROZEN_STEP))
    print("|---|---:|---:|---:|---:|")
    for phase in phases:
        ok, frozen, show, joules = latency[phase]
        print("| %s | %.2f s | %.2f s | %.2f s | %s J |"
              % (phase, ok, frozen, show, joules))


if __name__ == "__main__":
    main()
