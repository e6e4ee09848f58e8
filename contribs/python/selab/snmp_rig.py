"""A real SNMP agent for the tests: PyPI snmpsim (snmpsim-command-responder)
serving snmpsim-data's APC rack PDU recording (UPS/apc-8641.snmprec) with
chosen outlet rows made live by our variation module
(contribs/snmp-sim/se_outlets.py), which plays a power trace through
se-trace.  Started and stopped by its PID; faults through its control file.

snmpsim runs from its own venv ($SE_SNMPSIM_PYTHON, default
_build/snmp-venv/bin/python: contribs/test-all.sh makes it); it refuses to
run as root, so it drops to nobody/nogroup, and everything it reads is made
readable to it.
"""
import json
import os
import shutil
import socket
import tempfile
import time

from selab.files import write_file
from selab.meters import REPO, _Process, tool

APC_POWER = "1.3.6.1.4.1.318.1.1.26.9.4.3.1.7."
APC_ENERGY = "1.3.6.1.4.1.318.1.1.26.9.4.3.1.11."
RARITAN = "1.3.6.1.4.1.13742.6.5.4.3.1.4."
MODULES = os.path.join(REPO, "contribs", "snmp-sim")


def snmpsim_python():
    return os.environ.get("SE_SNMPSIM_PYTHON") or os.path.join(
        REPO, "_build", "snmp-venv", "bin", "python")


def recording(name="UPS/apc-8641.snmprec"):
    """The path of an snmpsim-data recording, from the snmpsim venv."""
    import subprocess
    out = subprocess.run(
        [snmpsim_python(), "-c",
         "import snmpsim_data, os; print(os.path.dirname(snmpsim_data.__file__))"],
        capture_output=True, text=True, check=True)
    return os.path.join(out.stdout.strip(), "data", name)


def free_udp_port(addr="127.0.0.1"):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def live_rows(rows):
    """{OID: 'column=..,what=..'} as snmprec lines of our module; a value
    "=N" is a fixed INTEGER N instead (a bench's many outlets)."""
    return {oid: ("%s|2|%s" % (oid, args[1:]) if args.startswith("=") else
                  "%s|2:se_outlets|%s" % (oid, args))
            for oid, args in rows.items()}


def probe_output(stdout):
    """tests/unit/snmp_probe's output: (its "meter ..." or "config-error
    ..." line, [a dict a read: rc, power_mw, counter (None: none carried),
    energy_mj, t, ms, requests, msg])."""
    meter, rows = None, []
    for line in stdout.splitlines():
        if line.startswith(("meter ", "config-error ")):
            meter = line
        elif line.startswith("read "):
            head, _, msg = line.partition(" | ")
            f = head.split()
            rows.append({"rc": int(f[1]), "power_mw": int(f[2]),
                         "counter": None if f[3].startswith("-") else
                         int(f[3]), "energy_mj": int(f[4]),
                         "t": float(f[5]), "ms": float(f[6]),
                         "requests": int(f[7]), "msg": msg})
    return meter, rows


class SnmpSim(_Process):
    """snmpsim with recordings {name: {OID: module args}}: each recording is
    apc-8641's rows (base=True) or none, with the given rows live.  v2c
    community and v3 context: the recording's name."""

    name = "snmpsim"

    def __init__(self, trace, epoch, recordings, v3=None, workdir=None,
                 port=None, base=True, addr="127.0.0.1"):
        # nobody reads it all: a directory of its own in /var/tmp (a
        # pytest tmp_path sits under a 0700 directory)
        super().__init__(workdir or tempfile.mkdtemp(prefix="se-snmpsim-",
                                                     dir="/var/tmp"))
        self.owns_workdir = workdir is None
        os.chmod(self.workdir, 0o755)
        trace = shutil.copy(trace, os.path.join(self.workdir, "play.trace"))
        self.addr = addr
        self.port = port or free_udp_port()
        self.control = os.path.join(self.workdir, "control.json")
        data = os.path.join(self.workdir, "data")
        cache = os.path.join(self.workdir, "cache")
        os.makedirs(data, exist_ok=True)
        os.makedirs(cache, exist_ok=True)
        os.chmod(data, 0o755)
        os.chmod(cache, 0o777)
        base_lines = []
        if base:
            with open(recording(), encoding="utf-8") as f:
                base_lines = [l.rstrip("\n") for l in f if l.strip()]
        for name, rows in recordings.items():
            live = live_rows(rows)
            lines = [live.pop(l.split("|", 1)[0], l) for l in base_lines]
            lines += list(live.values())
            lines.sort(key=lambda l: [int(x) for x in
                                      l.split("|", 1)[0].split(".")])
            write_file(os.path.join(data, name + ".snmprec"),
                       "\n".join(lines) + "\n", mode=0o644)
        write_file(self.control, "{}", mode=0o644)
        # the GETs each recording answered (se_outlets' counts=): in a
        # directory snmpsim (nobody) may write
        counts_dir = os.path.join(self.workdir, "counts")
        os.makedirs(counts_dir, exist_ok=True)
        os.chmod(counts_dir, 0o777)
        self.counts = os.path.join(counts_dir, "gets.json")
        self.argv = [
            snmpsim_python(), os.path.join(os.path.dirname(snmpsim_python()),
                                           "snmpsim-command-responder"),
            "--data-dir=" + data, "--cache-dir=" + cache,
            "--variation-modules-dir=" + MODULES,
            "--variation-module-options=se_outlets:trace=%s,epoch=%.6f,"
            "se_trace=%s,control=%s,counts=%s" % (
                trace, epoch, tool("se-trace"), self.control, self.counts),
            "--agent-udpv4-endpoint=%s:%d" % (addr, self.port),
            "--process-user=nobody", "--process-group=nogroup"]
        if v3:
            self.argv += ["--v3-user=" + v3["user"],
                          "--v3-auth-key=" + v3["auth"],
                          "--v3-auth-proto=SHA",
                          "--v3-priv-key=" + v3["priv"],
                          "--v3-priv-proto=AES"]
        os.chmod(trace, 0o644)

    def start(self, timeout=60):
        self._spawn(self.argv)
        deadline = time.monotonic() + timeout
        while True:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                text = f.read()
            if "Listening at UDP/IPv4 endpoint" in text:
                return self
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("snmpsim did not start:\n" + text[-2000:])
            time.sleep(0.1)

    @property
    def host(self):
        return "%s:%d" % (self.addr, self.port)

    def gets(self):
        """{recording: GET requests answered since the start}."""
        try:
            with open(self.counts, encoding="utf-8") as f:
                return json.load(f)
        except (FileNotFoundError, ValueError):
            return {}

    def fault(self, **faults):
        """Replace the control file: delay_s=, reset={OID: wall},
        absent=[OID, ...]; no argument clears every fault."""
        write_file(self.control, json.dumps(faults), mode=0o644,
                   atomic=True)


def pdu_poller_path():
    """The staged slurm-energy-pdu-poller (SE_BIN_DIR/../sbin)."""
    from .meters import bin_dir
    return os.path.join(os.path.dirname(bin_dir()), "sbin",
                        "slurm-energy-pdu-poller")


class PduPoller(_Process):
    """slurm-energy-pdu-poller (issue #44) over an acct_gather.conf, with
    the MUNGE socket of the nodes it answers; started and stopped by its
    PID.  totals() reads its exit line."""

    name = "pdu-poller"

    def __init__(self, conf, munge_socket, workdir=None, listen=None):
        super().__init__(workdir)
        self.argv = [pdu_poller_path(), "-f", conf,
                     "--munge-socket", munge_socket]
        if listen:
            self.argv += ["-l", listen]

    def start(self, timeout=20):
        self._spawn(self.argv)
        deadline = time.monotonic() + timeout
        while "listening on" not in self.text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                text = self.text()
                self.stop()
                raise RuntimeError("the PDU poller did not start:\n" +
                                   text[-2000:])
            time.sleep(0.05)
        return self

    def text(self):
        with open(self.log, encoding="utf-8", errors="replace") as f:
            return f.read()

    def totals(self):
        """The exit line's numbers (after stop(), workdir kept):
        rounds, gets, failed, asks, cpu_us (a round)."""
        import re
        m = re.search(r"(\d+) rounds, (\d+) GETs .* (\d+) PDU polls "
                      r"failed, (\d+) asks answered; polling thread CPU "
                      r"(\d+) us a round", self.text())
        if not m:
            return None
        return dict(zip(("rounds", "gets", "failed", "asks", "cpu_us"),
                        map(int, m.groups())))
