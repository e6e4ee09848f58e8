"""A load-following meter (issue #45): power = min(demand, cap), exact energy.

se-modbus-sim with --cap plays a node's demand (a trace column) and reads
its cap from a fake RAPL zone's constraint_0_power_limit_uw, written here
by se-powercap-node through the power cap's own rapl knob (what the agent
writes on a node), and --idle's file bounds it while the node idles.  The
cap is changed four times (below the demand, above it, where the demand's
ramp crosses it), then the node idles and is busy again, while a libmodbus
client reads the meter every 0.2 s.  Every read's power register must be min(demand, cap) at
the trace time the meter served it (--reads) and its energy register the
integral of that from the epoch, both recomputed by selab.capped from the
trace and the meter's cap log, apart from the meter's C.  Loopback only, no
cluster: about 8 s.

The fake NVML (tests/gpu) with follow_limits is the same for GPUs: two GPUs
play their columns, the node is capped through the power cap's nvml knob
(se-powercap-node, another process, as the agent would), and every read of
nvmlDeviceGetPowerUsage and nvmlDeviceGetTotalEnergyConsumption must be
min(demand, limit) and its integral at the instant read, from the fake's
cap log (about 6 s).  And a GPU node's meter (se-modbus-sim --gpus) serves
its package's capped demand plus those GPUs, one node cap through the rapl
and nvml knobs together (about 6 s).

bmc-sim with --follow-limit is the same for a BMC: its DCMI power
readings obey its DCMI power limit, set four times through the power cap's
dcmi knob (se-powercap-node) while ipmi-dcmi asks for the power statistics
(mode 1) and the rolling averages (mode 2) every 0.2 s.  Every answer's
current, min, max and average watts must be those of min(demand, limit)
(selab.capped from the trace and bmc-sim's cap log) at the trace time
bmc-sim answered (--reads); without --follow-limit, those of the demand
alone, the limit's changes logged all the same (about 6 s each).
"""
import ctypes
import math
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time

import pytest

from selab.capped import capped_joules, capped_watts, read_cap_log
from selab.gpu_rig import FAKE_NVML_DIR
from selab.meters import ModbusSim, tool
from selab.powercap_rig import fake_rapl_zone
from selab.trace import Trace

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OBJ = os.environ.get("SE_BUILD_OBJ", os.path.join(REPO, "_build", "obj"))
NODE_TOOL = os.path.join(OBJ, "contribs", "powercap", "se-powercap-node")
# demand: a ramp, a step down, a slower ramp, then flat
TRACE_TEXT = "time n1\n0 100\n4 300\n4 200\n8 250\n"
MAX_W = 400
# (trace time, node cap): not binding, binding as the ramp crosses it,
# binding throughout, lifted, crossed again by the second ramp
CAPS = [(1.0, 220), (3.0, 150), (4.6, 400), (5.4, 230)]
# --idle: the node's job done at 6.2 (it idles at 120 W, under its 230 W
# cap), busy again at 6.8 (the file gone: its cap binds again)
IDLE = [(6.2, 120), (6.8, None)]
END_S = 7.4
# Bounds: the float32 registers' half ulp plus the --reads file's 1 us
# rounding of the trace time (x 50 W/s of ramp, x 250 W): 1.5e-5 + 2.5e-5 W
# and 5e-5 + 1.25e-4 J.  Measured worst (3 runs): 2.8e-5 W, 1.3e-4 J.
POWER_TOL_W, ENERGY_TOL_J = 6e-5, 3e-4

_lib = ctypes.CDLL("libmodbus.so.5", use_errno=True)
_lib.modbus_new_tcp.restype = ctypes.c_void_p
_lib.modbus_new_tcp.argtypes = [ctypes.c_char_p, ctypes.c_int]
for _name in ("modbus_connect", "modbus_close", "modbus_free"):
    getattr(_lib, _name).argtypes = [ctypes.c_void_p]
_lib.modbus_set_slave.argtypes = [ctypes.c_void_p, ctypes.c_int]
_lib.modbus_read_input_registers.argtypes = [
    ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
    ctypes.POINTER(ctypes.c_uint16)]


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _f32(regs):
    return struct.unpack(">f", struct.pack(">HH", *regs))[0]


def _read_sdm630(ctx):
    """(watts, joules) from the SDM630's input registers 52 and 72."""
    buf = (ctypes.c_uint16 * 22)()
    _lib.modbus_set_slave(ctx, 1)
    assert _lib.modbus_read_input_registers(ctx, 52, 22, buf) == 22, \
        "modbus read: errno %d" % ctypes.get_errno()
    return _f32(buf[0:2]), _f32(buf[20:22]) * 3.6e6


def _apply(root, watts):
    """Cap the node through the rapl knob (the agent's code path)."""
    subprocess.run([NODE_TOOL, "--knobs", "rapl:root=%s:min_pct=25" % root,
                    "--floor", "100", "--max", str(MAX_W), "apply",
                    str(watts)], check=True, capture_output=True)


@pytest.fixture
def work():
    for prog in (NODE_TOOL, tool("se-modbus-sim")):
        if not os.access(prog, os.X_OK):
            pytest.fail("%s not built (make; or set SE_BUILD_OBJ)" % prog)
    with tempfile.TemporaryDirectory(prefix="se-capmeter-") as d:
        yield d


def _run(work):
    """Play the schedule; [(watts, joules)] in the order read."""
    trace = os.path.join(work, "t.trace")
    with open(trace, "w") as f:
        f.write(TRACE_TEXT)
    limit = fake_rapl_zone(os.path.join(work, "n1"), MAX_W * 1000000,
                           MAX_W * 1000000)
    idle_file = os.path.join(work, "n1.idle")
    epoch = time.time() + 0.3
    port = _free_port()
    sim = ModbusSim(trace, epoch, {1: "n1"}, ["--model", "sdm630"],
                    tcp=("127.0.0.1", port), workdir=work,
                    extra_args=["--cap", "1:" + limit,
                                "--idle", "1:" + idle_file,
                                "--cap-log", os.path.join(work, "caps"),
                                "--reads", os.path.join(work, "reads")])
    sim.start()
    got, caps, idle = [], list(CAPS), list(IDLE)
    ctx = _lib.modbus_new_tcp(b"127.0.0.1", port)
    try:
        assert _lib.modbus_connect(ctx) == 0
        while time.time() - epoch < END_S:
            if caps and time.time() - epoch >= caps[0][0]:
                _apply(os.path.join(work, "n1"), caps.pop(0)[1])
            if idle and time.time() - epoch >= idle[0][0]:
                watts = idle.pop(0)[1]
                if watts is None:
                    os.unlink(idle_file)
                else:
                    with open(idle_file, "w") as f:
                        f.write("%d\n" % watts)
            got.append(_read_sdm630(ctx))
            time.sleep(0.2)
    finally:
        _lib.modbus_close(ctx)
        _lib.modbus_free(ctx)
        sim.stop()
    return trace, got


def test_power_and_energy_follow_the_cap(work):
    trace_path, got = _run(work)
    trace = Trace(trace_path)
    history = read_cap_log(os.path.join(work, "caps"), 1)
    # the bound in force: the caps, then the idle watts, then the cap again
    assert [w for _, w in history] == [MAX_W] + [w for _, w in CAPS] + \
        [IDLE[0][1], CAPS[-1][1]], history
    with open(os.path.join(work, "reads")) as f:
        served = [float(line.split()[1]) for line in f]
    assert len(served) == len(got) > 30
    worst_w = worst_j = 0.0
    for t, (watts, joules) in zip(served, got):
        want_w = capped_watts(trace, "n1", t, history)
        # the register starts at the epoch (trace time 0): 0 J before it
        want_j = capped_joules(trace, "n1", 0.0, max(t, 0.0), history)
        worst_w = max(worst_w, abs(watts - want_w))
        worst_j = max(worst_j, abs(joules - want_j))
        assert abs(watts - want_w) < POWER_TOL_W, (t, watts, want_w)
        assert abs(joules - want_j) < ENERGY_TOL_J, (t, joules, want_j)
    # the caps took energy off: the uncapped demand is well above
    uncapped = trace.joules("n1", 0.0, served[-1])
    print("reads %d, worst %.2g W %.2g J; energy %.3f J, uncapped %.3f J"
          % (len(got), worst_w, worst_j, got[-1][1], uncapped))
    assert uncapped - got[-1][1] > 100, (uncapped, got[-1][1])


@pytest.mark.parametrize("content, says", [(None, "No such file"),
                                           ("12 W\n", "'12 W' is not")])
def test_bad_cap_file_is_named(work, content, says):
    trace = os.path.join(work, "t.trace")
    with open(trace, "w") as f:
        f.write(TRACE_TEXT)
    limit = os.path.join(work, "limit_uw")
    if content is not None:
        with open(limit, "w") as f:
            f.write(content)
    proc = subprocess.run(
        [tool("se-modbus-sim"), "--trace", trace, "--model", "sdm630",
         "--tcp", "127.0.0.1:0", "--cap", "1:" + limit],
        capture_output=True, text=True, timeout=10)
    assert proc.returncode == 2, proc
    assert limit in proc.stderr and says in proc.stderr, proc.stderr


# ------------------------------------------------------------ the GPUs
FAKE_NVML = os.path.join(FAKE_NVML_DIR, "libnvidia-ml.so.1")
GPU_TRACE = "time g0 g1\n0 120 290\n2 290 290\n2 180 250\n5 260 150\n"
# node caps (two GPUs of 100..300 W, node floor 200, max 600: each GPU
# gets half): 440 (220 each: g0's ramp crosses it), 300 (150 each: both
# bind), 600 (lifted), 460 (230 each: g0 crosses it again)
GPU_CAPS = [(0.8, 440), (2.4, 300), (3.4, 600), (4.2, 460)]
GPU_END_S = 5.6
# Bounds: the counter's 1 mJ and the power's 1 mW steps, and double
# rounding; the instant read is bracketed by the clock before and after
# the call (tens of microseconds at 85 W/s).
GPU_POWER_TOL_W, GPU_ENERGY_TOL_J = 0.0015, 0.003


def _nvml(state):
    """The fake libnvidia-ml.so.1, initialised on STATE (in this process)."""
    os.environ["FAKE_NVML_STATE"] = state
    lib = ctypes.CDLL(FAKE_NVML)
    assert lib.nvmlInit_v2() == 0
    devs = []
    for i in range(2):
        h = ctypes.c_void_p()
        assert lib.nvmlDeviceGetHandleByIndex_v2(i, ctypes.byref(h)) == 0
        devs.append(h)
    return lib, devs


def _gpu_read(lib, dev, epoch):
    """(trace time before, after, watts, joules) of one GPU."""
    mw, mj = ctypes.c_uint(), ctypes.c_ulonglong()
    before = time.time() - epoch
    assert lib.nvmlDeviceGetPowerUsage(dev, ctypes.byref(mw)) == 0
    assert lib.nvmlDeviceGetTotalEnergyConsumption(dev, ctypes.byref(mj)) == 0
    return before, time.time() - epoch, mw.value / 1e3, mj.value / 1e3


def _gpu_rig(work, trace_text, lead_s):
    """trace_text as a trace, and a fake NVML state of two GPUs playing
    its g0 and g1 and obeying their limits, time 0 lead_s from now:
    (trace path, epoch, state path)."""
    trace_path = os.path.join(work, "gpu.trace")
    with open(trace_path, "w") as f:
        f.write(trace_text)
    epoch = time.time() + lead_s
    state = os.path.join(work, "nvml.state")
    with open(state, "w") as f:
        f.write("epoch %.6f\ntrace %s\nfollow_limits yes\n"
                "gpu bus=0000:3b:00.0 uuid=GPU-a minor=0 col=g0\n"
                "gpu bus=0000:af:00.0 uuid=GPU-b minor=1 col=g1\n"
                % (epoch, trace_path))
    return trace_path, epoch, state


def _gpu_apply(state, watts):
    """Cap the node through the nvml knob, in a process of its own; the
    trace times around it."""
    env = dict(os.environ, FAKE_NVML_STATE=state)
    return subprocess.run(
        [NODE_TOOL, "--knobs", "nvml:lib=" + FAKE_NVML, "--floor", "200",
         "--max", "600", "apply", str(watts)],
        check=True, capture_output=True, env=env)


def test_gpu_power_and_energy_follow_the_limit(work):
    if not os.path.exists(FAKE_NVML):
        pytest.fail("%s not built (make check builds it)" % FAKE_NVML)
    trace_path, epoch, state = _gpu_rig(work, GPU_TRACE, 0.2)
    lib, devs = _nvml(state)
    got, caps, sets = [], list(GPU_CAPS), []
    try:
        while time.time() - epoch < GPU_END_S:
            if caps and time.time() - epoch >= caps[0][0]:
                t0 = time.time() - epoch
                _gpu_apply(state, caps.pop(0)[1])
                sets.append((t0, time.time() - epoch))
            got.append([_gpu_read(lib, d, epoch) for d in devs])
            time.sleep(0.1)
    finally:
        lib.nvmlShutdown()
        del os.environ["FAKE_NVML_STATE"]
    trace = Trace(trace_path)
    worst_w = worst_j = 0.0
    bound = 0
    for i, col in enumerate(("g0", "g1")):
        history = read_cap_log(state + ".caplog", i)
        # the default limit from the first init, then half of each node cap
        assert [w for _, w in history] == [300] + [c / 2 for _, c in
                                                   GPU_CAPS], history
        for (t, _), (a, b) in zip(history[1:], sets):
            assert a <= t <= b, ("a limit counts from its set", t, a, b)
        for reads in got:
            before, after, watts, joules = reads[i]
            ends_w = [capped_watts(trace, col, t, history)
                      for t in (before, after)]
            ends_j = [capped_joules(trace, col, 0.0, max(t, 0.0), history)
                      for t in (before, after)]
            off_w = max(min(ends_w) - watts, watts - max(ends_w), 0.0)
            off_j = max(ends_j[0] - joules, joules - ends_j[1], 0.0)
            worst_w, worst_j = max(worst_w, off_w), max(worst_j, off_j)
            assert off_w <= GPU_POWER_TOL_W, (col, before, watts, ends_w)
            assert off_j <= GPU_ENERGY_TOL_J, (col, before, joules, ends_j)
            bound += watts < trace.watts(col, before) - 1
        uncapped = trace.joules(col, 0.0, got[-1][i][0])
        print("%s: %d reads, worst %.2g W %.2g J off; energy %.3f J, "
              "uncapped %.3f J" % (col, len(got), worst_w, worst_j,
                                   got[-1][i][3], uncapped))
        assert uncapped - got[-1][i][3] > 50, (col, uncapped, got[-1][i])
    # the limits bound the power in a good share of the reads, not all
    assert 10 < bound < 2 * len(got) - 10, bound


# ------------------------------------------------ a GPU node's meter
NODE_TRACE = ("time n1 g0 g1\n0 120 120 290\n2 140 290 290\n2 100 180 250\n"
              "5 130 260 150\n")
# The sim reads the GPUs after the trace time it serves (microseconds;
# more on a loaded host): their power is checked against the range over
# GPU_LAG_S after it, their energy (taken back to that time at their
# power, from the middle of the read) against the truth at it.  Bounds:
# the GPUs' 1 mW and 1 mJ steps and the float32 registers for power; for
# energy, measured 0.0035-0.011 J (5 runs on an idle host: the fake's
# instant is not the middle of its call), and a preemption inside the
# read moves its instant by a fraction of a millisecond at 600 W, hence
# 0.25 J (1e-4 of the energy; the GPUs uncapped would be 100s of J off).
GPU_LAG_S = 0.05
ENERGY_UJ_LAG_S = 0.1   # --energy-uj's file: written every 10 ms
NODE_POWER_TOL_W, NODE_ENERGY_TOL_J = 0.005, 0.25


def _watts_range(trace, column, t, history, lag):
    """(lowest, highest) capped watts of column over [t, t + lag]: at the
    ends and on either side of each row time inside."""
    pts = [t, t + lag] + [r + d for r in trace.times if t < r < t + lag
                          for d in (-1e-9, 1e-9)]
    watts = [capped_watts(trace, column, x, history) for x in pts]
    return min(watts), max(watts)


def test_meter_adds_the_gpus_as_capped(work):
    """se-modbus-sim --gpus: a GPU node's meter serves its package's
    min(demand, cap) plus what its GPUs draw under their limits, both
    capped by one node cap through the rapl and nvml knobs together."""
    if not os.path.exists(FAKE_NVML):
        pytest.fail("%s not built (make check builds it)" % FAKE_NVML)
    trace_path, epoch, state = _gpu_rig(work, NODE_TRACE, 0.3)
    rapl = os.path.join(work, "n1")
    limit = fake_rapl_zone(rapl, 150 * 1000000, 150 * 1000000)
    knobs = "rapl:root=%s:min_pct=25,nvml:lib=%s" % (rapl, FAKE_NVML)
    energy_uj = os.path.join(os.path.dirname(limit), "energy_uj")
    env = dict(os.environ, FAKE_NVML_STATE=state)
    port = _free_port()
    sim = ModbusSim(trace_path, epoch, {1: "n1"}, ["--model", "sdm630"],
                    tcp=("127.0.0.1", port), workdir=work, env=env,
                    extra_args=["--cap", "1:" + limit, "--gpus",
                                "1:" + FAKE_NVML, "--energy-uj",
                                "1:" + energy_uj, "--cap-log",
                                os.path.join(work, "caps"), "--reads",
                                os.path.join(work, "reads")])
    sim.start()
    got, caps = [], list(GPU_CAPS)
    ctx = _lib.modbus_new_tcp(b"127.0.0.1", port)
    try:
        assert _lib.modbus_connect(ctx) == 0
        while time.time() - epoch < GPU_END_S:
            if caps and time.time() - epoch >= caps[0][0]:
                subprocess.run([NODE_TOOL, "--knobs", knobs, "--floor",
                                "200", "--max", "600", "apply",
                                str(caps.pop(0)[1])],
                               check=True, capture_output=True, env=env)
            got.append(_read_sdm630(ctx))
            time.sleep(0.2)
        with open(energy_uj) as f:      # the package's RAPL counter
            package = (time.time() - epoch, int(f.read()) / 1e6)
    finally:
        _lib.modbus_close(ctx)
        _lib.modbus_free(ctx)
        sim.stop()
    trace = Trace(trace_path)
    cpu = read_cap_log(os.path.join(work, "caps"), 1)
    # --energy-uj: the package's part alone, written every 10 ms
    t, joules = package
    assert (capped_joules(trace, "n1", 0.0, t - ENERGY_UJ_LAG_S, cpu)
            <= joules <= capped_joules(trace, "n1", 0.0, t, cpu)), (
        package, capped_joules(trace, "n1", 0.0, t, cpu))
    gpus = [read_cap_log(state + ".caplog", i) for i in range(2)]
    assert len(cpu) == 1 + len(GPU_CAPS) and len(gpus[1]) == len(cpu), (
        cpu, gpus)
    with open(os.path.join(work, "reads")) as f:
        served = [float(line.split()[1]) for line in f]
    assert len(served) == len(got) > 20
    parts = [("n1", cpu), ("g0", gpus[0]), ("g1", gpus[1])]
    worst_w = worst_j = 0.0
    for t, (watts, joules) in zip(served, got):
        ranges = [(capped_watts(trace, "n1", t, cpu),) * 2] + [
            _watts_range(trace, c, t, h, GPU_LAG_S) for c, h in parts[1:]]
        lo, hi = (sum(r[k] for r in ranges) for k in (0, 1))
        off_w = max(lo - watts, watts - hi, 0.0)
        # the sim's counter starts at its start (the GPUs' base then)
        want_j = sum(capped_joules(trace, c, 0.0, max(t, 0.0), h)
                     for c, h in parts)
        worst_w = max(worst_w, off_w)
        worst_j = max(worst_j, abs(joules - want_j))
        assert off_w < NODE_POWER_TOL_W, (t, watts, lo, hi)
        assert abs(joules - want_j) < NODE_ENERGY_TOL_J, (t, joules, want_j)
    uncapped = sum(trace.joules(c, 0.0, served[-1]) for c, _ in parts)
    print("node with GPUs: %d reads, worst %.2g W %.2g J; energy %.3f J, "
          "uncapped %.3f J" % (len(got), worst_w, worst_j, got[-1][1],
                               uncapped))
    assert uncapped - got[-1][1] > 150, (uncapped, got[-1][1])


# ------------------------------------------------ a BMC's DCMI reading
BMC_SIM = os.path.join(OBJ, "contribs", "bmc-sim", "bmc-sim")
# demand: ramps between 300 and 700 W
BMC_TRACE = "time n1\n0 300\n2 700\n4 300\n6 700\n"
BMC_MIN_W, BMC_MAX_W = 300, 700
# (trace time, DCMI limit; None: deactivated): binding on the ramp up,
# binding at its top then crossed by the ramp down, lifted, crossed by the
# next ramp up
BMC_CAPS = [(1.0, 450), (2.0, 600), (3.0, None), (4.0, 350)]
BMC_END_S = 5.5
BMC_STATS_S = 3         # mode 1's window: short, for the caps to show
BMC_MINMAX_STEPS = 64   # bmc_sim_dcmi.c's SIM_MINMAX_STEPS
# Bound: the 16-bit watts' rounding (0.5 W), plus the logs' 1 us time
# stamps: at most 400 W/s of change in a 1 s average, 400 W of cap change
# (1e-3 W).
BMC_TOL_W = 0.502


def _free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _dcmi_answers(port, password, enhanced):
    """[(current, min, max, avg)] watts of one ipmi-dcmi run: mode 1's one
    answer, or mode 2's five (1 s, 5 s, 15 s, 30 s, 1 min), in order."""
    what = ("--get-enhanced-system-power-statistics" if enhanced else
            "--get-system-power-statistics")
    out = subprocess.run(
        ["ipmi-dcmi", "-D", "LAN_2_0", "-h", "127.0.0.1:%d" % port, "-u",
         "admin", "-p", password, "-W", "opensesspriv", "-l", "admin", what],
        check=True, capture_output=True, text=True, timeout=10).stdout
    fields = {"Current": [], "Minimum": [], "Maximum": [], "Average": []}
    for line in out.splitlines():
        key = line.split(" ", 1)[0]
        if key in fields and " : " in line:
            fields[key].append(int(line.split(":")[1].split()[0]))
    return list(zip(*fields.values()))


def _bmc_cap(knobs, watts):
    """Set (None: lift) the BMC's limit through the dcmi knob."""
    verb = ["restore"] if watts is None else ["apply", str(watts)]
    subprocess.run([NODE_TOOL, "--knobs", knobs, "--floor", str(BMC_MIN_W),
                    "--max", str(BMC_MAX_W), *verb],
                   check=True, capture_output=True, timeout=30)


def _bmc_run(work, follow):
    """Play BMC_CAPS on a bmc-sim while polling its DCMI readings:
    (trace path, epoch, [(wall before, after) of each cap change],
    [(current, min, max, avg)] in the order answered)."""
    trace = os.path.join(work, "bmc.trace")
    with open(trace, "w") as f:
        f.write(BMC_TRACE)
    state, port = os.path.join(work, "bmc"), _free_udp_port()
    epoch = time.time()
    start = subprocess.run(
        [BMC_SIM, "start", "--state", state, "--port", str(port),
         "--trace", trace, "--column", "n1", "--epoch", "%.6f" % epoch,
         "--stats", str(BMC_STATS_S), "--cap-log",
         os.path.join(work, "caps"), "--reads", os.path.join(work, "reads"),
         *(["--follow-limit"] if follow else [])],
        capture_output=True, text=True, timeout=30)
    assert start.returncode == 0, start
    knobs = ("dcmi:host=127.0.0.1:port=%d:user=admin:password_file=%s"
             ":workaround=opensesspriv:min_w=%d:max_w=%d"
             % (port, os.path.join(state, "password"), BMC_MIN_W,
                BMC_MAX_W))
    with open(os.path.join(state, "password")) as f:
        password = f.read().strip()
    caps, sets, got = list(BMC_CAPS), [], []
    try:
        while time.time() - epoch < BMC_END_S:
            if caps and time.time() - epoch >= caps[0][0]:
                before = time.time() - epoch
                _bmc_cap(knobs, caps.pop(0)[1])
                sets.append((before, time.time() - epoch))
            got += _dcmi_answers(port, password, len(got) % 2)
            time.sleep(0.2)
    finally:
        subprocess.run([BMC_SIM, "stop", "--state", state],
                       capture_output=True, timeout=30)
    return trace, sets, got


def _sampled(trace, t0, t1, history):
    """(min, max) of the capped watts at bmc_sim_dcmi.c's sample times."""
    watts = [capped_watts(trace, "n1", t0 + (t1 - t0) * i / BMC_MINMAX_STEPS,
                          history) for i in range(BMC_MINMAX_STEPS + 1)]
    return min(watts), max(watts)


@pytest.mark.parametrize("follow", [True, False],
                         ids=["follow", "trace-alone"])
def test_bmc_dcmi_reading_follows_the_limit(work, follow):
    if not os.access(BMC_SIM, os.X_OK) or not shutil.which("ipmi_sim") \
            or not shutil.which("ipmi-dcmi"):
        pytest.fail("bmc-sim not built, or ipmi_sim or ipmi-dcmi "
                    "(freeipmi-tools) not installed")
    trace_path, sets, got = _bmc_run(work, follow)
    trace = Trace(trace_path)
    history = read_cap_log(os.path.join(work, "caps"), "n1")
    # none at start, then each change, from the trace time it was made
    assert [w for _, w in history] == [math.inf] + [
        math.inf if w is None else w for _, w in BMC_CAPS], history
    for (t, _), (a, b) in zip(history[1:], sets):
        assert a <= t <= b, ("a limit counts from its request", t, a, b)
    # what the node draws: under its limits, or the demand whatever they say
    drawn = history if follow else [(0.0, math.inf)]
    with open(os.path.join(work, "reads")) as f:
        served = [[float(v) for v in line.split()] for line in f]
    assert len(served) == len(got) > 50, (len(served), len(got))
    worst, bit = [0.0] * 4, 0
    for (t, window, avg), (cur, lo, hi, avg_sent) in zip(served, got):
        assert avg == avg_sent, ("the reads log is what was sent", t)
        want = capped_joules(trace, "n1", t - window, t, drawn) / window
        want_lo, want_hi = _sampled(trace, t - window, t, drawn)
        want_cur = capped_watts(trace, "n1", t, drawn)
        offs = [abs(avg - want), abs(cur - want_cur), abs(lo - want_lo),
                abs(hi - want_hi)]
        worst = [max(w, o) for w, o in zip(worst, offs)]
        assert max(offs) <= BMC_TOL_W, (t, window, (cur, lo, hi, avg),
                                        (want_cur, want_lo, want_hi, want))
        # the limits took power off this window's average
        bit += avg < capped_joules(trace, "n1", t - window, t,
                                   [(0.0, math.inf)]) / window - 20
    print("bmc %s: %d answers, %d cap changes; worst off: average %.3f W, "
          "current %.3f, min %.3f, max %.3f; %d averages > 20 W below the "
          "demand's" % ("follow" if follow else "trace alone", len(got),
                        len(history) - 1, *worst, bit))
    if follow:
        assert bit >= 10, bit
    else:
        assert bit == 0, bit
