"""Simulated meters for the test cluster: start, fault, stop (by PID only).

Both meters play a power trace (contribs/trace/FORMAT.md) whose time 0 is
``epoch`` (Unix seconds):

- ``ModbusSim``: our own simulator, contribs/modbus-sim/se-modbus-sim
  (libmodbus server API; TCP or RTU with real pacing; fault injection);
- ``PymodbusMeter``: an independent implementation on pymodbus, so the
  plugin is also proven against a peer that shares no code with it.
"""
import os
import shutil
import signal
import subprocess
import tempfile
import time

from selab.files import write_file

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
PYMODBUS_METER = os.path.join(REPO, "contribs", "modbus-sim",
                              "pymodbus_meter.py")


def bin_dir():
    """Where contribs/build.sh installed our tools."""
    default = os.path.join(REPO, "_build", "stage", "bin")
    return os.environ.get("SE_BIN_DIR", default)


def tool(name):
    return os.path.join(bin_dir(), name)


def stop_process(proc, timeout=10):
    """SIGTERM to a process we started (by its Popen, never by name), then
    SIGKILL after timeout; reaped either way."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout)


def kill_unfinished(procs):
    """SIGKILL to those of our Popens (srun clients a fixture started) still
    running, each reaped: a fixture's teardown after a test that failed
    before it waited for them."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _wait_for_file(path, proc, timeout, what):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise RuntimeError("%s exited with %s before it was ready"
                               % (what, proc.returncode))
        if time.monotonic() > deadline:
            raise RuntimeError("%s not ready after %ss" % (what, timeout))
        time.sleep(0.05)


class _Process:
    """A child we started; stopped by its own PID, never by name."""

    name = "process"

    def __init__(self, workdir=None):
        self.owns_workdir = workdir is None     # removed again at stop()
        self.workdir = workdir or tempfile.mkdtemp(prefix="se-meter-")
        self.proc = None
        self.log = os.path.join(self.workdir, "%s.log" % self.name)

    def _spawn(self, argv, ready_file=None, timeout=15, env=None):
        self.proc = subprocess.Popen(argv, stdout=open(self.log, "ab"),
                                     stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, env=env)
        if ready_file:
            _wait_for_file(ready_file, self.proc, timeout, self.name)
        return self

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout=10):
        stop_process(self.proc, timeout)
        if self.owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def freeze(self):
        os.kill(self.proc.pid, signal.SIGSTOP)

    def thaw(self):
        os.kill(self.proc.pid, signal.SIGCONT)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class ModbusSim(_Process):
    """se-modbus-sim serving units {id: trace column} on TCP or RTU.

    map_args: ["--model", "sdm630"] or custom-map options.
    start_kwh: the energy register's reading at the epoch, in kWh (a meter
    in service: e.g. "23456.7"; a string keeps the decimals as written).
    env: the sim's environment (--gpus: FAKE_NVML_STATE for its NVML).
    """

    name = "se-modbus-sim"

    def __init__(self, trace, epoch, units, map_args, tcp=None, rtu=None,
                 serial_args=(), extra_args=(), workdir=None, start_kwh=None,
                 env=None):
        super().__init__(workdir)
        self.env = env
        self.pidfile = os.path.join(self.workdir, "sim.pid")
        self.control = os.path.join(self.workdir, "sim.control")
        argv = [tool("se-modbus-sim"), "--trace", trace,
                "--epoch", "%.6f" % epoch, "--control", self.control,
                "--pidfile", self.pidfile, *map_args, *extra_args]
        if start_kwh is not None:
            argv += ["--energy-start-kwh", str(start_kwh)]
        for unit, column in sorted(units.items()):
            argv += ["--unit", "%d:%s" % (unit, column)]
        if tcp:
            argv += ["--tcp", "%s:%d" % tcp]
        else:
            argv += ["--rtu", rtu, *serial_args]
        self.argv = argv

    def start(self):
        return self._spawn(self.argv, ready_file=self.pidfile, env=self.env)

    def fault(self, text):
        """Replace the fault control file atomically ('' clears faults)."""
        tmp = self.control + ".tmp"
        with open(tmp, "w") as handle:
            handle.write(text + ("\n" if text else ""))
        os.replace(tmp, self.control)
        if self.running():
            os.kill(self.proc.pid, signal.SIGUSR1)


class PymodbusMeter(_Process):
    """The independent pymodbus meter (contribs/modbus-sim/pymodbus_meter.py).

    map_args: ["--model", "em24"] or custom-map options; start_kwh as for
    ModbusSim.
    """

    name = "pymodbus-meter"

    def __init__(self, trace, epoch, units, host, port, map_args,
                 python=None, workdir=None, start_kwh=None):
        super().__init__(workdir)
        self.pidfile = os.path.join(self.workdir, "pymodbus.pid")
        python = python or os.environ.get("SE_PYMODBUS_PYTHON", "python3")
        self.argv = [python, PYMODBUS_METER, "--trace", trace,
                     "--epoch", "%.6f" % epoch, "--host", host,
                     "--port", str(port), "--se-trace", tool("se-trace"),
                     "--pidfile", self.pidfile, *map_args]
        if start_kwh is not None:
            self.argv += ["--energy-start-kwh", str(start_kwh)]
        for unit, column in sorted(units.items()):
            self.argv += ["--unit", "%d:%s" % (unit, column)]

    def start(self):
        self._spawn(self.argv, ready_file=self.pidfile)
        _wait_listening(self.argv[self.argv.index("--host") + 1],
                        int(self.argv[self.argv.index("--port") + 1]),
                        self.proc)
        return self


def _wait_listening(host, port, proc, timeout=15):
    """pymodbus writes no ready file of its own: wait for the listener."""
    import socket
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((host, port), timeout=0.5).close()
            return
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("pymodbus meter not listening on %s:%d"
                                   % (host, port))
            time.sleep(0.1)


class PtyPair(_Process):
    """A socat pty pair: a serial line between a simulator and a plugin."""

    name = "socat"

    def __init__(self, meter_end, node_end, workdir=None):
        super().__init__(workdir)
        self.meter_end, self.node_end = meter_end, node_end
        self.argv = ["socat", "pty,raw,echo=0,link=%s" % meter_end,
                     "pty,raw,echo=0,link=%s" % node_end]

    def start(self):
        self._spawn(self.argv)
        deadline = time.monotonic() + 10
        while not (os.path.exists(self.meter_end) and
                   os.path.exists(self.node_end)):
            if time.monotonic() > deadline or not self.running():
                raise RuntimeError("socat did not create %s and %s"
                                   % (self.meter_end, self.node_end))
            time.sleep(0.05)
        return self


LOAD_METER = os.path.join(REPO, "contribs", "modbus-sim", "load_meter.py")


def node_cgroup_dir(state, node, controller):
    """Host path of a test-cluster node's cgroup v1 tree for *controller*
    (from STATE/nodes/NODE/cgroups, written by `cluster up`); None when the
    cluster runs without cgroups (`up --cgroup no`)."""
    try:
        with open(os.path.join(state, "nodes", node, "cgroups")) as f:
            for line in f:
                mnt, _, d = line.strip().partition(" ")
                if controller in os.path.basename(mnt).split(","):
                    return d
    except OSError:
        pass
    return None


# A task for LoadMeter to meter: it keeps one CPU busy for DUTY of each
# 0.1 s slot of wall-clock time, SECONDS long (python3 load.py DUTY
# SECONDS), and prints its host's wall-clock start and end (SE_T0, SE_T1)
# and the CPU time it got (SE_CPU): on a machine whose two cores other work
# shares it gets less than DUTY, and the meter and the truth follow what it
# really got.
DUTY_CYCLE_PY = r'''
import socket, sys, time
duty, seconds = float(sys.argv[1]), float(sys.argv[2])
host = socket.gethostname()
print("SE_T0 %s %.6f" % (host, time.time()), flush=True)
c0, t0, slot = time.process_time(), time.monotonic(), 0.1
for i in range(int(round(seconds / slot))):
    start = t0 + slot * i
    while time.monotonic() < start + duty * slot:
        pass
    d = start + slot - time.monotonic()
    if d > 0:
        time.sleep(d)
print("SE_T1 %s %.6f" % (host, time.time()), flush=True)
print("SE_CPU %s %.6f" % (host, time.process_time() - c0), flush=True)
'''


def write_duty_cycle(workdir):
    """DUTY_CYCLE_PY as workdir/load.py, for the jobs' srun: its path."""
    return write_file(os.path.join(workdir, "load.py"), DUTY_CYCLE_PY)


class LoadMeter(_Process):
    """contribs/modbus-sim/load_meter.py: power = idle + k x the CPU use of
    each node's cgroup tree, served as a Modbus model (units {id: node}),
    recording the power it served (``trace``) and every job's true share
    (``truth()``).

    With GPUs (issue #31): gpu_cols {unit id: [the trace columns its GPUs
    play, NVML index order]} adds psu_factor x their power, played from
    gpu_trace with time 0 at wall gpu_epoch, following the "col" switches of
    gpu_control (the fake NVML's control file: gpu_rig.col_switch); the
    truth then has gpu_j per GPU (load_meter.py's docstring)."""

    name = "load-meter"

    def __init__(self, state, units, host, port, idle_watts, watts_per_cpu,
                 hz=10, model="sdm630", python=None, workdir=None,
                 gpu_trace=None, gpu_epoch=None, gpu_cols=None,
                 psu_factor=1.0, gpu_control=None):
        super().__init__(workdir)
        self.pidfile = os.path.join(self.workdir, "load-meter.pid")
        self.trace = os.path.join(self.workdir, "load.trace")
        self.truth_file = os.path.join(self.workdir, "truth.json")
        self.host, self.port = host, port
        python = python or os.environ.get("SE_PYMODBUS_PYTHON", "python3")
        self.argv = [python, LOAD_METER, "--host", host, "--port", str(port),
                     "--model", model, "--idle-watts", str(idle_watts),
                     "--watts-per-cpu", str(watts_per_cpu), "--hz", str(hz),
                     "--trace-out", self.trace, "--truth-out",
                     self.truth_file, "--pidfile", self.pidfile]
        for unit, node in sorted(units.items()):
            dirs = [node_cgroup_dir(state, node, c)
                    for c in ("cpuacct", "cpuset")]
            if None in dirs:
                raise RuntimeError("node %s has no cgroup tree in %s "
                                   "(cluster up --cgroup no?)" % (node, state))
            self.argv += ["--unit", "%d:%s:%s:%s" % (unit, node, *dirs)]
        if gpu_cols:
            self.argv += ["--gpu-trace", gpu_trace, "--gpu-epoch",
                          "%.6f" % gpu_epoch, "--psu-factor",
                          repr(float(psu_factor)), "--gpu-cols",
                          ";".join("%d:%s" % (u, ",".join(cols))
                                   for u, cols in sorted(gpu_cols.items()))]
            if gpu_control:
                self.argv += ["--gpu-control", gpu_control]

    def start(self):
        self._spawn(self.argv, ready_file=self.pidfile)
        _wait_listening(self.host, self.port, self.proc)
        return self

    def truth(self):
        """The meter's last truth file (rewritten every second)."""
        import json
        with open(self.truth_file) as f:
            return json.load(f)


class FreqMeter(_Process):
    """contribs/modbus-sim/load_meter.py --freq-unit: an SDM630 (unit 1)
    whose power follows the CPU frequency Slurm set on one node, read from
    its fake cpufreq tree (*node_dir*, the host side of the cluster's bind
    mounts): idle_w + dyn_w x (f/f_max)^3 with every CPU at f."""

    name = "freq-meter"

    def __init__(self, node_dir, host, port, idle_w=60.0, dyn_w=240.0,
                 f_max_khz=2400000, hz=10, python=None, workdir=None):
        super().__init__(workdir)
        self.pidfile = os.path.join(self.workdir, "freq-meter.pid")
        self.host, self.port = host, port
        python = python or os.environ.get("SE_PYMODBUS_PYTHON", "python3")
        self.argv = [python, LOAD_METER, "--host", host, "--port", str(port),
                     "--model", "sdm630", "--idle-watts", str(idle_w),
                     "--dyn-watts", str(dyn_w), "--f-max-khz",
                     str(f_max_khz), "--hz", str(hz), "--trace-out",
                     os.path.join(self.workdir, "freq.trace"),
                     "--truth-out", os.path.join(self.workdir, "truth.json"),
                     "--pidfile", self.pidfile,
                     "--freq-unit", "1:node:%s" % node_dir]

    def start(self):
        self._spawn(self.argv, ready_file=self.pidfile)
        _wait_listening(self.host, self.port, self.proc)
        return self

