#!/usr/bin/python3
"""test_doc_examples.py - every example block of the man pages, README.md
and doc/admin-guide.md is fed to the real parser of what it configures.

Blocks are found mechanically: roff .nf/.fi blocks in doc/man/*, fenced
blocks in the Markdown files.  Each carries a marker just before it saying
what it is, in roff

    .\\" example: acct_gather.conf
    .nf

and in Markdown

    <!-- example: slurm.conf -->
    ```

A block without a marker fails: a new example cannot go untested.
What each kind is fed to:

  acct_gather.conf       se-conf-check --type PLUGIN for each plugin whose
                         keys the block has (EnergyModbus*, EnergyBMC*,
                         EnergyRRD*, the EnergyAttribution keys, the
                         EnergySettle keys, the EnergyGPU keys)
  ext_sensors.conf       se-conf-check --type ext_sensors/meters
  energy_policy.conf     se-conf-check --type energy_policy
  energy_policy/history  se-conf-check --type energy_policy/history
  slurm.conf             Slurm's own parser: the lines after a minimal
                         configuration, read by scontrol
  plugstack.conf         Slurm's SPANK loader: srun --help with it
  gres.conf              slurmd -G (the node's GRES as slurmd reads them),
                         with a munged of the test's own (see below)
  bmc.map, modbus.map    a map file alone: read by its plugin through
                         EnergyBMCMap= / EnergyModbusMap=
  file PATH              a file another block names (a map file): written
                         at PATH, and it must be named by a block
  powercap.conf          slurm-energy-powercapd --check-config -f FILE
  web.yml                slurm-energy-exporter --check-config with it as
                         --web.config.file (the TLS files it names made
                         there: a fresh self-signed pair by openssl)
  shell, output          commands and what they print: not configuration

Inside a block, a line "# /etc/slurm/NAME" starts the file NAME (an
acct_gather.conf block that shows its map file below it), and
"# acct_gather.conf" goes back to the configuration.

SUBSTITUTIONS (the only changes): /etc/slurm/ becomes a temporary
directory; the suite's plugin directory (/usr/lib/x86_64-linux-gnu/
slurm-energy, /usr/lib/slurm-energy) the build's .libs (Slurm checks that
PluginDir exists and loads the SPANK plugins), and Debian's Slurm plugin
directory that of the Slurm configure was pointed at (SE_SLURM_PLUGINDIR,
set by make check: a prefix's lib/slurm for a Slurm built from source, whose
slurmd, scontrol and srun are then first on PATH); a password file a block names
but does not show is replaced by one created there, mode 0600 (no example
shows a password).

NO DAEMON OF THE HOST, NO STATE OF THE HOST: from Slurm 23.02 on, slurmd's
auth/munge plugin asks munged for a credential when it starts, even for -G,
and a build host or a packaging chroot runs no munged.  The gres.conf check
starts its own munged (a fresh key, socket, pid, log and seed file in a
temporary directory, --foreground, stopped by its PID at the end) and points
slurmd at it with AuthInfo=socket=; where munged is not installed slurmd -G
runs without it (22.05 needs none).  Its SlurmdSpoolDir is a temporary
directory too (a chroot has no /var/spool/slurmd).

NO HARDWARE OF THE HOST: slurmd learns the node's CPUs through hwloc, which
on Linux reads /sys, and a packaging chroot has none (pbuilder's default
root has /proc and /dev only: "[hwloc/linux] failed to find sysfs cpu
topology directory").  slurmd -C and slurmd -G therefore run on a machine
of the test's own, hwloc's synthetic topology SYNTHETIC_TOPOLOGY given
through HWLOC_SYNTHETIC (read by hwloc_topology_load in any process, so in
slurmd and in the gres/gpu plugin it loads), and node1's line in slurm.conf
is that machine's (24.11 checks the node's CPUs against what slurmd
finds).  slurmd -C must report that machine, or the check fails: a hwloc
that ignored the variable would bring the host's hardware back.
Before it reads gres.conf, slurmd -G starts its cgroup plugin, by default
the one /sys/fs/cgroup calls for: without /sys it fails, and on a cgroup v2
host it asks systemd for a scope.  The check's cgroup.conf names a plugin
that touches nothing: "disabled" (Slurm 24.05 on), cgroup/v1 before (its
init only sets up lists).  A Slurm program that fails without a word (slurmd
logs to syslog until it has read its configuration) fails the check with
its exit status.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SRCDIR = os.path.abspath(os.environ.get("srcdir", os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..")))
BUILDDIR = os.path.abspath(os.environ.get("SE_BUILDDIR", "."))
CONF_CHECK = os.path.join(BUILDDIR, "contribs", "conf-check", "se-conf-check")
EXPORTER = os.path.join(BUILDDIR, "contribs", "energy-exporter",
                        "slurm-energy-exporter")
POWERCAPD = os.path.join(BUILDDIR, "src", "powercap",
                         "slurm-energy-powercapd")
PLUGINS = os.path.join(BUILDDIR, ".libs")
SITE_PLUGIN_DIRS = ("/usr/lib/x86_64-linux-gnu/slurm-energy",
                    "/usr/lib/slurm-energy")
SITE_ETC = "/etc/slurm/"
DEBIAN_SLURM_PLUGINDIR = "/usr/lib/x86_64-linux-gnu/slurm-wlm"
NOT_CONFIG = ("shell", "output")
INDENTED = ("web.yml",)         # fed whole, never cut into sections
KEY_PLUGINS = (("EnergyModbus", "acct_gather_energy/modbus"),
               ("EnergyBMC", "acct_gather_energy/bmc"),
               ("EnergyRRD", "acct_gather_energy/rrd"),
               ("EnergySNMP", "acct_gather_energy/snmp"),
               ("EnergyAttribution", "acct_gather_energy/attribution"),
               ("EnergyIdle", "acct_gather_energy/attribution"),
               ("EnergyCgroupRoot", "acct_gather_energy/attribution"),
               ("EnergySettle", "acct_gather_energy/settle"),
               ("EnergyGPU", "acct_gather_energy/node-gpus"))
# The gres.conf check's machine (see NO HARDWARE OF THE HOST above): two
# sockets of three cores of two threads, unlike the usual build host, so
# that the host's topology taken instead of it shows.
SYNTHETIC_TOPOLOGY = "package:2 core:3 pu:2"
SYNTHETIC_NODE = ("CPUs=12 Boards=1 SocketsPerBoard=2 CoresPerSocket=3 "
                  "ThreadsPerCore=2")
# hwloc's other ways to a topology (an XML file, another root for /sys and
# /proc, a choice of its components) would take precedence over, or mix
# with, the synthetic one: none comes in from the caller's environment.
HWLOC_OVERRIDES = ("HWLOC_XMLFILE", "HWLOC_FSROOT", "HWLOC_COMPONENTS",
                   "HWLOC_THISSYSTEM")
BASE_SLURM_CONF = """\
ClusterName=doc
SlurmctldHost=localhost
NodeName=node1 CPUs=1
PartitionName=debug Nodes=ALL Default=YES
"""


# ------------------------------------------------------------ extraction
def _unroff(line):
    line = re.sub(r"^\.(B|I|BR|IR)\s+", "", line)
    line = re.sub(r"\\f[BIRP]", "", line)
    line = line.replace("\\-", "-").replace("\\e", "\\").replace("\\&", "")
    return line


def roff_blocks(path):
    lines = open(path).read().split("\n")
    out = []
    for i, line in enumerate(lines):
        if line.strip() != ".nf":
            continue
        kind, j = None, i - 1
        while j >= 0 and j >= i - 4:
            m = re.match(r'\.\\"\s*example:\s*(.+?)\s*$', lines[j])
            if m:
                kind = m.group(1)
                break
            if not re.match(r"\.(PP|RS|IP|br|sp)\b", lines[j]):
                break
            j -= 1
        body, k = [], i + 1
        while k < len(lines) and lines[k].strip() != ".fi":
            body.append(_unroff(lines[k]))
            k += 1
        out.append((i + 1, kind, "\n".join(body) + "\n"))
    return out


def markdown_blocks(path):
    lines = open(path).read().split("\n")
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            m = re.match(r"<!--\s*example:\s*(.+?)\s*-->", lines[i - 1]) \
                if i else None
            body, k = [], i + 1
            while k < len(lines) and not lines[k].startswith("```"):
                body.append(lines[k])
                k += 1
            out.append((i + 1, m.group(1) if m else None,
                        "\n".join(body) + "\n"))
            i = k
        i += 1
    return out


def documents():
    docs = sorted(glob.glob(os.path.join(SRCDIR, "doc", "man", "*.[158]")))
    md = [os.path.join(SRCDIR, "README.md"),
          os.path.join(SRCDIR, "doc", "admin-guide.md")]
    return [(d, roff_blocks(d)) for d in docs] + \
           [(d, markdown_blocks(d)) for d in md if os.path.exists(d)]


# ------------------------------------------------------------ munged
class PrivateMunge:
    """A munged of this test's own: nothing of the host's is used or
    touched (its key, socket and state are in a temporary directory)."""

    def __init__(self):
        self.proc = None
        self.dir = None
        self.socket = None
        self.failed = None

    def start(self):
        """The socket path, or None when there is no munged to start (the
        reason in self.failed when it would not start)."""
        if self.socket or self.failed:
            return self.socket
        munged = shutil.which("munged") or (
            "/usr/sbin/munged" if os.access("/usr/sbin/munged", os.X_OK)
            else None)
        if not munged:
            return None
        self.dir = tempfile.mkdtemp(prefix="se-doc-munge-")
        d = self.dir
        # munged wants its socket's directory searchable by all (clients of
        # any user); the key stays the owner's alone
        os.chmod(d, 0o755)
        key = os.path.join(d, "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(1024))
        os.close(fd)
        socket = os.path.join(d, "munge.socket")
        log = os.path.join(d, "munged.log")
        out = os.path.join(d, "munged.out")
        with open(out, "w") as handle:
            self.proc = subprocess.Popen(
                [munged, "--foreground", "--socket=" + socket,
                 "--key-file=" + key, "--pid-file=" + os.path.join(d, "pid"),
                 "--log-file=" + log, "--seed-file=" + os.path.join(d, "seed")],
                stdin=subprocess.DEVNULL, stdout=handle,
                stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if os.path.exists(socket):
                self.socket = socket
                return socket
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        said = "" if self.proc.poll() is not None else "no socket after 20 s\n"
        for f in (out, log):
            try:
                said += open(f).read()
            except OSError:
                pass
        self.failed = "munged %s would not start: %s" % (munged, said.strip())
        self.stop()
        return None

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None


MUNGE = PrivateMunge()


# ------------------------------------------------------------ checking
class Checker:
    def __init__(self, tmp):
        self.tmp = tmp
        self.etc = os.path.join(tmp, "etc") + "/"

    def substitute(self, text):
        text = text.replace(SITE_ETC, self.etc)
        for d in SITE_PLUGIN_DIRS:
            text = text.replace(d, PLUGINS)
        # Slurm's own plugin directory as Debian installs it: the one of the
        # Slurm this build is for (a prefix's lib/slurm, built from source)
        if SLURM_PLUGINDIR and SLURM_PLUGINDIR != DEBIAN_SLURM_PLUGINDIR:
            text = text.replace(DEBIAN_SLURM_PLUGINDIR, SLURM_PLUGINDIR)
        return text

    def sections(self, text):
        """[(path or None for the block's own kind, text)]."""
        out, path, cur = [], None, []
        for line in text.split("\n"):
            m = re.match(r"\s*#\s*(/\S+|acct_gather\.conf)\s*$", line)
            if m:
                out.append((path, "\n".join(cur) + "\n"))
                path = None if m.group(1) == "acct_gather.conf" \
                    else m.group(1)
                cur = []
                continue
            cur.append(line.strip())
        out.append((path, "\n".join(cur) + "\n"))
        return [(p, t) for p, t in out if t.strip() or p]

    def write(self, path, text, mode=0o644):
        path = self.substitute(path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, mode)
        return path

    def run(self, argv, env=None):
        p = subprocess.run(argv, capture_output=True, text=True,
                           timeout=60, env=env)
        out = (p.stdout + p.stderr).strip()
        if p.returncode and not out:    # an empty complaint is no pass
            out = "%s exited with status %d and printed nothing" % (
                " ".join(argv), p.returncode)
        return p.returncode, out

    def secrets(self, text):
        """A password file the block names: one of ours instead."""
        for n, m in enumerate(re.finditer(r"EnergyBMCPasswordFile=(\S+)",
                                          text)):
            ours = self.write(os.path.join(self.tmp, "secret-%d" % n),
                              "doc-example\n", 0o600)
            text = text.replace(m.group(0), "EnergyBMCPasswordFile=" + ours)
        # an SNMP secrets file a block shows (file PATH): root-only, as
        # the plugin demands
        for m in re.finditer(r"EnergySNMPSecrets=(\S+)", text):
            if os.path.exists(m.group(1)):
                os.chmod(m.group(1), 0o600)
        return text

    def check_web_yml(self, text):
        """slurm-energy-exporter's web configuration, with a real key pair
        where it names cert_file and key_file (relative to the file)."""
        if not os.access(EXPORTER, os.X_OK):
            return None                 # not built here (configure said)
        d = os.path.join(self.tmp, "web")
        os.makedirs(d, exist_ok=True)
        cert = re.search(r"^\s*cert_file:\s*(\S+)", text, re.M)
        key = re.search(r"^\s*key_file:\s*(\S+)", text, re.M)
        if cert and key:
            rc, out = self.run(["openssl", "req", "-x509", "-newkey", "ec",
                                "-pkeyopt", "ec_paramgen_curve:prime256v1",
                                "-nodes", "-days", "1", "-subj", "/CN=node1",
                                "-keyout", os.path.join(d, key.group(1)),
                                "-out", os.path.join(d, cert.group(1))])
            if rc:
                return "openssl: " + out
        path = self.write(os.path.join(d, "web.yml"), text)
        rc, out = self.run([EXPORTER, "--check-config", "--socket=/dev/null",
                            "--web.config.file=" + path])
        return out if rc else None

    def check(self, kind, text):
        """None when good, else the parser's complaint."""
        text = self.substitute(text)
        maps = {"bmc.map": "EnergyBMCMap", "modbus.map": "EnergyModbusMap"}
        if kind in maps:                # a map file alone: its plugin reads it
            path = self.write(os.path.join(self.tmp, kind), text)
            kind, text = "acct_gather.conf", "%s=%s\n" % (maps[kind], path)
        if kind == "acct_gather.conf":
            text = self.secrets(text)
            path = self.write(os.path.join(self.tmp, "acct_gather.conf"),
                              text)
            types = sorted({t for prefix, t in KEY_PLUGINS
                            if re.search(r"^\s*%s\w*=" % prefix, text,
                                         re.M)})
            if not types:
                return "no key of any plugin of the suite"
            for t in types:
                rc, out = self.run([CONF_CHECK, "--type", t, path])
                if rc:
                    return out
            return None
        simple = {"ext_sensors.conf": "ext_sensors/meters",
                  "energy_policy.conf": "energy_policy",
                  "energy_policy/history": "energy_policy/history"}
        if kind in simple:
            path = self.write(os.path.join(self.tmp, kind.replace("/", "_")),
                              text)
            rc, out = self.run([CONF_CHECK, "--type", simple[kind], path])
            if rc == 2 and "not a plugin of this build" in out:
                return None             # not built here (configure said)
            return out if rc else None
        if kind == "web.yml":
            return self.check_web_yml(text)
        if kind == "powercap.conf":
            path = self.write(os.path.join(self.tmp, kind), text)
            rc, out = self.run([POWERCAPD, "--check-config", "-f", path])
            return out if rc else None
        if kind == "slurm.conf":
            path = self.write(os.path.join(self.tmp, "slurm.conf"),
                              BASE_SLURM_CONF + text)
            rc, out = self.run(["scontrol", "show", "hostnames", "node1"],
                               env=dict(os.environ, SLURM_CONF=path))
            return out if rc else None
        if kind == "gres.conf":
            # slurmd -G: the node's GRES from slurm.conf and gres.conf,
            # slurmd's credential from our own munged
            socket = MUNGE.start()
            if MUNGE.failed:
                return MUNGE.failed
            self.write(os.path.join(self.tmp, "gres.conf"), text)
            self.write(os.path.join(self.tmp, "cgroup.conf"),
                       "CgroupPlugin=%s\n" % inert_cgroup_plugin())
            spool = os.path.join(self.tmp, "spool")
            os.makedirs(spool, exist_ok=True)
            node, err = node_line()
            if err:
                return err
            conf = self.write(os.path.join(self.tmp, "slurm.conf"),
                              BASE_SLURM_CONF.replace(
                                  "NodeName=node1 CPUs=1",
                                  node + " Gres=gpu:2") +
                              "GresTypes=gpu\nPluginDir=%s:%s\n"
                              % (PLUGINS, SLURM_PLUGINDIR) +
                              "SlurmdSpoolDir=%s\n" % spool +
                              ("AuthInfo=socket=%s\n" % socket
                               if socket else ""))
            rc, out = self.run(["slurmd", "-N", "node1", "-G"],
                               env=dict(synthetic_machine_env(),
                                        SLURM_CONF=conf, **ASAN_PRELOAD))
            # Slurm's own error and fatal lines; an informational line may
            # quote a library's "error" (24.11 with NVML absent)
            return out if rc or re.search(r"\b(error|fatal):", out) \
                else None
        if kind == "plugstack.conf":
            plug = self.write(os.path.join(self.tmp, "plugstack.conf"),
                              text)
            conf = self.write(os.path.join(self.tmp, "slurm.conf"),
                              BASE_SLURM_CONF +
                              "PluginDir=%s:%s\nPlugStackConfig=%s\n"
                              % (PLUGINS, SLURM_PLUGINDIR, plug))
            # an optional plugin that fails to load is only an error line
            p = subprocess.run(["srun", "--help"], capture_output=True,
                               text=True, timeout=60,
                               env=dict(os.environ, SLURM_CONF=conf,
                                        **ASAN_PRELOAD))
            return p.stderr.strip() or "srun exit %d" % p.returncode \
                if p.returncode or "error" in p.stderr else None
        return "unknown kind of example '%s'" % kind


def synthetic_machine_env():
    """The environment with hwloc pointed at SYNTHETIC_TOPOLOGY."""
    env = {k: v for k, v in os.environ.items() if k not in HWLOC_OVERRIDES}
    env["HWLOC_SYNTHETIC"] = SYNTHETIC_TOPOLOGY
    return env


def node_line():
    """(node1's slurm.conf line, None) for the synthetic machine, or (None,
    why) when slurmd -C, run on it, reports other CPUs: from 23.02 on
    slurmd -G reports an error when the node's CPUs in slurm.conf differ
    from what it finds, and what it finds must not be this host's."""
    try:
        p = subprocess.run(["slurmd", "-C"], capture_output=True, text=True,
                           timeout=30, env=synthetic_machine_env())
        out = p.stdout + p.stderr
    except (OSError, subprocess.SubprocessError) as e:
        return None, "slurmd -C: %s" % e
    m = re.search(r"^NodeName=\S+ (CPUs=.*ThreadsPerCore=\d+)", out, re.M)
    if not m or m.group(1) != SYNTHETIC_NODE:
        return None, ("slurmd -C with HWLOC_SYNTHETIC='%s' should report "
                      "%s, reported:\n%s" % (SYNTHETIC_TOPOLOGY,
                                             SYNTHETIC_NODE, out.strip()))
    return "NodeName=node1 " + SYNTHETIC_NODE, None


def inert_cgroup_plugin():
    """The cgroup plugin slurmd -G can start without /sys/fs/cgroup and
    without touching the host's cgroups (see NO HARDWARE OF THE HOST)."""
    try:
        out = subprocess.run(["slurmd", "-V"], capture_output=True,
                             text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        out = ""
    m = re.search(r"(\d+)\.(\d+)\.", out)
    release = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    return "disabled" if release >= (24, 5) else "cgroup/v1"


def asan_preload():
    """Environment for a Slurm binary that loads our plugins: when they are
    built with AddressSanitizer (the sanitizer run of make check), the
    runtime they link must come first in slurmd and srun, which are not
    built with it, so it is preloaded (Slurm's own leaks at exit are not
    ours to report).  Empty otherwise."""
    for so in sorted(glob.glob(os.path.join(PLUGINS, "*.so"))):
        try:
            out = subprocess.run(["ldd", so], capture_output=True,
                                 text=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return {}
        m = re.search(r"^\s*libasan\.so\S* => (\S+)", out, re.M)
        return {"LD_PRELOAD": m.group(1),
                "ASAN_OPTIONS": "detect_leaks=0"} if m else {}
    return {}


ASAN_PRELOAD = asan_preload()


def slurm_plugindir():
    # the Slurm configure was pointed at (make check sets it; a prefix's
    # lib/slurm for a Slurm built from source)
    configured = os.environ.get("SE_SLURM_PLUGINDIR")
    if configured:
        return configured if os.path.exists(
            os.path.join(configured, "libslurmfull.so")) else None
    for d in ("/usr/lib/x86_64-linux-gnu/slurm-wlm", "/usr/lib/slurm-wlm",
              "/usr/lib64/slurm", "/usr/lib/slurm"):
        if os.path.exists(os.path.join(d, "libslurmfull.so")):
            return d
    return None


SLURM_PLUGINDIR = slurm_plugindir()


def main():
    if not (shutil.which("scontrol") and shutil.which("srun")
            and SLURM_PLUGINDIR and os.access(CONF_CHECK, os.X_OK)):
        print("SKIP: needs Slurm's scontrol and srun and a built "
              "se-conf-check")
        return 77
    fails, counted = 0, {}
    for doc, blocks in documents():
        rel = os.path.relpath(doc, SRCDIR)
        tmp = tempfile.mkdtemp(prefix="se-doc-examples-")
        try:
            checker = Checker(tmp)
            # files first (map files the configuration blocks name)
            named = []
            for line, kind, text in blocks:
                if kind and kind.startswith("file "):
                    named.append((line, kind[5:].strip()))
                    checker.write(kind[5:].strip(), text)
            pending = []
            for line, kind, text in blocks:
                where = "%s:%d" % (rel, line)
                if kind is None:
                    print("FAIL: %s: an example block without a marker "
                          "(see doc/test_doc_examples.py)" % where)
                    fails += 1
                    continue
                counted[kind.split()[0]] = counted.get(
                    kind.split()[0], 0) + 1
                if kind in NOT_CONFIG or kind.startswith("file "):
                    continue
                if kind in INDENTED:    # YAML: indentation is structure
                    pending.append((where, kind, text))
                    continue
                for path, part in checker.sections(text):
                    if path:
                        named.append((line, path))
                        checker.write(path, part)
                    else:
                        pending.append((where, kind, part))
            for where, kind, text in pending:
                err = checker.check(kind, text)
                if err:
                    print("FAIL: %s: %s example refused:\n%s\n--- the "
                          "example as fed (substituted):\n%s"
                          % (where, kind, err, checker.substitute(text)))
                    fails += 1
            conf_text = "".join(checker.substitute(t)
                                for _, _, t in pending)
            for line, path in named:
                if checker.substitute(path) not in conf_text:
                    print("FAIL: %s:%d: file %s is named by no example "
                          "of the document" % (rel, line, path))
                    fails += 1
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("example blocks by kind: %s" % ", ".join(
        "%s %d" % kv for kv in sorted(counted.items())))
    return 1 if fails else 0


if __name__ == "__main__":
    try:
        rc = main()
    finally:
        MUNGE.stop()
    sys.exit(rc)
