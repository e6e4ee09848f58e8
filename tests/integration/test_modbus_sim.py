"""se-modbus-sim answers a real libmodbus client with the trace's truth.

The client is libmodbus itself (libmodbus.so.5 through ctypes), over TCP on
loopback and over RTU through a socat pty pair at 9600 baud.  Values are
checked against the power trace (se-trace when it is installed, else an
exact integral of the piecewise-linear trace computed here), RTU pacing is
checked as a lower bound, and every fault mode must produce the error a
client sees from a misbehaving meter.

Needs SE_BIN_DIR (the stage install of contribs/build.sh) or SE_MODBUS_SIM;
no cluster.  Every process started here is stopped by its own PID.
"""
import contextlib
import ctypes
import os
import shutil
import struct
import subprocess
import time

import pytest

BIN_DIR = os.environ.get("SE_BIN_DIR", "")
SIM = os.environ.get("SE_MODBUS_SIM") or (
    BIN_DIR and os.path.join(BIN_DIR, "se-modbus-sim"))
SE_TRACE = os.environ.get("SE_TRACE") or (
    BIN_DIR and os.path.join(BIN_DIR, "se-trace"))

pytestmark = pytest.mark.skipif(
    not (SIM and os.access(SIM, os.X_OK)),
    reason="se-modbus-sim not found (set SE_BIN_DIR or SE_MODBUS_SIM)")

# libmodbus errno values (modbus.h)
ENOBASE = 112345678
EMBXILVAL = ENOBASE + 3
EMBXSFAIL = ENOBASE + 4
EMBXSBUSY = ENOBASE + 6
EMBXGTAR = ENOBASE + 11
EMBBADCRC = EMBXGTAR + 1
EMBBADDATA = EMBXGTAR + 2
ETIMEDOUT = 110

# Rows of a trace: a ramp, a step down, a ramp, then constant.
TRACE_ROWS = [(0, 200.0, 100.0), (5, 400.0, 100.0), (5, 100.0, 100.0),
              (10, 300.0, 100.0)]
TRACE_TEXT = "# se-modbus-sim test trace\ntime n1 n2\n" + "".join(
    "%g %g %g\n" % row for row in TRACE_ROWS)


# --------------------------------------------------------------- the truth
def _watts(col, t):
    rows = [(r[0], r[col]) for r in TRACE_ROWS]
    if t <= rows[0][0]:
        return rows[0][1]
    for (t0, w0), (t1, w1) in zip(rows, rows[1:]):
        if t0 <= t < t1:
            return w0 + (w1 - w0) * (t - t0) / (t1 - t0)
    return rows[-1][1]


def _joules_py(col, t0, t1):
    """Exact integral of the piecewise-linear trace (trapezoids)."""
    cuts = sorted({t0, t1} | {r[0] for r in TRACE_ROWS if t0 < r[0] < t1})
    total = 0.0
    for a, b in zip(cuts, cuts[1:]):
        eps = 1e-9 * max(1.0, b - a)
        total += (b - a) * (_watts(col, a + eps) + _watts(col, b - eps)) / 2
    return total


def joules(trace, col, t0, t1):
    if t1 <= t0:
        return 0.0
    if SE_TRACE and os.access(SE_TRACE, os.X_OK):
        out = subprocess.run([SE_TRACE, "joules", trace, ["", "n1", "n2"][col],
                              "%.9f" % t0, "%.9f" % t1],
                             capture_output=True, text=True, check=True)
        return float(out.stdout.split()[0])
    return _joules_py(col, t0, t1)


def test_python_truth_matches_se_trace(tmp_path):
    """The fallback integral agrees with se-trace where both exist."""
    if not (SE_TRACE and os.access(SE_TRACE, os.X_OK)):
        pytest.skip("se-trace not installed")
    trace = tmp_path / "t.trace"
    trace.write_text(TRACE_TEXT)
    for t0, t1 in ((0, 3), (2, 7.5), (4.9, 5.1), (0, 30)):
        assert joules(str(trace), 1, t0, t1) == pytest.approx(
            _joules_py(1, t0, t1), rel=1e-9, abs=1e-9)


# ------------------------------------------------------- libmodbus client
_lib = ctypes.CDLL("libmodbus.so.5", use_errno=True)
_lib.modbus_new_tcp.restype = ctypes.c_void_p
_lib.modbus_new_tcp.argtypes = [ctypes.c_char_p, ctypes.c_int]
_lib.modbus_new_rtu.restype = ctypes.c_void_p
_lib.modbus_new_rtu.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char,
                                ctypes.c_int, ctypes.c_int]
for _name in ("modbus_connect", "modbus_close", "modbus_free"):
    getattr(_lib, _name).argtypes = [ctypes.c_void_p]
_lib.modbus_set_slave.argtypes = [ctypes.c_void_p, ctypes.c_int]
_lib.modbus_set_response_timeout.argtypes = [ctypes.c_void_p, ctypes.c_uint32,
                                             ctypes.c_uint32]
for _name in ("modbus_read_registers", "modbus_read_input_registers"):
    getattr(_lib, _name).argtypes = [ctypes.c_void_p, ctypes.c_int,
                                     ctypes.c_int,
                                     ctypes.POINTER(ctypes.c_uint16)]
_lib.modbus_flush.argtypes = [ctypes.c_void_p]
_lib.modbus_strerror.restype = ctypes.c_char_p
_lib.modbus_strerror.argtypes = [ctypes.c_int]


class ModbusError(Exception):
    def __init__(self, err):
        self.errno = err
        super().__init__("%d: %s" % (err, _lib.modbus_strerror(err).decode()))


class Client:
    """A libmodbus client context (TCP or RTU)."""

    def __init__(self, ctx, timeout=0.5):
        assert ctx, "modbus_new_* failed"
        self.ctx = ctx
        self.timeout(timeout)
        if _lib.modbus_connect(ctx) != 0:
            err = ctypes.get_errno()
            _lib.modbus_free(ctx)
            raise ModbusError(err)

    @classmethod
    def tcp(cls, port, **kw):
        return cls(_lib.modbus_new_tcp(b"127.0.0.1", port), **kw)

    @classmethod
    def rtu(cls, dev, baud=9600, **kw):
        return cls(_lib.modbus_new_rtu(dev.encode(), baud, b"N", 8, 1), **kw)

    def timeout(self, secs):
        _lib.modbus_set_response_timeout(self.ctx, int(secs),
                                         int((secs % 1) * 1e6))

    def read(self, unit, addr, n, kind="input"):
        """Registers as a list; raises ModbusError with libmodbus' errno."""
        buf = (ctypes.c_uint16 * n)()
        _lib.modbus_set_slave(self.ctx, unit)
        fn = (_lib.modbus_read_input_registers if kind == "input"
              else _lib.modbus_read_registers)
        if fn(self.ctx, addr, n, buf) != n:
            raise ModbusError(ctypes.get_errno())
        return list(buf)

    def timed_read(self, unit, addr, n, kind="input"):
        t0 = time.time()
        regs = self.read(unit, addr, n, kind)
        return regs, t0, time.time()

    def flush(self):
        """Drop a late reply left on the line (what a poller must do)."""
        _lib.modbus_flush(self.ctx)

    def close(self):
        _lib.modbus_close(self.ctx)
        _lib.modbus_free(self.ctx)


def f32_abcd(regs):
    return struct.unpack(">f", struct.pack(">HH", regs[0], regs[1]))[0]


def u32_cdab(regs):
    return regs[1] << 16 | regs[0]


def i32_cdab(regs):
    return struct.unpack(">i", struct.pack(">HH", regs[1], regs[0]))[0]


# ------------------------------------------------------------- processes
def _wait_for(pred, what, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError("timed out waiting for " + what)


@contextlib.contextmanager
def started(argv, ready):
    """Run argv; yield the Popen once ready() holds; stop it by its PID."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        _wait_for(lambda: ready() or proc.poll() is not None, argv[0])
        if proc.poll() is not None:
            raise AssertionError("%s exited %d: %s" % (
                argv[0], proc.returncode, proc.stdout.read().decode()))
        yield proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


class Sim:
    def __init__(self, tmp_path, *args, rtu=None, epoch_ago=2.0):
        self.dir = tmp_path
        self.trace = str(tmp_path / "meter.trace")
        (tmp_path / "meter.trace").write_text(TRACE_TEXT)
        self.control = tmp_path / "control"
        self.epoch = time.time() - epoch_ago
        pidfile = tmp_path / "sim.pid"
        portfile = tmp_path / "sim.port"
        self.argv = [SIM, "--trace", self.trace, "--epoch", "%.6f" % self.epoch,
                     "--control", str(self.control), "--pidfile", str(pidfile),
                     "--log", str(tmp_path / "sim.log"), "--verbose"]
        self.argv += (["--rtu", rtu] if rtu else
                      ["--tcp", "127.0.0.1:0", "--port-file", str(portfile)])
        self.argv += list(args)
        self.ready = pidfile.exists
        self.portfile = portfile

    @property
    def port(self):
        return int(self.portfile.read_text())

    def t(self, wall):
        return wall - self.epoch

    def fault(self, text):
        """Replace the control file atomically; the sim sees it at once."""
        tmp = self.control.with_suffix(".tmp")
        tmp.write_text(text + "\n")
        os.rename(tmp, self.control)

    def log(self):
        return (self.dir / "sim.log").read_text()


@pytest.fixture
def socat_pair(tmp_path):
    if not shutil.which("socat"):
        pytest.skip("socat not installed")
    a, b = str(tmp_path / "ttyA"), str(tmp_path / "ttyB")
    argv = ["socat", "-d", "-d", "pty,raw,echo=0,link=" + a,
            "pty,raw,echo=0,link=" + b]
    with started(argv, lambda: os.path.exists(a) and os.path.exists(b)):
        yield a, b


def expect_error(fn, err):
    with pytest.raises(ModbusError) as exc:
        fn()
    assert exc.value.errno == err, str(exc.value)


# ------------------------------------------------------------------ TCP
def check_sdm630(sim, cli, unit=1, col=1):
    """Power and energy of an SDM630 map against the trace."""
    p, t0, t1 = cli.timed_read(unit, 52, 2)
    e, u0, u1 = cli.timed_read(unit, 72, 2)
    w = f32_abcd(p)
    lo = min(_watts(col, sim.t(t0)), _watts(col, sim.t(t1)))
    hi = max(_watts(col, sim.t(t0)), _watts(col, sim.t(t1)))
    assert lo - 0.01 <= w <= hi + 0.01, (w, lo, hi)
    j = f32_abcd(e) * 3.6e6
    assert joules(sim.trace, col, 0, sim.t(u0)) - 0.05 <= j, j
    assert j <= joules(sim.trace, col, 0, sim.t(u1)) + 0.05, j
    return w, j


def test_tcp_model_values(tmp_path):
    sim = Sim(tmp_path, "--model", "sdm630", "--column", "n1", epoch_ago=3)
    with started(sim.argv, sim.ready):
        cli = Client.tcp(sim.port)
        try:
            _, j1 = check_sdm630(sim, cli)
            time.sleep(0.3)
            _, j2 = check_sdm630(sim, cli)
            assert j2 > j1 + 30   # >= 100 W for 0.3 s
            # Holding registers are not this meter's: exception 0x02.
            expect_error(lambda: cli.read(1, 52, 2, kind="holding"),
                         ENOBASE + 2)
            # Over the meter's 80-register limit: illegal data value.
            expect_error(lambda: cli.read(1, 52, 81), EMBXILVAL)
        finally:
            cli.close()


def test_tcp_units_and_clients(tmp_path):
    """A PDU: one unit per node, read by several clients at once."""
    sim = Sim(tmp_path, "--model", "em24", "--unit", "1:n1", "--unit", "7:n2")
    with started(sim.argv, sim.ready):
        clients = [Client.tcp(sim.port) for _ in range(3)]
        try:
            for cli in clients:
                p1, t0, t1 = cli.timed_read(1, 0x28, 2)
                w1 = i32_cdab(p1) * 0.1
                lo = min(_watts(1, sim.t(t0)), _watts(1, sim.t(t1)))
                hi = max(_watts(1, sim.t(t0)), _watts(1, sim.t(t1)))
                assert lo - 0.1 <= w1 <= hi + 0.1, (w1, lo, hi)
                p7 = cli.read(7, 0x28, 2)
                assert i32_cdab(p7) == 1000          # 100.0 W
                e7, u0, u1 = cli.timed_read(7, 0x3E, 2)
                # kWh x 10 counts: 100 W x 2 s is 0.0556 Wh, so 0 counts
                assert i32_cdab(e7) == int(
                    joules(sim.trace, 2, 0, sim.t(u0)) / 360000)
                expect_error(lambda: cli.read(2, 0x28, 2), EMBXGTAR)
                # EM24 documents 11 words per request.
                expect_error(lambda: cli.read(1, 0x28, 12), EMBXILVAL)
        finally:
            for cli in clients:
                cli.close()


CUSTOM = ["--kind", "holding", "--order", "cdab",
          "--power-reg", "100", "--power-type", "int32", "--power-scale", "0.1",
          "--energy-reg", "200", "--energy-type", "uint16",
          "--energy-scale", "1"]


def read_custom(cli):
    p = cli.read(1, 100, 2, kind="holding")
    e, t0, t1 = cli.timed_read(1, 200, 1, kind="holding")
    return i32_cdab(p) * 0.1, e[0], t0, t1


def test_tcp_custom_offset_and_wrap(tmp_path):
    sim = Sim(tmp_path, *CUSTOM, "--column", "n1", "--energy-offset", "1000")
    with started(sim.argv, sim.ready):
        cli = Client.tcp(sim.port)
        try:
            w, e, t0, t1 = read_custom(cli)
            assert 100 <= w <= 400
            assert int(joules(sim.trace, 1, 0, sim.t(t0))) + 1000 <= e
            assert e <= int(joules(sim.trace, 1, 0, sim.t(t1))) + 1000
            # Arm a wrap of the 16-bit counter 1 s from now.
            sim.fault("wrap 1")
            _, before, _, _ = read_custom(cli)
            assert before > 65536 - 600, before    # < 400 W x 1.5 s left
            time.sleep(1.3)
            _, after, _, _ = read_custom(cli)
            assert after < 600, after              # it wrapped
            assert (after - before) % 65536 < 800
        finally:
            cli.close()


def test_tcp_faults(tmp_path):
    sim = Sim(tmp_path, *CUSTOM, "--column", "n2")
    with started(sim.argv, sim.ready):
        cli = Client.tcp(sim.port, timeout=0.4)
        try:
            read_custom(cli)
            sim.fault("exception 4")
            expect_error(lambda: read_custom(cli), EMBXSFAIL)
            sim.fault("exception 6")
            expect_error(lambda: read_custom(cli), EMBXSBUSY)
            sim.fault("garbage crc")    # on TCP: a wrong transaction id
            expect_error(lambda: read_custom(cli), EMBBADDATA)
            sim.fault("garbage short")
            expect_error(lambda: read_custom(cli), ETIMEDOUT)
            sim.fault("stall")
            expect_error(lambda: read_custom(cli), ETIMEDOUT)
            expect_error(lambda: read_custom(cli), ETIMEDOUT)
            sim.fault("")               # cleared: answers again
            read_custom(cli)
            sim.fault("stall 0.8")      # stalls, then recovers by itself
            expect_error(lambda: read_custom(cli), ETIMEDOUT)
            time.sleep(0.6)
            read_custom(cli)
            sim.fault("delay 300")
            _, _, t0, t1 = read_custom(cli)
            assert t1 - t0 >= 0.3
            sim.fault("reset")          # counter restarts from 0 now
            _, e, _, _ = read_custom(cli)
            assert e <= 5, e            # 100 W for a few ms
            time.sleep(0.5)
            _, e2, _, _ = read_custom(cli)
            assert 40 <= e2 <= 60, e2   # 100 W x 0.5 s
        finally:
            cli.close()
        assert "control: reset" in sim.log()


def test_tcp_fault_on_one_unit(tmp_path):
    sim = Sim(tmp_path, "--model", "pm5300", "--unit", "1:n1", "--unit",
              "2:n2")
    with started(sim.argv, sim.ready):
        cli = Client.tcp(sim.port, timeout=0.3)
        try:
            sim.fault("stall unit=2")
            e = cli.read(1, 3203, 4, kind="holding")
            wh = e[0] << 48 | e[1] << 32 | e[2] << 16 | e[3]
            assert wh == pytest.approx(
                joules(sim.trace, 1, 0, sim.t(time.time())) / 3600, abs=1)
            expect_error(lambda: cli.read(2, 3059, 2, kind="holding"),
                         ETIMEDOUT)
            sim.fault("")
            assert f32_abcd(cli.read(2, 3059, 2, kind="holding")) == \
                pytest.approx(0.1, rel=1e-6)   # 100 W in kW
        finally:
            cli.close()


# ------------------------------------------------------------------ RTU
def test_rtu_values_units_pacing(tmp_path, socat_pair):
    a, b = socat_pair
    sim = Sim(tmp_path, "--model", "sdm630", "--unit", "1:n1", "--unit",
              "2:n2", rtu=a)
    with started(sim.argv, sim.ready):
        cli = Client.rtu(b)
        try:
            check_sdm630(sim, cli, unit=1, col=1)
            check_sdm630(sim, cli, unit=2, col=2)
            # 12 registers at 9600 8N1: an 8-byte request and a 29-byte
            # reply are 37 characters of 10 bits, 38.5 ms on the line.
            _, t0, t1 = cli.timed_read(1, 52, 12)
            assert t1 - t0 >= 0.0385, t1 - t0
            # Unit 3 is not on this bus: nobody answers.
            expect_error(lambda: cli.read(3, 52, 2), ETIMEDOUT)
            check_sdm630(sim, cli, unit=1, col=1)
        finally:
            cli.close()


def test_rtu_faults(tmp_path, socat_pair):
    a, b = socat_pair
    sim = Sim(tmp_path, "--model", "sdm630", "--column", "n1", rtu=a)
    with started(sim.argv, sim.ready):
        cli = Client.rtu(b, timeout=0.4)
        try:
            check_sdm630(sim, cli)
            sim.fault("garbage crc")
            expect_error(lambda: cli.read(1, 52, 2), EMBBADCRC)
            sim.fault("garbage short")
            expect_error(lambda: cli.read(1, 52, 2), ETIMEDOUT)
            sim.fault("exception 6")
            expect_error(lambda: cli.read(1, 52, 2), EMBXSBUSY)
            sim.fault("stall")
            expect_error(lambda: cli.read(1, 52, 2), ETIMEDOUT)
            sim.fault("delay 500")      # a slow device (Lumel-like)
            cli.timeout(1.0)
            _, t0, t1 = cli.timed_read(1, 52, 2)
            assert t1 - t0 >= 0.5
            cli.timeout(0.3)
            expect_error(lambda: cli.read(1, 52, 2), ETIMEDOUT)
            sim.fault("")
            time.sleep(0.5)             # the late reply arrives...
            cli.flush()                 # ...and is dropped
            cli.timeout(0.4)
            check_sdm630(sim, cli)
        finally:
            cli.close()


# ------------------------------------- built-in models at an in-service reading
# Each built-in model's energy register as the meter has it, starting from a
# reading a meter in service holds (not from zero), on our simulator and on
# the independent pymodbus meter.  The expected registers are decoded here
# with struct, from the manufacturers' maps (not from our C codec).  Each
# start reading is chosen so that the wrong rounding gives another register:
# integer registers floor (a meter advances only once a whole unit has
# accumulated), float32 registers hold the nearest float (the Eastron way).
from fractions import Fraction  # noqa: E402

PYMODBUS_PYTHON = os.environ.get("SE_PYMODBUS_PYTHON", "")
PYMODBUS_METER = os.path.join(os.path.dirname(__file__), "..", "..",
                              "contribs", "modbus-sim", "pymodbus_meter.py")
# name: (kind, energy address, type, word order, J per unit, start kWh,
#        max regs per read)
MODEL_ENERGY = {
    # float32 kWh: at 20,000 kWh the float steps 2^-9 kWh (7.03 kJ)
    "sdm630": ("input", 72, "float32", "abcd", 3600000, "20000.3", 80),
    # at 45,678.6 kWh it steps 2^-8 kWh (14.1 kJ)
    "sdm72d": ("input", 72, "float32", "abcd", 3600000, "45678.6", 60),
    # INT32 kWh x 10, low word first: 23456.78 kWh is 234567 counts
    "em24": ("input", 0x3E, "int32", "cdab", 360000, "23456.78", 11),
    # INT64 Wh, high word first: 34567.8915 kWh is 34567891 Wh
    "pm5300": ("holding", 3203, "int64", "abcd", 3600, "34567.8915", 125),
}
WORDS = {"float32": 2, "int32": 2, "int64": 4}


def decode_energy(regs, vtype, order):
    """A register value from wire words (struct, big-endian words)."""
    words = list(regs)
    if order == "cdab":
        words.reverse()
    raw = struct.pack(">%dH" % len(words), *words)
    return struct.unpack({"float32": ">f", "int32": ">i",
                          "int64": ">q"}[vtype], raw)[0]


def f32(x):
    """Round a double to float32 (nearest) the struct way."""
    return struct.unpack(">f", struct.pack(">f", x))[0]


def f32_truncated(exact):
    """The float32 at or below an exact positive Fraction."""
    f = f32(float(exact))
    while Fraction(f) > exact:
        f = struct.unpack(">f", struct.pack(
            ">I", struct.unpack(">I", struct.pack(">f", f))[0] - 1))[0]
    return f


def expected_energy(vtype, units):
    """The register of a meter at `units` (exact Fraction of its unit)."""
    if vtype == "float32":
        f = f32(float(units))
        # nearest: no other float32 is closer to the exact reading
        for g in (f32_truncated(units), f32(float(units) * (1 + 2 ** -23)),
                  f32(float(units) * (1 - 2 ** -23))):
            assert abs(Fraction(f) - units) <= abs(Fraction(g) - units)
        return f
    return int(units // 1)


def free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def model_meter(tmp_path, server, model, start_kwh, epoch):
    """Our simulator or the pymodbus meter serving `model` on loopback."""
    trace = tmp_path / "meter.trace"
    trace.write_text(TRACE_TEXT)
    if server == "ours":
        pidfile, portfile = tmp_path / "sim.pid", tmp_path / "sim.port"
        argv = [SIM, "--trace", str(trace), "--epoch", "%.6f" % epoch,
                "--model", model, "--energy-start-kwh", start_kwh,
                "--column", "n1", "--tcp", "127.0.0.1:0", "--port-file",
                str(portfile), "--pidfile", str(pidfile)]
        with started(argv, pidfile.exists) as proc:
            yield int(portfile.read_text()), str(trace), proc
        return
    if not (PYMODBUS_PYTHON and SE_TRACE and os.access(SE_TRACE, os.X_OK)):
        pytest.skip("SE_PYMODBUS_PYTHON or se-trace not available")
    port = free_port()

    def listening():
        import socket
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return True
        except OSError:
            return False
    argv = [PYMODBUS_PYTHON, PYMODBUS_METER, "--trace", str(trace),
            "--epoch", "%.6f" % epoch, "--unit", "1:n1", "--port", str(port),
            "--model", model, "--energy-start-kwh", start_kwh,
            "--se-trace", SE_TRACE]
    with started(argv, listening) as proc:
        yield port, str(trace), proc


@pytest.mark.parametrize("server", ["ours", "pymodbus"])
@pytest.mark.parametrize("model", sorted(MODEL_ENERGY))
def test_model_energy_register_in_service(tmp_path, server, model):
    kind, addr, vtype, order, scale, start_kwh, max_regs = MODEL_ENERGY[model]
    start = Fraction(start_kwh) * 3600000 / scale       # register units
    other = "holding" if kind == "input" else "input"
    # Before the epoch the register holds the start reading alone.
    with model_meter(tmp_path, server, model, start_kwh,
                     time.time() + 3600) as (port, _, _):
        cli = Client.tcp(port)
        try:
            got = decode_energy(cli.read(1, addr, WORDS[vtype], kind),
                                vtype, order)
            want = expected_energy(vtype, start)
            assert got == want, (model, got, want)
            # the start readings are picked where the wrong rounding shows
            wrong = (f32_truncated(start) if vtype == "float32"
                     else int(start // 1) + 1)
            assert got != wrong
            # the meter's kind and read limit (125 is libmodbus' own);
            # pymodbus checks the address range before the length
            expect_error(lambda: cli.read(1, addr, WORDS[vtype], other),
                         ENOBASE + 2)
            if max_regs < 125:
                with pytest.raises(ModbusError) as exc:
                    cli.read(1, addr, max_regs + 1, kind)
                assert exc.value.errno in ((EMBXILVAL,) if server == "ours"
                                           else (EMBXILVAL, ENOBASE + 2))
        finally:
            cli.close()
    # After the epoch it counts the trace's energy on top of it.
    epoch = time.time() - 4.0
    with model_meter(tmp_path, server, model, start_kwh,
                     epoch) as (port, trace, _):
        cli = Client.tcp(port)
        try:
            regs, t0, t1 = cli.timed_read(1, addr, WORDS[vtype], kind)
            got = decode_energy(regs, vtype, order)
            lo = expected_energy(vtype, start + Fraction(
                joules(trace, 1, 0, t0 - epoch)) / scale - Fraction(1, 10**6))
            hi = expected_energy(vtype, start + Fraction(
                joules(trace, 1, 0, t1 - epoch)) / scale + Fraction(1, 10**6))
            assert lo <= got <= hi, (model, got, lo, hi)
        finally:
            cli.close()
