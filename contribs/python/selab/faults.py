"""Faults on the test cluster: what every fault test asserts (issue #14).

Each fault test runs jobs while a meter, a daemon or a node's clock
misbehaves, and then asserts the same things:

- the job completes on time (``job_on_time``);
- no daemon crashed or hung: every pid the cluster recorded is alive and
  ``scontrol show node`` answers in under 1 s, checked all through the
  fault by a ``Watchdog`` (a correctness bound on a hang, not a timing);
- the job's energy is never lower than what was measured before the fault
  (``step_energy_now`` read with sstat as the fault starts) and never counts
  the fault as energy: it stays within the tolerance of the trace's truth
  plus what the man page says a bridged gap may miss (``check_bounds``);
- the gap is marked in the log, once per fault, not once per failed read
  (``LogMark.lines`` counts the lines written since the mark).

Helpers to cause faults that are not a meter's: ``restart`` (a daemon, by
its pid file, through ``contribs/cluster/cluster restart``) and
``FakeClock`` (a wall-clock step on one node, tests/clockstep).
"""
import os
import re
import subprocess
import threading
import time

from selab.meters import kill_unfinished

SHOW_NODE_BOUND_S = 1.0


# ---------------------------------------------------------------- daemons
def dead_daemons(cluster):
    """Names of the cluster's daemons whose recorded pid is gone (a pid
    file that was removed, e.g. while `cluster restart` runs, is skipped)."""
    dead = []
    for name, pid in cluster.pids().items():
        try:
            with open("/proc/%d/stat" % pid) as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            state = "gone"
        if state in ("Z", "X", "gone"):
            dead.append(name)
    return dead


def show_node_s(cluster, node):
    """Seconds `scontrol show node NODE` took; raises if it failed."""
    t = time.monotonic()
    cluster.scontrol("show", "node", node, timeout=30)
    return time.monotonic() - t


def restart(cluster, name):
    """Restart one daemon (slurmctld, slurmd-nodeN) as a crash or an admin
    would: stop it by its pid, start it again, wait for its start line."""
    p = subprocess.run([cluster.script, "restart", name], env=cluster.env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("cluster restart %s failed:\n%s%s"
                             % (name, p.stdout, p.stderr))


class Watchdog:
    """Polls `scontrol show node` of every node and the daemons' pids in a
    thread while faults happen; ``check()`` asserts it never saw an answer
    slower than SHOW_NODE_BOUND_S or a dead daemon.  ``pause()`` during a
    deliberate restart of slurmctld (no controller to answer, by design).
    """

    def __init__(self, cluster, nodes, interval=0.5):
        self.cluster, self.nodes, self.interval = cluster, nodes, interval
        self.slow, self.dead, self.errors = [], set(), []
        self.samples = 0
        self.worst_s = 0.0
        self._gone = {}         # {name: pid} seen dead at the last poll
        self._paused = threading.Event()
        self._pauses = 0        # a sample overlapping a pause is void
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(30)

    def pause(self):
        self._pauses += 1
        self._paused.set()

    def resume(self):
        self._paused.clear()

    def _run(self):
        while not self._stop.wait(self.interval):
            if self._paused.is_set():
                continue
            for node in self.nodes:
                pauses = self._pauses
                try:
                    s = show_node_s(self.cluster, node)
                except Exception as e:  # a daemon down is found below
                    if not self._paused.is_set() and \
                            pauses == self._pauses:
                        self.errors.append("%s: %s" % (node, e))
                    continue
                if pauses != self._pauses:
                    continue    # began before a deliberate restart
                self.samples += 1
                self.worst_s = max(self.worst_s, s)
                if s >= SHOW_NODE_BOUND_S and not self._paused.is_set():
                    self.slow.append((node, round(s, 3)))
            if not self._paused.is_set():
                self._check_pids()

    def _check_pids(self):
        """A daemon is dead when its pid file names the same dead pid at
        two polls in a row: `cluster restart` removes the pid file only
        once it has seen the old process exit, a moment a single poll
        may fall into; a crash leaves the file for good."""
        try:            # a pid file being rewritten reads empty
            pids = self.cluster.pids()
            gone = {name: pids.get(name)
                    for name in dead_daemons(self.cluster)}
        except (OSError, ValueError, IndexError):
            return
        self.dead.update(name for name, pid in gone.items()
                         if pid is not None and self._gone.get(name) == pid)
        self._gone = gone

    def check(self):
        assert self.samples, "the watchdog never got an answer"
        assert not self.dead, "daemons died: %s" % sorted(self.dead)
        assert not self.slow, ("scontrol show node took >= %.1f s: %s"
                               % (SHOW_NODE_BOUND_S, self.slow))
        assert not self.errors, "scontrol show node failed: %s" % self.errors


# ------------------------------------------------------------------- logs
class LogMark:
    """Lines a daemon's log gets after the mark (the log only grows)."""

    def __init__(self, cluster, name):
        self.path = os.path.join(cluster.state, "log", "%s.log" % name)
        self.offset = os.path.getsize(self.path) if os.path.exists(
            self.path) else 0

    def text(self):
        with open(self.path, errors="replace") as handle:
            handle.seek(self.offset)
            return handle.read()

    def lines(self, pattern):
        """The new lines matching the regular expression *pattern*."""
        rx = re.compile(pattern)
        return [l for l in self.text().splitlines() if rx.search(l)]


def assert_marked(mark, pattern, at_most, what, at_least=1):
    """The fault is in the log (at least once) and rate-limited (at most
    *at_most* lines, however many reads failed)."""
    lines = mark.lines(pattern)
    assert at_least <= len(lines) <= at_most, (
        "%s: %d log lines match %r in %s (want %d..%d):\n%s"
        % (what, len(lines), pattern, mark.path, at_least, at_most,
           "\n".join(lines[:20])))
    return lines


# ----------------------------------------------------------------- energy
def step_energy_now(cluster, jobid, step=0):
    """The running step's energy so far (J, sstat), or None before any."""
    p = cluster.run(["sstat", "-n", "-P", "-j", "%d.%d" % (jobid, step),
                     "-o", "ConsumedEnergyRaw"], check=False, timeout=20)
    raw = p.stdout.strip().splitlines()
    return int(raw[0]) if raw and raw[0].strip().isdigit() else None


def check_bounds(what, recorded, truth, before_fault, tolerance, extra_j=0.0):
    """The fault's energy rules: never below what was measured before the
    fault, and within tolerance x truth + extra_j of the truth (a fault
    counted as energy, or energy lost to it, breaks the second)."""
    assert recorded is not None, "%s: no energy recorded" % what
    if before_fault is not None:
        assert recorded >= before_fault, (
            "%s: %d J recorded, below the %d J measured before the fault"
            % (what, recorded, before_fault))
    bound = tolerance * truth + extra_j
    assert abs(recorded - truth) <= bound, (
        "%s: %d J recorded, true %.0f J (%+.2f%%), allowed +/-%.0f J"
        % (what, recorded, truth, 100.0 * (recorded - truth) / truth, bound))
    return "%s: %d J, true %.1f J (%+.3f%%, allowed +/-%.0f J)" % (
        what, recorded, truth, 100.0 * (recorded - truth) / truth, bound)


def job_on_time(started_mono, job_s, slack_s):
    """The srun returned within its work plus launch/teardown slack."""
    took = time.monotonic() - started_mono
    assert took < job_s + slack_s, ("job took %.1f s for %.0f s of work "
                                    "(allowed %.0f s)"
                                    % (took, job_s, job_s + slack_s))
    return took


# ------------------------------------------------------------ clock step
def clockstep_lib():
    """tests/clockstep's LD_PRELOAD library in the build tree."""
    build = os.environ.get("SE_BUILD_DIR", os.path.join(
        os.path.dirname(__file__), "..", "..", "..", "_build"))
    return os.environ.get("SE_CLOCKSTEP_LIB", os.path.join(
        os.path.abspath(build), "obj", "tests", "clockstep", ".libs",
        "libseclockstep.so"))


class FakeClock:
    """A wall-clock step on one node only.

    The nodes share the host's kernel clock, which must not be stepped, and
    CLOCK_REALTIME has no per-namespace offset (time namespaces offset only
    the monotonic and boot clocks).  So tests/clockstep's library is
    preloaded into that node's slurmd (its slurmstepds inherit it) with an
    offset file: writing another offset steps the node's wall clock by that
    much, mid-job, as an NTP step would, and CLOCK_MONOTONIC is left alone,
    as a real step leaves it.  (libfaketime, the obvious tool, breaks every
    absolute CLOCK_MONOTONIC wait once told not to fake that clock: see
    tests/clockstep/se_clockstep.c.)  ``install`` writes the variables into
    the node's env file; the next `cluster restart slurmd-NODE` uses them.
    """

    def __init__(self, cluster, node, workdir):
        self.cluster, self.node = cluster, node
        self.file = os.path.join(workdir, "clockstep-%s" % node)
        self.offset_s = 0.0
        self._write(0.0)

    def _write(self, offset_s):
        tmp = self.file + ".tmp"
        with open(tmp, "w") as handle:
            handle.write("%+.3f\n" % offset_s)
        os.replace(tmp, self.file)
        self.offset_s = offset_s

    def install(self):
        lib = clockstep_lib()
        if not os.path.exists(lib):
            raise FileNotFoundError("%s not built (make in the build tree)"
                                    % lib)
        env = os.path.join(self.cluster.node_dir(self.node), "env")
        with open(env) as handle:
            if "SE_CLOCKSTEP_FILE" in handle.read():
                return
        with open(env, "a") as handle:
            handle.write("export LD_PRELOAD=%s\nexport SE_CLOCKSTEP_FILE=%s\n"
                         % (lib, self.file))

    def step(self, seconds):
        """Step the node's wall clock by *seconds* (either sign)."""
        self._write(self.offset_s + seconds)


class Round:
    """One job per node at once, a Watchdog around them, and the clock of
    a timed fault script: with it, rnd.at(S) sleeps until S seconds after
    t0; rnd[node] is that node's job.  A test module subclasses it:
    start_jobs() starts the jobs and returns {node: job} (each job with a
    subprocess .proc and a .finish() that waits for it and its record),
    setting self.t0 where its time 0 is (else it is when they started).
    On a clean exit every job is finished, then the watchdog checked; a
    job still running on the way out is killed."""

    def __init__(self, cluster, nodes, tag):
        self.c, self.nodes, self.tag = cluster, nodes, tag
        self.jobs = {}
        self.dog = Watchdog(cluster, nodes)
        self.t0 = None

    def start_jobs(self):
        raise NotImplementedError

    def __enter__(self):
        self.dog.__enter__()
        self.jobs = self.start_jobs()
        if self.t0 is None:
            self.t0 = time.monotonic()
        return self

    def at(self, seconds):
        """Sleep until *seconds* after t0."""
        left = self.t0 + seconds - time.monotonic()
        if left > 0:
            time.sleep(left)

    def __getitem__(self, node):
        return self.jobs[node]

    def __exit__(self, exc_type, *exc):
        try:
            if exc_type is None:
                for job in self.jobs.values():
                    job.finish()
        finally:
            self.dog.__exit__()
            kill_unfinished(job.proc for job in self.jobs.values())
        if exc_type is None:
            self.dog.check()
            print("%s: watchdog %d answers, worst %.3f s" % (
                self.tag, self.dog.samples, self.dog.worst_s))
