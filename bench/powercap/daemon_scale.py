#!/usr/bin/python3
"""The power cap daemon at 1,000 and 10,000 nodes (issue #45): not in CI.

slurm-energy-powercapd over a group of N nodes, its agents simulated by
se-bench-powercapd-load (N TCP connections in one process, each sealing
and opening every message through munged as a real agent does; no knobs,
no slurmd), every node demanding 450 W of a 100..500 W range under a cap
of 130 % below the demand.  After a warm-up, for SECONDS, it reads:

- the rounds the daemon logged (-v) and how many nodes each charged
  unanswered (held: no reading that round; unenforced: silent), which is
  what a daemon too slow for its period costs the cluster;
- the spread of a round's CAPs as the agents received them (first to
  last);
- the CPU time of the daemon, of the simulated agents and of munged per
  round (/proc), and the daemon's resident memory.

The agents and munged share the machine with the daemon: on a small host
the round's spread is an upper bound of the daemon's own.

    sudo bench/powercap/daemon_scale.py [--nodes 1000,10000] [--seconds 20]
        [--period 1]

Needs the build (make: _build/obj) and munged.  Every process started here
is stopped by its PID.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OBJ = os.environ.get("SE_BUILD_OBJ", os.path.join(REPO, "_build", "obj"))
DAEMON = os.path.join(OBJ, "src", "powercap", "slurm-energy-powercapd")
LOAD = os.path.join(OBJ, "bench", "powercap", "se-bench-powercapd-load")
sys.path.insert(0, os.path.join(REPO, "contribs", "python"))

from selab.powercap_rig import start_munged  # noqa: E402

DEMAND_W, FLOOR_W, MAX_W = 450, 100, 500
ROUND = re.compile(r"round (\d+): .* held (\d+), unenforced (\d+),")
SENT = re.compile(r"(\d+) caps sealed and sent in ([\d.]+) ms")
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_s(pid):
    """utime + stime of a process, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Procs:
    def __init__(self, workdir):
        self.dir, self.p = workdir, {}

    def start(self, name, argv, **kw):
        log = open(os.path.join(self.dir, name + ".log"), "w")
        self.p[name] = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=subprocess.STDOUT,
                                        **kw)
        log.close()
        return self.p[name]

    def log(self, name):
        with open(os.path.join(self.dir, name + ".log")) as f:
            return f.read()

    def stop_all(self):
        for p in self.p.values():
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


def one(n, seconds, period, port, threads):
    work = tempfile.mkdtemp(prefix="se-pcap-scale-")
    os.chmod(work, 0o755)
    procs = Procs(work)
    try:
        sock = start_munged(work, procs.start)
        deadline = time.monotonic() + 10
        while not os.path.exists(sock):
            assert time.monotonic() < deadline, procs.log("munged")
            time.sleep(0.05)
        conf = os.path.join(work, "powercap.conf")
        cap_w = int(n * DEMAND_W / 1.3)
        with open(conf, "w") as f:
            f.write("PowerCapWatts=%d\nPowerCapPeriod=%g\n"
                    "PowerCapHoldSeconds=%d\nPowerCapFloorWatts=%d\n"
                    "PowerCapMaxWatts=%d\nPowerCapKnobs=rapl\n"
                    "PowerCapNodes=n[00001-%05d]\n"
                    "PowerCapController=127.0.0.1:%d\n"
                    % (cap_w, period, max(30, 3 * period), FLOOR_W, MAX_W,
                       n, port))
        daemon = procs.start("daemon", [DAEMON, "-v", "-f", conf, "-l",
                                        "127.0.0.1", "--munge-socket", sock,
                                        "--munge-threads", str(threads)])
        time.sleep(0.5)
        warm = 5 + n / 1000.0       # connect, the first rounds
        t0 = time.monotonic()
        load = procs.start("load", [LOAD, "127.0.0.1:%d" % port, "n",
                                    str(n), str(DEMAND_W),
                                    "%g" % (warm + seconds + 1), sock])
        while "agents connected" not in procs.log("load"):
            assert load.poll() is None, procs.log("load")
            assert time.monotonic() - t0 < 120, procs.log("load")
            time.sleep(0.2)
        connect_s = time.monotonic() - t0
        time.sleep(warm)
        pids = {"daemon": daemon.pid, "load": load.pid,
                "munged": procs.p["munged"].pid}
        before = {k: cpu_s(v) for k, v in pids.items()}
        rounds_before = len(ROUND.findall(procs.log("daemon")))
        sent_before = len(SENT.findall(procs.log("daemon")))
        time.sleep(seconds)
        after = {k: cpu_s(v) for k, v in pids.items()}
        rss = rss_mb(daemon.pid)
        rounds = ROUND.findall(procs.log("daemon"))[rounds_before:]
        # a round's CAPs: its renewals, every node (the lowers before)
        sends = [float(ms) / 1000 for k, ms in
                 SENT.findall(procs.log("daemon"))[sent_before:]
                 if int(k) >= n * 0.9]
        load.wait(timeout=60 + n / 100)
        short = [int(h) + int(u) for _, h, u in rounds]
        per = max(len(rounds), 1)
        return {
            "nodes": n, "threads": threads, "connect_s": connect_s,
            "rounds": len(rounds),
            "expected": seconds / period,
            "short_max": max(short) if short else None,
            "short_mean": sum(short) / per if short else None,
            "send_med": sorted(sends)[len(sends) // 2] if sends else None,
            "send_max": max(sends) if sends else None,
            "cpu": {k: (after[k] - before[k]) / per * 1000 for k in pids},
            "rss": rss,
            "refused": re.findall(r"(\d+) messages refused",
                                  procs.log("load")),
            "errors": [l for l in procs.log("daemon").splitlines()
                       if "error" in l.lower() or "accept:" in l][:3],
        }
    finally:
        procs.stop_all()
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", default="1000,10000")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--period", type=float, default=1)
    ap.add_argument("--port", type=int, default=21330)
    ap.add_argument("--munge-threads", default="1,4",
                    help="the daemon's --munge-threads, each in turn")
    args = ap.parse_args()
    runs = [(int(n), int(t)) for n in args.nodes.split(",")
            for t in args.munge_threads.split(",")]
    rows = [one(n, args.seconds, args.period, args.port + i, t)
            for i, (n, t) in enumerate(runs)]
    print("period %g s, %g s measured after the warm-up; each node 450 W "
          "of 100..500 W, cap 130 %% under the demand" % (args.period,
                                                          args.seconds))
    print("| nodes | daemon's MUNGE threads | connect (s) | rounds "
          "(expected) | nodes unanswered "
          "a round: mean / max | the daemon sealing and sending a round's "
          "CAPs: median / max (s) | "
          "CPU a round: daemon / agents / munged (ms) | daemon RSS (MB) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print("| %d | %d | %.1f | %d (%g) | %.1f / %d | %.3f / %.3f | "
              "%.0f / %.0f / %.0f | %.0f |"
              % (r["nodes"], r["threads"], r["connect_s"], r["rounds"],
                 r["expected"],
                 r["short_mean"] or 0, r["short_max"] or 0,
                 r["send_med"] or 0, r["send_max"] or 0,
                 r["cpu"]["daemon"], r["cpu"]["load"], r["cpu"]["munged"],
                 r["rss"]))
    for r in rows:
        if r["errors"] or any(x != "0" for x in r["refused"]):
            print("%d nodes: %s; refused %s" % (r["nodes"], r["errors"],
                                                r["refused"]))


if __name__ == "__main__":
    main()
