"""The cluster power cap's two programs on loopback (issue #45):
slurm-energy-powercapd and four slurm-energy-powercap-agent, each agent
over a fake RAPL tree (one 200 W package zone, min_pct 50: its limit is
the node's cap, 100..200 W) and asking its node's power from
se-fake-node-power, the real sampler and query server over a file's
watts (as it asks slurmd: a snapshot request).  Their messages go through
a munged of the test's own.  No Slurm cluster; about 6 s.

Demands: n1..n3 180 W (greedy), n4 90 W (a donor); cap 500 W over floors
of 100 W.  Checked on what the agents wrote into the fake sysfs: the caps
sum to at most the cap, none under its floor, the donor given its draw
plus headroom, the greedy ones alike; an agent stopped by SIGTERM restores
its node at once and the daemon charges that node its maximum (the others'
caps then sum to at most the cap minus 200 W); SIGHUP takes a new cap and
keeps the old file's when the new one is bad; a node whose jobs ended is
released (its zone at its default, charged its draw plus headroom) and
capped again when a job starts; a zone's limit reset by another tool is
written again at the next round; the daemon stopped, every
agent restores its defaults once its lease (1 s) lapses, not before; a
NodeClass line gives one node a range of its own.
Every process started here is stopped by its PID.
"""
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time

import pytest

from selab.powercap_rig import fake_rapl_zone, start_munged

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
OBJ = os.environ.get("SE_BUILD_OBJ", os.path.join(REPO, "_build", "obj"))
DAEMON = os.path.join(OBJ, "src", "powercap", "slurm-energy-powercapd")
AGENT = os.path.join(OBJ, "src", "powercap", "slurm-energy-powercap-agent")
POWER = os.path.join(OBJ, "tests", "powercap", "se-fake-node-power")

NODES = ["n1", "n2", "n3", "n4"]
DEMAND_W = {"n1": 180, "n2": 180, "n3": 180, "n4": 90}
CAP_W, FLOOR_W, MAX_W, HEADROOM_W = 500, 100, 200, 15
HOLD_S = 1
DEFAULT_UW = MAX_W * 1000000
PORT = 20000 + os.getpid() % 20000


def conf(knobs):
    return ("PowerCapWatts=%d\nPowerCapPeriod=0.2\nPowerCapRaiseGate=100\n"
            "PowerCapHoldSeconds=%d\nPowerCapHeadroomWatts=%d\n"
            "PowerCapFloorWatts=%d\nPowerCapMaxWatts=%d\n"
            "PowerCapKnobs=%s\nPowerCapNodes=%s\n"
            "PowerCapController=127.0.0.1:%d\n"
            % (CAP_W, HOLD_S, HEADROOM_W, FLOOR_W, MAX_W, knobs,
               ",".join(NODES), PORT))


def put(path, text):
    with open(path, "w") as f:
        f.write(text)


class Rig:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="se-powercapd-")
        os.chmod(self.dir, 0o755)   # munged: its socket's directory
        self.procs = {}

    def start(self, name, argv):
        # one process a name: a test that failed before stopping its
        # daemon, then a start of the next, left the first one running
        # (its Popen replaced) after close(), writing AdminComments into
        # the next module's jobs
        if name in self.procs:
            self.stop(name)
        log = open(os.path.join(self.dir, name + ".log"), "w")
        self.procs[name] = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log,
            stderr=subprocess.STDOUT)
        log.close()
        return self.procs[name]

    def stop(self, name, sig=signal.SIGTERM):
        """Its exit status; one that outlives 10 s after sig is killed
        (its status then -9, which the tests' checks refuse)."""
        p = self.procs.pop(name)
        if p.poll() is None:
            p.send_signal(sig)
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=10)
        return p.returncode

    def close(self):
        """Every process of the rig stopped, its directory removed."""
        for name in list(self.procs):
            self.stop(name)
        shutil.rmtree(self.dir, ignore_errors=True)

    def log(self, name):
        with open(os.path.join(self.dir, name + ".log")) as f:
            return f.read()

    def wait_for(self, path, what):
        deadline = time.monotonic() + 10
        while not os.path.exists(path):
            assert time.monotonic() < deadline, "no %s at %s" % (what, path)
            time.sleep(0.02)

    def zone(self, node):
        return os.path.join(self.dir, node, "intel-rapl:0")

    def fake_zone(self, node, max_uw, limit_uw):
        fake_rapl_zone(os.path.join(self.dir, node), max_uw, limit_uw)

    def start_munged(self, munged):
        self.munge = start_munged(self.dir, self.start, munged)

    def limit_w(self, node):
        """The zone's limit in W.  A regular file, not sysfs: the knob's
        write truncates it first, so an empty read is read again."""
        path = os.path.join(self.zone(node), "constraint_0_power_limit_uw")
        for _ in range(100):
            with open(path) as f:
                text = f.read()
            if text.strip():
                return int(text) / 1e6
            time.sleep(0.001)
        raise AssertionError("%s stays empty" % path)

    def agent(self, node):
        return self.start("agent-" + node, [
            AGENT, "-v", "-f", os.path.join(self.dir, node + ".conf"),
            "-n", node, "-q", os.path.join(self.dir, node + ".sock"),
            "--munge-socket", self.munge, "-u", "root"])

    def daemon(self, program=None, wrap=list):
        """slurm-energy-powercapd (program: another build's), its argv
        through wrap (a release root's chroot: Cluster.in_root)."""
        return self.start("daemon", wrap([
            program or DAEMON, "-v", "-f",
            os.path.join(self.dir, "powercapd.conf"),
            "-l", "127.0.0.1", "--munge-socket", self.munge]))


@pytest.fixture(scope="module")
def rig():
    for prog in (DAEMON, AGENT, POWER):
        if not os.access(prog, os.X_OK):
            pytest.fail("%s not built (make; or set SE_BUILD_OBJ)" % prog)
    munged = shutil.which("munged") or "/usr/sbin/munged"
    if not os.access(munged, os.X_OK):
        pytest.fail("munged not installed (package munge)")
    r = Rig()
    r.start_munged(munged)
    try:
        r.wait_for(r.munge, "munged socket")
        for n in NODES:
            r.fake_zone(n, DEFAULT_UW, 123000000)
            put(os.path.join(r.dir, n + ".watts"), "%d\n" % DEMAND_W[n])
            put(os.path.join(r.dir, n + ".conf"),
                conf("rapl:root=%s:min_pct=50" % os.path.join(r.dir, n)))
            r.start("power-" + n, [POWER, os.path.join(r.dir, n + ".sock"),
                                   os.path.join(r.dir, n + ".watts"), "50"])
        put(os.path.join(r.dir, "powercapd.conf"), conf("rapl") +
            "PowerCapStateFile=%s\n" % os.path.join(r.dir, "state"))
        for n in NODES:
            r.wait_for(os.path.join(r.dir, n + ".sock"), "query socket")
        r.daemon()
        for n in NODES:
            r.agent(n)
        yield r
    finally:
        r.close()


def settled(rig, nodes, budget_w, timeout=5.0):
    """The nodes' caps once three reads 0.2 s apart agree, all capped."""
    deadline = time.monotonic() + timeout
    last = None
    same = 0
    while time.monotonic() < deadline:
        caps = {n: rig.limit_w(n) for n in nodes}
        same = same + 1 if caps == last else 0
        if same >= 2 and sum(caps.values()) <= budget_w + 0.01 * len(nodes):
            return caps
        last = caps
        time.sleep(0.2)
    raise AssertionError("caps not settled under %g W: %s\n%s" % (
        budget_w, last, rig.log("daemon")))


def test_restored_at_start(rig):
    # the fixture wrote 123 W: each agent restores the zone's max at start
    deadline = time.monotonic() + 5
    while not all("restored" in rig.log("agent-" + n) for n in NODES):
        assert time.monotonic() < deadline, rig.log("agent-n1")
        time.sleep(0.05)
    # and each is connected (the caps below are the four nodes' shares)
    while not all("node %s: agent connected" % n in rig.log("daemon")
                  for n in NODES):
        assert time.monotonic() < deadline, rig.log("daemon")
        time.sleep(0.05)


def test_caps_hold_the_cap_over_floors(rig):
    caps = settled(rig, NODES, CAP_W)
    assert sum(caps.values()) <= CAP_W + 0.004, caps   # 1 mW per node
    assert all(FLOOR_W <= c <= MAX_W for c in caps.values()), caps
    # the donor keeps its draw plus headroom (hysteresis 5 W)
    assert abs(caps["n4"] - (DEMAND_W["n4"] + HEADROOM_W)) <= 5, caps
    # the greedy nodes share the rest alike, and it is all handed out
    greedy = [caps[n] for n in ("n1", "n2", "n3")]
    assert max(greedy) - min(greedy) <= 0.01, caps
    assert sum(caps.values()) >= CAP_W - 6, caps
    # the daemon's figures: once every node is under control (none
    # charged its maximum: before the agents' first answers the silent
    # nodes' maxima alone exceed the cap), caps plus charges <= the cap
    rounds = re.findall(r"round (\d+): power ([\d.]+) W, caps ([\d.]+) W "
                        r"of [\d.]+ W .* unenforced (\d+)",
                        rig.log("daemon"))
    held = [r for r in rounds if r[3] == "0"]
    assert len(held) >= 3, rig.log("daemon")
    assert all(float(r[2]) <= CAP_W for r in held), held
    # the mean power the agents sent: the files' watts
    assert abs(float(rounds[-1][1]) - sum(DEMAND_W.values())) < 1, rounds


def test_state_file_published(rig):
    # PowerCapStateFile: what cli_filter/energy_policy tells users at
    # submit (its parsing and the user's line: test_powercap_state)
    settled(rig, NODES, CAP_W)
    with open(os.path.join(rig.dir, "state")) as f:
        lines = f.read().splitlines()
    assert lines[0] == "slurm-energy-powercap-state 1", lines
    st = dict(line.split("=", 1) for line in lines[1:])
    now = time.time()
    # written when the capping started (then every 5 s): the first
    # round's figures, some nodes capped, the draw not yet all known
    assert st["capping"] == "yes" and 1 <= int(st["capped_nodes"]) <= 4, st
    assert st["nodes"] == "4" and float(st["cap_w"]) == CAP_W, st
    assert 0 <= float(st["power_w"]) <= sum(DEMAND_W.values()) + 1, st
    # rewritten every 5 s at most, valid for 3 of those
    assert now - 6 <= int(st["time"]) <= now + 1, (st, now)
    assert int(st["valid_until"]) == int(st["time"]) + 15, st
    assert 0 < int(st["since"]) <= int(st["time"]), st
    assert re.search(r"capping started \([1-4] of 4 nodes below their "
                     r"maximum\): .*/state written", rig.log("daemon"))
    assert not os.path.exists(os.path.join(rig.dir, "state.tmp"))


def test_agent_stopped_restores_and_is_charged_max(rig):
    assert rig.stop("agent-n1") == 0
    assert rig.limit_w("n1") == MAX_W          # restored at exit, at once
    assert "restored" in rig.log("agent-n1").splitlines()[-1]
    # charged its 200 W: the three others hold 300 W, each at its floor
    caps = settled(rig, ["n2", "n3", "n4"], CAP_W - MAX_W)
    assert all(abs(c - FLOOR_W) < 0.01 for c in caps.values()), caps
    # from the round after the connection closed, not silent_ns later
    after = rig.log("daemon").split("node n1: agent gone", 1)[1]
    assert re.search(r"round \d+: .* unenforced 1,", after).start() == \
        after.index("round "), after
    # back: capped again at its share
    rig.agent("n1")
    deadline = time.monotonic() + 5
    while rig.log("daemon").count("node n1: agent connected") < 2:
        assert time.monotonic() < deadline, rig.log("daemon")
        time.sleep(0.05)
    caps = settled(rig, NODES, CAP_W)
    assert rig.limit_w("n1") < MAX_W and FLOOR_W <= rig.limit_w("n1")


def test_sighup_reloads_a_good_file_keeps_the_old_on_a_bad_one(rig):
    path = os.path.join(rig.dir, "powercapd.conf")
    put(path, conf("rapl").replace("PowerCapWatts=%d" % CAP_W,
                                   "PowerCapWatts=450"))
    rig.procs["daemon"].send_signal(signal.SIGHUP)
    caps = settled(rig, NODES, 450)
    assert sum(caps.values()) >= 450 - 6, caps
    assert "reloaded %s: 4 nodes, cap 450 W" % path in rig.log("daemon")
    # the nodes stayed capped through the reload (its state carried over:
    # caps, answers, sequence numbers the agents take)
    assert not re.search(r"unenforced [1-9]",
                         rig.log("daemon").split("reloaded", 1)[1])
    put(path, conf("rapel"))
    rig.procs["daemon"].send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while "the old configuration kept" not in rig.log("daemon"):
        assert time.monotonic() < deadline, rig.log("daemon")
        time.sleep(0.05)
    assert "PowerCapKnobs=rapel: unknown knob 'rapel'" in rig.log("daemon")
    assert settled(rig, NODES, 450) == caps
    put(path, conf("rapl"))
    rig.procs["daemon"].send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 5
    while any(rig.limit_w(n) < 120 for n in NODES[:3]):  # 131.67 W back
        assert time.monotonic() < deadline, rig.log("daemon")
        time.sleep(0.05)
    settled(rig, NODES, CAP_W)


def test_idle_node_released_then_capped_again(rig):
    """n4's jobs end (its snapshot lists no running step, the agent's JOB
    flag clear): the next rounds release it, its zone back at its default
    (the agent sent RESTORE), charged max(draw + headroom, floor) = 100 W,
    so the three busy nodes share 400 W; a job on it again (drawing 90 W):
    capped again at its draw plus headroom."""
    put(os.path.join(rig.dir, "n4.watts"), "60 idle\n")
    deadline = time.monotonic() + 5
    while rig.limit_w("n4") != MAX_W:
        assert time.monotonic() < deadline, rig.log("daemon")
        time.sleep(0.05)
    released = settled(rig, ["n1", "n2", "n3"], CAP_W - FLOOR_W)
    assert sum(released.values()) >= CAP_W - FLOOR_W - 6, released
    assert re.search(r"round \d+: .* released 1,", rig.log("daemon"))
    assert rig.limit_w("n4") == MAX_W
    put(os.path.join(rig.dir, "n4.watts"), "%d\n" % DEMAND_W["n4"])
    caps = settled(rig, NODES, CAP_W)
    assert abs(caps["n4"] - (DEMAND_W["n4"] + HEADROOM_W)) <= 5, caps
    print("n4 released: n1..n3 at %s W; n4 capped again at %s W" % (
        sorted(released.values()), caps["n4"]))


def test_limit_reset_behind_the_agent_written_again(rig):
    """n2's zone set back to its 200 W default by another tool while its
    cap stays: the agent's next report (a round, 0.2 s) finds the read-back
    moved since its write, writes the cap again and logs it."""
    caps = settled(rig, NODES, CAP_W)
    path = os.path.join(rig.zone("n2"), "constraint_0_power_limit_uw")
    t0 = time.monotonic()
    put(path, "%d\n" % DEFAULT_UW)
    deadline = t0 + 3
    while rig.limit_w("n2") != caps["n2"]:
        assert time.monotonic() < deadline, rig.log("agent-n2")
        time.sleep(0.02)
    took = time.monotonic() - t0
    assert "set behind the agent's back, written again" in \
        rig.log("agent-n2"), rig.log("agent-n2")
    print("n2's limit reset to %d W: its cap %.2f W again after %.2f s"
          % (MAX_W, caps["n2"], took))


def test_daemon_stopped_leases_lapse(rig):
    before = {n: rig.limit_w(n) for n in NODES}
    assert all(c < MAX_W for c in before.values()), before
    t0 = time.monotonic()
    assert rig.stop("daemon") == 0
    # held for the lease, at the last caps
    time.sleep(HOLD_S * 0.5)
    assert {n: rig.limit_w(n) for n in NODES} == before
    deadline = t0 + HOLD_S + 2
    while any(rig.limit_w(n) != MAX_W for n in NODES):
        assert time.monotonic() < deadline, {n: rig.limit_w(n)
                                             for n in NODES}
        time.sleep(0.02)
    took = time.monotonic() - t0
    # the lease runs from the last cap (a period, 0.2 s, before the stop
    # at most, if the daemon's loop is on time; 0.45 s allows for a busy
    # machine); the agent's timer ticks every 0.1 s
    assert HOLD_S - 0.45 <= took <= HOLD_S + 0.5, took
    assert all("lease lapsed" in rig.log("agent-" + n) for n in NODES)


def test_daemon_restarted_caps_again(rig):
    # its sequence numbers start above its last run's: the agents take them
    rig.daemon()
    deadline = time.monotonic() + 5
    while any(rig.limit_w(n) == MAX_W for n in NODES):
        assert time.monotonic() < deadline, rig.log("daemon")
        time.sleep(0.05)
    caps = settled(rig, NODES, CAP_W)
    assert all(FLOOR_W <= c < MAX_W for c in caps.values()), caps


def test_node_class_own_range(rig):
    """A NodeClass gives n4 a range of its own: a 400 W zone, 200..400 W
    (the file's nodes 100..200 W), drawing 380 W.  Cap 700 W over floors
    of 500 W: the 200 W above them go to the four greedy nodes at one level
    of their own ranges, 0.4: n1..n3 140 W, n4 280 W, beyond the 200 W the
    file's maximum would allow it (its agent and the daemon both read the
    class)."""
    big = "NodeClass=big Nodes=n4 FloorWatts=200 MaxWatts=400\n"
    rig.stop("agent-n4")
    shutil.rmtree(os.path.join(rig.dir, "n4"))
    rig.fake_zone("n4", 400000000, 400000000)
    put(os.path.join(rig.dir, "n4.watts"), "380\n")
    put(os.path.join(rig.dir, "n4.conf"), conf("rapl:root=%s:min_pct=50" % (
        os.path.join(rig.dir, "n4"))) + big)
    path = os.path.join(rig.dir, "powercapd.conf")
    put(path, conf("rapl").replace("PowerCapWatts=%d" % CAP_W,
                                   "PowerCapWatts=700") + big)
    check = subprocess.run([DAEMON, "--check-config", "-f", path],
                           capture_output=True, text=True, timeout=10)
    assert check.returncode == 0 and check.stdout.splitlines() == [
        "%s: 4 nodes, cap 700 W, floors 500 W: OK" % path,
        "  NodeClass=big: 1 node, 200..400 W, knobs rapl"], check
    rig.daemon()
    rig.agent("n4")
    want = {"n1": 140, "n2": 140, "n3": 140, "n4": 280}

    def there():        # within the hysteresis of the level's caps
        return all(abs(rig.limit_w(n) - want[n]) <= 5 for n in NODES)

    deadline = time.monotonic() + 8
    while not there():
        assert time.monotonic() < deadline, (
            {n: rig.limit_w(n) for n in NODES}, rig.log("daemon"))
        time.sleep(0.05)
    caps = settled(rig, NODES, 700)
    assert all(abs(caps[n] - want[n]) <= 5 for n in NODES), caps
    assert sum(caps.values()) <= 700 + 0.004, caps
    print("NodeClass big: n4 at %.2f W of 200..400, n1..n3 at %s W"
          % (caps["n4"], sorted(caps[n] for n in NODES[:3])))
