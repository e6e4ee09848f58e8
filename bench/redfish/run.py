#!/usr/bin/env python3
"""bench/redfish/run.py - the Redfish meter's cost per sample: HTTP latency
with the connection kept open (keep-alive, one session) against a new
connection each poll, and the sampler thread's CPU per sample.

The meter (src/meters/redfish) is driven by tests/unit/rf_probe (built by
make check: open, then reads a period apart, each fed to an energy
accumulator as the sampler does; it prints each read's wall time and the
thread's CPU for it) against contribs/redfish-sim on loopback, HTTPS with
a CA made here (openssl, as the tests), sessions, the BMC's readings
refreshed every 0.1 s:

* bmc https keep-alive: EnvironmentMetrics EnergyJoules + PowerWatts, one
  GET a read on the kept connection and session (the plugin's way);
* bmc https new connection: the meter closed after every read (session
  deleted, connection closed), so each read pays TCP, the TLS handshake
  and a login (POST SessionService/Sessions) before its GET, and the close
  a DELETE (CPU counted; its wall time is not the read's);
* bmc http keep-alive: the same without TLS (http:// BMC URLs);
* pdu 2 outlets, 1 PDU: a node's two outlets in one GET of the Outlets
  collection expanded (11 outlets, about 30 kB);
* pdu 2 outlets, 2 PDUs: one GET on each PDU's connection.

Then slurm-energy-pdu-poller's Redfish core (src/meters/redfish/
rf_poller.c, driven by tests/unit/rf_poll_probe: rounds a period apart,
every node answered after each) with 1, 4 and 10 nodes on one PDU, an
outlet each: requests a round, the round's wall time and the thread's CPU
for it, with the watch for the PDU's tick off and on (a node's own meter
with the watch on costs about the same each, per node).

Latency is the read's wall time (p50, p95, max); CPU is the probe's
thread CPU per read (CLOCK_THREAD_CPUTIME_ID: libcurl, OpenSSL, json-c and
the accumulator; the simulator is another process).  The simulator is
Python: its own time per request is part of the latency (about 1 ms here),
a BMC's embedded web server is usually slower.

    bench/redfish/run.py [--reads N] [--period-ms P]

Environment: SE_BUILD_OBJ (default _build/obj: tests/unit/rf_probe),
SE_BIN_DIR (se-trace, default _build/stage/bin).  Prints a markdown
table (paste into BENCHMARKS.md).  About 1 minute at the defaults.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "contribs", "python"))

from selab import redfish_rig as rr  # noqa: E402

PROBE = os.path.join(os.environ.get("SE_BUILD_OBJ", os.path.join(
    REPO, "_build", "obj")), "tests", "unit", "rf_probe")
TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")
OUTLETS = "/redfish/v1/PowerEquipment/RackPDUs/1/Outlets/"


def probe(url, sim, args, reads, period_ms, ca=None):
    argv = [PROBE, "--base", url, "--user", sim.user, "--password-file",
            sim.password_file, "--reads", str(reads), "--period-ms",
            str(period_ms), "--no-tick-sync", *args]
    # --no-tick-sync: one round a read, the HTTP alone (a read otherwise
    # watches for the BMC's sensing tick, a few GETs: rf_meter.c)
    if ca:
        argv += ["--ca", ca]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    _, rows, _ = rr.probe_output(res.stdout)
    bad = [r for r in rows if r["rc"] != 0]
    if len(rows) != reads or bad:
        raise SystemExit("rf_probe %s: %d reads, %d failed:\n%s%s" % (
            " ".join(args), len(rows), len(bad), res.stdout[-2000:],
            res.stderr[-2000:]))
    # the first read of a kept connection made it: left out of both modes
    rows = rows[1:]
    ms = sorted(r["ms"] for r in rows)
    cpu = [r["cpu_us"] for r in rows]
    req = [r["requests"] for r in rows]
    return {"p50": statistics.median(ms),
            "p95": ms[int(0.95 * (len(ms) - 1))], "max": ms[-1],
            "cpu": statistics.mean(cpu), "req": statistics.mean(req)}


POLL_PROBE = os.path.join(os.path.dirname(PROBE), "rf_poll_probe")
POLL_OUTLETS = ("A1", "A2", "A3", "A4", "A5", "B1", "B2", "B3", "C1", "C2")


def poll_probe(sim, nodes, watch, rounds, ca):
    """rf_poll_probe over the first *nodes* outlets of sim: mean requests,
    wall ms and CPU µs a round (the first, discovery, left out)."""
    argv = [POLL_PROBE, "--user", sim.user, "--password-file",
            sim.password_file, "--ca", ca, "--rounds", str(rounds),
            "--period-ms", "300"] + ([] if watch else ["--no-tick-sync"])
    for i, o in enumerate(POLL_OUTLETS[:nodes]):
        argv += ["--node", "n%d" % i, "--base", sim.url, "--source",
                 OUTLETS + o]
    res = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    rows = [l.split() for l in res.stdout.splitlines()
            if l.startswith("round ")][1:]
    bad = [l for l in res.stdout.splitlines()
           if l.startswith("read ") and l.split()[3] != "0"]
    if len(rows) != rounds - 1 or bad:
        raise SystemExit("rf_poll_probe: %s%s" % (res.stdout[-2000:],
                                                  res.stderr[-2000:]))
    return [statistics.mean(float(r[k]) for r in rows) for k in (3, 5, 7)]


def poller_table(sim, ca, rounds):
    print("\nslurm-energy-pdu-poller's Redfish core, %d rounds 300 ms apart "
          "(the first left out), one PDU over HTTPS, an outlet a node\n" %
          rounds)
    print("| nodes on the PDU | tick watch | requests/round | wall/round "
          "(ms) | CPU/round (µs) |")
    print("|---|---|---|---|---|")
    for nodes in (1, 4, 10):
        for watch in (False, True):
            req, ms, cpu = poll_probe(sim, nodes, watch, rounds, ca)
            print("| %d | %s | %.1f | %.1f | %.0f |" % (
                nodes, "on" if watch else "off", req, ms, cpu))
            sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--reads", type=int, default=200)
    p.add_argument("--period-ms", type=int, default=50)
    a = p.parse_args()
    if not os.access(PROBE, os.X_OK):
        raise SystemExit("%s not built (make check in the build directory; "
                         "SE_BUILD_OBJ)" % PROBE)
    work = tempfile.mkdtemp(prefix="se-bench-redfish-")
    sims = []

    def sim(name, **kw):
        os.makedirs(os.path.join(work, name))
        s = rr.RedfishSim(TRACE, time.time() - 60, sensing_interval=0.1,
                          workdir=os.path.join(work, name), **kw)
        sims.append(s)
        return s.start()

    try:
        certs = rr.make_certs(os.path.join(work, "pki"))
        bmc = sim("bmc", column="node1", profile="joules", certs=certs)
        bmc_http = sim("bmc-http", column="node1", profile="joules")
        pdu_a = sim("pdu-a", outlets=[("A1", "node1", 0.55),
                                      ("B1", "node1", 0.45)], certs=certs)
        pdu_b = sim("pdu-b", outlets=[("B1", "node1", 0.45)], certs=certs)
        pdu_r = sim("pdu-rack", outlets=[(o, "node1", 0.1)
                                         for o in POLL_OUTLETS], certs=certs)
        runs = [
            ("bmc, https, keep-alive", bmc.url, bmc, [], certs["ca"]),
            ("bmc, https, new connection each poll", bmc.url, bmc,
             ["--reconnect"], certs["ca"]),
            ("bmc, http, keep-alive", bmc_http.url, bmc_http, [], None),
            ("bmc, http, new connection each poll", bmc_http.url, bmc_http,
             ["--reconnect"], None),
            ("pdu, 2 outlets on 1 PDU (one GET, expanded)", pdu_a.url,
             pdu_a, ["--source", "%sA1,%sB1" % (OUTLETS, OUTLETS)],
             certs["ca"]),
            ("pdu, 2 outlets on 2 PDUs (one GET each)", pdu_a.url, pdu_a,
             ["--source", "%sA1,%s%sB1" % (OUTLETS, pdu_b.url, OUTLETS)],
             certs["ca"]),
        ]
        print("Redfish meter, %d reads %d ms apart each (the first left "
              "out), loopback, contribs/redfish-sim\n" % (a.reads,
                                                          a.period_ms))
        print("| source and transport | requests/read | read latency p50 "
              "/ p95 / max (ms) | CPU per read (µs) |")
        print("|---|---|---|---|")
        for name, url, s, args, ca in runs:
            r = probe(url, s, args, a.reads, a.period_ms, ca)
            print("| %s | %.0f | %.2f / %.2f / %.2f | %.0f |" % (
                name, r["req"], r["p50"], r["p95"], r["max"], r["cpu"]))
            sys.stdout.flush()
        poller_table(pdu_r, certs["ca"], 21)
    finally:
        for s in sims:
            s.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
