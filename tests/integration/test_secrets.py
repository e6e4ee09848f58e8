"""No secret in any log, at the highest debug level (issue #14).

The only secret the suite reads is the BMC password (EnergyBMCPasswordFile
of acct_gather_energy/bmc, for IPMI over the LAN).  Modbus has no
authentication, RRD files and rrdcached none that we read, the GPU plugins
none; MariaDB's and munge's secrets are the cluster's, not ours.

A cluster runs every daemon at debug5 (SlurmctldDebug, SlurmdDebug,
slurmdbd's DebugLevel) with the debug flags that touch our code, each node
reading its own simulated BMC over IPMI LAN 2.0 with a password; it runs a
job (whose steps settle at their boundaries through the energy query
channel), reconfigures (slurmd reloads the plugin and reads the password
file again), then every log is searched for the password: each daemon's
log, the simulators' logs, the job's output and error, what the client
commands and our tools print (scontrol show config, slurm-energy-check,
se-conf-check).  The search must be able to fail: it is first run on a
planted copy of the password (test_the_search_finds_a_planted_password).

The same cluster is the proof that a sensor list with blanks loads when it
is quoted (issue #15): EnergyBMCSensors="PSU1 Power,PSU2 Power", and every
node reports power read from those two sensors.

About 50 s on a 2-core machine.
"""
import glob
import os
import secrets
import subprocess
import time

from selab import energy, fixtures
from selab.bmc_rig import BMC_ADDR, NODES, PORT_OF, Bmcs
from selab.cluster import PLUGIN_DIR, poll
from selab.files import scratch_dir, write_file

BIN_DIR = os.environ.get("SE_BIN_DIR", "")
SBIN_DIR = os.path.join(os.path.dirname(BIN_DIR), "sbin") if BIN_DIR else ""
DEBUG_FLAGS = ("Energy,Profile,JobAccountGather,Steps,Protocol,Network,"
               "Agent,Gres,CpuFrequency")

pytestmark = [fixtures.NEEDS_PLUGINS, *fixtures.NEEDS_BMC_SIM]


# ------------------------------------------------------------ the search
def find_secret(secret, files=(), texts=()):
    """Where secret occurs: [(name, line number, line)] over files (paths;
    read as bytes, so a binary or half-written log is searched too) and
    texts ({name: text} of command outputs)."""
    needle = secret.encode()
    found = []
    for path in files:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except (FileNotFoundError, IsADirectoryError):
            continue
        for n, line in enumerate(data.splitlines(), 1):
            if needle in line:
                found.append((path, n, line.decode(errors="replace")))
    for name, text in dict(texts).items():
        for n, line in enumerate(text.splitlines(), 1):
            if secret in line:
                found.append((name, n, line))
    return found


def test_the_search_finds_a_planted_password(tmp_path):
    """The search is what the real test trusts: it must find a copy."""
    pw = secrets.token_hex(8)
    clean = tmp_path / "clean.log"
    clean.write_bytes(b"[t] debug5: nothing here\n\x00\xff binary\n")
    planted = tmp_path / "planted.log"
    planted.write_bytes(b"line one\n\xfe\x00 session password=" +
                        pw.encode() + b" (oops)\nline three\n")
    assert find_secret(pw, [str(clean)], {"out": "no secret"}) == []
    hits = find_secret(pw, [str(clean), str(planted)],
                       {"scontrol": "a\nPassword = %s\n" % pw})
    assert [(os.path.basename(h[0]), h[1]) for h in hits] == [
        ("planted.log", 2), ("scontrol", 2)], hits


# ----------------------------------------------------------- the cluster
def acct_gather_conf(work, password_file):
    lines = ["Nodes=%s Host=%s:%d" % (n, BMC_ADDR, PORT_OF[n]) for n in NODES]
    map_file = write_file(os.path.join(work, "bmc.map"),
                          "\n".join(lines) + "\n", 0o644)
    return ('EnergyBMCMethod=sensors\n'
            'EnergyBMCSensors="PSU1 Power,PSU2 Power"\n'
            "EnergyBMCMap=%s\nEnergyBMCUser=admin\n"
            "EnergyBMCPasswordFile=%s\nEnergyBMCPrivilege=admin\n"
            "EnergyBMCWorkaroundFlags=opensesspriv\n"
            "EnergyBMCFrequency=1\nEnergyBMCTimeout=500\n"
            "EnergyBMCSdrCacheDir=%s\n"
            % (map_file, password_file, os.path.join(work, "sdr-%n")))


def test_no_password_in_any_log_at_debug5(cluster):
    password = secrets.token_hex(8)
    with scratch_dir("se-secrets-") as work:
        _run(cluster, work, password)


def _run(cluster, work, password):
    pwfile = write_file(os.path.join(work, "bmc.password"), password + "\n",
                        0o600)
    bmcs = Bmcs(work, time.time(), pwfile, poll_ms=250)
    with cluster.configured(plugin_dirs=[PLUGIN_DIR],
                            energy_type="acct_gather_energy/bmc",
                            acct_gather_conf=acct_gather_conf(work, pwfile) +
                            "EnergySettleMaxWait=10\n",
                            slurm_conf="DebugFlags=%s\n" % DEBUG_FLAGS,
                            debug="debug5") as c:
        bmcs.start()
        try:
            # the quoted sensor list loaded: power from both PSU sensors
            poll(lambda: all(energy.node_power(c, n) for n in NODES),
                 timeout=60, what="CurrentWatts from the PSU sensors")
            shown = c.scontrol("show", "config").stdout
            assert "slurmd" in shown.lower()
            assert "EnergyBMCSensors" in shown and "PSU1 Power" in shown, (
                "the quoted sensor list is not in scontrol show config")

            job = c.run(["srun", "-N3", "-J", "secrets",
                         *energy.timed_command(3)], timeout=90)
            c.scontrol("reconfigure")
            poll(lambda: _starts(c) >= 2 * len(NODES), timeout=60,
                 what="the plugin started again on every node")
            texts = {
                "srun stdout": job.stdout, "srun stderr": job.stderr,
                "scontrol show config": shown + c.scontrol(
                    "show", "config").stdout,
                "scontrol show node": c.scontrol("show", "node").stdout,
                "sacct": c.run(["sacct", "-a", "-P", "-o", "ALL"]).stdout,
            }
            texts.update(_tools(c, work))
        finally:
            bmcs.stop()
        logs = sorted(glob.glob(os.path.join(c.state, "log", "*")) +
                      glob.glob(os.path.join(work, "**", "*"),
                                recursive=True))
        # Where the password must be: its file, and each simulated BMC's
        # user table (lan.conf, ipmi_sim's configuration; a real BMC keeps
        # it too).  Everything else there is a log or the simulator's state.
        logs = [p for p in logs if os.path.isfile(p) and p != pwfile and
                os.path.basename(p) != "lan.conf"]
        # what was searched, so a report shows it was not nothing
        debug5 = sum(open(p, "rb").read().count(b"debug5") for p in logs)
        print("searched %d files (%d debug5 lines) and %d outputs"
              % (len(logs), debug5, len(texts)))
        assert debug5 > 0, "no debug5 line: the daemons did not run at debug5"
        hits = find_secret(password, logs, texts)
        assert not hits, "the BMC password is logged:\n" + "\n".join(
            "%s:%d: %s" % h for h in hits[:10])


def _starts(c):
    n = 0
    for node in NODES:
        path = os.path.join(c.state, "log", "slurmd-%s.log" % node)
        with open(path, errors="replace") as handle:
            n += handle.read().count("started on node %s" % node)
    return n


def _tools(c, work):
    """Our tools on this cluster's configuration, as an admin runs them."""
    out = {}
    conf = os.path.join(c.state, "etc", "slurm.conf")
    agc = os.path.join(c.state, "etc", "acct_gather.conf")
    for name, argv in (
            ("slurm-energy-check", [os.path.join(SBIN_DIR,
                                                 "slurm-energy-check"),
                                    "--plugin-dir", PLUGIN_DIR,
                                    "--slurm-conf", conf]),
            ("se-conf-check", [os.path.join(SBIN_DIR, "se-conf-check"),
                               "--type", "acct_gather_energy/bmc", agc])):
        if not os.access(argv[0], os.X_OK):
            continue
        p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        out[name] = p.stdout + p.stderr
    assert "se-conf-check" in out, "se-conf-check not found in " + SBIN_DIR
    assert out["se-conf-check"].startswith("ok"), out["se-conf-check"]
    return out
