#!/usr/bin/python3
"""The demo: per-job energy from simulated Modbus meters, end to end.

Brings up the test cluster (3 nodes) with acct_gather_energy/modbus, one
simulated SDM630 meter per node (one se-modbus-sim serving three unit ids,
as a PDU or a gateway would), runs a few jobs, prints each job's
ConsumedEnergyRaw from sacct beside the trace's true energy, and writes a
plot of node power over time with the jobs marked.

Run through contribs/demo.sh (which builds first).  Options:
    --out DIR     where the table, samples and plot go (default _build/demo)
    --keep        leave the cluster and the meter running at the end
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "python"))

from selab import energy  # noqa: E402
from selab.cluster import Cluster, poll  # noqa: E402
from selab.meters import ModbusSim, tool  # noqa: E402

TRACE = os.path.join(HERE, "trace", "examples", "cluster.trace")
NODES = ("node1", "node2", "node3")
METER_ADDR = (os.environ.get("SE_CLUSTER_NET", "10.199.0") + ".1", 15020)


def acct_gather_conf(out):
    """One meter per node: unit N of the gateway at METER_ADDR."""
    map_file = os.path.join(out, "modbus.map")
    with open(map_file, "w") as handle:
        for unit, node in enumerate(NODES, 1):
            handle.write("Nodes=%s Unit=%d\n" % (node, unit))
    return ("EnergyModbusDevice=tcp://%s:%d\n" % METER_ADDR +
            "EnergyModbusModel=sdm630\n"
            "EnergyModbusMap=%s\n"
            "EnergyModbusFrequency=1\n"
            "EnergyModbusTimeout=500\n" % map_file)


class PowerSampler(threading.Thread):
    """Records each node's CurrentWatts once a second, for the plot."""

    def __init__(self, cluster, path):
        super().__init__(daemon=True)
        self.cluster, self.path = cluster, path
        self.stopping = threading.Event()

    def run(self):
        with open(self.path, "w") as handle:
            while not self.stopping.wait(1.0):
                now = time.time()
                for node in NODES:
                    power = energy.node_power(self.cluster, node)
                    if power:
                        handle.write("%.3f,%s,%d\n" % (now, node, power[0]))
                handle.flush()


def run_srun_job(cluster, name, args, seconds):
    proc = cluster.srun("-J", name, *args, *energy.timed_command(seconds),
                        timeout=seconds + 120)
    return proc.stdout


def run_sbatch_job(cluster, name, args, seconds, out):
    output = os.path.join(out, "%s.out" % name)
    script = "#!/bin/sh\nsrun %s\n" % " ".join(
        "'%s'" % a for a in energy.timed_command(seconds))
    jobid = cluster.sbatch("-J", name, "-o", output, *args, script=script)
    cluster.wait_sacct(jobid, timeout=seconds + 120)
    with open(output) as handle:
        return jobid, handle.read()


def job_id_by_name(cluster, name):
    out = cluster.run(["sacct", "-n", "-X", "-P", "-o", "JobID",
                       "--name", name]).stdout.split()
    return int(out[-1])


def account(cluster, epoch, name, jobid, output):
    """The job's row for the table and the plot."""
    windows = energy.windows(output)
    recorded = energy.consumed_energy(cluster, jobid)
    step = "%d.0" % jobid
    truth = energy.true_energy(TRACE, epoch, windows)
    return {
        "id": jobid, "name": name, "nodes": sorted(windows),
        "t0": min(w[0] for w in windows.values()),
        "t1": max(w[1] for w in windows.values()),
        "job_j": recorded.get(str(jobid)), "sacct_j": recorded.get(step),
        "truth_j": truth,
    }


def print_table(rows):
    print("\n%-6s %-8s %-18s %9s %12s %12s %8s" % (
        "job", "name", "nodes", "seconds", "sacct [J]", "true [J]", "error"))
    for row in rows:
        err = energy.relative_error(row["sacct_j"], row["truth_j"])
        print("%-6s %-8s %-18s %9.1f %12d %12.0f %+7.2f%%" % (
            "%d.0" % row["id"], row["name"], ",".join(row["nodes"]),
            row["t1"] - row["t0"], row["sacct_j"], row["truth_j"],
            100 * err))
    print("(sacct: ConsumedEnergyRaw of the job's srun step; true: the "
          "trace's exact integral over each task's own start and end)")


def run_jobs(cluster, epoch, out):
    """The demo's jobs; returns their rows for the table and the plot."""
    rows = []
    print("== job 1: srun -w node1, 30 s")
    output = run_srun_job(cluster, "single", ["-w", "node1"], 30)
    rows.append(account(cluster, epoch, "single",
                        job_id_by_name(cluster, "single"), output))
    print("== job 2: srun -N3, 30 s")
    output = run_srun_job(cluster, "multi", ["-N3"], 30)
    rows.append(account(cluster, epoch, "multi",
                        job_id_by_name(cluster, "multi"), output))
    print("== job 3: sbatch -N2 (node2,node3) with one srun step, 40 s")
    jobid, output = run_sbatch_job(cluster, "batch",
                                   ["-N2", "-w", "node2,node3"], 40, out)
    rows.append(account(cluster, epoch, "batch", jobid, output))
    time.sleep(3)           # a little idle power after the last job
    return rows


def report(cluster, epoch, rows, out):
    """Table, sacct listing and plot."""
    print_table(rows)
    with open(os.path.join(out, "jobs.json"), "w") as handle:
        json.dump(rows, handle, indent=1)
    print("\n" + cluster.run(["sacct", "-o",
                              "JobID,JobName,NodeList,Elapsed,"
                              "ConsumedEnergyRaw,State"]).stdout)
    plot = os.path.join(out, "power.png")
    subprocess.run([os.path.join(HERE, "report", "se-energy-plot"),
                    "--trace", TRACE, "--epoch", "%.6f" % epoch,
                    "--jobs", os.path.join(out, "jobs.json"),
                    "--samples", os.path.join(out, "samples.csv"),
                    "--nodes", ",".join(NODES), "--se-trace",
                    tool("se-trace"), "--out", plot], check=True,
                   stdout=subprocess.DEVNULL)
    print("plot: %s" % plot)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=os.path.join(HERE, "..", "_build",
                                                      "demo"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    plugin_dir = os.environ["SE_PLUGIN_DIR"]

    cluster = Cluster()
    if cluster.is_up():
        cluster.down()
    epoch = time.time()
    print("== cluster up: 3 nodes, acct_gather_energy/modbus from %s"
          % plugin_dir)
    sim = sampler = None
    keep = False
    try:
        cluster.up(cluster.up_args(plugin_dirs=[plugin_dir],
                                   energy_type="acct_gather_energy/modbus",
                                   acct_gather_conf=acct_gather_conf(out),
                                   slurm_conf="DebugFlags=Energy\n"))
        sim = ModbusSim(TRACE, epoch, {u: n for u, n in enumerate(NODES, 1)},
                        ["--model", "sdm630"], tcp=METER_ADDR).start()
        print("== meters: se-modbus-sim (3 x Eastron SDM630) on %s:%d, "
              "playing %s" % (METER_ADDR + (TRACE,)))
        poll(lambda: all(energy.node_power(cluster, n) for n in NODES),
             timeout=60, what="CurrentWatts on every node")
        sampler = PowerSampler(cluster, os.path.join(out, "samples.csv"))
        sampler.start()
        rows = run_jobs(cluster, epoch, out)
        sampler.stopping.set()
        report(cluster, epoch, rows, out)
        keep = args.keep
    finally:
        if sampler:
            sampler.stopping.set()
        if keep:
            print("cluster and meter left running (meter pid %d); stop "
                  "with: kill %d; contribs/cluster/cluster down"
                  % (sim.pid, sim.pid))
        else:
            if sim:
                sim.stop()
            cluster.down()
    worst = max(abs(energy.relative_error(r["sacct_j"], r["truth_j"]))
                for r in rows)
    return 0 if worst < 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
