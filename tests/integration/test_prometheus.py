"""slurm-energy-exporter scraped by a real Prometheus on the test cluster
(issue #43, "Proven when").

Every node reads the Modbus rig's simulated meters (selab.modbus_rig:
node1 its own unit, node2 and node3 half a chassis meter each, playing
contribs/trace/examples/cluster.trace) in share mode under
PrologFlags=Contain, so that slurmd splits each interval among the steps
and the exporter has job series.  One exporter per node runs inside the
node's network namespace (nsenter --net, as slurmd) on its NodeAddr; one
Prometheus (Debian's, selab.prometheus_rig) runs on the host on loopback
and scrapes all three every second through the cluster's bridge.

While jobs run (an srun job on node1, a batch job with an srun step on
node2, a three-node srun job), the module records each exporter's
exposition; after they end it checks, from Prometheus:
- each step's last scraped counter (summed over its nodes) against its
  sacct energy: a step's series outlives its end by about two sampler
  periods with its final value (slurm-energy-exporter(8)), the figure the
  step settles on, so a 1 s scrape sees it: equal to sacct's rounding
  (half a joule per node);
- increase() of each node's energy counter over a window against the
  meter's truth over it (the trace's integral, selab.trace): the issue
  asks 1 %, the bound is 0.25 % (NODE_TOL);
- no series of an ended job after one scrape;
- `promtool check metrics` clean on a live exposition (with job series);
- contribs/prometheus' rules, loaded in this Prometheus: the per-account
  recording rule against sacct's job lines; the alert of a node above its
  --max-watts (node1's 1 W: pending or firing; node2's 100 kW and node3
  without one: not); every query of the Grafana dashboard answers, with
  data;
- a meter stalled mid-job (its Modbus unit stops answering) shows as not
  ok (stale, or failed once slurmd's reads time out) by the first scrape
  after a period and a read deadline (two scrapes when the scrape interval
  is at least that), and the other nodes stay ok.
Runtime: 63-74 s here (cluster restart, 20 s of jobs, sacct, the stall).
"""
import importlib.util
import json
import os
import subprocess
import time

import pytest

from selab import energy
from selab.cluster import PLUGIN_DIR, REPO, poll
from selab.meters import ModbusSim
from selab.modbus_rig import (COLUMN_OF, METER, SDM630_SIM, SHARE_OF, TRACE,
                              UNITS, modbus_conf)
from selab.prometheus_rig import (PROMTOOL, Exporters, PrometheusRig,
                                  exporter_path, exporter_target)

NODES = ("node1", "node2", "node3")
SCRAPE_S = 1.0
METER_PERIOD_S = 1.0            # EnergyModbusFrequency=1 (modbus_rig)
METER_DEADLINE_S = 0.5          # EnergyModbusTimeout=500 (modbus_rig)
# A stalled meter shows as failed at its first read that times out: a
# period and a deadline after the stall at most (slurm-energy-exporter(8)),
# seen by the next scrape.  "Within two scrapes" (issue #43) holds when the
# scrape interval is at least period + deadline; at this test's 1 s scrape
# the worst phase puts the first not-ok sample 2.5 s after the stall (CI,
# 2026-11-29: 2.29 s, its third scrape; earlier runs 1.07-1.89 s).  A
# quarter second for the sampler's scheduling; showing it only as stale
# (two periods and a deadline, up to 3.5 s) fails.
STALL_SEEN_MAX_S = METER_PERIOD_S + METER_DEADLINE_S + SCRAPE_S + 0.25
JOB_S = 20
# increase(node energy) against the meter: the issue asks 1 %; measured
# -0.101 .. +0.068 % over 14 s windows (9 node windows, 3 runs): bound at
# about 2.5 x the worst
NODE_TOL = 0.0025
WINDOW_S = 15                   # the increase() window, inside the jobs
# a step's series after its value became final: about two sampler periods
# (slurm-energy-exporter(8)), seen in one scrape more, and a second of slack
LINGER_MAX_S = 2 * METER_PERIOD_S + SCRAPE_S + 1.0
JOBS = "slurm_energy_job_energy_joules_total"
MAX_WATTS = {"node1": ["--max-watts=1"], "node2": ["--max-watts=100000"]}
CONTRIB = os.path.join(REPO, "contribs", "prometheus")
RULES = os.path.join(CONTRIB, "slurm-energy.rules.yml")
DASHBOARD = os.path.join(CONTRIB, "grafana-slurm-energy.json")

pytestmark = [
    pytest.mark.skipif(not PLUGIN_DIR, reason="SE_PLUGIN_DIR not set "
                       "(run contribs/test-all.sh)"),
]


def sacct_steps(cluster, jobid):
    """{step name: ConsumedEnergyRaw} of a completed job ('0', 'batch',
    'extern'), once sacct has them."""
    rows = energy.consumed_energy(cluster, jobid)
    return {k.split(".", 1)[1]: v for k, v in rows.items() if "." in k}


@pytest.fixture(scope="module")
def run(cluster, tmp_path_factory):
    """The whole module's run, once: jobs under Prometheus' scrapes."""
    if not os.access(exporter_path(), os.X_OK):
        pytest.fail("%s not built (configure found no libmicrohttpd?)"
                    % exporter_path())
    workdir = str(tmp_path_factory.mktemp("prometheus"))
    epoch = time.time()
    extra = ("EnergyAttribution=share\nEnergyIdle=share\n")
    out = {"epoch": epoch, "workdir": workdir}
    with cluster.configured(plugin_dirs=[PLUGIN_DIR],
                            energy_type="acct_gather_energy/modbus",
                            acct_gather_conf=modbus_conf(workdir, "counter",
                                                         extra=extra),
                            slurm_conf="PrologFlags=Contain\n") as c:
        meter = ModbusSim(TRACE, epoch, UNITS, SDM630_SIM, tcp=METER,
                          workdir=workdir).start()
        # the max-watts alert, live: node1 below its power, node2 far
        # above it, node3 without a maximum (slurm-energy-exporter(8))
        exporters = Exporters(c, NODES, workdir, node_args=MAX_WATTS)
        prom = PrometheusRig([exporter_target(n) for n in NODES],
                             interval="%gs" % SCRAPE_S, rule_files=[RULES])
        try:
            energy.wait_for_power(c, NODES)
            exporters.start()
            prom.start()
            prom.wait_scraped()
            out.update(c=c, meter=meter, exporters=exporters, prom=prom)
            _run_jobs(c, exporters, out)
            yield out
        finally:
            prom.stop()
            exporters.stop()
            meter.stop()


def _run_jobs(c, exporters, out):
    t_start = time.time()
    one = energy.run_timed(c, "prom-one", ["-w", "node1"], JOB_S)
    script = "#!/bin/sh\nsrun %s\n" % " ".join(
        "'%s'" % a for a in energy.timed_command(JOB_S))
    batch = c.sbatch("-w", "node2", "-J", "prom-batch",
                     "-o", os.path.join(out["workdir"], "batch.out"),
                     script=script)
    three = energy.run_timed(c, "prom-three", ["-N3"], JOB_S - 5)
    time.sleep(JOB_S / 2)
    out["expositions"] = {n: exporters.text(n) for n in NODES}
    out["openmetrics"] = {n: exporters.text(n, openmetrics=True)
                          for n in NODES}
    out["window"] = (t_start + 2, t_start + 2 + WINDOW_S)
    jobs = {}
    out["marks"] = {}
    for proc, name in ((one, "prom-one"), (three, "prom-three")):
        jobs[name], out["marks"][name] = energy.finish(c, proc, name,
                                                       JOB_S + 90)
    jobs["prom-batch"] = batch
    out["jobs"] = jobs
    out["sacct"] = {name: sacct_steps(c, jobid)
                    for name, jobid in jobs.items()}
    out["recorded"] = time.time()
    # a step's series lasts about two sampler periods past its end
    # (slurm-energy-exporter(8)); then one scrape more
    time.sleep(2 * METER_PERIOD_S + SCRAPE_S + 0.5)


def step_series(prom, jobid):
    """{step: ([(t, joules summed over the step's nodes)], nodes)} of a
    job, from
    Prometheus' raw samples (every node's series at its scrape times)."""
    per = {}
    for labels, points in prom.query('%s{jobid="%d"}[10m]' % (JOBS, jobid),
                                     at=time.time()):
        for t, v in points:
            step = per.setdefault(labels["step"], {})
            step.setdefault(labels["node"], []).append((t, v))
    out = {}
    for step, nodes in per.items():
        # the sum over nodes at each scrape round (the nodes' scrapes are
        # spread over the interval: each node's last value up to t)
        times = sorted({t for pts in nodes.values() for t, _ in pts})
        out[step] = ([(t, sum(max(((u, v) for u, v in pts if u <= t),
                                  default=(0, 0.0))[1]
                              for pts in nodes.values()))
                      for t in times], len(nodes))
    return out


def end_rate(points):
    """(watts, t) of a counter's last rise: its rate over the three scrape
    rounds up to its last change (after the step's end the final value
    stays put), and when that change was scraped."""
    k = len(points) - 1
    while k > 0 and points[k][1] == points[k - 1][1]:
        k -= 1
    (ta, va), (tb, vb) = points[max(0, k - 3)], points[k]
    return ((vb - va) / (tb - ta) if tb > ta else 0.0), tb


def test_each_step_counter_ends_at_its_sacct_energy(run):
    """The last scraped value of each step's counter (summed over its
    nodes) against the step's sacct energy.  slurm-energy-exporter(8): a
    step's series lasts about two sampler periods past its end, its value
    final (the figure the step settles on, sacct's for that node in whole
    joules) from when slurmd's split passed the end; a scrape every
    period sees it.  So the two agree to sacct's rounding (to the nearest
    joule, per node: measured -0.9 .. +1.0 J on 3-node steps, +-0.5 J on
    one node), and the series ends within LINGER_MAX_S of its last rise
    (measured: scraped 2.00-3.00 s after it)."""
    prom = run["prom"]
    report, bad = [], []
    for name, jobid in run["jobs"].items():
        series = step_series(prom, jobid)
        steps = run["sacct"][name]
        assert set(series) == {s for s, v in steps.items() if v}, (
            name, sorted(series), steps)
        end = max(t1 for _, t1 in run["marks"][name].values()) \
            if name in run["marks"] else None
        for step, (points, nodes) in sorted(series.items()):
            last = points[-1][1]
            watts, rose = end_rate(points)
            short = steps[step] - last
            report.append(
                "%s.%s: last scrape %.3f J (%d node%s; last rise %s, "
                "scraped %.2f s more), sacct %d J: %+.1f J = %.2f s of its "
                "%.0f W" % (name, step, last, nodes, "s" if nodes > 1 else "",
                            "%+.2f s from the task's end" % (rose - end)
                            if end else "at %.1f" % rose,
                            points[-1][0] - rose, steps[step], short,
                            short / watts if watts else float("nan"), watts))
            if abs(short) > 0.5 * nodes + 1e-3 or \
                    points[-1][0] - rose > LINGER_MAX_S:
                bad.append(report[-1])
    print("\n".join(report))
    assert not bad, "\n".join(bad)


def test_node_increase_matches_the_meter(run):
    """increase(node energy) over a window inside the run whose edges are
    two of the node's scrapes, against the trace's truth over it (node2
    and node3: half the chassis meter).  (Over any other window Prometheus
    extrapolates the scrapes inside it to its edges, up to a scrape
    interval of power at each: that is Prometheus' rule, not the
    exporter's figure.)"""
    prom, epoch = run["prom"], run["epoch"]
    w0, w1 = run["window"]
    report = []
    for node in NODES:
        selector = 'slurm_energy_node_energy_joules_total{node="%s"}' % node
        (_, points), = prom.samples(selector, w0, w1)
        (t0, v0), (t1, v1) = points[0], points[-1]
        # the range (t1 - W, t1] holds the scrape at t0 (W 1 ms longer)
        inc = prom.increase(selector, t0 - 0.001, t1)[node]
        assert abs(inc - (v1 - v0)) <= 1e-3 * (v1 - v0), (node, inc, v0, v1)
        truth = SHARE_OF[node] * energy.trace_joules(
            TRACE, COLUMN_OF[node], epoch, t0, t1)
        err = energy.relative_error(inc, truth)
        report.append("%s: increase over %.2f s %.1f J, meter %.1f J "
                      "(%+.3f%%)" % (node, t1 - t0, inc, truth, 100 * err))
        assert abs(err) < NODE_TOL, report[-1]
    print("\n".join(report))


def test_no_series_of_ended_jobs(run):
    """Once the jobs ended, no job series stays current, in Prometheus or
    in the exporters' text.  (How long each outlived its final value is
    checked above, from its scrapes; a step's end reaches slurmd after
    its job's sacct record at times, so here a series gets LINGER_MAX_S
    to go.)"""
    prom, t = run["prom"], time.time()
    left = prom.query(JOBS, at=t)
    if left:
        gone = poll(lambda: not prom.query(JOBS) and time.time(),
                    timeout=60, what="the job series to go")
        assert gone - t <= LINGER_MAX_S, (
            "%s current %.1f s after the last job's sacct record, gone "
            "%.1f s later" % (["%s.%s on %s" % (l["jobid"], l["step"],
                                                l["node"]) for l, _ in left],
                              t - run["recorded"], gone - t))
    for node in NODES:
        assert JOBS + "{" not in run["exporters"].text(node), node


def test_promtool_check_metrics_clean(run):
    """Each node's live exposition (with its job series) passes promtool's
    linter, in Prometheus' text format."""
    for node, text in run["expositions"].items():
        assert JOBS in text, (node, text)
        p = subprocess.run([PROMTOOL, "check", "metrics"],
                           input=text, capture_output=True, text=True)
        assert p.returncode == 0 and not p.stdout.strip() and \
            not p.stderr.strip(), (node, p.stdout, p.stderr, text)
        assert run["openmetrics"][node].endswith("# EOF\n"), node


def test_account_rule_holds_the_jobs_energy(run):
    """contribs/prometheus' recording rule, loaded in this Prometheus:
    the jobs' energy per account over the last hour against sacct's job
    lines (each the extern step's under Contain).  increase() starts at a
    job's first scrape (up to a scrape interval after its start) and
    extrapolates half an interval past its last: each job may be off by a
    scrape interval of its power at either end."""
    prom = run["prom"]
    got = {l["account"]: v for l, v in prom.query(
        "account:slurm_energy_job_energy_joules:increase1h")}
    assert len(got) == 1, got
    sacct = sum(steps["extern"] for steps in run["sacct"].values())
    # a scrape interval of each job's power at its start and at its end,
    # its end power standing for both (its start's, summed over nodes
    # whose first scrapes are spread over an interval, is not known that
    # well): the bound was the end's alone, against this docstring, and
    # a CI rehearsal read -491 J against 410 J (2026-11-30, 872a192)
    slack = 2 * SCRAPE_S * sum(
        end_rate(step_series(prom, jobid)["extern"][0])[0]
        for jobid in run["jobs"].values())
    (account, value), = got.items()
    print("account %s: rule %.1f J, sacct %d J (%+.1f J, bound %.0f J)"
          % (account, value, sacct, value - sacct, slack))
    assert abs(value - sacct) <= slack, (value, sacct, slack)


def test_dashboard_queries_answer(run):
    """Every query of the Grafana dashboard runs on this Prometheus (its
    variables as 'All', ranges of 5 m) and each panel's has data."""
    spec = importlib.util.spec_from_file_location(
        "pc", os.path.join(REPO, "tests", "unit",
                           "test_prometheus_contribs.py"))
    pc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pc)
    with open(DASHBOARD) as f:
        dash = json.load(f)
    empty = []
    for where, query in pc.dashboard_queries(dash):
        expr = pc.promql_of_grafana(query)
        if expr is None or where.startswith("variable"):
            continue
        if where in ("panel 'GPU power' A",      # no GPUs here
                     "panel 'Meters not ok' A"):  # every meter is ok
            continue
        if not run["prom"].query(expr):
            empty.append("%s: %s" % (where, expr))
    assert not empty, "\n".join(empty)


def test_max_watts_alert(run):
    """SlurmEnergyNodeAboveMaxWatts, evaluated by this Prometheus over the
    live series: node1 (--max-watts=1) is pending or firing (its `for` is
    a minute); node2 (100 kW) and node3 (no maximum, no series) are not."""
    prom = run["prom"]
    maxima = {l["node"]: v for l, v in prom.query(
        "slurm_energy_node_max_watts")}
    assert maxima == {"node1": 1.0, "node2": 100000.0}, maxima
    alerts = {l["node"]: l["alertstate"] for l, _ in prom.query(
        'ALERTS{alertname="SlurmEnergyNodeAboveMaxWatts"}')}
    assert set(alerts) == {"node1"}, alerts
    assert alerts["node1"] in ("pending", "firing"), alerts
    print("max-watts alert: %s" % alerts)


def test_stalled_meter_is_not_ok_within_two_scrapes(run):
    """node1's meter unit stops answering mid-job: the exporter's state
    for node1 leaves ok by the first scrape after a period and a read
    deadline (STALL_SEEN_MAX_S); node2 and node3 stay ok."""
    c, prom, meter = run["c"], run["prom"], run["meter"]
    proc = energy.run_timed(c, "prom-stall", ["-w", "node1"], 8)
    try:
        time.sleep(2)
        meter.fault("stall unit=1")
        t_fault = time.time()
        time.sleep(STALL_SEEN_MAX_S + SCRAPE_S + 0.25)
        ok = prom.samples('slurm_energy_meter_state{node="node1",state="ok"}',
                          t_fault, time.time())
        points = ok[0][1]
        after = [(t, v) for t, v in points if t > t_fault]
        first_bad = next((t for t, v in after if v == 0), None)
        assert first_bad is not None and \
            first_bad - t_fault <= STALL_SEEN_MAX_S, (
                "node1 ok more than %.2f s after the stall at %.1f: %s"
                % (STALL_SEEN_MAX_S, t_fault, after))
        others = prom.query('min by (node) (min_over_time(slurm_energy_meter'
                            '_state{state="ok",node!="node1"}[4s]))')
        assert sorted(v for _, v in others) == [1.0, 1.0], others
        shown = [l["state"] for l, _ in prom.query(
            'slurm_energy_meter_state{node="node1"} == 1')]
        print("stall at %.2f; node1 ok samples after it: %s; now %s"
              % (t_fault, [(round(t - t_fault, 2), v) for t, v in after],
                 shown))
    finally:
        meter.fault("")
        proc.communicate(timeout=60)
    poll(lambda: prom.query('slurm_energy_meter_state{node="node1",'
                            'state="ok"} == 1'), timeout=20,
         what="node1's meter ok again")
