#!/usr/bin/python3
"""bench/snmp/bench_snmp.py - the SNMP meter's poll: latency and CPU.

Against a real agent (PyPI snmpsim serving snmpsim-data's APC PDU
recording, selab.snmp_rig) on loopback, with tests/unit/snmp_probe (the
meter and an energy accumulator, as slurmd's sampler runs them):

  1. one node's poll of 1, 2, 12 and 48 outlets of one PDU (one GET of 2,
     4, 24, 96 OIDs): latency p50 / p95 / max and the probe's CPU per
     read (user + system: the meter's work in slurmd per sample, with the
     library's UDP round trip; the agent's own CPU not included);
  2. a rack of 40 nodes on two PDUs, each node one outlet of each, every
     node's slurmd polling its two outlets every second: 40 probes at once
     for 20 s; latency over all reads and how many failed.

  3. the same rack through slurm-energy-pdu-poller (issue #44): the
     poller polls both PDUs every second, the 40 nodes ask it (40
     tests/unit/snmp_poll_probe, MUNGE of a munged of the bench's own)
     for 20 s: GETs a second at each PDU (counted by the agent), the
     nodes' read latency over all reads, and the poller's CPU a round
     (its polling thread; and the whole process, answers included).

snmpsim is a Python agent: its answer time, not the meter's, dominates the
latencies (a PDU's embedded agent is typically slower still); the CPU
figure is the meter's.

Usage: bench/snmp/bench_snmp.py [BUILD_OBJ]   (default _build/obj; needs
_build/snmp-venv, SE_SNMPSIM_PYTHON, and se-trace in SE_BIN_DIR)
"""
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "contribs", "python"))

from selab import snmp_rig as sr            # noqa: E402
from selab.files import write_file          # noqa: E402
from selab.powercap_rig import start_munged  # noqa: E402

OBJ = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "_build",
                                                         "obj")
PROBE = os.path.join(OBJ, "tests", "unit", "snmp_probe")
POLL_PROBE = os.path.join(OBJ, "tests", "unit", "snmp_poll_probe")
TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def rows_of(out):
    """(rc, ms) of each read."""
    return [(r["rc"], r["ms"]) for r in sr.probe_output(out)[1]]


def probe_cmd(work, name, map_text, node, reads, period_ms):
    m = write_file(os.path.join(work, name + ".map"), map_text)
    s = write_file(os.path.join(work, name + ".secrets"),
                   "PDU=* Community=pdu-a\n", mode=0o600)
    return [PROBE, m, s, node, str(reads), "1000", str(period_ms)]


def one_node(sim, work, outlets, reads=300):
    text = "PDU=pdu-a Host=%s Model=apc-rpdu2\nNodes=n1 Outlets=%s\n" % (
        sim.host, ",".join("pdu-a:%d" % i for i in range(1, outlets + 1)))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(probe_cmd(work, "n%d" % outlets, text, "n1", reads,
                                   20),
                         capture_output=True, text=True, check=True).stdout
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    rows = rows_of(out)[1:]         # the first read opens the session
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime -
           before.ru_stime) / len(rows_of(out))
    ms = [r[1] for r in rows if r[0] == 0]
    return (outlets, 2 * outlets, len(ms), len(rows), pct(ms, 50),
            pct(ms, 95), max(ms), cpu * 1e6)


def rack(sim, work, nodes=40, seconds=20):
    text = ["PDU=pdu-a Host=%s Model=apc-rpdu2" % sim.host,
            "PDU=pdu-b Host=%s Model=apc-rpdu2" % sim.host]
    text += ["Nodes=r%02d Outlets=pdu-a:%d,pdu-b:%d" % (i, i, i)
             for i in range(1, nodes + 1)]
    m = write_file(os.path.join(work, "rack.map"), "\n".join(text) + "\n")
    s = write_file(os.path.join(work, "rack.secrets"),
                   "PDU=pdu-a Community=pdu-a\nPDU=pdu-b Community=pdu-b\n",
                   mode=0o600)
    t0 = time.monotonic()
    procs = [subprocess.Popen([PROBE, m, s, "r%02d" % i, str(seconds),
                               "1000", "1000"], stdout=subprocess.PIPE,
                              text=True)
             for i in range(1, nodes + 1)]
    rows = []
    for p in procs:
        rows += rows_of(p.communicate()[0])
    t1 = time.monotonic()
    ok = [r[1] for r in rows if r[0] == 0]
    # each read sends one GET to each PDU (the probes' own request count;
    # these static rows do not go through the counting module)
    return (nodes, len(rows), len(rows) - len(ok), pct(ok, 50), pct(ok, 95),
            max(ok) if ok else float("nan"), len(rows) / (t1 - t0))


def rack_map(sim, nodes):
    text = ["PDU=pdu-a Host=%s Model=apc-rpdu2" % sim.host,
            "PDU=pdu-b Host=%s Model=apc-rpdu2" % sim.host]
    text += ["Nodes=r%02d Outlets=pdu-a:%d,pdu-b:%d" % (i, i, i)
             for i in range(1, nodes + 1)]
    return "\n".join(text) + "\n"


def _wait_socket(path, log, timeout=20):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            with open(log, errors="replace") as f:
                raise RuntimeError("no munged socket at %s:\n%s" % (
                    path, f.read()[-2000:]))
        time.sleep(0.05)


def rack_poller(work, nodes=40, seconds=20):
    """The rack through the poller: (GETs/s at pdu-a, at pdu-b, reads,
    failed, p50, p95, max ms, poller thread us a round, process us a
    round, rounds).  Its own agent, whose rows go through se_outlets (a
    fixed value, what=fixed) so that the agent counts the GETs."""
    counted = {}
    for i in range(1, nodes + 1):
        counted[sr.APC_POWER + str(i)] = "what=fixed,value=%d" % (100 + i)
        counted[sr.APC_ENERGY + str(i)] = "what=fixed,value=%d" % (1000 + i)
    sim = sr.SnmpSim(TRACE, time.time(), {"pdu-a": counted,
                                          "pdu-b": counted})
    sim.start()
    try:
        return _rack_poller(sim, work, nodes, seconds)
    finally:
        sim.stop()


def _rack_poller(sim, work, nodes, seconds):
    os.chmod(work, 0o755)       # munged: x for all on its socket's path
    mdir = os.path.join(work, "munge")
    os.makedirs(mdir, mode=0o755)
    procs = []
    mlog = os.path.join(mdir, "munged.out")
    sock = start_munged(mdir, lambda name, argv: procs.append(
        subprocess.Popen(argv, stdout=open(mlog, "w"),
                         stderr=subprocess.STDOUT)))
    addr = "127.0.0.1:%d" % sr.free_udp_port()   # a free port number
    try:
        _wait_socket(sock, mlog)
        m = write_file(os.path.join(work, "prack.map"), rack_map(sim, nodes))
        s = write_file(os.path.join(work, "prack.secrets"),
                       "PDU=pdu-a Community=pdu-a\n"
                       "PDU=pdu-b Community=pdu-b\n", mode=0o600)
        conf = write_file(os.path.join(work, "acct_gather.conf"),
                          "EnergySNMPMap=%s\nEnergySNMPSecrets=%s\n"
                          "EnergySNMPFrequency=1\nEnergySNMPTimeout=1000\n"
                          "EnergySNMPPoller=%s\n" % (m, s, addr))
        pdir = os.path.join(work, "poller")
        os.makedirs(pdir)
        poller = sr.PduPoller(conf, sock, workdir=pdir).start()
        try:
            time.sleep(2)       # its first rounds
            before, t0 = sim.gets(), time.monotonic()
            probes = [subprocess.Popen(
                [POLL_PROBE, addr, "r%02d" % i, str(seconds), "1000",
                 "1000", sock], stdout=subprocess.PIPE, text=True)
                for i in range(1, nodes + 1)]
            outs = [p.communicate()[0] for p in probes]
            after, t1 = sim.gets(), time.monotonic()
        finally:
            poller.stop()
        totals = poller.totals()
    finally:
        for p in procs:
            p.terminate()
            p.wait()
    rows = []
    for out in outs:
        for line in out.splitlines():
            if line.startswith("read "):
                f = line.split()
                rows.append((int(f[1]), float(f[3])))
    taken = [r for r in rows if r[0] in (0, -114)]      # -EALREADY
    ms = [r[1] for r in taken]
    rate = {k: (after.get(k, 0) - before.get(k, 0)) / (t1 - t0)
            for k in ("pdu-a", "pdu-b")}
    cpu_s = float(re.search(r"process CPU ([0-9.]+) s",
                            poller.text()).group(1))
    fresh = len([r for r in rows if r[0] == 0])
    return (rate["pdu-a"], rate["pdu-b"], len(rows), fresh,
            len(rows) - len(taken), pct(ms, 50), pct(ms, 95), max(ms),
            totals["cpu_us"], cpu_s / totals["rounds"] * 1e6,
            totals["rounds"])


def main():
    static = {}
    for i in range(1, 49):
        static[sr.APC_POWER + str(i)] = "=%d" % (100 + i)
        static[sr.APC_ENERGY + str(i)] = "=%d" % (1000 + i)
    sim = sr.SnmpSim(TRACE, time.time(), {"pdu-a": static, "pdu-b": static})
    sim.start()
    try:
        with tempfile.TemporaryDirectory(dir="/var/tmp") as work:
            one_node(sim, work, 1, reads=5)     # snmpsim indexes: warm up
            print("one node's poll (snmp_probe, 20 ms apart, snmpsim on "
                  "loopback)")
            print("%8s %6s %6s %9s %9s %9s %14s" % (
                "outlets", "OIDs", "reads", "p50 ms", "p95 ms", "max ms",
                "CPU/read µs"))
            for n in (1, 2, 12, 48):
                r = one_node(sim, work, n)
                print("%8d %6d %6d %9.2f %9.2f %9.2f %14.0f" % (
                    r[0], r[1], r[2], r[4], r[5], r[6], r[7]))
            print()
            print("a rack: 40 nodes, two PDUs, each node polling its two "
                  "outlets every 1 s for 20 s")
            r = rack(sim, work)
            print("%6s %7s %7s %9s %9s %9s %10s" % (
                "nodes", "reads", "failed", "p50 ms", "p95 ms", "max ms",
                "GETs/s a"))
            print("%6d %7d %7d %9.2f %9.2f %9.2f %10.2f" % r)
            print()
            print("the same rack through slurm-energy-pdu-poller (one GET "
                  "a PDU a second), the 40 nodes asking it every 1 s for "
                  "20 s")
            r = rack_poller(work)
            # fresh: a new round's reading; the others found nothing
            # newer (-EALREADY: asked twice within one round)
            print("%10s %10s %6s %6s %7s %9s %9s %9s %13s %16s" % (
                "GETs/s a", "GETs/s b", "reads", "fresh", "failed",
                "p50 ms", "p95 ms", "max ms", "poll µs/round",
                "process µs/round"))
            print("%10.2f %10.2f %6d %6d %7d %9.2f %9.2f %9.2f %13.0f "
                  "%16.0f" % r[:10])
    finally:
        sim.stop()


if __name__ == "__main__":
    main()
