"""The power cap's redfish knob (src/powercap/pcap_knob_redfish.c, issue
#45) against the Redfish simulator's Controls/PowerLimit (the DMTF's
public-rackmount1: SetPoint 500 W, AllowableMin 150, AllowableMax 1000),
through se-powercap-node, the rigs' tool over the knobs; what the BMC holds
is read back with the suite's own Redfish client, not the knob.

No Slurm cluster.  Needs the build (SE_BUILD_OBJ, default _build/obj; a
build with libcurl and json-c), the stage install (se-trace) and the
mockups ($SE_REDFISH_MOCKUPS).  Every process started here is stopped by
its PID.
"""
import datetime
import math
import os
import subprocess
import time

import pytest

from selab import fixtures
from selab import redfish_rig as rr
from selab.capped import capped_joules, capped_watts, read_cap_log
from selab.files import write_file
from selab.trace import Trace

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(os.environ.get("SE_BUILD_OBJ", os.path.join(
    REPO, "_build", "obj")), "contribs", "powercap", "se-powercap-node")
CONTROL = rr.BMC_CHASSIS + "/Controls/PowerLimit"
TRACE_TEXT = "time n1\n0 400\n100000 400\n"
# a node whose demand ramps 300..700 W and back every 6 s: the limits below
# cut the ramps, so the truth has crossings inside the sensing intervals
RAMP_TEXT = "@repeat 6\ntime n1\n0 300\n3 700\n6 300\n"
SENSORS = rr.BMC_CHASSIS + "/Sensors/"
KWH_J = 3.6e6
START_KWH = 8765.4321           # the simulator's default: in service

workdir = fixtures.workdir("se-powercap-redfish-")
trace_file = fixtures.trace_file(TRACE_TEXT)
certs = fixtures.certs()


@pytest.fixture(scope="module")
def bmc(trace_file, certs):
    if not os.access(TOOL, os.X_OK):
        pytest.fail("%s not built (make; or set SE_BUILD_OBJ)" % TOOL)
    sim = rr.start_sim(trace_file, time.time(), column="n1", certs=certs)
    yield sim
    sim.stop()


def knob(bmc, certs, *extra):
    return ":".join(["redfish:host=127.0.0.1", "port=%d" % bmc.port,
                     "ca_file=%s" % certs["ca"], "control=" + CONTROL,
                     "user=" + bmc.user,
                     "password_file=" + bmc.password_file] + list(extra))


def node(spec, *args, floor=200, top=1200):
    """se-powercap-node over a 200..1200 W node: (exit, stdout, stderr)."""
    p = subprocess.run([TOOL, "--knobs", spec, "--floor", str(floor),
                        "--max", str(top)] + list(args),
                       capture_output=True, text=True, timeout=30)
    return p.returncode, p.stdout.strip(), p.stderr.strip()


def held(bmc, certs):
    """(SetPoint, ControlMode) as the BMC serves them."""
    c = rr.Client(bmc.url, ca=certs["ca"])
    try:
        assert c.login(bmc.user, bmc.password).status == 201
        res = c.get(CONTROL).json()
    finally:
        c.close()
    return res["SetPoint"], res["ControlMode"]


def test_apply_read_restore(bmc, certs):
    spec = knob(bmc, certs)
    # node 200..1200 W over the Control's 150..1000 W: 700 W is half-way
    assert node(spec, "apply", "700") == (0, "700.000 W", "")
    assert held(bmc, certs) == (575, "Automatic")
    assert node(spec, "read") == (0, "700.000 W", "")
    # below the node's floor: the Control's AllowableMin, never less
    assert node(spec, "apply", "50")[0] == 0
    assert held(bmc, certs) == (150, "Automatic")
    assert node(spec, "restore") == (0, "1200.000 W", "")
    assert held(bmc, certs)[1] == "Disabled"
    # basic authentication, and min_w narrowing the range
    rc, out, err = node(knob(bmc, certs, "auth=basic", "min_w=300"),
                        "apply", "200")
    assert (rc, err) == (0, "")
    assert held(bmc, certs) == (300, "Automatic")
    node(spec, "restore")


def test_errors_named(bmc, certs, workdir):
    wrong = os.path.join(workdir, "wrong-password")
    with open(wrong, "w") as h:
        h.write("Sekr1tWrong\n")
    rc, _, err = node(knob(bmc, certs).replace(bmc.password_file, wrong),
                      "read")
    assert rc == 1
    assert "redfish: login as admin at https://127.0.0.1:%d: HTTP 401" \
        % bmc.port in err
    assert "Sekr1t" not in err
    rc, _, err = node(knob(bmc, certs).replace(
        "/Controls/PowerLimit", "/Controls/Nope"), "read")
    assert rc == 1 and "HTTP 404" in err and "no resource" in err
    # a range with nothing in it
    rc, _, err = node(knob(bmc, certs, "max_w=100"), "read")
    assert rc == 1 and "no usable AllowableMin/AllowableMax" in err
    # TLS verified: without the CA the certificate is refused
    rc, _, err = node(knob(bmc, certs).replace(
        "ca_file=%s:" % certs["ca"], ""), "read")
    assert rc == 1 and "redfish: POST https://127.0.0.1" in err
    rc, _, err = node("redfish:host=127.0.0.1", "read")
    assert rc == 1 and "needs host=H and control=" in err


def _sensor(client, name, epoch, interval):
    """(trace time of its reading, Reading) of a chassis sensor: its
    ReadingTime (ms) snapped to the tick it stands for."""
    res = client.read(SENSORS + name)
    wall = datetime.datetime.fromisoformat(res["ReadingTime"]).timestamp()
    return round((wall - epoch) / interval) * interval, res["Reading"]


def test_node_draws_under_the_limit(certs, workdir):
    """With --follow-limit the simulated node draws min(demand, SetPoint)
    while the Control is not Disabled: the knob's every apply and restore
    shows in the cap log at the moment the BMC took it, and every power and
    exact-energy reading the BMC serves is selab.capped's truth over that
    log (an implementation apart from the se-trace capped the simulator
    integrates with)."""
    trace = write_file(os.path.join(workdir, "ramp.trace"), RAMP_TEXT)
    caplog = os.path.join(workdir, "ramp.caps")
    epoch = time.time() - 100.37        # ticks off whole seconds
    sim = rr.start_sim(trace, epoch, column="n1", certs=certs,
                       sensing_interval=0.5,
                       extra_args=["--follow-limit", "--cap-log", caplog])
    spec, reads, took, held_w = knob(sim, certs), [], [], []
    client = rr.Client(sim.url, ca=certs["ca"])
    try:
        assert client.login(sim.user, sim.password).status == 201
        # node caps 200..1200 W over the Control's 150..1000 W
        for step in (("apply", "700"), ("apply", "450"), ("restore",),
                     ("apply", "300")):
            before = time.time()
            assert node(spec, *step)[0] == 0
            took.append((before - epoch, time.time() - epoch))
            sp, mode = held(sim, certs)
            held_w.append(math.inf if mode == "Disabled" else sp)
            end = time.time() + 1.5
            while time.time() < end:
                reads.append((_sensor(client, "TotalPower", epoch, 0.5),
                               _sensor(client, "TotalEnergyJoules", epoch,
                                       0.5)))
                time.sleep(0.1)
    finally:
        client.close()
        sim.stop()
    history = read_cap_log(caplog, "n1")
    # the mockup's own limit (Automatic, 500 W) at start, then each step
    assert [w for _, w in history] == [500.0] + held_w
    for (when, _), (lo, hi) in zip(history[1:], took):
        assert lo <= when <= hi, (when, lo, hi)
    truth = Trace(trace)
    worst_w = worst_j = bit = 0.0
    for (tw, watts), (tj, joules) in reads:
        worst_w = max(worst_w, abs(watts - capped_watts(
            truth, "n1", tw, history)))
        bit = max(bit, truth.watts("n1", tw) - watts)
        true_j = START_KWH * KWH_J + capped_joules(truth, "n1", 0, tj,
                                                   history)
        worst_j = max(worst_j, abs(joules - math.floor(true_j)))
    print("\n%d reads: power within %.3f W, energy within %.0f J of the "
          "capped truth; the cap took up to %.1f W off the demand"
          % (len(reads), worst_w, worst_j, bit))
    assert len(reads) >= 40
    assert worst_w <= 0.051       # Reading rounded to 0.1 W
    assert worst_j <= 1           # whole joules, floored
    assert bit >= 100             # the limits did bite
