#!/usr/bin/python3
"""A job whose progress follows its node's power cap (issue #45).

It has a fixed amount of work, WORK seconds at full speed, and advances at
the rate the node's power allows: every STEP seconds it reads its demand
(the node's column of the trace the load-following meter plays, at the
same trace time) and the cap the node's knob holds (the fake RAPL limit
file se-modbus-sim --cap reads, in microwatts), and does

    work done += dt * min(demand, cap) / demand

so a job capped to 70 % of its demand takes 1/0.7 times as long, as a
CPU-bound job on a package-capped node does to first order.  It prints
the marks of a timed job (SE_T0/SE_T1 HOST TIME, selab.energy.windows)
and one line

    SE_WORK HOST WORK RUNTIME MEAN_RATE MIN_CAP_W

(MIN_CAP_W: the lowest cap seen; a GPU-bound job's, its GPUs' lowest
limit.)

    capped_job.py --trace FILE --column NODE --epoch T --cap-file FILE
                  --work SECONDS [--step 0.1]
                  [--idle-file FILE --idle-watts W]

With --idle-file, the job writes W there when its work is done: the
load-following meter (se-modbus-sim --idle) then draws at most W on the
node, which idles (its demand in the trace is the job's, not the node's).

A GPU-bound job (--gpu-limits): its progress follows its GPUs instead,

    work done += dt * sum(min(demand_i, limit_i)) / sum(demand_i)

over the GPUs' trace columns (--gpu-columns, NVML index order) and the
limits the fake NVML holds (its limits file, "INDEX MW" lines, written
by the power cap's nvml knob).  Done, it makes every GPU play
--gpu-idle-column from 0.3 s on (a col line in the fake NVML's control
file, --gpu-control: the GPUs idle too).

    capped_job.py ... --gpu-limits FILE --gpu-columns g0,g1
                  --gpu-control FILE --gpu-idle-column gidle

Run by bench/powercap/cluster_run.py --compare through srun on the node.
"""
import argparse
import os
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "contribs", "python"))
from selab.gpu_rig import col_switch                       # noqa: E402
from selab.trace import Trace                              # noqa: E402


def read_cap_w(path, tries=50):
    """The cap in the knob's limit file (microwatts), in watts.  The fake
    file is a regular one the knob truncates and writes (a sysfs attribute
    is never seen empty), so an empty read is tried again 5 ms later."""
    for _ in range(tries):
        with open(path, encoding="ascii") as f:
            text = f.read().strip()
        if text:
            break
        time.sleep(0.005)
    try:
        return int(text) / 1e6
    except ValueError:
        sys.exit("%s: not a number of microwatts: %r" % (path, text))


def read_gpu_limits_w(path, n):
    """The fake NVML's limits file: [watts of GPU i]; a GPU it does not
    list (no file before the first set) is at its default limit, above
    its demand here (inf).  Written by rename: never half a file."""
    limits = [float("inf")] * n
    if not os.path.exists(path):
        return limits
    with open(path, encoding="ascii") as f:
        for line in f:
            idx, mw = line.split()
            if int(idx) < n:
                limits[int(idx)] = int(mw) / 1e3
    return limits


def gpu_rate(trace, columns, t, limits):
    """The fraction of full speed the GPUs' limits allow."""
    demand = [trace.watts(c, t) for c in columns]
    if sum(demand) <= 0:
        return 1.0, min(limits)
    return (sum(min(d, lim) for d, lim in zip(demand, limits))
            / sum(demand), min(limits))


def gpus_idle(control, n, column, lead=0.3):
    """Every GPU plays column from now + lead on (a col line each in the
    fake NVML's control file)."""
    wall = time.time() + lead
    for i in range(n):
        col_switch(control, "*", i, column, wall=wall)


def rate(demand_w, cap_w):
    """The fraction of full speed min(demand, cap) allows."""
    return min(demand_w, cap_w) / demand_w if demand_w > 0 else 1.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--trace", required=True)
    ap.add_argument("--column", required=True)
    ap.add_argument("--epoch", type=float, required=True)
    ap.add_argument("--cap-file", required=True)
    ap.add_argument("--work", type=float, required=True)
    ap.add_argument("--step", type=float, default=0.1)
    ap.add_argument("--idle-file")
    ap.add_argument("--idle-watts", type=float, default=50.0)
    ap.add_argument("--gpu-limits")
    ap.add_argument("--gpu-columns", default="")
    ap.add_argument("--gpu-control")
    ap.add_argument("--gpu-idle-column")
    a = ap.parse_args()
    gpu_cols = [c for c in a.gpu_columns.split(",") if c]
    trace, host = Trace(a.trace), socket.gethostname()
    done, min_cap = 0.0, float("inf")
    start = last = time.time()
    print("SE_T0 %s %.6f" % (host, start), flush=True)
    while done < a.work:
        # the rate over the step just slept: demand and cap read now
        # (a cap changed within the step counts from here: at most one
        # step early or late, 0.1 s against the tens of seconds run)
        time.sleep(min(a.step, max((a.work - done), 0.001)))
        now = time.time()
        if a.gpu_limits:
            r, cap = gpu_rate(trace, gpu_cols, now - a.epoch,
                              read_gpu_limits_w(a.gpu_limits, len(gpu_cols)))
        else:
            cap = read_cap_w(a.cap_file)
            r = rate(trace.watts(a.column, now - a.epoch), cap)
        min_cap = min(min_cap, cap)
        step_work = (now - last) * r
        if done + step_work >= a.work:   # the end inside this step
            now = last + (a.work - done) / r
            step_work = a.work - done
        done += step_work
        last = now
    if a.idle_file:
        with open(a.idle_file, "w", encoding="ascii") as f:
            f.write("%g\n" % a.idle_watts)
    if a.gpu_control and a.gpu_idle_column:
        gpus_idle(a.gpu_control, len(gpu_cols), a.gpu_idle_column)
    print("SE_T1 %s %.6f" % (host, last), flush=True)
    print("SE_WORK %s %.3f %.3f %.4f %.1f" % (
        host, a.work, last - start, a.work / (last - start), min_cap),
        flush=True)


if __name__ == "__main__":
    main()
