#!/usr/bin/python3
"""test_load_meter_gpus.py - the GPU part of contribs/modbus-sim/load_meter.py
(issue #31) on its model, with no Modbus server, no cluster and no daemon:
a fake cgroup tree in a temporary directory, samples at given meter times
(off the tick grid, as a loaded host takes them), a column switch through
the fake NVML's control file.  Run by make check, or alone:
python3 tests/unit/test_load_meter_gpus.py (exit 0 when every check
passes, 1 otherwise; no check is skipped).

The figures are worked by hand from the trace below, not by the code under
test: between two tick boundaries the meter's energy is idle + CPU part +
F x the GPUs' joules, to the float's precision.
"""
import json
import os
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "contribs", "modbus-sim"))
sys.path.insert(0, os.path.join(TOP, "contribs", "python"))
import load_meter  # noqa: E402
from selab.gpu_rig import col_switch, played_j  # noqa: E402
from selab.trace import Trace  # noqa: E402

FAILS = []
TMP = tempfile.mkdtemp(prefix="se-load-meter-test-")

# gidle 40 W and gheavy 300 W flat; gramp 100 -> 200 W over [0, 2], then
# 200 -> 300 W over [2, 4], every 4 s: 800 J a period
GPU_TRACE = """@repeat 4
time gidle gheavy gramp
0 40 300 100
2 40 300 200
4 40 300 300
"""
EPOCH = 1000000.0          # the meter's epoch (wall s)
GPU_EPOCH = EPOCH - 6.0    # the GPUs' trace time 0: meter time t = GPU t + 6
F, IDLE_W, K, HZ = 1.08, 60.0, 90.0, 10.0
SWITCH = 5.05              # meter time of GPU 1's switch, inside a tick
BUSY = 0.5                 # CPUs busy, all along


def check(cond, what):
    print("%s: %s" % ("ok  " if cond else "FAIL", what))
    if not cond:
        FAILS.append(what)


def close(a, b, what, tol=1e-6):
    check(abs(a - b) <= tol, "%s = %.6f (expected %.6f)" % (what, a, b))


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def node_tree():
    """A node's cgroup v1 tree as load_meter reads it, its CPU time 0."""
    acct, cset = os.path.join(TMP, "cpuacct"), os.path.join(TMP, "cpuset")
    os.makedirs(acct, exist_ok=True)
    os.makedirs(cset, exist_ok=True)
    write(os.path.join(cset, "cpuset.cpus"), "0-3\n")
    usage = write(os.path.join(acct, "cpuacct.usage"), "0\n")
    return acct, cset, usage


def meter(gpus, name):
    acct, cset, usage = node_tree()
    node = load_meter.Node("node1", acct, cset)
    trace_out = os.path.join(TMP, name + ".trace")
    m = load_meter.LoadMeter([node], IDLE_W, K, trace_out,
                             os.path.join(TMP, name + ".json"), gpus=gpus,
                             epoch=EPOCH)
    return m, node, usage, trace_out


def sample_at(m, usage, t):
    """The node used BUSY CPUs since its start; the meter samples at t."""
    write(usage, "%d\n" % round(BUSY * t * 1e9))
    m.sample(t)


def test_without_gpus():
    """No --gpu-*: the trace is as before (header, a step pair a sample)."""
    m, _, usage, trace_out = meter(None, "plain")
    sample_at(m, usage, 0.1)
    sample_at(m, usage, 0.23)
    m.trace.close()
    with open(trace_out) as f:
        lines = f.read().splitlines()
    check(lines[1:] == ["time node1", "0.000000 60.000000",
                        "0.100000 60.000000", "0.100000 105.000000",
                        "0.230000 105.000000", "0.230000 105.000000"],
          "no GPU options: the trace rows of before (%s)" % lines[1:])
    m.dump()
    with open(os.path.join(TMP, "plain.json")) as f:
        doc = json.load(f)
    check("gpu_j" not in doc["nodes"]["node1"] and "psu_factor" not in doc,
          "no GPU options: no GPU field in the truth")


def test_gpus_and_switch():
    trace = write(os.path.join(TMP, "gpu.trace"), GPU_TRACE)
    control = os.path.join(TMP, "nvml.state.control")
    write(control, "node1 lost 0\n")             # a fault: not a switch
    wall = col_switch(control, "node1", 1, "gheavy", EPOCH + SWITCH)
    col_switch(control, "node2", 0, "gheavy", EPOCH + 1)    # another node
    col_switch(control, "*", 0, "nosuchcol", EPOCH + 1)     # the fake's too
    with open(control) as f:
        check(f.read().splitlines()[:2] ==
              ["node1 lost 0", "node1 col 1 gheavy %.6f" % (EPOCH + SWITCH)]
              and wall == EPOCH + SWITCH,
              "col_switch appends its line after the faults")
    rig = load_meter.GpuRig(trace, GPU_EPOCH, F, control)
    m, node, usage, trace_out = meter(
        (rig, {"node1": ["gramp", "gidle"]}, HZ), "gpus")

    # samples 0.1 s apart, up to 30 ms off the grid; readings at 2.0 and
    # 9.0 (tick boundaries) and 6.37 (inside one) between them
    marks, reads = [2.0, 6.37, 9.0], {}
    t_prev, t1 = 0.0, None
    for i in range(1, 101):
        t = round(0.1 * i + ((i * 37) % 7 - 3) * 0.01, 6)
        for x in marks:
            if t_prev < x <= t:
                reads[x] = m.reading(node, x)
        sample_at(m, usage, t)
        t1 = t1 or t
        t_prev = t
    a, b = 2.0, 9.0
    # GPU 0 plays gramp over GPU time [8, 15]: a period (800 J), then
    # [12, 14] (300 J) and [14, 15] (200 -> 250 W: 225 J)
    gpu0 = 800.0 + 300.0 + 225.0
    # GPU 1: 40 W up to the switch, 300 W after
    gpu1 = 40.0 * (SWITCH - a) + 300.0 * (b - SWITCH)
    cpu = (IDLE_W + K * BUSY) * (b - a)   # t1 < a: 105 W all the window
    close(reads[b][1] - reads[a][1], cpu + F * (gpu0 + gpu1),
          "meter energy over [2, 9] s = idle + CPU + F x the GPUs' joules")
    close(played_j(trace, GPU_EPOCH, "gidle", [(EPOCH + SWITCH, "gheavy")],
                   EPOCH + a, EPOCH + b), gpu1,
          "gpu_rig.played_j across the switch")
    close(played_j(trace, GPU_EPOCH, "gramp", [], EPOCH + a, EPOCH + b),
          gpu0, "gpu_rig.played_j without a switch")
    # inside a tick: within F x the swing of the power over one tick
    # (gramp: 25 W/s x 0.1 s) of the exact figure
    exact = (IDLE_W + K * BUSY) * (6.37 - a) + F * (
        played_j(trace, GPU_EPOCH, "gramp", [], EPOCH + a, EPOCH + 6.37) +
        40.0 * (SWITCH - a) + 300.0 * (6.37 - SWITCH))
    got = reads[6.37][1] - reads[a][1]
    check(0 < abs(got - exact) <= F * 2.5 * 0.1,
          "inside a tick: %.6f J, exact %.6f J (pro rata of the tick's "
          "joules, off by at most %.3f J)" % (got, exact, F * 2.5 * 0.1))
    # the tick [6.3, 6.4]: GPU time [12.3, 12.4], gramp 115 -> 120 W
    close(reads[6.37][0], IDLE_W + K * BUSY + F * (117.5 + 300.0),
          "power served in a tick after the switch")
    # the served trace integrates to the meter's own energy, also across
    # the steps at the tick boundaries (and holds no time three times)
    m.trace.close()
    tr = Trace(trace_out)
    close(tr.joules("node1", a, b), reads[b][1] - reads[a][1],
          "se-trace's view of the served trace over [2, 9] s")
    close(tr.joules("node1", 0, m.t_last), node.energy_j,
          "the served trace since the epoch = the energy register")
    # the truth file
    m.dump()
    with open(os.path.join(TMP, "gpus.json")) as f:
        doc = json.load(f)
    rec, t = doc["nodes"]["node1"], doc["t"]
    close(rec["gpu_j"]["1"], 40.0 * SWITCH + 300.0 * (t - SWITCH),
          "truth gpu_j of GPU 1 at t = %.2f" % t)
    close(rec["gpu_j"]["0"],
          played_j(trace, GPU_EPOCH, "gramp", [], EPOCH, EPOCH + t),
          "truth gpu_j of GPU 0")
    check(rec["gpu_cols"] == ["gramp", "gheavy"],
          "truth gpu_cols: GPU 1 switched, GPU 0 kept (%s)" % rec["gpu_cols"])
    close(rec["energy_j"] - rec["gpu_meter_j"],
          IDLE_W * t1 + (IDLE_W + K * BUSY) * (t - t1),
          "truth energy_j - gpu_meter_j = the idle and CPU part")
    check(doc["psu_factor"] == F and doc["gpu_epoch"] == GPU_EPOCH,
          "truth psu_factor and gpu_epoch")


def test_options():
    check(load_meter.parse_gpu_cols(["1:gpu0,gpu1;2:gpu2", "3:x"]) ==
          {1: ["gpu0", "gpu1"], 2: ["gpu2"], 3: ["x"]},
          "--gpu-cols UNIT:COL[,COL][;UNIT:COL...], repeatable")
    for bad in ("gpu0", "1:", "1:a;1:b"):
        try:
            load_meter.parse_gpu_cols([bad])
            check(False, "--gpu-cols %r refused" % bad)
        except ValueError:
            check(True, "--gpu-cols %r refused" % bad)


def main():
    try:
        test_without_gpus()
        test_gpus_and_switch()
        test_options()
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d check(s) failed" % len(FAILS) if FAILS else "all checks pass")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
