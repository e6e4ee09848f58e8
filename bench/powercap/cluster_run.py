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

Runs a cluster of its own identity (state /var/tmp/slurm-energy-cluster-
pc45, network 10.199.145.0/24, ports 21317..) and takes it down at the end.
Needs the build (make; make install into _build/stage) and munged.
"""
import argparse
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
from selab.capped import capped_joules, read_cap_log       # noqa: E402
from selab.cluster import Cluster                          # noqa: E402
from selab.meters import ModbusSim, stop_process           # noqa: E402
from selab.modbus_rig import METER, modbus_conf            # noqa: E402
from selab.powercap_rig import fake_rapl_zone, start_munged  # noqa: E402
from selab.trace import Trace                              # noqa: E402

DAEMON = os.path.join(OBJ, "src", "powercap", "slurm-energy-powercapd")
AGENT = os.path.join(OBJ, "src", "powercap", "slurm-energy-powercap-agent")
NODES = ["node1", "node2", "node3"]
UNIT = {n: i + 1 for i, n in enumerate(NODES)}
FLOOR_W, MAX_W = 100, 400
# demands: flat 350 W; 300 +/- 100 W over 20 s; 150..350 W over 40 s
# (means 350 + 300 + 250 = 900 W: 130 % of a 692 W cap)
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


def cluster_power(trace, histories, t0, t1):
    """[(window start, mean watts)] over whole seconds of [t0, t1]."""
    out, t = [], t0
    while t + 1 <= t1:
        out.append((t, sum(capped_joules(trace, n, t, t + 1, histories[n])
                           for n in NODES)))
        t += 1
    return out


def report(args, trace, histories, epoch, jobs, first_cap_t, end_t):
    print("| job node | sacct J | truth J (min(demand, cap)) | error | "
          "uncapped J |")
    print("|---|---|---|---|---|")
    for node, (jobid, windows, sacct) in sorted(jobs.items()):
        a, b = (w - epoch for w in windows[node])
        truth = capped_joules(trace, node, a, b, histories[node])
        print("| %s (job %d, %.1f s) | %s | %.0f | %+.3f %% | %.0f |" % (
            node, jobid, b - a, sacct, truth,
            100 * energy.relative_error(sacct, truth) if sacct else
            float("nan"), trace.joules(node, a, b)))
    series = cluster_power(trace, histories, first_cap_t, end_t)
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


def run(args, c, procs):
    work = procs.dir
    trace_path = os.path.join(work, "demand.trace")
    put(trace_path, TRACE)
    limits = {n: fake_rapl_zone(os.path.join(work, n), MAX_W * 1000000,
                                MAX_W * 1000000) for n in NODES}
    c.restart(plugin_dirs=[os.environ["SE_PLUGIN_DIR"]],
              energy_type="acct_gather_energy/modbus",
              acct_gather_conf=modbus_conf(
                  work, "counter", map_lines=["Nodes=%s Unit=%d" % (n, u)
                                              for n, u in UNIT.items()]),
              slurm_conf="DebugFlags=Energy\n")
    epoch = time.time()
    caplog = os.path.join(work, "caps.log")
    sim = ModbusSim(trace_path, epoch, {u: n for n, u in UNIT.items()},
                    ["--model", "sdm630"], tcp=METER, workdir=work,
                    extra_args=sum((["--cap", "%d:%s" % (UNIT[n], limits[n])]
                                    for n in NODES), [])
                    + ["--cap-log", caplog])
    sim.start()
    try:
        energy.wait_for_power(c, NODES)
        munge = start_munged(work, procs.start)
        wait_for(lambda: os.path.exists(munge), "munged")
        port = 21400
        conf = powercap_conf(args, port)
        put(os.path.join(work, "powercapd.conf"), conf + "PowerCapKnobs=rapl\n")
        env = dict(os.environ, SLURM_CONF=c.env["SLURM_CONF"])
        procs.start("daemon", [DAEMON, "-v", "-f",
                               os.path.join(work, "powercapd.conf"),
                               "-l", "127.0.0.1", "--munge-socket", munge],
                    env=env)
        for n in NODES:
            put(os.path.join(work, n + ".conf"), conf +
                "PowerCapKnobs=rapl:root=%s:min_pct=25\n"
                % os.path.join(work, n))
            sock = os.path.join(c.node_dir(n), "spool",
                                "slurm-energy-%s.sock" % n)
            wait_for(lambda: os.path.exists(sock), sock)
            procs.start("agent-" + n, [AGENT, "-v", "-f",
                                       os.path.join(work, n + ".conf"),
                                       "-n", n, "-q", sock, "--munge-socket",
                                       munge, "-u", "root"])
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
    report(args, Trace(trace_path), histories, epoch, results, first_cap_t,
           end_t)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--cap-w", type=int, default=692)
    ap.add_argument("--period", type=float, default=1.0)
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory (logs, cap log)")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="se-pc-cluster-")
    os.chmod(work, 0o755)     # munged wants its socket's dirs searchable
    procs = Procs(work)
    c = Cluster()
    try:
        run(args, c, procs)
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
