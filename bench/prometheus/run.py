#!/usr/bin/python3
"""bench/prometheus/run.py - slurm-energy-exporter under job churn, scraped
by a real Prometheus every second (issue #43: "200 jobs started and ended
leave no series of ended jobs after one scrape; the exporter's RSS stays
flat over a 30 min soak with jobs churning").

A benchmark, not a CI test (tests/integration/test_prometheus.py is the CI
part).  One run, on its own instance of the namespaced test cluster
(SE_CLUSTER_* below, unless set): the Modbus rig's meters
(selab.modbus_rig) in share mode under PrologFlags=Contain, one exporter
per node in its namespace, Prometheus on loopback (selab.prometheus_rig).

    bench/prometheus/run.py [--jobs 200] [--soak-minutes 30] [--running 6]

1. churn: --jobs short jobs (sbatch, 1-3 s, one node each, or all three
   nodes for every fifth), at most --running at once; then: how many
   distinct jobs Prometheus saw, the job series still current 3.5 s after
   the queue emptied and when the last went, and for every series how
   long it was scraped after its value became final (the exporter keeps
   an ended step about two sampler periods: at most 4 s, else exit 1);
2. soak (--soak-minutes, 0: none): jobs keep churning as above; each
   exporter's RSS (VmRSS) every 30 s: first, last, max, and the slope of a
   least-squares line (KiB per hour); CPU per scrape (its CPU seconds over
   the scrapes Prometheus made);
3. the scrape times Prometheus measured (scrape_duration_seconds: p50,
   p99, max) and the exporter's own (slurm_energy_exporter_scrape_duration_
   seconds).
Prints tables; exit 1 when an ended step's series outlived its final
value by more than 4 s, or any was left 10 s after the queue emptied.
Environment: SE_PLUGIN_DIR, SE_BIN_DIR as for the integration tests.
"""
import argparse
import os
import random
import sys
import tempfile
import time

BENCH_CLUSTER = {
    "SE_CLUSTER_STATE": "/var/tmp/se-prombench",
    "SE_CLUSTER_NET": "10.199.44",
    "SE_CLUSTER_BRIDGE": "sebrpb",
    "SE_CLUSTER_NS_PREFIX": "sepb-",
    "SE_CLUSTER_VETH_PREFIX": "sepbv",
    "SE_CLUSTER_NAME": "prombench",
    "SE_CLUSTER_CTLD_PORT": "36917",
    "SE_CLUSTER_SLURMD_PORT": "36918",
    "SE_CLUSTER_DBD_PORT": "36919",
    "SE_CLUSTER_DB_PORT": "36406",
}
for _k, _v in BENCH_CLUSTER.items():
    os.environ.setdefault(_k, _v)

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "contribs", "python"))
from selab import energy  # noqa: E402
from selab.cluster import Cluster  # noqa: E402
from selab.meters import ModbusSim  # noqa: E402
from selab.modbus_rig import METER, SDM630_SIM, TRACE, UNITS, modbus_conf  # noqa: E402
from selab.prometheus_rig import (Exporters, PrometheusRig,  # noqa: E402
                                  exporter_target)

NODES = ("node1", "node2", "node3")
JOBS = "slurm_energy_job_energy_joules_total"
RSS_EVERY_S = 30


class Churn:
    """Short jobs kept running, at most *running* at once."""

    def __init__(self, c, running, seed=43):
        self.c, self.running, self.rng = c, running, random.Random(seed)
        self.submitted = []

    def active(self):
        out = self.c.run(["squeue", "-h", "-o", "%i"]).stdout.split()
        return len(out)

    def top_up(self, limit=None):
        """Submit jobs up to *running* at once (and *limit* in all)."""
        n = self.running - self.active()
        for _ in range(max(0, n)):
            if limit is not None and len(self.submitted) >= limit:
                return
            i = len(self.submitted)
            secs = self.rng.choice((1, 2, 3))
            where = ["-N3"] if i % 5 == 4 else ["-w", self.rng.choice(NODES)]
            self.submitted.append(self.c.sbatch(
                *where, "-J", "pb%d" % i, "-o", "/dev/null",
                "--wrap", "srun sleep %d" % secs))

    def drain(self, timeout=300):
        deadline = time.monotonic() + timeout
        while self.active():
            if time.monotonic() > deadline:
                raise RuntimeError("jobs still queued after %ds" % timeout)
            time.sleep(0.5)


def slope_kib_per_h(points):
    """Least-squares slope of [(t, rss)] in KiB per hour."""
    if len(points) < 2:
        return 0.0
    n = len(points)
    mt = sum(t for t, _ in points) / n
    mr = sum(r for _, r in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    return 3600.0 * sum((t - mt) * (r - mr) for t, r in points) / var \
        if var else 0.0


def linger_s(prom, span_s):
    """For each job series of the last span_s seconds: how long it was
    scraped after its value last rose (its final value, served until the
    exporter drops the ended step)."""
    out = []
    for _, points in prom.query("%s[%ds]" % (JOBS, int(span_s))):
        k = len(points) - 1
        while k > 0 and points[k][1] == points[k - 1][1]:
            k -= 1
        if k > 0:               # a series that rose at least once
            out.append(points[-1][0] - points[k][0])
    return out


def one(prom, expr):
    out = prom.query(expr)
    return out[0][1] if out else float("nan")


def run(args):
    c = Cluster()
    plugin_dir = os.environ.get("SE_PLUGIN_DIR", "")
    if not plugin_dir:
        sys.exit("SE_PLUGIN_DIR not set (the staged plugins)")
    workdir = tempfile.mkdtemp(prefix="se-prombench-")
    epoch = time.time()
    c.up(c.up_args(plugin_dirs=[plugin_dir],
                   energy_type="acct_gather_energy/modbus",
                   acct_gather_conf=modbus_conf(
                       workdir, "counter",
                       extra="EnergyAttribution=share\nEnergyIdle=share\n"),
                   slurm_conf="PrologFlags=Contain\n"))
    meter = exporters = prom = None
    failed = False
    try:
        meter = ModbusSim(TRACE, epoch, UNITS, SDM630_SIM, tcp=METER,
                          workdir=workdir).start()
        energy.wait_for_power(c, NODES)
        exporters = Exporters(c, NODES, workdir).start()
        prom = PrometheusRig([exporter_target(n) for n in NODES],
                             interval="1s").start()
        prom.wait_scraped()
        t_start = time.time()
        cpu0 = {n: exporters.cpu_s(n) for n in NODES}
        rss = {n: [(0.0, exporters.rss_kib(n))] for n in NODES}

        churn = Churn(c, args.running)
        t = time.monotonic()
        while len(churn.submitted) < args.jobs:
            churn.top_up(limit=args.jobs)
            time.sleep(0.5)
        churn.drain()
        churn_s = time.monotonic() - t
        t_empty = time.monotonic()
        # a step's series lasts about two sampler periods past its end
        # (slurm-energy-exporter(8)), and one scrape more
        time.sleep(2 * 1.0 + 1.0 + 0.5)
        left_prom = prom.query(JOBS)
        left_text = {n: exporters.text(n).count(JOBS + "{")
                     for n in NODES}
        while any(JOBS + "{" in exporters.text(n) for n in NODES) and \
                time.monotonic() - t_empty < 120:
            time.sleep(0.25)
        gone_s = time.monotonic() - t_empty
        seen = one(prom, "count(count by (jobid) (last_over_time(%s[%ds])))"
                   % (JOBS, int(time.time() - t_start) + 5))
        lingers = sorted(linger_s(prom, time.time() - t_start + 5))
        print("\n## churn: %d jobs in %.0f s, at most %d at once"
              % (args.jobs, churn_s, args.running))
        print("| what | value |\n|---|---|")
        print("| distinct jobs with series seen by Prometheus | %g |" % seen)
        print("| job series current in Prometheus one scrape after the end "
              "| %d |" % len(left_prom))
        print("| job series in the exporters' text then | %s |"
              % ", ".join("%s %d" % kv for kv in sorted(left_text.items())))
        print("| ... left: %s | |" % ", ".join(
            "%s.%s@%s" % (l["jobid"], l["step"], l["node"])
            for l, _ in left_prom))
        print("| the queue empty to no job series in any exporter | %.1f s |"
              % gone_s)
        print("| a series scraped after its value became final: min / "
              "median / max over %d series | %.2f / %.2f / %.2f s |"
              % (len(lingers), lingers[0], lingers[len(lingers) // 2],
                 lingers[-1]))
        # slurm-energy-exporter(8): about two sampler periods (1 s here),
        # seen in one scrape more; a second of slack
        failed = lingers[-1] > 2 * 1.0 + 1.0 + 1.0 or gone_s > 10

        t0 = time.monotonic()
        next_rss = t0 + RSS_EVERY_S
        while time.monotonic() - t0 < args.soak_minutes * 60:
            churn.top_up()
            if time.monotonic() >= next_rss:
                for n in NODES:
                    rss[n].append((time.monotonic() - t0,
                                   exporters.rss_kib(n)))
                next_rss += RSS_EVERY_S
            time.sleep(0.5)
        churn.drain()
        for n in NODES:
            rss[n].append((time.monotonic() - t0, exporters.rss_kib(n)))
        span = int(time.time() - t_start) + 2
        scrapes = {n: one(prom, 'count_over_time(up{instance="%s"}[%ds])'
                          % (exporter_target(n), span)) for n in NODES}
        print("\n## soak: %.1f min, %d jobs in all"
              % (args.soak_minutes, len(churn.submitted)))
        print("| node | RSS first KiB | last | max | slope KiB/h | scrapes "
              "| CPU ms/scrape |\n|---|---|---|---|---|---|---|")
        for n in NODES:
            vals = [r for _, r in rss[n]]
            cpu = exporters.cpu_s(n) - cpu0[n]
            print("| %s | %d | %d | %d | %+.0f | %d | %.3f |"
                  % (n, vals[0], vals[-1], max(vals),
                     slope_kib_per_h(rss[n][1:] or rss[n]), scrapes[n],
                     1000.0 * cpu / scrapes[n] if scrapes[n] else 0))
        print("\n## scrape time over the run (ms)")
        print("| node | Prometheus p50 | p99 | max | exporter's own p50 "
              "| p99 | max |\n|---|---|---|---|---|---|---|")
        for n in NODES:
            row = []
            for metric in ('scrape_duration_seconds{instance="%s"}'
                           % exporter_target(n),
                           'slurm_energy_exporter_scrape_duration_seconds'
                           '{node="%s"}' % n):
                for q in ("quantile_over_time(0.5, %s[%ds])",
                          "quantile_over_time(0.99, %s[%ds])",
                          "max_over_time(%s[%ds])"):
                    row.append(1000.0 * one(prom, q % (metric, span)))
            print("| %s | %s |" % (n, " | ".join("%.2f" % v for v in row)))
    finally:
        if prom:
            prom.stop()
        if exporters:
            exporters.stop()
        if meter:
            meter.stop()
        c.down()
    return 1 if failed else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--soak-minutes", type=float, default=30.0)
    ap.add_argument("--running", type=int, default=6,
                    help="jobs at once (default 6)")
    sys.exit(run(ap.parse_args()))


if __name__ == "__main__":
    main()
