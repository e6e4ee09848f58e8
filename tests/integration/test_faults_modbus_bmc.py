"""Faults on the cluster for acct_gather_energy/modbus and /bmc (issue #14).

Every node reads its own simulated meter playing its column of
contribs/trace/examples/cluster.trace, so the truth of any job is known.
Each round runs one 20 s job per node at once, with a different fault on
each node (or one fault of the whole cluster), and asserts for every job:

- it completes on time (work + launch, settle and teardown slack);
- no daemon crashed or hung: every recorded pid alive and `scontrol show
  node` answering in under 1 s, polled all through the round by a watchdog;
- its energy is never lower than the step's own figure measured (sstat) as
  the fault began, and is within 1.5 % of the trace's truth plus what a
  gap bridged linearly can miss of this trace (``chord_error`` over the
  gap, from the last reading before the fault to the first after it: the
  estimate the man pages describe); a fault counted as energy (an absurd
  power, a counter jump) or lost from it breaks that bound; a step whose
  settle was refused (the daemons round's reconfigure) may read high by
  UNSETTLED_S of its power besides;
- the fault is marked in the node's slurmd log once: one error line when
  its gap starts (its second failed read), one line when readings resume,
  however many reads failed; a read that fails alone around it (a timeout
  of a loaded machine) is no error: the next reading spans it.

Modbus (one meter per node, map lines per node):
    node1  Eastron SDM630 over TCP: float32 power + float32 kWh counter
    node2  Carlo Gavazzi EM24 over TCP: INT32 W x 10 + INT32 0.1 kWh counter
    node3  a counter-only meter over RTU (socat pty, 19200 8N1): uint16 J,
           which wraps every 65,536 J (3 to 9 minutes here) on its own
BMC: every node its own bmc-sim (ipmi_sim + DCMI module), DCMI method.

Rounds (both plugins unless said): meters unreachable as slurmd starts;
protocol faults (Modbus exception 4, a truncated TCP reply, RTU replies
with a bad CRC; DCMI completion code 0xC0, a truncated DCMI reply, no
answer at all); readings (Modbus NaN, absurd and negative power, a NaN and
an absurd counter; DCMI absurd watts, measurement inactive); counters
(Modbus float counter reset, INT32 wrap, uint16 wrap; BMC power cycle with
its time stamp restarting near 0, time stamp wrap); daemons (slurmd
restarted mid-job on node1, node2's wall clock stepped back 90 s, then
`scontrol reconfigure` and slurmctld restarted, all mid-job).

A clock step: the nodes share the host kernel's clock, which must not be
stepped; tests/clockstep is preloaded into node2's slurmd (selab.faults.
FakeClock: libfaketime breaks absolute monotonic waits once told to leave
CLOCK_MONOTONIC alone, and a real step leaves it alone).
"""
import datetime
import os
import re
import shutil
import time

import pytest

from selab import energy, faults
from selab.bmc_rig import BMC_SIM, Bmcs, bmc_conf
from selab.cluster import PLUGIN_DIR, poll
from selab.meters import ModbusSim, PtyPair
from selab.files import scratch_dir, write_file

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")

NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
HOST = NET + ".1"                       # host side of the cluster bridge
NODES = ("node1", "node2", "node3")
# ports apart for every cluster instance (NET's last octet)
_BASE = 21000 + 16 * (int(NET.split(".")[2]) % 256)
MODBUS_PORT = {"node1": _BASE + 1, "node2": _BASE + 2}
BMC_PORT = {n: _BASE + 4 + i for i, n in enumerate(NODES)}

JOB_S = 20
SLACK_S = 15            # launch, settle, teardown; a hung RPC adds 20+ s
TOLERANCE = 0.015       # 20 s jobs, settled at their boundaries
# A step the settle refused keeps its running total (slurmstepd logs "step
# energy not settled ... keeping the running total"): in the daemons round
# every sampler restarts (`scontrol reconfigure`), so E(t0) and E(t1) are
# not comparable.  That total runs from slurmstepd's start (before the
# task's fork) to the answer to the end poll's question, which slurmd
# holds up to 0.15 s for a reading after the end and extrapolates to when
# it answers (the refusal was logged 0.30-0.32 s after the task's exit
# here; node3 read 34-86 J high): it reads high by a fraction of a second
# of the node's power.  BMC node3 (no other fault), of its marks' truth:
# +0.935, +0.915 % at load 3-4; +0.958, +0.779, +0.793, +0.802, +0.809,
# +0.826, +1.438, +0.704, +0.842 % at load 7-12 (3 CPU hogs besides),
# +0.960 % in a whole-module run at load 6-7 (2 hogs), +0.954, +1.500,
# +0.731 % in three runs at load 4-7 (2 hogs); +2.00 % once in a CI
# rehearsal at load 5-7 (about 0.4 s of its power).  The two outliers here
# ran 20.17-20.19 s between slurmstepd's "task 0 started" and "exited"
# lines (20.02-20.06 s otherwise): the job's own marks lag those under
# load too, but the lines are no better a window (a settled step, its
# "exited" line 0.15 s after its SE_T1, read -0.82 % of the truth between
# the lines and +0.04 % of its marks').  On top of TOLERANCE, such a step
# may read high by UNSETTLED_S of its mean power: 2.5 % of a 20 s job,
# 4.0 % in all, twice the worst.
UNSETTLED_S = 0.5
PERIOD_S = 1.0          # Energy*Frequency

pytestmark = [
    pytest.mark.skipif(not PLUGIN_DIR, reason="SE_PLUGIN_DIR not set "
                       "(run contribs/test-all.sh)"),
]


# ------------------------------------------------------------- helpers
def _plugstack(workdir):
    """Steps settle at their boundaries; the SPANK line a site configured
    before the settle moved into the plugin (issue #30) is kept here, so
    that faults are also met on that path (up to 25.11 the plugin leaves
    the settle to it; test_settle_in_plugin.py)."""
    return write_file(os.path.join(workdir, "plugstack.conf"),
                      "required %s/spank_energy_settle.so max_wait=10\n"
                      % PLUGIN_DIR, 0o644)


def _log_time(line):
    """Wall-clock seconds of a slurmd log line's [timestamp]."""
    stamp = re.match(r"^\[([0-9T:.-]+)\]", line).group(1)
    return datetime.datetime.fromisoformat(stamp).timestamp()


def _jobid(cluster, name):
    return int(poll(lambda: cluster.run(
        ["squeue", "-h", "-n", name, "-o", "%i"]).stdout.strip(),
        timeout=30, what="job %s in the queue" % name))


class NodeJob:
    """One node's job in a round and what its fault allows."""

    def __init__(self, cluster, node, tag):
        self.c, self.node = cluster, node
        self.name = "%s-%s" % (tag, node)
        self.mark = faults.LogMark(cluster, "slurmd-%s" % node)
        self.before = None              # step energy as the fault began
        self.fault_t0 = None            # wall clock
        self.fault_t1 = None
        self.jobid = None
        self.started = time.monotonic()
        self.proc = cluster.popen(["srun", "-J", self.name, "-w", node,
                                   *energy.timed_command(JOB_S)])

    def fault_begins(self):
        """Take the figure the step has before the fault."""
        if self.jobid is None:
            self.jobid = _jobid(self.c, self.name)
        self.before = faults.step_energy_now(self.c, self.jobid)
        assert self.before is not None, "%s: no energy before the fault" % (
            self.name)
        self.fault_t0 = time.time()

    def fault_ends(self):
        self.fault_t1 = time.time()

    def finish(self):
        out, err = self.proc.communicate(timeout=JOB_S + 120)
        assert self.proc.returncode == 0, "srun %s: %s" % (self.name, err)
        self.took = faults.job_on_time(self.started, JOB_S, SLACK_S)
        self.windows = energy.windows(out)
        self.jobid = self.jobid or _jobid_done(self.c, self.name)
        return self

    def gap_end(self, pattern=r"reading again after"):
        """When readings resumed: the recovery line's time stamp."""
        lines = self.mark.lines(pattern)
        assert lines, "%s: no recovery line in slurmd-%s.log" % (self.name,
                                                                 self.node)
        return _log_time(lines[-1])

    def unsettled(self):
        """The step kept its running total (its settle was refused)."""
        return bool(self.mark.lines(r"\[%d\.0\] .*step energy not settled"
                                    % self.jobid))

    def check_energy(self, epoch, gap=None, unsettled_ok=False):
        """gap: (t0, t1) wall clock bridged linearly, allowed on top;
        unsettled_ok: a step that kept its running total may read high by
        UNSETTLED_S of its mean power (never low by more than the rest)."""
        rec = energy.consumed_energy(self.c, self.jobid)
        step, job = rec["%d.0" % self.jobid], rec[str(self.jobid)]
        assert job == step, rec
        (t0, t1), = self.windows.values()
        truth = energy.trace_joules(TRACE, self.node, epoch, t0, t1)
        extra = 0.0
        if gap:
            extra = energy.chord_error(TRACE, self.node, epoch,
                                       max(gap[0], t0), min(gap[1], t1))
        high = 0.0
        if unsettled_ok and self.unsettled():
            high = UNSETTLED_S * truth / (t1 - t0)
        line = faults.check_bounds(self.name, step, truth, self.before,
                                   TOLERANCE, extra + high)
        # the running total only reads high: below, the settled bound
        low = TOLERANCE * truth + extra
        assert step >= truth - low, "%s: below the truth by more than " \
            "%.0f J (unsettled allowance only above it)" % (line, low)
        print("%s (took %.1f s; before the fault %s J%s)" % (
            line, self.took, self.before,
            "; unsettled: %+.0f J allowed above" % high if high else ""))
        return step, truth


def _jobid_done(cluster, name):
    return int(poll(lambda: cluster.run(
        ["sacct", "-n", "-X", "-P", "-o", "JobID", "--name", name]
    ).stdout.split()[-1:] and cluster.run(
        ["sacct", "-n", "-X", "-P", "-o", "JobID", "--name", name]
    ).stdout.split()[-1], timeout=30, what="job %s in sacct" % name))


class Round(faults.Round):
    """One job per node, a watchdog around them, a timed fault script
    (time 0: the jobs were submitted)."""

    def __init__(self, cluster, tag):
        super().__init__(cluster, NODES, tag)

    def start_jobs(self):
        jobs = {n: NodeJob(self.c, n, self.tag) for n in NODES}
        self.t0 = time.monotonic()
        for job in jobs.values():
            job.jobid = _jobid(self.c, job.name)
        return jobs


def _marked(job, start, end=r"reading again after", plugin_errors=2):
    """The fault is marked once as it starts and once as readings resume,
    however many reads failed; besides that start line, at most the
    device's own reason is an error line (a BMC session it cannot open)."""
    faults.assert_marked(job.mark, start, 1, "%s fault start" % job.name)
    faults.assert_marked(job.mark, end, 1, "%s fault end" % job.name)
    faults.assert_marked(job.mark, r"error: acct_gather_energy/",
                         plugin_errors, "%s error lines" % job.name)


def _show_node_answers(cluster):
    for node in NODES:
        s = faults.show_node_s(cluster, node)
        assert s < faults.SHOW_NODE_BOUND_S, "show node %s: %.2f s" % (node,
                                                                       s)


def _wait_fresh_power(cluster, node, timeout=30):
    """slurmd answers with a sample newer than now (after a restart)."""
    since = time.time()
    mark = faults.LogMark(cluster, "slurmd-%s" % node)
    poll(lambda: energy.node_power(cluster, node) and
         time.time() - since > 2 * PERIOD_S, timeout=timeout,
         what="power on %s" % node)
    return mark


def _daemon_round(c, epoch, tag, clock, node_fault=None):
    """slurmd of node1 restarted, node2's clock stepped back, then
    `scontrol reconfigure` and slurmctld restarted, all mid-job.
    node_fault: (start, stop) callables for node3 (its own fault)."""
    with Round(c, tag) as r:
        jobs = r.jobs
        r.at(5)
        for job in jobs.values():
            job.fault_begins()
        if node_fault:
            node_fault[0]()
        faults.restart(c, "slurmd-node1")
        clock.step(-90)
        r.at(9)
        c.scontrol("reconfigure")
        r.at(11)
        r.dog.pause()                   # no controller, by design
        try:
            faults.restart(c, "slurmctld")
        finally:
            r.dog.resume()
        if node_fault:
            node_fault[1]()
        for job in jobs.values():
            job.fault_ends()
    return jobs


def _check_daemon_round(c, epoch, jobs, plugin):
    # node1's slurmd restarted: the step bridged the restart (logged by
    # the step), its settle kept the running figure (the sampler changed)
    for job in jobs.values():
        # the gap of a restart or reload is bridged at the last power
        job.check_energy(epoch, gap=(job.fault_t0 - PERIOD_S,
                                     job.fault_t1 + 3 * PERIOD_S),
                         unsettled_ok=True)
    text = jobs["node1"].mark.text()
    assert text.count("started on node node1") >= 2, \
        "slurmd-node1: no restart and reconfigure start lines"
    bridged = re.findall(r"node energy went from \d+ J to \d+ J.*bridged",
                         text)
    assert bridged, "node1: the step did not notice slurmd's restart"
    print("node1:", bridged[0])
    # node2's wall clock really went back: its log's stamps did
    job = jobs["node2"]
    stamps = [_log_time(l) for l in job.mark.text().splitlines()
              if l.startswith("[")]
    assert min(stamps) < job.fault_t0 - 60, (
        "node2's clock was not stepped (earliest stamp %.0f s before the "
        "step)" % (job.fault_t0 - min(stamps)))
    for node in NODES:
        text = jobs[node].mark.text()
        assert "fatal" not in text.lower(), text[-2000:]
        assert " error: %s" % plugin not in text, (
            "%s: plugin errors in a daemon round:\n%s" % (node, "\n".join(
                l for l in text.splitlines() if " error: " in l)))


# ================================================================ Modbus
MB_NODE3 = ["--kind", "input", "--energy-reg", "72", "--energy-type",
            "uint16", "--energy-scale", "1"]


class ModbusMeters:
    """One meter per node: node1 SDM630 and node2 EM24 over TCP, node3 a
    uint16 J counter over RTU (socat pty)."""

    def __init__(self, workdir, epoch):
        self.workdir, self.epoch = workdir, epoch
        self.meter_tty = os.path.join(workdir, "meter3.tty")
        self.node_tty = os.path.join(workdir, "node3.tty")
        self.sims, self.line = {}, None

    def conf(self):
        mapf = write_file(os.path.join(self.workdir, "modbus.map"), "".join(
            "Nodes=%s Device=tcp://%s:%d Unit=1 Model=%s\n"
            % (n, HOST, MODBUS_PORT[n], m)
            for n, m in (("node1", "sdm630"), ("node2", "em24"))) +
            "Nodes=node3 Device=rtu:%s Unit=1\n" % self.node_tty, 0o644)
        return ("EnergyModbusModel=custom\nEnergyModbusRegisterKind=input\n"
                "EnergyModbusEnergyRegister=72\nEnergyModbusEnergyType=uint16\n"
                "EnergyModbusEnergyScale=1\nEnergyModbusMaxPower=2000\n"
                "EnergyModbusBaud=19200\nEnergyModbusParity=N\n"
                "EnergyModbusDataBits=8\nEnergyModbusStopBits=1\n"
                "EnergyModbusFrequency=1\nEnergyModbusTimeout=500\n"
                "EnergyModbusMap=%s\n" % mapf)

    def start(self):
        for node, model in (("node1", "sdm630"), ("node2", "em24")):
            d = os.path.join(self.workdir, node)
            os.makedirs(d, exist_ok=True)
            self.sims[node] = ModbusSim(
                TRACE, self.epoch, {1: node}, ["--model", model],
                tcp=(HOST, MODBUS_PORT[node]), workdir=d).start()
        self.line = PtyPair(self.meter_tty, self.node_tty,
                            os.path.join(self.workdir)).start()
        d = os.path.join(self.workdir, "node3")
        os.makedirs(d, exist_ok=True)
        self.sims["node3"] = ModbusSim(
            TRACE, self.epoch, {1: "node3"}, MB_NODE3, rtu=self.meter_tty,
            serial_args=["--baud", "19200", "--parity", "N",
                         "--data-bits", "8", "--stop-bits", "1"],
            workdir=d).start()

    def stop(self):
        for sim in self.sims.values():
            sim.stop()
        self.sims = {}
        if self.line:
            self.line.stop()
            self.line = None


@pytest.fixture(scope="module")
def modbus(module_cluster):
    with scratch_dir("se-faults-modbus-") as workdir:
        epoch = time.time()
        meters = ModbusMeters(workdir, epoch)
        c = module_cluster
        c.restart(plugin_dirs=[PLUGIN_DIR],
                  energy_type="acct_gather_energy/modbus",
                  acct_gather_conf=meters.conf(),
                  slurm_conf="DebugFlags=Energy\nPlugStackConfig=%s\n"
                             % _plugstack(workdir))
        try:
            yield c, epoch, meters, workdir
        finally:
            meters.stop()


def _meters_up(modbus):
    c, epoch, meters, _ = modbus
    if not meters.sims:
        meters.start()
        energy.wait_for_power(c, NODES)
    return c, epoch, meters


def test_modbus_unreachable_at_slurmd_start(modbus):
    """No meter answers (TCP refused, no tty) as slurmd starts: slurmd is
    up and answers, the failure is logged once per node, and energy comes
    once the meters do."""
    c, _, meters, _ = modbus
    marks = {n: faults.LogMark(c, "slurmd-%s" % n) for n in NODES}
    for n in NODES:
        marks[n].offset = 0             # since slurmd started
    time.sleep(4)                       # a few failed attempts
    _show_node_answers(c)
    assert not faults.dead_daemons(c)
    for n in NODES:
        faults.assert_marked(marks[n], r"error: .*open failed", 1,
                             "%s unreachable" % n)
        assert energy.node_power(c, n) is None  # "n/s": no data, not 0 W
    _meters_up(modbus)
    for n in NODES:
        faults.assert_marked(marks[n], r"reading again after", 1,
                             "%s recovered" % n)


def test_modbus_protocol_faults(modbus):
    """node1: exception 4 (server device failure); node2: a truncated TCP
    reply; node3: RTU replies with a bad CRC; each for 6 s mid-job."""
    c, epoch, meters = _meters_up(modbus)
    with Round(c, "mb-proto") as r:
        r.at(5)
        for job in r.jobs.values():
            job.fault_begins()
        meters.sims["node1"].fault("exception 4")
        meters.sims["node2"].fault("garbage short")
        meters.sims["node3"].fault("garbage crc")
        r.at(11)
        for n in NODES:
            meters.sims[n].fault("")
            r.jobs[n].fault_ends()
    for job in r.jobs.values():
        _marked(job, r"error: .*read failed")
        job.check_energy(epoch, gap=(job.fault_t0 - PERIOD_S, job.gap_end()))


def _just_before_tick(lead_s=0.05):
    """Sleep until lead_s before the samplers' next tick (multiples of
    PERIOD_S on CLOCK_MONOTONIC, which the nodes share with us)."""
    left = PERIOD_S - time.monotonic() % PERIOD_S
    if left < lead_s:
        left += PERIOD_S
    time.sleep(left - lead_s)


def test_modbus_nan_negative_absurd(modbus):
    """node1: NaN power, then 10 MW with a NaN energy register; node2: a
    power register reading -3000 W; node3: its counter jumps by 30 kJ
    (at most 2 kW x 1 s are possible) right behind a read that times out
    (its meter deaf for 0.5 s from just before a tick: an RTU reply held up
    on a loaded machine), the sequence that once made the dropped reading
    the second failed read in a row, an error line (issue #40)."""
    c, epoch, meters = _meters_up(modbus)
    with Round(c, "mb-values") as r:
        r.at(5)
        for job in r.jobs.values():
            job.fault_begins()
        meters.sims["node1"].fault("power nan")
        meters.sims["node2"].fault("power -3000")
        _just_before_tick()
        meters.sims["node3"].fault("stall 0.5\noffset 30000")
        r.at(8)
        meters.sims["node1"].fault("power 1e7\nenergy nan")
        r.at(11)
        for n in NODES:
            meters.sims[n].fault("")
            r.jobs[n].fault_ends()
    for n in ("node1", "node2"):
        job = r.jobs[n]
        _marked(job, r"error: .*(read|reading) failed")
        job.check_energy(epoch, gap=(job.fault_t0 - PERIOD_S, job.gap_end()))
    job = r.jobs["node3"]
    # a counter jump: dropped and held, and the reading taken at once
    # follows on from it: a reset (the meter's counter really moved), the
    # interval filled at the power.  The held reading is no failed read,
    # so the timeout before it stays a single one: no error line, the two
    # anomalies at info.
    faults.assert_marked(job.mark, r"counter reading rejected", 1,
                         "node3 counter jump")
    faults.assert_marked(job.mark, r"counter reset", 1, "node3 reset")
    faults.assert_marked(job.mark, r"error: acct_gather_energy/", 0,
                         "node3 counter jump errors", at_least=0)
    job.check_energy(epoch, gap=(job.fault_t0 - PERIOD_S,
                                 job.fault_t0 + 3 * PERIOD_S))


def test_modbus_counter_wrap_and_reset(modbus):
    """node1: the float kWh counter reset to 0 mid-job; node2: the EM24's
    INT32 counter wraps at 2^31 mid-job; node3: the uint16 J counter wraps
    at 2^16 mid-job (counter only: its energy is the counter's)."""
    c, epoch, meters = _meters_up(modbus)
    # The simulator arms a wrap by moving the counter to just below it: a
    # jump no real meter makes (the plugin takes it for a reset).  Done
    # before the jobs, so that they see only the wrap itself, 10 s in.
    armed = time.time()
    for n in ("node2", "node3"):
        meters.sims[n].fault("wrap 14")
    time.sleep(4)
    with Round(c, "mb-counter") as r:
        r.at(7)
        job = r.jobs["node1"]
        job.fault_begins()
        meters.sims["node1"].fault("reset")
        r.at(12)
        for n in NODES:
            meters.sims[n].fault("")
            r.jobs[n].fault_ends()
    job = r.jobs["node1"]
    faults.assert_marked(job.mark, r"counter reset", 1, "node1 reset")
    job.check_energy(epoch, gap=(job.fault_t0 - PERIOD_S,
                                 job.fault_t0 + 3 * PERIOD_S))
    for n in ("node2", "node3"):
        job = r.jobs[n]
        # a wrap is counted, not a fault: nothing to mark, nothing to fill
        faults.assert_marked(job.mark, r"counter reset|error: .*failed", 0,
                             "%s wrap" % n, at_least=0)
        job.check_energy(epoch)
        # the wrap itself fell inside the job
        (t0, t1), = job.windows.values()
        assert t0 + 2 < armed + 14 < t1 - 2, "%s: no wrap mid-job" % n


def test_modbus_daemons_and_clock(modbus, tmp_path):
    c, epoch, meters = _meters_up(modbus)
    clock = faults.FakeClock(c, "node2", str(tmp_path))
    clock.install()
    faults.restart(c, "slurmd-node2")
    energy.wait_for_power(c, ("node2",))
    jobs = _daemon_round(c, epoch, "mb-daemons", clock)
    _check_daemon_round(c, epoch, jobs, "acct_gather_energy/modbus")


# =================================================================== BMC
@pytest.fixture(scope="module")
def bmc(module_cluster):
    if not os.access(BMC_SIM, os.X_OK) or not shutil.which("ipmi_sim"):
        pytest.skip("bmc-sim not built or ipmi_sim not installed")
    with scratch_dir("se-faults-bmc-") as workdir:
        pwfile = write_file(os.path.join(workdir, "bmc.password"),
                            "%s\n" % os.urandom(8).hex(), 0o600)
        epoch = time.time()
        bmcs = Bmcs(workdir, epoch, pwfile)
        c = module_cluster
        c.restart(plugin_dirs=[PLUGIN_DIR],
                  energy_type="acct_gather_energy/bmc",
                  acct_gather_conf=bmc_conf(workdir, "dcmi", pwfile),
                  slurm_conf="DebugFlags=Energy\nPlugStackConfig=%s\n"
                             % _plugstack(workdir))
        try:
            yield c, epoch, bmcs, workdir
        finally:
            bmcs.stop()


def _bmcs_up(bmc):
    c, epoch, bmcs, _ = bmc
    if not bmcs.started:
        bmcs.start()
        energy.wait_for_power(c, NODES)
    return c, epoch, bmcs


def _bmc_fault(bmcs, node, lines):
    p = bmcs.sim("fault", node, "--set", lines)
    assert p.returncode == 0, p.stderr


def test_bmc_unreachable_at_slurmd_start(bmc):
    c, _, bmcs, _ = bmc
    marks = {n: faults.LogMark(c, "slurmd-%s" % n) for n in NODES}
    for n in NODES:
        marks[n].offset = 0
    time.sleep(4)
    _show_node_answers(c)
    assert not faults.dead_daemons(c)
    for n in NODES:
        # the sampler's line and the BMC's own reason, once each
        faults.assert_marked(marks[n], r"error: .*open failed", 1,
                             "%s unreachable" % n)
        faults.assert_marked(marks[n], r"error: .*cannot open an IPMI", 1,
                             "%s unreachable, the reason" % n)
        assert energy.node_power(c, n) is None
    _bmcs_up(bmc)
    for n in NODES:
        faults.assert_marked(marks[n], r"reading again after", 1,
                             "%s recovered" % n)


def test_bmc_protocol_faults(bmc):
    """node1: completion code 0xC0 (node busy); node2: a truncated DCMI
    response; node3: no answer at all (ipmi_sim stopped); 6 s mid-job."""
    c, epoch, bmcs = _bmcs_up(bmc)
    with Round(c, "bmc-proto") as r:
        r.at(5)
        for job in r.jobs.values():
            job.fault_begins()
        _bmc_fault(bmcs, "node1", "cc 0xc0")
        _bmc_fault(bmcs, "node2", "short")
        assert bmcs.sim("freeze", "node3").returncode == 0
        r.at(11)
        _bmc_fault(bmcs, "node1", "")
        _bmc_fault(bmcs, "node2", "")
        assert bmcs.sim("thaw", "node3").returncode == 0
        for job in r.jobs.values():
            job.fault_ends()
    for job in r.jobs.values():
        _marked(job, r"error: .*(read|open) failed")
        job.check_energy(epoch, gap=(job.fault_t0 - PERIOD_S, job.gap_end()))


def test_bmc_absurd_inactive_power_cycle(bmc):
    """node1: 65535 W (above EnergyBMCMaxWatts); node2: "no power
    measurement"; node3: the BMC power-cycles (gone 4 s, back with its
    sessions lost and its time stamp restarted near 0)."""
    c, epoch, bmcs = _bmcs_up(bmc)
    with Round(c, "bmc-values") as r:
        r.at(5)
        for job in r.jobs.values():
            job.fault_begins()
        _bmc_fault(bmcs, "node1", "watts 65535")
        _bmc_fault(bmcs, "node2", "inactive")
        bmcs.stop_one("node3")
        r.at(9)
        bmcs.start_one("node3")
        _bmc_fault(bmcs, "node3", "stamp %d" % (30 - int(time.time())))
        r.at(11)
        _bmc_fault(bmcs, "node1", "")
        _bmc_fault(bmcs, "node2", "")
        for job in r.jobs.values():
            job.fault_ends()
    for job in r.jobs.values():
        _marked(job, r"error: .*(read|reading|open) failed")
        job.check_energy(epoch, gap=(job.fault_t0 - PERIOD_S, job.gap_end()))


def test_bmc_daemons_and_clock(bmc, tmp_path):
    """As for Modbus; node3's BMC time stamp wraps at 2^32 meanwhile."""
    c, epoch, bmcs = _bmcs_up(bmc)
    clock = faults.FakeClock(c, "node2", str(tmp_path))
    clock.install()
    faults.restart(c, "slurmd-node2")
    energy.wait_for_power(c, ("node2",))
    wrap = (lambda: _bmc_fault(bmcs, "node3", "stamp %d" % (
                2 ** 32 - int(time.time()) - 3)),
            lambda: None)
    jobs = _daemon_round(c, epoch, "bmc-daemons", clock, wrap)
    _check_daemon_round(c, epoch, jobs, "acct_gather_energy/bmc")
