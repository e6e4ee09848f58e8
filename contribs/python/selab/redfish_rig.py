"""Redfish peers for the tests (issue #41): our simulator, sushy-static
serving the DMTF's unmodified mockups, a CA and certificates, a small client
and the DMTF validator.

    certs = make_certs(workdir)                 # {ca, cert, key}
    with RedfishSim(trace, epoch, column="n1", certs=certs) as bmc:
        bmc.start()
        c = Client(bmc.url, ca=certs["ca"])
        c.login("admin", bmc.password)
        c.get("/redfish/v1/Chassis/1U/EnvironmentMetrics")
        bmc.fault("latency 3")                  # the control file

Paths: the mockups are $SE_REDFISH_MOCKUPS (default ../shared/redfish/mockups
beside the checkout, where CI copies shared/), the schemas $SE_REDFISH_CSDL
(default: csdl beside the mockups).  The PyPI tools (redfish-service-validator,
sushy-tools) run under $SE_REDFISH_PYTHON, the venv contribs/test-all.sh makes
(else $SE_PYMODBUS_PYTHON, the same venv, else python3).
"""
import base64
import http.client
import json
import os
import re
import socket
import ssl
import subprocess
import time

from .cluster import poll, slurmd_log
from .meters import REPO, _Process, _wait_listening, tool

SIM = os.path.join(REPO, "contribs", "redfish-sim", "redfish_sim.py")
VALIDATE = os.path.join(REPO, "contribs", "redfish-sim", "validate_uris.py")
BMC_CHASSIS = "/redfish/v1/Chassis/1U"
PDU_OUTLETS = "/redfish/v1/PowerEquipment/RackPDUs/1/Outlets"
# a node's Redfish reading in slurmd's log (DebugFlags=Energy)
FIRST_READING = re.compile(r"ENERGY: acct_gather_energy/bmc: redfish \S+: "
                           r"t=\d+ ns power=")


def wait_first_readings(cluster, nodes, timeout=60):
    """Until each node's slurmd has logged a Redfish reading (DebugFlags=
    Energy).  A step begun before its meter's first reading is not settled
    at its boundaries: it keeps its running total, which read +0.27 % and
    +0.47 % at load average 3-11 when jobs started 0.05-0.6 s before that
    reading (2026-11-29)."""
    poll(lambda: all(FIRST_READING.search(slurmd_log(cluster, n))
                     for n in nodes),
         timeout=timeout, what="each slurmd's first Redfish reading")


def mockups_dir():
    return os.environ.get("SE_REDFISH_MOCKUPS", os.path.join(
        os.path.dirname(REPO), "shared", "redfish", "mockups"))


def csdl_dir():
    return os.environ.get("SE_REDFISH_CSDL", os.path.join(
        os.path.dirname(mockups_dir().rstrip("/")), "csdl"))


def mockup(name):
    """The folder of mockup *name* (public-rackmount1, public-pdu)."""
    path = os.path.join(mockups_dir(), name)
    if not os.path.isfile(os.path.join(path, "index.json")):
        raise RuntimeError("no Redfish mockup %s (set SE_REDFISH_MOCKUPS to "
                           "the folder of the DMTF mockups; see "
                           "contribs/redfish-sim/README.md)" % path)
    return path


def tools_python():
    return (os.environ.get("SE_REDFISH_PYTHON")
            or os.environ.get("SE_PYMODBUS_PYTHON") or "python3")


def free_port(addr="127.0.0.1"):
    with socket.socket() as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


# ------------------------------------------------------------ certificates
def make_certs(workdir, ips=("127.0.0.1",), names=("localhost",), days=2):
    """A CA and a server certificate it signed (EC P-256), for the given
    IP addresses and DNS names: {ca, ca_key, cert, key} file paths."""
    os.makedirs(workdir, exist_ok=True)
    f = {k: os.path.join(workdir, n) for k, n in (
        ("ca", "ca.crt"), ("ca_key", "ca.key"), ("cert", "server.crt"),
        ("key", "server.key"), ("csr", "server.csr"), ("ext", "server.ext"))}
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]

    def openssl(*args):
        p = subprocess.run(["openssl", *args], capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("openssl %s: %s" % (args[0], p.stderr))

    openssl("req", "-x509", *ec, "-keyout", f["ca_key"], "-out", f["ca"],
            "-days", str(days), "-subj", "/CN=slurm-energy test CA",
            "-addext", "basicConstraints=critical,CA:true",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    openssl("req", *ec, "-keyout", f["key"], "-out", f["csr"],
            "-subj", "/CN=%s" % (names[0] if names else ips[0]))
    san = ["IP:%s" % i for i in ips] + ["DNS:%s" % n for n in names]
    with open(f["ext"], "w") as h:
        h.write("subjectAltName=%s\nbasicConstraints=CA:false\n"
                "extendedKeyUsage=serverAuth\n" % ",".join(san))
    openssl("x509", "-req", "-in", f["csr"], "-CA", f["ca"], "-CAkey",
            f["ca_key"], "-CAcreateserial", "-out", f["cert"], "-days",
            str(days), "-extfile", f["ext"])
    for k in ("csr", "ext"):
        os.unlink(f.pop(k))
    return f


# ------------------------------------------------------------ peers
class RedfishSim(_Process):
    """contribs/redfish-sim/redfish_sim.py (see its README): a BMC
    (column=...) or a PDU (outlets=[(outlet id, column, share)])."""

    name = "redfish-sim"

    def __init__(self, trace, epoch, column=None, outlets=None,
                 mockup_name=None, profile="all", certs=None, addr="127.0.0.1",
                 port=0, user="admin", password="sim-Pa55", basic=True,
                 session_timeout=30, sensing_interval=1.0,
                 energy_start_kwh=None, extra_args=(), workdir=None):
        super().__init__(workdir)
        self.pidfile = os.path.join(self.workdir, "redfish.pid")
        self.port_file = os.path.join(self.workdir, "redfish.port")
        self.control = os.path.join(self.workdir, "redfish.control")
        self.password_file = os.path.join(self.workdir, "password")
        self.addr, self.user, self.password = addr, user, password
        self.scheme = "https" if certs else "http"
        self.ca = certs["ca"] if certs else None
        self.epoch, self.interval = epoch, sensing_interval
        with open(self.password_file, "w") as h:
            h.write(password + "\n")
        os.chmod(self.password_file, 0o600)
        mockup_name = mockup_name or ("public-pdu" if outlets
                                      else "public-rackmount1")
        argv = ["/usr/bin/python3", SIM, "--mockup", mockup(mockup_name),
                "--trace", trace, "--epoch", "%.6f" % epoch,
                "--addr", addr, "--port", str(port),
                "--port-file", self.port_file, "--pidfile", self.pidfile,
                "--control", self.control, "--user", user,
                "--password-file", self.password_file,
                "--session-timeout", repr(float(session_timeout)),
                "--sensing-interval", repr(float(sensing_interval)),
                "--se-trace", tool("se-trace")]
        if outlets:
            for oid, col, share in outlets:
                argv += ["--outlet", "%s:%s:%r" % (oid, col, float(share))]
        else:
            argv += ["--profile", profile]
            if column:
                argv += ["--column", column]
        if certs:
            argv += ["--cert", certs["cert"], "--key", certs["key"]]
        else:
            argv += ["--http"]
        if not basic:
            argv += ["--no-basic"]
        if energy_start_kwh is not None:
            argv += ["--energy-start-kwh", repr(float(energy_start_kwh))]
        self.argv = argv + list(extra_args)
        self.port = None

    def start(self):
        self._spawn(self.argv, ready_file=self.pidfile)
        with open(self.port_file) as h:
            self.port = int(h.read())
        return self

    @property
    def url(self):
        return "%s://%s:%d" % (self.scheme, self.addr, self.port)

    def gets(self):
        """GET requests the simulator has answered since its start (its
        /_sim/counts, which is not counted)."""
        client = Client(self.url, ca=self.ca)
        try:
            return client.read("/_sim/counts")["GET"]
        finally:
            client.close()

    def fault(self, text):
        """Replace the control file atomically ('' clears every fault);
        the simulator loads it within 0.1 s, at once after SIGUSR1."""
        tmp = self.control + ".tmp"
        with open(tmp, "w") as handle:
            handle.write(text + ("\n" if text else ""))
        os.replace(tmp, self.control)
        if self.running():
            os.kill(self.proc.pid, 10)      # SIGUSR1
        time.sleep(0.15)                    # loaded by the watcher anyway


def start_sim(trace, epoch, **kw):
    """RedfishSim(trace, epoch, **kw), started; one that does not start is
    stopped and raises AssertionError with its log."""
    sim = RedfishSim(trace, epoch, **kw)
    try:
        sim.start()
    except Exception:
        with open(sim.log) as f:
            log = f.read()
        sim.stop()
        raise AssertionError("redfish-sim did not start:\n" + log)
    return sim


def probe_output(stdout):
    """tests/unit/rf_probe's output, as its header comment says: (the
    source line, or the open-error line; [a dict per read]; {"requests",
    "logins"} of the run)."""
    source, rows, counts = None, [], {}
    for line in stdout.splitlines():
        if line.startswith("source "):
            source = line[7:]
        elif line.startswith("open-error "):
            source = line
        elif line.startswith("read "):
            head, _, msg = line.partition(" | ")
            f = head.split()
            rows.append({"rc": int(f[2]), "has_power": f[3] == "1",
                         "power_mw": int(f[4]), "has_counter": f[5] == "1",
                         "raw": int(f[6]), "mj_per_unit": float(f[7]),
                         "energy_mj": int(f[8]), "t": float(f[9]),
                         "requests": int(f[10]), "ms": float(f[11]),
                         "cpu_us": float(f[12]), "registers": int(f[13]),
                         "rounds": int(f[14]), "msg": msg})
        elif line.startswith("requests "):
            f = line.split()
            counts = {"requests": int(f[1]), "logins": int(f[3])}
    return source, rows, counts


class SushyStatic(_Process):
    """sushy-static (PyPI sushy-tools) serving a mockup folder as it is:
    GET only, no authentication."""

    name = "sushy-static"

    def __init__(self, mockup_name, addr="127.0.0.1", port=None,
                 python=None, workdir=None):
        super().__init__(workdir)
        python = python or tools_python()
        self.addr, self.port = addr, port or free_port(addr)
        exe = os.path.join(os.path.dirname(python), "sushy-static")
        self.argv = [exe, "-i", addr, "-p", str(self.port),
                     "-m", mockup(mockup_name)]

    def start(self):
        self._spawn(self.argv)
        _wait_listening(self.addr, self.port, self.proc)
        return self

    @property
    def url(self):
        return "http://%s:%d" % (self.addr, self.port)


# ------------------------------------------------------------ client
class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    def json(self):
        return json.loads(self.body)


class Client:
    """A keep-alive Redfish client (http.client), verifying TLS against
    *ca*; login() keeps the session token for the next requests."""

    def __init__(self, url, ca=None, timeout=10.0, verify=True):
        scheme, _, hostport = url.partition("://")
        host, _, port = hostport.rpartition(":")
        self.https, self.host, self.port = scheme == "https", host, int(port)
        self.timeout, self.token, self.basic = timeout, None, None
        self.ctx = None
        if self.https:
            self.ctx = ssl.create_default_context(cafile=ca)
            if not verify:
                self.ctx.check_hostname = False
                self.ctx.verify_mode = ssl.CERT_NONE
        self.conn = None

    def _connect(self):
        if self.https:
            return http.client.HTTPSConnection(self.host, self.port,
                                               timeout=self.timeout,
                                               context=self.ctx)
        return http.client.HTTPConnection(self.host, self.port,
                                          timeout=self.timeout)

    def request(self, method, uri, body=None, headers=None, auth=True):
        hdrs = dict(headers or {})
        if auth and self.token:
            hdrs["X-Auth-Token"] = self.token
        elif auth and self.basic:
            hdrs["Authorization"] = "Basic " + base64.b64encode(
                ("%s:%s" % self.basic).encode()).decode()
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        if self.conn is None:
            self.conn = self._connect()
        try:
            self.conn.request(method, uri, body=data, headers=hdrs)
            r = self.conn.getresponse()
            payload = r.read()
        except Exception:
            self.close()
            raise
        if r.will_close:
            self.close()
        return Response(r.status, r.headers, payload)

    def get(self, uri, **kw):
        return self.request("GET", uri, **kw)

    def read(self, uri):
        """GET that must succeed: the resource as a dict."""
        r = self.get(uri)
        assert r.status == 200, "GET %s: HTTP %d %s" % (uri, r.status,
                                                        r.body[:300])
        return r.json()

    def login(self, user, password):
        r = self.request("POST", "/redfish/v1/SessionService/Sessions",
                         body={"UserName": user, "Password": password},
                         auth=False)
        if r.status == 201:
            self.token = r.headers["X-Auth-Token"]
            self.session = r.headers["Location"]
        return r

    def logout(self):
        r = self.request("DELETE", self.session)
        self.token = None
        return r

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


# ------------------------------------------------------------ validator
def validate(url, uris, user="", password="", authtype="Session",
             python=None, timeout=120):
    """The DMTF validator's counts for *uris* (validate_uris.py's JSON)."""
    python = python or tools_python()
    p = subprocess.run([python, VALIDATE, "--rhost", url, "--user", user,
                        "--password", password, "--authtype", authtype,
                        "--schema-dir", csdl_dir(), *uris],
                       capture_output=True, text=True, timeout=timeout)
    if p.returncode != 0:
        raise RuntimeError("validate_uris.py (%s) failed with %d:\n%s"
                           % (python, p.returncode, p.stderr[-3000:]))
    return json.loads(p.stdout)


def bmc_uris(profile="all"):
    """The resources a meter reads on the BMC, by profile."""
    c = BMC_CHASSIS
    uris = ["/redfish/v1", "/redfish/v1/Chassis", c,
            "/redfish/v1/SessionService", "/redfish/v1/SessionService/Sessions",
            c + "/Power"]
    if profile != "legacy":
        ps = c + "/PowerSubsystem/PowerSupplies"
        uris += [c + "/EnvironmentMetrics", c + "/Sensors",
                 c + "/Sensors/TotalPower", c + "/Sensors/PS1InputPower",
                 c + "/PowerSubsystem", ps, ps + "/Bay1", ps + "/Bay1/Metrics",
                 ps + "/Bay2"]
    if profile in ("all", "kwh"):
        uris += [c + "/Sensors/TotalEnergy", c + "/Sensors/PS1Energy"]
    return uris


def pdu_uris(outlets=("A1", "B1", "C3")):
    pdu = PDU_OUTLETS.rsplit("/", 1)[0]
    uris = ["/redfish/v1", "/redfish/v1/PowerEquipment",
            "/redfish/v1/PowerEquipment/RackPDUs", pdu, PDU_OUTLETS,
            "/redfish/v1/SessionService", "/redfish/v1/SessionService/Sessions"]
    return uris + [PDU_OUTLETS + "/" + o for o in outlets] + \
        ["/redfish/v1/Chassis/PDU/Sensors/PowerA1",
         "/redfish/v1/Chassis/PDU/Sensors/EnergyA1"]
