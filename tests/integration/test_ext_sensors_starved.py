"""ext_sensors/meters whatever slurmctld's background loop does (issue #12).

Slurm 22.05's _slurmctld_background() (src/slurmctld/controller.c) runs its
ExtSensorsFreq branch, ext_sensors_g_update_component_data(), only when
is_ping_done(); the AcctGatherNodeFreq branch right before it starts a
node-energy agent (update_nodes_acct_gather_data() -> ping_begin()), so with
AcctGatherNodeFreq=1 that call nearly never comes.  The plugin must not
care: its pacer thread reads every ExtSensorsFreq seconds and publishes the
node values itself, a step's end adopts whatever the readers finished.

The setup is the issue's, upstream keys only: ext_sensors.conf with
JobData=energy, NodeData=energy, EnergyRRA=watts, EnergyPathRRD=DIR/%n.rrd,
MinWatt=0, MaxWatt=10000; each node's file made with
`rrdtool create N.rrd --step 10 DS:watts:GAUGE:20:0:U RRA:AVERAGE:0.5:1:8640`
and fed with `rrdtool update N.rrd N:WATTS` every 10 s; constant power, a
different one per node (a mix-up of nodes shows).  Run twice: with
AcctGatherNodeFreq=1 (the starved loop) and with it unset (the cluster
template sets 1, so "unset" appends AcctGatherNodeFreq=0, Slurm's default).

Asserted in each run:
  - ExtSensorsWatts/ExtSensorsJoules of every node in `scontrol show node`
    within 25 s of slurmctld's start (its /proc start time);
  - a 60 s job per node (three at once) gets the energy of its tasks' own
    window (watts x seconds, from the tasks' own time stamps) within 1 %;
  - the plugin says once that slurmctld's calls are starved with
    AcctGatherNodeFreq=1, and never says so without it (where its update
    calls are seen coming).
"""
import os
import re
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

from selab import energy
from selab.cluster import PLUGIN_DIR, poll
from selab.meters import kill_unfinished

NODES = ("node1", "node2", "node3")
WATTS = {"node1": 250, "node2": 300, "node3": 350}
STEP = 10               # RRD step, update period and ExtSensorsFreq
JOB_SECONDS = 60
TOLERANCE = 0.01        # the 1 %
VALUES_WITHIN = 25      # s after slurmctld's start
STARVED = re.compile(r"ext_sensors/meters: slurmctld has not called "
                     r"ext_sensors_p_update_component_data for \d+ s")

pytestmark = pytest.mark.skipif(not PLUGIN_DIR,
                                reason="SE_PLUGIN_DIR not set "
                                       "(run contribs/test-all.sh)")


# ------------------------------------------------------------- helpers
class RRDUpdater:
    """`rrdtool update FILE N:WATTS` every STEP seconds, as a collector
    run from cron or a loop would, for every node."""

    def __init__(self, rrd_dir):
        self.paths = {n: os.path.join(rrd_dir, n + ".rrd") for n in NODES}
        self.stop_event = threading.Event()
        self.errors = []
        self.thread = threading.Thread(target=self._run, daemon=True)

    def create(self):
        for node, path in self.paths.items():
            subprocess.run(["rrdtool", "create", path, "--step", str(STEP),
                            "DS:watts:GAUGE:20:0:U",
                            "RRA:AVERAGE:0.5:1:8640"], check=True,
                           timeout=30)
        return self

    def _update(self):
        for node, path in self.paths.items():
            p = subprocess.run(["rrdtool", "update", path,
                                "N:%d" % WATTS[node]],
                               capture_output=True, text=True, timeout=30)
            if p.returncode:
                self.errors.append(p.stderr)

    def _run(self):
        next_t = time.monotonic()
        while not self.stop_event.is_set():
            self._update()
            next_t += STEP
            self.stop_event.wait(max(0, next_t - time.monotonic()))

    def has_rows(self):
        """Every file has a valid row (a whole step written)."""
        for path in self.paths.values():
            p = subprocess.run(["rrdtool", "fetch", path, "AVERAGE",
                                "-s", "end-60"], capture_output=True,
                               text=True, timeout=30)
            if p.returncode or not re.search(r"^\d+: [0-9.]+e[+-]\d+$",
                                             p.stdout, re.M):
                return False
        return True

    def start(self):
        self.thread.start()
        return self

    def stop(self):
        self.stop_event.set()
        self.thread.join(timeout=60)


def proc_start_time(pid):
    """Wall-clock start of a process, from /proc (clock ticks after boot)."""
    with open("/proc/%d/stat" % pid) as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    ticks = int(fields[19])             # field 22, starttime
    with open("/proc/stat") as handle:
        btime = int(re.search(r"^btime (\d+)$", handle.read(),
                              re.M).group(1))
    return btime + ticks / os.sysconf("SC_CLK_TCK")


def ext_values(cluster, node):
    """(joules, watts) from scontrol show node, None while n/s."""
    text = cluster.scontrol("show", "node", node).stdout
    match = re.search(r"ExtSensorsJoules=(\d+) ExtSensorsWatts=(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def log_text(cluster, name):
    with open(os.path.join(cluster.state, "log", name + ".log")) as handle:
        return handle.read()


def ext_sensors_conf(rrd_dir):
    return "\n".join(["JobData=energy",
                      "NodeData=energy",
                      "EnergyRRA=watts",
                      "EnergyPathRRD=%s" % os.path.join(rrd_dir, "%n.rrd"),
                      "MinWatt=0",
                      "MaxWatt=10000",
                      ""])


# ------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def rrd_dir():
    work = tempfile.mkdtemp(prefix="se-es-starved-", dir="/var/tmp")
    updater = RRDUpdater(work).create().start()
    try:
        # the files hold a whole row before slurmctld starts, as a site's
        # would (the files were being fed)
        poll(updater.has_rows, timeout=4 * STEP, what="a row in every file")
        yield work
    finally:
        updater.stop()
        assert not updater.errors, updater.errors
        shutil.rmtree(work, ignore_errors=True)


@pytest.fixture(scope="module", params=["1", "unset"])
def es(request, module_cluster, rrd_dir):
    """The cluster with ext_sensors/meters; AcctGatherNodeFreq=1 or unset.
    Yields a dict: cluster, freq, values_delay (s after slurmctld's start
    until every node showed its values)."""
    freq = request.param
    slurm_conf = ("ExtSensorsType=ext_sensors/meters\n"
                  "ExtSensorsFreq=%d\nDebugFlags=ExtSensors\n" % STEP)
    slurm_conf += "AcctGatherNodeFreq=%s\n" % ("1" if freq == "1" else "0")
    c = module_cluster
    c.restart(plugin_dirs=[PLUGIN_DIR], energy_type="acct_gather_energy/none",
              slurm_conf=slurm_conf,
              extra_confs={"ext_sensors.conf": ext_sensors_conf(rrd_dir)})
    started = proc_start_time(c.pids()["slurmctld"])

    def shown():
        values = {n: ext_values(c, n) for n in NODES}
        if all(v and v[1] == WATTS[n] and v[0] > 0
               for n, v in values.items()):
            return values
        return None
    values = poll(shown, timeout=90, interval=0.5,
                  what="ExtSensorsWatts on every node")
    return {"cluster": c, "freq": freq, "values": values,
            "values_delay": time.time() - started}


@pytest.fixture(scope="module")
def job_procs(es):
    """Starts a 60 s job on each node, all at once: {node: srun Popen}.
    test_node_joules_grow_at_the_power looks at the nodes meanwhile (the
    power is each node's file's, constant, whatever runs there): 20 s of
    CI a run."""
    c = es["cluster"]
    tag = "starved%s" % es["freq"]
    procs = {n: energy.run_timed(c, "%s-%s" % (tag, n), ["-w", n],
                                 JOB_SECONDS)
             for n in NODES}
    yield procs
    kill_unfinished(procs.values())


@pytest.fixture(scope="module")
def jobs(es, job_procs):
    """The 60 s jobs' energy: {node: (sacct J, true J, job row J)}."""
    c = es["cluster"]
    tag = "starved%s" % es["freq"]
    out = {}
    for node, proc in job_procs.items():
        jobid, windows = energy.finish(c, proc, "%s-%s" % (tag, node),
                                       JOB_SECONDS + 120)
        (t0, t1), = windows.values()
        recorded = energy.consumed_energy(c, jobid)
        out[node] = (recorded["%d.0" % jobid], WATTS[node] * (t1 - t0),
                     recorded[str(jobid)])
    return out


def describe(jobs):
    return ", ".join("%s: sacct %s J, true %.0f J (%+.3f%%)"
                     % (n, s, t, 100 * (s - t) / t if s else -100)
                     for n, (s, t, _) in sorted(jobs.items()))


# ------------------------------------------------------------- tests
def test_configuration_is_the_one_meant(es):
    c = es["cluster"]
    shown = c.scontrol("show", "config").stdout
    want = "1 sec" if es["freq"] == "1" else "0 sec"
    assert re.search(r"AcctGatherNodeFreq\s*=\s*%s" % want, shown), shown
    assert re.search(r"ExtSensorsType\s*=\s*ext_sensors/meters", shown)
    assert "ExtSensors meters plugin (slurm-energy-plugins) loaded" in \
        log_text(c, "slurmctld")


def test_node_values_within_25s_of_start(es):
    """ExtSensorsWatts is each node's own power and ExtSensorsJoules is
    set within 25 s of slurmctld's start, starved calls or not."""
    print("AcctGatherNodeFreq=%s: node values %.1f s after slurmctld's "
          "start: %s" % (es["freq"], es["values_delay"], es["values"]))
    assert es["values_delay"] < VALUES_WITHIN, \
        "values after %.1f s: %s" % (es["values_delay"], es["values"])


def test_node_joules_grow_at_the_power(es, job_procs):
    """Two looks 20 s apart: ExtSensorsJoules grows by about watts x 20 s
    (the values keep being published, not only once)."""
    c = es["cluster"]
    first = {n: ext_values(c, n) for n in NODES}
    time.sleep(2 * STEP)
    for node in NODES:
        later = ext_values(c, node)
        grown = later[0] - first[node][0]
        # published once per ExtSensorsFreq: 20 s +- one period of rows
        assert WATTS[node] * STEP <= grown <= WATTS[node] * 3 * STEP, \
            (node, first[node], later)
        assert later[1] == WATTS[node], (node, later)


def test_60s_jobs_within_1pct(es, jobs):
    print("AcctGatherNodeFreq=%s: %s" % (es["freq"], describe(jobs)))
    for node, (step_j, truth, job_j) in jobs.items():
        assert step_j is not None, describe(jobs)
        assert job_j == step_j, (node, job_j, step_j)
        assert abs(step_j - truth) / truth < TOLERANCE, describe(jobs)


def test_starved_calls_said_once(es, jobs):
    """Once the jobs ran (over 70 s of slurmctld's life): with
    AcctGatherNodeFreq=1 the notice is there exactly once; without it
    there is none, and slurmctld's update calls are seen coming."""
    text = log_text(es["cluster"], "slurmctld")
    notices = STARVED.findall(text)
    calls = re.findall(r"ext_sensors/meters: update call", text)
    if es["freq"] == "1":
        assert len(notices) == 1, notices
    else:
        assert not notices, notices
        assert len(calls) >= 5, "%d update calls" % len(calls)
