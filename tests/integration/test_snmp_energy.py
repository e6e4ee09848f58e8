"""acct_gather_energy/snmp on the test cluster: sacct energy vs the truth
(issue #44).

One real SNMP agent (PyPI snmpsim, contribs/snmp-sim's module making the
outlet rows of snmpsim-data's APC PDU recording play
contribs/trace/examples/cluster.trace) on the host side of the cluster
bridge serves three PDUs (recordings): pdu-a and pdu-b, APC rPDU2 (W and
tenths of kWh: one count 360 kJ), and pdu-r, Raritan PDU2-MIB rows (W and
Wh).  Every node has two supplies, its column split between two outlets:

    node1  pdu-a outlet 1 (0.55, v3 authPriv SHA/AES)
           + pdu-b outlet 1 (0.45, v2c)        0.1 kWh counters, summed
    node2  pdu-r outlets 1.1 (0.6) and 1.2 (0.4), one GET   Wh counters
    node3  pdu-a outlets 3 (0.5) and 4 (0.5), one GET, v3   0.1 kWh

The plugin reads every 1 s.  The three nodes' jobs run at once; a job's
truth is the trace's exact integral over each task's own start and end
(selab.energy).  Bounds, the issue's: 0.5 % on the 0.1 kWh counters
shaped by power, 0.1 % on the Wh counters (0.4 % on the CI's 20 s jobs,
TOLERANCE).  spank_energy_settle.so is listed, as for any meter that can
be slow before Slurm 26.05 (acct_gather_energy_snmp(5)).

Last, the same nodes read through slurm-energy-pdu-poller (issue #44):
the nodes' acct_gather.conf without secrets, EnergySNMPPoller set; one
GET per PDU per period at the agent whatever the number of nodes on it,
and the jobs within the same bounds.

CI runs JOB_SECONDS=20 jobs (SE_SNMP_JOB_SECONDS, default 20: the module
takes about 100 s, and the poller's test about 40 s more); the issue's
60 s jobs:
    SE_SNMP_JOB_SECONDS=60 pytest tests/integration/test_snmp_energy.py
(BENCHMARKS.md, "SNMP PDUs").
"""
import os
import re
import time

import pytest

from selab import energy, fixtures
from selab import snmp_rig as sr
from selab.bmc_rig import BMC_ADDR, NODES, PORT_BASE, TRACE
from selab.cluster import PLUGIN_DIR, slurmd_log
from selab.files import write_file

JOB_SECONDS = int(os.environ.get("SE_SNMP_JOB_SECONDS", "20"))
FINISH_S = JOB_SECONDS + 90
PORT = PORT_BASE + 14          # apart from the Redfish tests' ports
V3 = {"user": "slurm", "auth": "authpass123", "priv": "privpass123"}
# node -> (PDU, outlet index as the map writes it, share of its column)
OUTLETS_OF = {
    "node1": (("pdu-a", "1", 0.55), ("pdu-b", "1", 0.45)),
    "node2": (("pdu-r", "1", 0.6), ("pdu-r", "2", 0.4)),
    "node3": (("pdu-a", "3", 0.5), ("pdu-a", "4", 0.5)),
}
# The bounds for 60 s jobs: 0.5 % on the 0.1 kWh counters, 0.1 % on
# the Wh counters.  A 20 s job is three times as sensitive to what does not
# shrink with it (a step's ends a few ms around its task's, where the truth
# is taken: all errors measured here are positive, and grow with the
# machine's load): 0.4 % on the Wh counters then (measured +0.03..+0.22 %
# on 20 s jobs over 5 runs, load average 4-5 on 2 cores).  node1 (two PDUs
# summed, v3 + v2c): at most +0.12 % on the CI's 20 s jobs, +0.039..+0.053 %
# over 3 runs here (2026-11-29, load average 0.5-2): 0.25 %, twice the worst.
TOLERANCE = {"node1": 0.0025, "node2": 0.001 if JOB_SECONDS >= 60 else 0.004,
             "node3": 0.005}
# slurmd's sampler per sample (test_sampler_cpu_per_sample): measured
# 486-491 us on node1 (two PDUs, v3 AES + v2c), 203-209 us on node2 (one
# GET), two runs at load average 4-5 (2026-11-29); on the machine of
# 2026-11-30, 848 and 509 us idle, 1,177 us on node1 just after the
# cluster's start and 2,339 us in a CI run: the same code, the CPU time of
# a thread on a shared 2-core VM moves 2-4 fold.  The figure itself is
# BENCHMARKS.md's; this bound catches what would cost a core's percent: a
# loop that spins (the poller's did, 152,684 us a round) or keys derived
# again at every sample.
BOUND_SAMPLE_US = 5000
POLLER_PORT = PORT + 1         # the PDU poller's TCP port
SECRETS = ("PDU=pdu-a User=%s AuthProto=SHA AuthKey=%s PrivProto=AES "
           "PrivKey=%s\nPDU=* Community=IGNORED\n")

pytestmark = fixtures.NEEDS_PLUGINS

workdir = fixtures.workdir("se-snmp-test-", mode=0o755)


def recordings():
    """{recording: {OID: module args}}: each outlet plays its share of its
    node's column; the counters start where a PDU in service would be."""
    recs = {"pdu-a": {}, "pdu-b": {}, "pdu-r": {}}
    for node, outlets in OUTLETS_OF.items():
        for pdu, outlet, share in outlets:
            args = "column=%s,share=%g" % (node, share)
            if pdu == "pdu-r":
                idx = "1." + outlet
                recs[pdu][sr.RARITAN + idx + ".5"] = args + ",what=power"
                recs[pdu][sr.RARITAN + idx + ".8"] = (
                    args + ",what=energy,unit_j=3600,base_j=912345678")
            else:
                recs[pdu][sr.APC_POWER + outlet] = args + ",what=power"
                recs[pdu][sr.APC_ENERGY + outlet] = (
                    args + ",what=energy,unit_j=360000,base_j=1234567890")
    return recs


def snmp_map(host):
    lines = ["PDU=pdu-a Host=%s Model=apc-rpdu2 Context=pdu-a" % host,
             "PDU=pdu-b Host=%s Model=apc-rpdu2" % host,
             "PDU=pdu-r Host=%s Model=raritan-px Unit=1" % host]
    for node, outlets in OUTLETS_OF.items():
        lines.append("Nodes=%s Outlets=%s Share=1" % (node, ",".join(
            "%s:%s" % (p, o) for p, o, _ in outlets)))
    return "\n".join(lines) + "\n"


# The module's configuration, for the poller's test to restart with.
CONFIG = {}


@pytest.fixture(scope="module")
def snmp_cluster(cluster, workdir):
    epoch = time.time()
    sim = sr.SnmpSim(TRACE, epoch, recordings(), v3=V3, addr=BMC_ADDR,
                     port=PORT)
    host = "%s:%d" % (BMC_ADDR, PORT)
    smap = write_file(os.path.join(workdir, "snmp.map"), snmp_map(host),
                      0o644)
    secrets = write_file(os.path.join(workdir, "snmp.secrets"),
                         (SECRETS % (V3["user"], V3["auth"], V3["priv"]))
                         .replace("IGNORED", "pdu-b") +
                         "PDU=pdu-r Community=pdu-r\n", 0o600)
    conf = ("EnergySNMPMap=%s\nEnergySNMPSecrets=%s\n"
            "EnergySNMPFrequency=1\nEnergySNMPTimeout=800\n" % (smap,
                                                                secrets))
    # the SPANK settle listed: a late PDU's settle does not hold srun
    plugstack = write_file(os.path.join(workdir, "plugstack.conf"),
                           "required %s/spank_energy_settle.so "
                           "max_wait=15\n" % PLUGIN_DIR, 0o644)
    CONFIG.update(map=smap, conf=conf, kw=dict(
        plugin_dirs=[PLUGIN_DIR], energy_type="acct_gather_energy/snmp",
        slurm_conf="DebugFlags=Energy\nPlugStackConfig=%s\n" % plugstack))
    try:
        with cluster.configured(acct_gather_conf=conf,
                                **CONFIG["kw"]) as c:
            sim.start()     # on the bridge, which exists once it is up
            energy.wait_for_power(c, NODES)
            yield c, epoch, sim
            logs = "".join(slurmd_log(c, n) for n in NODES)
            for secret in V3.values():
                if secret != V3["user"]:
                    assert secret not in logs, "a key is in a log"
    finally:
        sim.stop()


def test_plugin_line_says_outlets_and_path(snmp_cluster):
    c, _, _ = snmp_cluster
    for node, outlets in OUTLETS_OF.items():
        lines = [l for l in slurmd_log(c, node).splitlines()
                 if "acct_gather_energy/snmp" in l and "outlet" in l]
        assert lines, "no load line in slurmd-%s.log" % node
        for pdu, outlet, _ in outlets:
            assert "PDU %s" % pdu in lines[-1], lines[-1]
        assert "summed) shaped by power" in lines[-1], lines[-1]


def test_libnetsnmp_only_in_slurmd(snmp_cluster):
    c, _, _ = snmp_cluster
    daemon = c.mapped_libraries(c.pids()["slurmd-node1"])
    step = c.step_libraries("node1")
    assert any(f.startswith("libnetsnmp.so") for f in daemon), sorted(daemon)
    assert "acct_gather_energy_snmp.so" in step, sorted(step)
    assert not [f for f in step if f.startswith("libnetsnmp")], sorted(step)


def test_jobs_on_every_node(snmp_cluster):
    """A job on each node at once: node1 two APC PDUs (v3 + v2c), node2
    two Wh outlets, node3 two APC outlets of one PDU."""
    c, epoch, sim = snmp_cluster
    before, t0 = sim.gets(), time.monotonic()
    procs = [(energy.run_timed(c, "snmp-" + n, ["-w", n], JOB_SECONDS),
              "snmp-" + n, n) for n in NODES]
    errors = []
    for proc, name, node in procs:
        jobid, windows = energy.finish(c, proc, name, FINISH_S)
        step = energy.consumed_energy(c, jobid)["%d.0" % jobid]
        truth = energy.true_energy(TRACE, epoch, windows)
        err = energy.relative_error(step or 0, truth)
        print("job %d on %s (%d s): sacct %s J, true %.1f J, %+.3f%%" % (
            jobid, node, JOB_SECONDS, step, truth, 100 * err))
        assert step is not None
        if abs(err) > TOLERANCE[node]:
            errors.append((node, step, truth, err))
    # the GETs each PDU saw meanwhile, for the poller's test to compare
    CONFIG["direct"] = _rates(before, t0, sim.gets(), time.monotonic())
    assert not errors, errors


def _recoveries(c, node):
    return slurmd_log(c, node).count("reading again after")


def _wait_readings_again(c, before, timeout=60):
    """Every node's sampler reads again after a fault (the agent's queue of
    late answers drains, and the sampler's back-off, up to 8 s here, runs
    out): the next test starts on live readings."""
    deadline = time.monotonic() + timeout
    while any(_recoveries(c, n) <= before[n] for n in NODES):
        assert time.monotonic() < deadline, "no reading again after the fault"
        time.sleep(0.5)


def test_late_agent_never_blocks(snmp_cluster):
    """The agent answers 2 s late (every PDU): each read gives up at its
    800 ms timeout; an `srun sleep 5` still takes under 5.5 s (the SPANK
    settle lets srun return while the step's settle waits) and slurmd
    answers `scontrol show node` at once (the sampler thread owns the
    I/O); slurmd's log names the node, the PDU and the reason."""
    c, _, sim = snmp_cluster
    before = {n: _recoveries(c, n) for n in NODES}
    try:
        sim.fault(delay_s=2.0)
        time.sleep(3)
        t = time.monotonic()
        c.srun("-w", "node2", "sleep", "5", timeout=60)
        took = time.monotonic() - t
        t = time.monotonic()
        c.scontrol("show", "node", "node2")
        answer = time.monotonic() - t
    finally:
        sim.fault()
        _wait_readings_again(c, before)
    print("srun sleep 5 with the agent 2 s late: %.2f s; scontrol show "
          "node: %.3f s" % (took, answer))
    assert took < 5.5, took
    assert answer < 0.1, answer
    log = slurmd_log(c, "node2")
    assert "node node2: PDU pdu-r (%s:%d): GET: no answer by the deadline" \
        % (BMC_ADDR, PORT) in log, log[-3000:]


def test_faults_during_jobs(snmp_cluster):
    """Jobs on node1 and node3 while their PDUs misbehave, 5 s in: node1's
    two APC counters are reset (both PDUs' outlet 1), node3's outlet 4
    answers noSuchInstance for 3 s (renumbered away, then back).  Both
    jobs end on time; node1 within 1 % (the reset's interval is filled from
    power: measured +0.003 %, +0.080 %); node3's reads fail for 3-5 s
    (with the sampler's back-off), a gap filled by a straight line between
    the readings around it and flagged in slurmd's log: within 2 %
    (measured +0.051 %, and +0.878 % when the gap spans the trough of
    node3's V-shaped trace).  slurmd's logs name node, PDU and outlet."""
    c, epoch, sim = snmp_cluster
    started = time.monotonic()
    procs = [(energy.run_timed(c, "fault-" + n, ["-w", n], JOB_SECONDS),
              "fault-" + n, n) for n in ("node1", "node3")]
    reset = {sr.APC_ENERGY + "1": time.time() + 5}
    try:
        sim.fault(reset=reset)
        time.sleep(5)
        sim.fault(reset=reset, absent=[sr.APC_POWER + "4"])
        time.sleep(3)
        sim.fault(reset=reset)
        errors = []
        for proc, name, node in procs:
            jobid, windows = energy.finish(c, proc, name, FINISH_S)
            took = time.monotonic() - started
            step = energy.consumed_energy(c, jobid)["%d.0" % jobid]
            truth = energy.true_energy(TRACE, epoch, windows)
            err = energy.relative_error(step or 0, truth)
            print("job %d on %s with faults: %.1f s, sacct %s J, true %.1f "
                  "J, %+.3f%%" % (jobid, node, took, step, truth, 100 * err))
            assert took < JOB_SECONDS + 10, took
            if abs(err) > (0.01 if node == "node1" else 0.02):
                errors.append((node, step, truth, err))
        assert not errors, errors
    finally:
        sim.fault()
    log1 = slurmd_log(c, "node1")
    for pdu in ("pdu-a", "pdu-b"):
        assert "snmp: node node1: PDU %s outlet 1: energy counter went " \
            "from" % pdu in log1, log1[-3000:]
    log3 = slurmd_log(c, "node3")
    assert "node node3: PDU pdu-a (%s:%d): outlet 4: power %s4: no such " \
        "instance" % (BMC_ADDR, PORT, sr.APC_POWER) in log3, log3[-3000:]


def _sampler_ns(pid):
    """CPU ns of slurmd's sampler thread (se-sampler), from schedstat."""
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
            if f.read().strip() == "se-sampler":
                with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                    return int(f.read().split()[0])
    raise AssertionError("no se-sampler thread in slurmd %d" % pid)


# a sample slurmd's sampler took (DebugFlags=Energy: src/common/sampler.c)
SAMPLE_LINE = re.compile(r": t=\d+ ns power=\d+ mW energy=")


def test_sampler_cpu_per_sample(snmp_cluster):
    """slurmd's sampler thread over 10 s: its CPU per sample it took, node1
    (two PDUs, v3 + v2c: two GETs) and node2 (one PDU, two outlets: one
    GET).  The samples are counted in slurmd's log, not taken to be 10 (one
    a second at EnergySNMPFrequency=1): right after the jobs of the test
    before, steps' ends add early reads (a CI run read 2,339 us "per
    sample" over 10 s so)."""
    c, _, _ = snmp_cluster
    pids = c.pids()
    nodes = ("node1", "node2")
    before = {n: (_sampler_ns(pids["slurmd-" + n]),
                  len(SAMPLE_LINE.findall(slurmd_log(c, n)))) for n in nodes}
    time.sleep(10)
    for n in nodes:
        cpu_ns = _sampler_ns(pids["slurmd-" + n]) - before[n][0]
        samples = len(SAMPLE_LINE.findall(slurmd_log(c, n))) - before[n][1]
        per = cpu_ns / max(samples, 1) / 1e3
        print("slurmd-%s's sampler: %d samples in 10 s, %.0f us CPU per "
              "sample" % (n, samples, per))
        assert 9 <= samples, samples      # one a second at least
        assert 0 < per < BOUND_SAMPLE_US, per


def _rates(before, t0, after, t1):
    """GETs per second each recording (PDU) answered between two counts."""
    return {pdu: (after.get(pdu, 0) - before.get(pdu, 0)) / (t1 - t0)
            for pdu in ("pdu-a", "pdu-b", "pdu-r")}


def _to_poller(c, addr):
    """The nodes' acct_gather.conf switched to the poller (the map, no
    secrets) and reloaded by `scontrol reconfigure` (slurmd reloads the
    plugin; far quicker than a restart); returns when every slurmd has
    logged the new meter's load line."""
    path = os.path.join(c.state, "etc", "acct_gather.conf")
    with open(path, encoding="utf-8") as f:
        keep = [l for l in f if not l.startswith("EnergySNMP")]
    write_file(path, "".join(keep) + "EnergySNMPMap=%s\nEnergySNMPPoller=%s"
               "\nEnergySNMPFrequency=1\nEnergySNMPTimeout=800\n" % (
                   CONFIG["map"], addr), atomic=True)
    c.scontrol("reconfigure")
    want = "through the PDU poller %s" % addr
    deadline = time.monotonic() + 30
    while not all(want in slurmd_log(c, n) for n in NODES):
        assert time.monotonic() < deadline, slurmd_log(c, "node1")[-2000:]
        time.sleep(0.2)


def test_poller_one_get_per_pdu(snmp_cluster, workdir):
    """The same nodes through slurm-energy-pdu-poller (issue #44): the
    nodes' acct_gather.conf has EnergySNMPPoller and no secrets; the poller
    (on the host, MUNGE of the cluster) GETs each PDU once a second for
    all its nodes: pdu-a feeds node1 and node3, 2 GETs a second or more
    from the slurmds (4 during test_jobs_on_every_node's jobs, when the
    nodes read about twice a second), 1 from the poller, and an early
    read between rounds (no sooner than 0.5 s after the last) while a node
    asks again for the reading it has: a step's boundary, a running step's
    polls (JobAcctGatherFrequency).  Without those a boundary waited up to
    a round (node1 +0.284 % in one CI run).  The
    jobs on the three nodes at once stay within test_jobs_on_every_node's
    bounds.  Last in the module: the nodes stay on the poller until the
    module's restore."""
    c, epoch, sim = snmp_cluster
    direct = CONFIG.get("direct")
    if direct is None:          # this test alone (-k): count 3 s here
        before, t0 = sim.gets(), time.monotonic()
        time.sleep(3)
        direct = _rates(before, t0, sim.gets(), time.monotonic())
    addr = "%s:%d" % (BMC_ADDR, POLLER_PORT)
    pconf = write_file(os.path.join(workdir, "poller-acct_gather.conf"),
                       CONFIG["conf"] + "EnergySNMPPoller=%s\n" % addr,
                       0o600)
    pdir = os.path.join(workdir, "poller")
    os.makedirs(pdir, exist_ok=True)
    poller = sr.PduPoller(pconf, os.path.join(c.state, "munge",
                                              "munge.socket"),
                          workdir=pdir).start()
    try:
        _to_poller(c, addr)
        energy.wait_for_power(c, NODES)
        before, t0 = sim.gets(), time.monotonic()
        procs = [(energy.run_timed(c, "poll-" + n, ["-w", n], JOB_SECONDS),
                  "poll-" + n, n) for n in NODES]
        errors = []
        for proc, name, node in procs:
            jobid, windows = energy.finish(c, proc, name, FINISH_S)
            step = energy.consumed_energy(c, jobid)["%d.0" % jobid]
            truth = energy.true_energy(TRACE, epoch, windows)
            err = energy.relative_error(step or 0, truth)
            print("job %d on %s through the poller: sacct %s J, true %.1f "
                  "J, %+.3f%%" % (jobid, node, step, truth, 100 * err))
            assert step is not None
            if abs(err) > TOLERANCE[node]:
                errors.append((node, step, truth, err))
        polled = _rates(before, t0, sim.gets(), time.monotonic())
    finally:
        poller.stop()
    totals = poller.totals()
    print("GETs a second at each PDU, every slurmd polling: %s; through "
          "the poller: %s; poller: %s" % (
              {k: round(v, 2) for k, v in direct.items()},
              {k: round(v, 2) for k, v in polled.items()}, totals))
    assert not errors, errors
    # one GET a round (1 s) for each PDU, pdu-a's two nodes included, and
    # an early one for nodes asking again (a step's boundary; the jobs'
    # polls each second): at most one more a second, 0.5 s after the last
    for pdu, rate in polled.items():
        assert 0.8 <= rate <= 2.1, (pdu, rate, polled)
    assert direct["pdu-a"] >= 1.8, direct
    assert totals and totals["gets"] <= totals["rounds"] * 3, totals
    assert totals["asks"] >= 3 * JOB_SECONDS, totals
    assert not totals["failed"], (totals, poller.text()[-2000:])
