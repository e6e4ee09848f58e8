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
"""
import ctypes
import os
import socket
import struct
import subprocess
import tempfile
import time

import pytest

from selab.capped import capped_joules, capped_watts, read_cap_log
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
