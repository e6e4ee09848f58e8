"""The Redfish simulator (contribs/redfish-sim) holds to the trace's truth,
to the Redfish session rules, to its faults, and to the DMTF's validator.

The Redfish meter's tests (issue #41) run against this simulator, so what
they prove rests on it: here its counters are held to selab.trace (an
implementation of the trace semantics separate from the se-trace the
simulator plays through), its sessions and faults to what a client must
see, and its resources to the DMTF's redfish-service-validator, offline
against ../shared/redfish/csdl, next to sushy-static serving the same
mockups unmodified (a peer we did not write: ours must add no failure).

No Slurm cluster.  Needs the stage install (se-trace; SE_BIN_DIR), the
mockups ($SE_REDFISH_MOCKUPS, default ../shared/redfish/mockups) and, for
the validator and sushy-static, the venv of contribs/test-all.sh
($SE_REDFISH_PYTHON).  Every process started here is stopped by its PID.
"""
import datetime
import http.client
import json
import math
import socket
import ssl
import time

import pytest

from selab import fixtures
from selab import redfish_rig as rr
from selab.trace import Trace

KWH_J = 3.6e6
START_KWH = 8765.4321           # the simulator's default: in service
C = rr.BMC_CHASSIS
PSUS = C + "/PowerSubsystem/PowerSupplies"
# power that moves within a few seconds (ramps and steps, repeating), high
# enough (a GPU node's kW) that a 1 Wh kWh step comes every few seconds
TRACE_TEXT = """# test_redfish_sim: ramps and steps, 12 s period
@repeat 12
time n1   n2
0    1000 900
3    3200 900
3    1400 300
8    1400 1500
12   1000 1500
"""


workdir = fixtures.workdir("se-redfish-sim-")
trace_file = fixtures.trace_file(TRACE_TEXT)
certs = fixtures.certs()


@pytest.fixture(scope="module")
def truth(trace_file):
    return Trace(trace_file)


@pytest.fixture(scope="module")
def epoch():
    # a fractional epoch 1000 s back: ticks are not on whole seconds
    return time.time() - 1000.37


@pytest.fixture(scope="module")
def bmc(trace_file, epoch, certs):
    sim = rr.start_sim(trace_file, epoch, column="n1", certs=certs)
    yield sim
    sim.stop()


@pytest.fixture
def client(bmc, certs):
    c = rr.Client(bmc.url, ca=certs["ca"])
    assert c.login(bmc.user, bmc.password).status == 201
    yield c
    bmc.fault("")
    c.close()


def when(stamp):
    return datetime.datetime.fromisoformat(stamp).timestamp()


def on_tick(stamp, epoch, interval):
    """The exact tick (epoch + k x interval) a ReadingTime or
    SensorResetTime (ms precision) says."""
    k = (when(stamp) - epoch) / interval
    assert abs(k - round(k)) * interval < 0.001, \
        "%s is not a tick of the epoch" % stamp
    return epoch + round(k) * interval


def consistent(client, uris, epoch, interval):
    """The resources read within one sensing tick (read again when a tick
    fell between the reads): {uri: resource}, and the tick's wall time."""
    for _ in range(5):
        first = client.read(C + "/Sensors/TotalPower")["ReadingTime"]
        got = {u: client.read(u) for u in uris}
        if client.read(C + "/Sensors/TotalPower")["ReadingTime"] == first:
            return got, on_tick(first, epoch, interval)
    raise AssertionError("no two reads within one tick in 5 tries")


def counter_j(res, key=None):
    """An energy reading in joules (a Sensor, or an excerpt by key)."""
    exc = res[key] if key else res
    kind = key or res["ReadingType"]
    return exc["Reading"] * (KWH_J if "kWh" in kind else 1.0)


# ------------------------------------------------------------ readings
def test_readings_follow_the_trace(client, bmc, truth, epoch):
    """At a tick every source reads the trace: power exact to 0.05 W, the
    joules counter the start plus the exact integral to within its 1 J
    floor, the kWh counters to within their 1 Wh floor; the supplies split
    the node."""
    ps = [PSUS + "/Bay%d/Metrics" % i for i in (1, 2)]
    uris = [C + "/EnvironmentMetrics", C + "/Sensors/TotalEnergyJoules",
            C + "/Sensors/TotalEnergy", C + "/Power"] + ps
    got, tick = consistent(client, uris, epoch, bmc.interval)
    t = tick - epoch
    true_j = START_KWH * KWH_J + truth.joules("n1", 0, t)
    env = got[C + "/EnvironmentMetrics"]
    watts = truth.watts("n1", t)
    assert env["PowerWatts"]["Reading"] == pytest.approx(watts, abs=0.051)
    assert got[C + "/Power"]["PowerControl"][0]["PowerConsumedWatts"] == \
        pytest.approx(watts, abs=0.051)
    # floors of a counter in service (1e10 J: 2e-6 J of float rounding)
    joules = counter_j(env, "EnergyJoules")
    assert true_j - 1 - 0.001 <= joules <= true_j + 0.001
    assert counter_j(got[C + "/Sensors/TotalEnergyJoules"]) == joules
    kwh_j = counter_j(env, "EnergykWh")
    assert true_j - 3600 - 0.001 <= kwh_j <= true_j + 0.001, (kwh_j, true_j)
    assert env["EnergykWh"]["LifetimeReading"] == env["EnergykWh"]["Reading"]
    assert counter_j(got[C + "/Sensors/TotalEnergy"]) == kwh_j
    # two supplies, 55 % and 45 %, each with its own 1 Wh floor
    p = [got[u]["InputPowerWatts"]["Reading"] for u in ps]
    assert p[0] == pytest.approx(0.55 * watts, abs=0.051)
    assert sum(p) == pytest.approx(watts, abs=0.1)
    e = [counter_j(got[u], "EnergykWh") for u in ps]
    assert true_j - 2 * 3600 - 0.001 <= sum(e) <= true_j + 0.001


def test_energy_over_a_window_is_the_trace(client, bmc, truth, epoch):
    """The counters' difference over about 4 s is the trace's true energy
    between the two ReadingTimes, within the counter's resolution."""
    uris = [C + "/Sensors/TotalEnergyJoules", C + "/Sensors/TotalEnergy"]
    a, ta = consistent(client, uris, epoch, bmc.interval)
    time.sleep(4 * bmc.interval)
    b, tb = consistent(client, uris, epoch, bmc.interval)
    assert tb - ta >= 3 * bmc.interval
    true_j = truth.joules("n1", ta - epoch, tb - epoch)
    got = {u: counter_j(b[u]) - counter_j(a[u]) for u in uris}
    # each reading floored: the difference is within one step either way
    assert got[uris[0]] == pytest.approx(true_j, abs=1.001), got
    assert got[uris[1]] == pytest.approx(true_j, abs=3600.001), got
    assert true_j > 3600      # the kWh check is not void


def test_readings_refresh_once_per_interval(client, bmc):
    """Within a tick every answer is the same reading; the next tick
    carries a ReadingTime later by a whole interval."""
    u = C + "/Sensors/TotalPower"
    a, b = client.read(u), client.read(u)
    if a["ReadingTime"] != b["ReadingTime"]:    # a tick fell between
        a, b = b, client.read(u)
    assert (a["ReadingTime"], a["Reading"]) == (b["ReadingTime"], b["Reading"])
    assert a["SensingInterval"] == "PT1S"
    time.sleep(bmc.interval * 1.05)
    c = client.read(u)
    steps = (when(c["ReadingTime"]) - when(a["ReadingTime"])) / bmc.interval
    assert steps >= 1 and abs(steps - round(steps)) < 0.002


@pytest.mark.parametrize("profile,present,absent", [
    ("joules", ["EnergyJoules", "PowerWatts"], ["EnergykWh"]),
    ("kwh", ["EnergykWh", "PowerWatts"], ["EnergyJoules"]),
    ("wh", ["PowerWatts"], ["EnergykWh", "EnergyJoules"]),
    ("power", ["PowerWatts"], ["EnergykWh", "EnergyJoules"]),
    ("legacy", [], []),
    ("none", [], []),
])
def test_profiles(trace_file, epoch, truth, profile, present, absent):
    """Each profile has its sources and none of the others: a missing
    source's property is gone and its resources answer 404."""
    sim = rr.start_sim(trace_file, epoch, column="n1", profile=profile)
    try:
        c = rr.Client(sim.url)
        c.basic = (sim.user, sim.password)
        if profile == "none":
            assert c.get(C + "/Power").status == 404
        else:
            legacy = c.read(C + "/Power")["PowerControl"][0]
            assert legacy["PowerConsumedWatts"] >= 1000
        modern = profile not in ("legacy", "none")
        sensors = {C + "/Sensors/TotalEnergy": "EnergykWh" in present,
                   C + "/Sensors/TotalEnergyJoules": "EnergyJoules" in present,
                   C + "/Sensors/TotalEnergyWh": profile == "wh",
                   C + "/Sensors/TotalPower": modern}
        for uri, there in sensors.items():
            assert c.get(uri).status == (200 if there else 404), uri
        if not modern:
            assert c.get(C + "/EnvironmentMetrics").status == 404
            assert c.get(C + "/PowerSubsystem").status == 404
            assert "EnvironmentMetrics" not in c.read(C)
            assert ("Power" in c.read(C)) == (profile == "legacy")
            return
        env = c.read(C + "/EnvironmentMetrics")
        assert [k for k in present if k not in env] == []
        assert [k for k in absent if k in env] == []
        m = c.read(PSUS + "/Bay1/Metrics")
        assert ("EnergykWh" in m) == (profile == "kwh")
        if profile == "kwh":    # 1 Wh resolution: 3 decimals at most
            r = env["EnergykWh"]["Reading"]
            assert round(r, 3) == r and r * 1000 == math.floor(r * 1000)
        if profile == "joules":
            assert isinstance(env["EnergyJoules"]["Reading"], int)
        if profile == "wh":     # whole Wh, as the kWh counter's floor
            wh = c.read(C + "/Sensors/TotalEnergyWh")
            assert wh["ReadingUnits"] == "W.h"
            assert isinstance(wh["Reading"], int)
            assert wh["Reading"] >= START_KWH * 1000
    finally:
        sim.stop()


def test_counter_reset(client, bmc, truth, epoch):
    """A reset (fault, or POST ResetMetrics) sends the counters back to 0
    at a tick: SensorResetTime says which, the reading is the trace's
    energy since then, LifetimeReading goes on."""
    u = C + "/Sensors/TotalEnergy"
    before = client.read(u)
    for how in ("fault", "action"):
        if how == "fault":
            bmc.fault("reset")
        else:
            r = client.request("POST", u + "/Actions/Sensor.ResetMetrics",
                               body={})
            assert r.status == 204
        time.sleep(2.2 * bmc.interval)
        got, tick = consistent(client, [u, C + "/Sensors/TotalEnergyJoules"],
                               epoch, bmc.interval)
        reset = on_tick(got[u]["SensorResetTime"], epoch, bmc.interval)
        assert reset != when(before["SensorResetTime"])
        assert 1.5 * bmc.interval <= tick - reset <= 4 * bmc.interval
        true_j = truth.joules("n1", reset - epoch, tick - epoch)
        assert true_j - 1.001 <= counter_j(
            got[C + "/Sensors/TotalEnergyJoules"]) <= true_j + 0.001
        assert true_j - 3600.001 <= counter_j(got[u]) <= true_j + 0.001
        assert got[u]["LifetimeReading"] > START_KWH
        before = got[u]
        bmc.fault("")


def test_counter_jumps_without_a_reset(client, bmc, truth, epoch):
    """`jump J`: the counters move by J (back when negative) and say no
    reset: a faulty counter, which a client must refuse to count."""
    u = C + "/Sensors/TotalEnergyJoules"
    a, ta = consistent(client, [u], epoch, bmc.interval)
    # Back by less than the reading: a counter just reset (an earlier
    # test's `reset`) would otherwise be clamped at 0, not moved.
    back = min(5000, math.floor(counter_j(a[u]) / 2))
    assert back >= 100, "counter %r J too small to jump" % counter_j(a[u])
    bmc.fault("jump -%d" % back)
    b, tb = consistent(client, [u], epoch, bmc.interval)
    bmc.fault("")
    true_j = truth.joules("n1", ta - epoch, tb - epoch)
    assert counter_j(b[u]) - counter_j(a[u]) == pytest.approx(
        true_j - back, abs=1.001)
    assert b[u]["SensorResetTime"] == a[u]["SensorResetTime"]


# ------------------------------------------------------------ PDU
def test_pdu_outlets(trace_file, epoch, truth, certs):
    """Outlets play their share of a column; one $expand request gives
    every outlet; outlets not mapped read 0 W."""
    outlets = [("A1", "n1", 0.5), ("B1", "n1", 0.5), ("A2", "n2", 1.0)]
    sim = rr.start_sim(trace_file, epoch, outlets=outlets, certs=certs)
    try:
        c = rr.Client(sim.url, ca=certs["ca"])
        assert c.login(sim.user, sim.password).status == 201
        for _ in range(5):
            coll = c.read(rr.PDU_OUTLETS + "?$expand=.($levels=1)")
            sensor = c.read("/redfish/v1/Chassis/PDU/Sensors/EnergyA1")
            again = c.read(rr.PDU_OUTLETS + "?$expand=.")
            if again == coll:
                break
        assert again == coll, "no two reads within one tick"
        tick = on_tick(sensor["ReadingTime"], epoch, sim.interval)
        out = {m["Id"]: m for m in coll["Members"]}
        assert len(out) == coll["Members@odata.count"] == 11
        t = tick - epoch
        for oid, col, share in outlets:
            assert out[oid]["PowerWatts"]["Reading"] == pytest.approx(
                share * truth.watts(col, t), abs=0.051)
            true_j = START_KWH * KWH_J + share * truth.joules(col, 0, t)
            assert true_j - 3600.001 <= counter_j(out[oid], "EnergykWh") \
                <= true_j + 0.001
        assert counter_j(sensor) == counter_j(out["A1"], "EnergykWh")
        assert out["A3"]["PowerWatts"]["Reading"] == 0
        assert c.get(rr.PDU_OUTLETS + "?$expand=.($levels=9)").status == 400
    finally:
        sim.stop()


# ------------------------------------------------------------ sessions
def test_sessions_and_401s(bmc, certs):
    c = rr.Client(bmc.url, ca=certs["ca"])
    for open_uri in ("/redfish", "/redfish/v1", "/redfish/v1/"):
        assert c.get(open_uri).status == 200, open_uri
    r = c.get(C)
    assert r.status == 401 and "error" in r.json()
    assert c.login(bmc.user, "wrong").status == 401
    assert c.login("root", bmc.password).status == 401
    r = c.login(bmc.user, bmc.password)
    assert r.status == 201
    assert r.headers["Location"] == r.json()["@odata.id"]
    assert r.headers["Location"].startswith(
        "/redfish/v1/SessionService/Sessions/")
    assert c.get(C).status == 200
    members = c.read("/redfish/v1/SessionService/Sessions")["Members"]
    assert {"@odata.id": r.headers["Location"]} in members
    token = c.token
    assert c.logout().status == 204
    c.token = token
    assert c.get(C).status == 401
    c.token, c.basic = None, (bmc.user, bmc.password)
    assert c.get(C).status == 200
    c.basic = (bmc.user, "wrong")
    assert c.get(C).status == 401


def test_basic_refused_and_session_expiry(trace_file, epoch):
    """--no-basic: basic authentication gets 401; a token idle longer than
    the timeout gets 401, one in use lives on."""
    sim = rr.start_sim(trace_file, epoch, column="n1", basic=False,
                       session_timeout=2)
    try:
        c = rr.Client(sim.url)
        c.basic = (sim.user, sim.password)
        assert c.get(C).status == 401
        c.basic = None
        assert c.login(sim.user, sim.password).status == 201
        assert c.read("/redfish/v1/SessionService")["SessionTimeout"] == 2
        for _ in range(7):                   # 2.8 s in use: alive
            assert c.get(C).status == 200
            time.sleep(0.4)
        time.sleep(2.2)                      # idle past the timeout
        assert c.get(C).status == 401
    finally:
        sim.stop()


def test_reboot_forgets_sessions(client, bmc, certs):
    """After a reboot old tokens get 401 and a new login works; the
    counters are kept (NV storage), or back to 0 with `zero`; while down,
    connections close unanswered."""
    u = C + "/Sensors/TotalEnergyJoules"
    before = client.read(u)
    bmc.fault("reboot")
    assert client.get(u).status == 401
    assert client.login(bmc.user, bmc.password).status == 201
    after = client.read(u)
    assert after["Reading"] >= before["Reading"]
    assert after["SensorResetTime"] == before["SensorResetTime"]
    bmc.fault("reboot 1.5 zero")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        client.get(u)
    time.sleep(1.6)
    assert client.get(u).status == 401
    assert client.login(bmc.user, bmc.password).status == 201
    zero = client.read(u)
    assert zero["Reading"] < 3 * 3200
    assert zero["SensorResetTime"] != before["SensorResetTime"]


# ------------------------------------------------------------ faults
def test_latency(client, bmc):
    bmc.fault("latency 1.5")
    t = time.monotonic()
    assert client.get(C).status == 200
    took = time.monotonic() - t
    assert 1.5 <= took < 2.5, took
    bmc.fault("latency 1.5 path=/redfish/v1/Chassis/1U/Power")
    t = time.monotonic()
    assert client.get(C).status == 200
    assert time.monotonic() - t < 0.5
    bmc.fault("")
    t = time.monotonic()
    assert client.get(C).status == 200
    assert time.monotonic() - t < 0.5


def test_frozen_by_control_and_by_sigstop(client, bmc):
    """Both ways of hanging: accepted but unanswered until thawed."""
    for freeze, thaw in ((lambda: bmc.fault("freeze"), lambda: bmc.fault("")),
                         (bmc.freeze, bmc.thaw)):
        freeze()
        client.timeout = 1.0
        client.close()
        t = time.monotonic()
        with pytest.raises((socket.timeout, TimeoutError)):
            client.get(C)
        assert time.monotonic() - t >= 0.95
        thaw()
        client.timeout = 10.0
        assert client.get(C).status == 200


def test_http_errors_and_bad_bodies(client, bmc):
    env = C + "/EnvironmentMetrics"
    bmc.fault("http 503")
    r = client.get(env)
    assert r.status == 503 and r.headers["Retry-After"] == "2"
    bmc.fault("http 500 path=" + env)
    assert client.get(env).status == 500
    assert client.get(C).status == 200
    bmc.fault("truncate")
    r = client.get(env)
    assert r.status == 200 and len(r.body) == int(r.headers["Content-Length"])
    with pytest.raises(ValueError):
        r.json()
    bmc.fault("truncate conn")
    with pytest.raises(http.client.IncompleteRead):
        client.get(env)
    bmc.fault("notjson")
    r = client.get(env)
    assert r.status == 200 and r.body.startswith(b"<html>")
    with pytest.raises(ValueError):
        r.json()
    bmc.fault("drop")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        client.get(env)
    bmc.fault("watts 0")
    a = client.read(env)
    assert a["PowerWatts"]["Reading"] == 0
    time.sleep(1.1 * bmc.interval)
    b = client.read(env)
    assert b["PowerWatts"]["Reading"] == 0
    assert b["EnergyJoules"]["Reading"] > a["EnergyJoules"]["Reading"]
    bmc.fault("")
    assert client.read(env)["PowerWatts"]["Reading"] >= 1000


def test_https_verifies_against_the_ca(bmc, certs):
    """The certificate verifies against the CA only; a client that
    connects and never starts TLS holds up nobody else."""
    c = rr.Client(bmc.url)          # the system's CAs: ours is not one
    with pytest.raises(ssl.SSLCertVerificationError):
        c.get("/redfish/v1")
    with socket.create_connection((bmc.addr, bmc.port)):
        c = rr.Client(bmc.url.replace("127.0.0.1", "localhost"),
                      ca=certs["ca"], timeout=2)
        assert c.get("/redfish/v1").status == 200


# ------------------------------------------------------------ validator
def _validated(url, uris, **kw):
    got = rr.validate(url, uris, **kw)
    print("validator on %s: %s" % (url, json.dumps(got["total"])))
    return got


def _no_worse(ours, theirs):
    """ours (the simulator) has no failure, and sushy-static serving the
    unmodified mockup answers every resource ours was compared on."""
    fails = {u: r["fails"] for u, r in ours["resources"].items() if r["fail"]}
    assert not fails, json.dumps(fails, indent=1)
    for uri, r in theirs["resources"].items():
        assert r["status"] == 200, "sushy-static: %s: HTTP %s" % (uri,
                                                                  r["status"])
        assert ours["resources"][uri]["fail"] <= r["fail"]
        assert ours["resources"][uri]["pass"] > 0


def test_validator_bmc(trace_file, epoch):
    """The DMTF validator finds no failure in what a meter reads on the
    BMC (every profile's resources: profile all has them all); sushy-static
    serves the same resources of the unmodified tree."""
    sim = rr.start_sim(trace_file, epoch, column="n1")
    sushy = rr.SushyStatic("public-rackmount1")
    try:
        sushy.start()
        uris = rr.bmc_uris("all")
        ours = _validated(sim.url, uris + [
            C + "/Sensors/TotalEnergyJoules", C + "/Sensors/TotalEnergyWh",
            PSUS + "/Bay2/Metrics"],
            user=sim.user, password=sim.password)
        theirs = _validated(sushy.url, uris, authtype="None")
        _no_worse(ours, theirs)
        assert ours["total"]["pass"] >= 600
    finally:
        sim.stop()
        sushy.stop()


def test_validator_pdu(trace_file, epoch):
    sim = rr.start_sim(trace_file, epoch, outlets=[("A1", "n1", 0.5)])
    sushy = rr.SushyStatic("public-pdu")
    try:
        sushy.start()
        uris = rr.pdu_uris()
        ours = _validated(sim.url, uris, user=sim.user, password=sim.password)
        theirs = _validated(sushy.url, uris, authtype="None")
        _no_worse(ours, theirs)
    finally:
        sim.stop()
        sushy.stop()
