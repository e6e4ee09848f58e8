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
import os
import subprocess
import time

import pytest

from selab import fixtures
from selab import redfish_rig as rr

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
TOOL = os.path.join(os.environ.get("SE_BUILD_OBJ", os.path.join(
    REPO, "_build", "obj")), "contribs", "powercap", "se-powercap-node")
CONTROL = rr.BMC_CHASSIS + "/Controls/PowerLimit"
TRACE_TEXT = "time n1\n0 400\n100000 400\n"

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
