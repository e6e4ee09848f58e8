"""The SNMP meter (src/meters/snmp, issue #44) against a real SNMP agent we
did not write: PyPI snmpsim serving snmpsim-data's APC rack PDU recording
(UPS/apc-8641.snmprec, its rPDU2 outlet rows), with the outlets we read
made live by our variation module (contribs/snmp-sim/se_outlets.py), which
plays a power trace through se-trace; the truth is selab.trace.

Proven here: v2c and v3 authPriv (SHA/AES); a two-supply node's two outlets
summed from one GET per PDU per read, on one PDU and on two; the APC
counter (tenths of kWh) shaped by power and a Wh counter (Raritan PDU2-MIB
rows) held to the trace; a wrong key, the agent down, answers 2 s late, a
counter reset and an outlet renumbered away: each a clear message naming
node and PDU, no read past its deadline, energy across the fault within
its bound.

The meter is driven by tests/unit/snmp_probe (make check builds it): reads
a period apart fed to an energy accumulator as the sampler does.  No Slurm
cluster (tests/integration/test_snmp_energy.py has the plugin).  Needs the
stage install (se-trace; SE_BIN_DIR), the build directory (SE_BUILD_OBJ)
and snmpsim's venv (SE_SNMPSIM_PYTHON, default _build/snmp-venv).  Every
process started here is stopped by its PID.
"""
import os
import subprocess
import time

import pytest

from selab import snmp_rig as sr
from selab.files import write_file
from selab.trace import Trace

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
PROBE = os.path.join(os.environ.get("SE_BUILD_OBJ", os.path.join(
    REPO, "_build", "obj")), "tests", "unit", "snmp_probe")
TRACE_TEXT = """# test_snmp_meter: ramps between 600 and 1800 W, 5 s a cycle
@repeat 5
time n1
0    600
1.5  600
2.5  1800
4    1800
5    600
"""
V3 = {"user": "slurm", "auth": "authpass123", "priv": "privpass123"}
SHARES = {"1": 0.6, "3": 0.4}      # n1's two supplies on outlets 1 and 3


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    if not os.access(PROBE, os.X_OK):
        pytest.fail("%s not built (make check in the build directory; "
                    "SE_BUILD_OBJ)" % PROBE)
    if not os.access(sr.snmpsim_python(), os.X_OK):
        pytest.fail("snmpsim's venv missing: %s (contribs/test-all.sh "
                    "makes it; SE_SNMPSIM_PYTHON)" % sr.snmpsim_python())
    path = str(tmp_path_factory.mktemp("snmpmeter"))
    os.chmod(path, 0o755)
    return path


@pytest.fixture(scope="module")
def trace(workdir):
    path = write_file(os.path.join(workdir, "snmp.trace"), TRACE_TEXT,
                      mode=0o644)
    return path, Trace(path)


def apc_rows(outlet, share, base_counts):
    return {
        sr.APC_POWER + outlet: "column=n1,what=power,share=%g" % share,
        sr.APC_ENERGY + outlet:
            "column=n1,what=energy,share=%g,unit_j=360000,base_j=%d"
            % (share, base_counts * 360000 + 180000),
    }


def raritan_rows(pdu, outlet, share):
    idx = "%s.%s" % (pdu, outlet)
    return {
        sr.RARITAN + idx + ".5": "column=n1,what=power,share=%g" % share,
        sr.RARITAN + idx + ".8":
            "column=n1,what=energy,share=%g,unit_j=3600,base_j=5000000"
            % share,
    }


@pytest.fixture(scope="module")
def sim(workdir, trace):
    """One agent: recording apc-8641 (n1 on outlets 1 and 3), apc-b (a
    second PDU: n2's other supply on its outlet 5), raritan (PDU2-MIB
    rows, Wh); the epoch a little ahead so the trace starts with us."""
    epoch = time.time()
    rows = dict(apc_rows("1", SHARES["1"], 3046))
    rows.update(apc_rows("3", SHARES["3"], 1530))
    rows.update(apc_rows("5", 0.5, 700))
    recs = {"apc-8641": rows, "apc-b": apc_rows("5", 0.5, 900),
            "raritan": raritan_rows("1", "1", 1.0)}
    s = sr.SnmpSim(trace[0], epoch, recs, v3=V3)
    s.start()
    s.epoch = epoch
    _warm_up(s)
    yield s
    s.stop()


def _warm_up(s):
    """snmpsim indexes each recording on its first request (about 1 s
    here): one GET of each before the tests time theirs."""
    import tempfile
    with tempfile.TemporaryDirectory(dir="/var/tmp") as d:
        m, sec = files(d, "warm", APC_MAP.format(host=s.host), V2C_SECRETS)
        for node in ("n1", "n2", "n3"):
            probe(m, sec, node, 1, timeout_ms=5000)
        with open(sec, "w") as f:
            f.write("PDU=pdua User=slurm AuthKey=authpass123 "
                    "PrivKey=privpass123\n")
        m = write_file(m, V3_MAP.format(host=s.host))
        probe(m, sec, "n1", 1, timeout_ms=5000)


def files(workdir, name, map_text, secrets_text, mode=0o600):
    m = write_file(os.path.join(workdir, name + ".map"), map_text)
    s = write_file(os.path.join(workdir, name + ".secrets"), secrets_text,
                   mode=mode)
    return m, s


def probe(map_path, secrets, node, reads, timeout_ms=1000, period_ms=250):
    """snmp_probe: (meter line, [reads], stdout)."""
    res = subprocess.run([PROBE, map_path, secrets, node, str(reads),
                          str(timeout_ms), str(period_ms)],
                         capture_output=True, text=True, timeout=120)
    meter, rows = sr.probe_output(res.stdout)
    # net-snmp stays quiet: stderr holds only the meter's own log lines
    # (the core's default sink), each naming its node
    for line in res.stderr.splitlines():
        assert line.startswith("info: snmp: node "), res.stderr
    return meter, rows, res.stdout + res.stderr


def truth_j(tr, sim, t0, t1, share=1.0):
    return share * tr.joules("n1", t0 - sim.epoch, t1 - sim.epoch)


def energy_error(tr, sim, rows, share=1.0):
    """Relative error of the accumulator between the first and last good
    reads against the trace."""
    good = [r for r in rows if r["rc"] == 0]
    got = (good[-1]["energy_mj"] - good[0]["energy_mj"]) / 1000.0
    want = truth_j(tr, sim, good[0]["t"], good[-1]["t"], share)
    print("energy %+.4f %% (%.1f J of %.1f J)" % (
        100 * (got - want) / want, got, want))
    return (got - want) / want, got, want


APC_MAP = """PDU=pdua Host={host} Model=apc-rpdu2
PDU=pdub Host={host} Model=apc-rpdu2
PDU=pdur Host={host} Model=raritan-px
Nodes=n1 Outlets=pdua:1,pdua:3
Nodes=n2 Outlets=pdua:5,pdub:5
Nodes=n3 Outlets=pdur:1
"""
V2C_SECRETS = """PDU=pdua Community=apc-8641
PDU=pdub Community=apc-b
PDU=pdur Community=raritan
"""


def test_v2c_two_supplies_one_pdu(workdir, trace, sim):
    """n1's supplies on APC outlets 1 and 3 of one PDU: one GET a read,
    power summed, the tenths-of-kWh counters summed (one count 360 kJ)
    and shaped by power: 6 s across the trace's ramps within 0.25 % of it
    (measured -0.03..+0.13 % over 4 runs)."""
    m, s = files(workdir, "v2c", APC_MAP.format(host=sim.host), V2C_SECRETS)
    meter, rows, out = probe(m, s, "n1", 25)
    assert "energy counters (360000 J a count, 2 summed) shaped by power" \
        in meter, out
    assert [r["rc"] for r in rows] == [0] * 25, out
    assert [r["requests"] for r in rows] == list(range(1, 26)), out
    assert all(r["counter"] is not None for r in rows), out
    # the counters' sum as the PDU shows them (3046 + 1530 counts and up)
    assert 3046 + 1530 <= rows[0]["counter"] <= 3046 + 1530 + 2, out
    for r in rows:
        want = trace[1].watts("n1", r["t"] - sim.epoch)
        # each outlet rounds to whole watts (1 W for the two); the agent
        # reads the trace somewhere inside the GET, on a ramp of 1.2 W/ms
        assert abs(r["power_mw"] / 1000 - want) <= 1 + 1.2 * r["ms"], \
            (r, want)
    err, got, want = energy_error(trace[1], sim, rows)
    assert abs(err) < 0.0025, (err, got, want, out)


def test_v2c_two_pdus(workdir, trace, sim):
    """n2 on outlet 5 of two PDUs (half the column each): two GETs a read,
    one per PDU; 4 s within 0.3 % (measured -0.15..+0.01 % over 7 runs:
    the two GETs are a few ms apart on a 1.2 W/ms ramp, and the reading is
    stamped at their middle)."""
    m, s = files(workdir, "v2c2", APC_MAP.format(host=sim.host), V2C_SECRETS)
    meter, rows, out = probe(m, s, "n2", 17)
    assert [r["rc"] for r in rows] == [0] * 17, out
    assert [r["requests"] for r in rows] == list(range(2, 36, 2)), out
    err, got, want = energy_error(trace[1], sim, rows)
    assert abs(err) < 0.003, (err, got, want, out)


def test_wh_counter(workdir, trace, sim):
    """Raritan PDU2-MIB rows (W and Wh; Unit 1 by default): the Wh counter
    ticks every 2-6 s here and holds the integrated power within a Wh;
    6 s within 0.25 % (measured -0.05..+0.11 % over 7 runs)."""
    m, s = files(workdir, "wh", APC_MAP.format(host=sim.host), V2C_SECRETS)
    meter, rows, out = probe(m, s, "n3", 25)
    assert "(3600 J a count, 1 summed)" in meter, out
    assert [r["rc"] for r in rows] == [0] * 25, out
    assert rows[-1]["counter"] > rows[0]["counter"], out
    err, got, want = energy_error(trace[1], sim, rows)
    assert abs(err) < 0.0025, (err, got, want, out)


V3_MAP = """PDU=pdua Host={host} Model=apc-rpdu2 Context=apc-8641
Nodes=n1 Outlets=pdua:1,pdua:3
"""


def test_v3_auth_priv(workdir, trace, sim):
    m, s = files(workdir, "v3", V3_MAP.format(host=sim.host),
                 "PDU=pdua User=slurm AuthProto=SHA AuthKey=authpass123 "
                 "PrivProto=AES PrivKey=privpass123\n")
    meter, rows, out = probe(m, s, "n1", 5)
    assert "SNMP v3" in meter, out
    assert [r["rc"] for r in rows] == [0] * 5, out
    # 1 s: within 1.5 % (measured -0.73..-0.14 % over 7 runs)
    err, got, want = energy_error(trace[1], sim, rows)
    assert abs(err) < 0.015, (err, got, want, out)


@pytest.mark.parametrize("secret,words", [
    ("AuthKey=wrongpass99 PrivKey=privpass123",
     "authentication refused (wrong AuthKey"),
    ("AuthKey=authpass123 PrivKey=wrongpass99",
     "decryption refused (wrong PrivKey"),
])
def test_v3_wrong_key(workdir, sim, secret, words):
    """A wrong key: the message names node, PDU and which key; no read
    waits for a timeout; the key is not in it."""
    m, s = files(workdir, "v3w", V3_MAP.format(host=sim.host),
                 "PDU=pdua User=slurm %s\n" % secret)
    meter, rows, out = probe(m, s, "n1", 2)
    for r in rows:
        assert r["rc"] == -13, out
        assert r["msg"].startswith(
            "node n1: PDU pdua (%s): GET: %s" % (sim.host, words)), out
        assert r["ms"] < 500, out
    assert "wrongpass99" not in out


def test_agent_down(workdir):
    """Nothing listens: each read fails at its deadline (1000 ms), named."""
    port = sr.free_udp_port()
    m, s = files(workdir, "down", APC_MAP.format(host="127.0.0.1:%d" % port),
                 V2C_SECRETS)
    meter, rows, out = probe(m, s, "n1", 2, timeout_ms=1000, period_ms=100)
    for r in rows:
        assert r["rc"] == -110, out
        assert "node n1: PDU pdua (127.0.0.1:%d): GET: no answer by the " \
            "deadline" % port in r["msg"], out
        assert 990 <= r["ms"] <= 1100, out


def test_late_answers(workdir, trace, sim):
    """The agent answers 2 s late: each read gives up at its 1000 ms
    deadline; once it answers on time again, reads resume."""
    m, s = files(workdir, "late", APC_MAP.format(host=sim.host), V2C_SECRETS)
    sim.fault(delay_s=2.0)
    try:
        meter, rows, out = probe(m, s, "n1", 2, timeout_ms=1000,
                                 period_ms=100)
    finally:
        sim.fault()
    for r in rows:
        assert r["rc"] == -110, out
        assert 990 <= r["ms"] <= 1100, out
    time.sleep(2.5)     # the late answers drain
    meter, rows, out = probe(m, s, "n1", 3)
    assert [r["rc"] for r in rows] == [0] * 3, out


def test_counter_reset(workdir, trace, sim):
    """Outlet 3's counter is reset to 0 mid-run: that reading gives power
    only, the next ones count again, and the energy across the reset is
    the trace's within 0.2 % (measured -0.09..+0.002 % over 7 runs)."""
    m, s = files(workdir, "reset", APC_MAP.format(host=sim.host),
                 V2C_SECRETS)
    sim.fault(reset={sr.APC_ENERGY + "3": time.time() + 2.0})
    try:
        meter, rows, out = probe(m, s, "n1", 21)
    finally:
        sim.fault()
    assert [r["rc"] for r in rows] == [0] * 21, out
    flags = [r["counter"] is None for r in rows]
    assert flags.count(True) == 1 and not flags[0] and not flags[-1], out
    assert "info: snmp: node n1: PDU pdua outlet 3: energy counter went " \
        "from" in out, out
    err, got, want = energy_error(trace[1], sim, rows)
    assert abs(err) < 0.002, (err, got, want, out)


def test_outlet_renumbered(workdir, sim):
    """Outlet 3 answers noSuchInstance (renumbered away): the read fails
    naming node, PDU, outlet and OID."""
    m, s = files(workdir, "gone", APC_MAP.format(host=sim.host), V2C_SECRETS)
    sim.fault(absent=[sr.APC_POWER + "3"])
    try:
        meter, rows, out = probe(m, s, "n1", 1)
    finally:
        sim.fault()
    assert rows[0]["rc"] == -2, out
    assert rows[0]["msg"] == (
        "node n1: PDU pdua (%s): outlet 3: power %s3: no such instance "
        "(outlet absent or renumbered? check the map)"
        % (sim.host, sr.APC_POWER)), out


def test_secrets_mode(workdir, sim):
    m, s = files(workdir, "mode", APC_MAP.format(host=sim.host), V2C_SECRETS,
                 mode=0o644)
    meter, rows, out = probe(m, s, "n1", 1)
    assert meter.startswith("config-error acct_gather.conf: "
                            "EnergySNMPSecrets=%s: mode 0644" % s), out
    assert rows == [], out
