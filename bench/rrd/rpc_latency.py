#!/usr/bin/env python3
"""slurmctld RPC latency while ext_sensors rounds run, on the test cluster.

    python3 bench/rrd/rpc_latency.py [NODES ...]      (default: 1000 10000)

For each node count, writes one RRD file per node (se-rrd-feed --once, 10 s
step, the last 10 minutes of the cluster trace) and restarts the test cluster
(contribs/cluster, per SE_CLUSTER_* as usual) three times: ExtSensorsType
unset (baseline), ext_sensors/meters (ours) and ext_sensors/rrd (upstream),
each time with NodeName=f[1-NODES] State=FUTURE added, so that slurmctld's
node table, and every ext_sensors round, covers that many nodes
(ExtSensorsFreq=10, AcctGatherNodeFreq=0: see test_rrd_energy.py).  Then it
runs `sinfo` (node read lock) and `squeue` (job read lock) back to back for
SE_BENCH_PROBE seconds (default 60, six rounds) and prints their latency.
slurmctld holds the node write lock during a round, so an `sinfo` that
arrives meanwhile waits for the round to end.

The cluster is restored to the configuration it had (or brought down, if
this script brought it up).  Environment: SE_PLUGIN_DIR, SE_BIN_DIR as for
the tests; SE_BENCH_DIR for the RRD files (default a temporary dir under
/var/tmp, removed at the end).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "contribs", "python"))

from selab.cluster import Cluster, poll  # noqa: E402
from selab.meters import tool  # noqa: E402

TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")
PLUGIN_DIR = os.environ.get("SE_PLUGIN_DIR",
                            os.path.join(REPO, "_build", "stage", "lib",
                                         "slurm-energy"))
FREQ = 10
PROBE_S = float(os.environ.get("SE_BENCH_PROBE", "60"))
LOADED = {
    "none": None,
    "ext_sensors/meters": "ExtSensors meters plugin (slurm-energy-plugins) "
                          "loaded",
    "ext_sensors/rrd": "ExtSensors rrd plugin loaded",
}


def make_files(directory, nodes):
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    subprocess.run([tool("se-rrd-feed"), "--once", "--step", "10",
                    "--backfill", "600", "--path",
                    os.path.join(directory, "%n.rrd"), TRACE,
                    "f[1-%d]=node1" % nodes], check=True,
                   capture_output=True, timeout=600)


def ext_sensors_conf(directory, plugin):
    lines = ["JobData=energy", "NodeData=energy", "EnergyRRA=watts",
             "EnergyPathRRD=%s" % os.path.join(directory, "%n.rrd"),
             "MaxWatt=2000"]
    if plugin == "ext_sensors/meters":
        lines.append("MaxAge=3600")     # the files are written once
    return "\n".join(lines) + "\n"


def percentile(values, q):
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def probe(cluster, seconds):
    """Latencies (ms) of sinfo and squeue, called back to back."""
    out = {"sinfo": [], "squeue": []}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for name, args in (("sinfo", ["sinfo", "-h"]),
                           ("squeue", ["squeue", "-h"])):
            t = time.monotonic()
            cluster.run(args, timeout=120)
            out[name].append(1e3 * (time.monotonic() - t))
    return out


def measure(cluster, directory, nodes, plugin):
    slurm_conf = ("AcctGatherNodeFreq=0\n"
                  "NodeName=f[1-%d] CPUs=1 State=FUTURE\n" % nodes)
    extra = {}
    if plugin != "none":
        slurm_conf += ("ExtSensorsType=%s\nExtSensorsFreq=%d\n"
                       "DebugFlags=ExtSensors\n" % (plugin, FREQ))
        extra = {"ext_sensors.conf": ext_sensors_conf(directory, plugin)}
    dirs = [PLUGIN_DIR] if plugin == "ext_sensors/meters" else []
    cluster.restart(plugin_dirs=dirs, slurm_conf=slurm_conf,
                    extra_confs=extra)
    log = os.path.join(cluster.state, "log", "slurmctld.log")
    if LOADED[plugin]:
        poll(lambda: LOADED[plugin] in open(log).read(), timeout=60,
             what="%s loaded by slurmctld" % plugin)
    text = cluster.scontrol("--future", "show", "node",
                            "f%d" % nodes).stdout
    assert "NodeName=f%d" % nodes in text, text
    time.sleep(FREQ + 1)                 # past the warm-up round
    lat = probe(cluster, PROBE_S)
    if plugin == "ext_sensors/meters":
        # our rounds did read every file (DebugFlags=ExtSensors)
        ok = [int(m) for m in re.findall(r"ext_sensors/meters: round: .*? "
                                         r"(\d+) ok", open(log).read())]
        assert ok and max(ok) > 0, "no file read by ext_sensors/meters"
        print("  ext_sensors/meters: up to %d of %d files read per round"
              % (max(ok), nodes), file=sys.stderr)
    return lat


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1000, 10000]
    cluster = Cluster()
    was_up = cluster.is_up()
    before = list(cluster.current_args)
    work = os.environ.get("SE_BENCH_DIR") or tempfile.mkdtemp(
        prefix="se-bench-rpc-", dir="/var/tmp")
    rows = []
    try:
        for nodes in counts:
            directory = os.path.join(work, "files")
            make_files(directory, nodes)
            for plugin in ("none", "ext_sensors/meters", "ext_sensors/rrd"):
                lat = measure(cluster, directory, nodes, plugin)
                for name in ("sinfo", "squeue"):
                    v = lat[name]
                    rows.append((nodes, plugin, name, len(v),
                                 percentile(v, 0.5), percentile(v, 0.99),
                                 max(v)))
                    print("%6d %-20s %-6s n=%4d p50=%8.1f p99=%8.1f "
                          "max=%8.1f ms" % rows[-1], file=sys.stderr)
    finally:
        cluster.down()
        if was_up:
            cluster.up(before)
        if not os.environ.get("SE_BENCH_DIR"):
            shutil.rmtree(work, ignore_errors=True)
    print("| nodes | ExtSensorsType | command | calls | p50 ms | p99 ms "
          "| max ms |")
    print("|---:|---|---|---:|---:|---:|---:|")
    for r in rows:
        print("| %d | %s | %s | %d | %.1f | %.1f | %.1f |" % r)


if __name__ == "__main__":
    main()
