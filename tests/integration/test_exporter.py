"""slurm-energy-exporter itself (issue #43): its start-up refusals, TLS and
basic auth, and a real slurmd behind it, scraped with urllib.

Without the cluster (the staged binary, about 2.5 s):
- bad input is one line and exit status 2 naming it: a malformed web
  configuration (file and line), a TLS key that cannot be read (its path),
  a key that is not the certificate's (both paths), a port in use (the
  address), a listener reachable from other hosts without TLS or auth;
- with TLS and basic auth, curl over HTTPS with the right user gets the
  exposition, a wrong password 401, plain HTTP nothing; while no slurmd
  answers the exposition is slurmd_up 0 and nothing of slurmd's, and
  promtool check metrics passes it;
- with RequireAndVerifyClientCert, no client certificate is 403 and one
  the client CA signed gets the exposition.

On the test cluster (node1 on the Modbus rig's meter, node mode, Slurm's
default EnergyAttribution, under PrologFlags=Contain; one exporter in
node1's namespace, about 35 s; share mode is test_prometheus.py's):
- a job's last scraped step counters (scrapes every 0.25 s, faster than
  the sampler's 1 s period) equal its sacct energy to sacct's whole
  joule, for an srun job and a batch job with an srun step beside it: in node mode a step's series is the node counter's increase
  since its start, which slurmd's query server lists for the steps that
  asked it (energy_query_steps.h), and the settle's figure once its end
  is read; its series are gone three periods after the job;
- promtool check metrics is clean on the live exposition with job series;
- slurmd restarted: the scrapes meanwhile say slurmd_up 0 with no series
  of slurmd's (nothing stale shown as fresh), and after it the node
  counter starts again below its last value with a new _created (a
  counter reset Prometheus counts from zero), never a lower value of the
  same total.
The Prometheus side (rules, increase() against the meter, a stalled
meter) is tests/integration/test_prometheus.py.
"""
import os
import re
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request

import pytest

from selab import energy
from selab.cluster import PLUGIN_DIR, poll
from selab.meters import ModbusSim
from selab.modbus_rig import METER, SDM630_SIM, TRACE, UNITS, modbus_conf
from selab.prometheus_rig import (PROMTOOL, Exporters, exporter_path,
                                  exporter_target, free_port)

JOBS = "slurm_energy_job_energy_joules_total"
SCRAPE_S = 0.25
METER_PERIOD_S = 1.0            # EnergyModbusFrequency=1 (modbus_rig)
HASH = "$2y$10$2b2cU8CPhOTaGrs1HRQuAueS7JTT5ZHsHSzYiFPm1leZck7Mc8T4W"
PASSWORD = "password"           # HASH's (the man page's example)

SAMPLE = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$', re.M)
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def series(text):
    """[(name, {label: value}, float)] of an exposition."""
    return [(m.group(1), dict(LABEL.findall(m.group(2))), float(m.group(3)))
            for m in SAMPLE.finditer(text)]


def value(text, name):
    vals = [v for n, _, v in series(text) if n == name]
    return vals[0] if vals else None


def exporter(*args, timeout=10):
    return subprocess.run([exporter_path(), *args], capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def built():
    if not os.access(exporter_path(), os.X_OK):
        pytest.fail("%s not built (configure found no libmicrohttpd?)"
                    % exporter_path())
    return exporter_path()


@pytest.fixture(scope="module")
def tls(tmp_path_factory):
    """A CA, a certificate for 127.0.0.1 signed by it and its key, a key
    of nobody's, and a web configuration with TLS and basic auth."""
    d = str(tmp_path_factory.mktemp("tls"))

    def ssl(*args):
        subprocess.run(["openssl", *args], check=True, capture_output=True)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes"]
    ssl("req", "-x509", *ec, "-days", "1", "-subj", "/CN=test-ca",
        "-keyout", d + "/ca.key", "-out", d + "/ca.crt")
    ssl("req", *ec, "-subj", "/CN=127.0.0.1", "-keyout", d + "/node.key",
        "-out", d + "/node.csr")
    with open(d + "/ext", "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    ssl("x509", "-req", "-in", d + "/node.csr", "-CA", d + "/ca.crt",
        "-CAkey", d + "/ca.key", "-CAcreateserial", "-days", "1",
        "-extfile", d + "/ext", "-out", d + "/node.crt")
    ssl("genpkey", "-algorithm", "EC", "-pkeyopt",
        "ec_paramgen_curve:prime256v1", "-out", d + "/other.key")
    ssl("req", *ec, "-subj", "/CN=prometheus", "-keyout",
        d + "/client.key", "-out", d + "/client.csr")
    ssl("x509", "-req", "-in", d + "/client.csr", "-CA", d + "/ca.crt",
        "-CAkey", d + "/ca.key", "-CAcreateserial", "-days", "1",
        "-out", d + "/client.crt")
    with open(d + "/web.yml", "w") as f:
        f.write("tls_server_config:\n  cert_file: node.crt\n"
                "  key_file: node.key\nbasic_auth_users:\n"
                "  prometheus: %s\n" % HASH)
    return d


def _web(d, name, text):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(text)
    return path


# ------------------------------------------------------- without a cluster

def test_bad_input_is_named(built, tls):
    r = exporter("--web.config.file=" + _web(tls, "bad.yml",
                 "tls_server_config:\n  cert_file: [node.crt\n"))
    assert r.returncode == 2 and "bad.yml:" in r.stderr and \
        "not YAML" in r.stderr, r.stderr
    r = exporter("--web.config.file=" + _web(tls, "nokey.yml",
                 "tls_server_config:\n  cert_file: node.crt\n"
                 "  key_file: gone.key\n"))
    assert r.returncode == 2 and "tls_server_config.key_file: cannot read" \
        in r.stderr and tls + "/gone.key" in r.stderr, r.stderr
    r = exporter("--web.config.file=" + _web(tls, "dirkey.yml",
                 "tls_server_config:\n  cert_file: node.crt\n"
                 "  key_file: .\n"))
    assert r.returncode == 2 and "key_file: cannot read" in r.stderr, \
        r.stderr
    r = exporter("--web.config.file=" + _web(tls, "other.yml",
                 "tls_server_config:\n  cert_file: node.crt\n"
                 "  key_file: other.key\n"))
    assert r.returncode == 2 and "node.crt with key_file" in r.stderr and \
        "other.key" in r.stderr, r.stderr
    r = exporter("--web.config.file=" + _web(tls, "unknown.yml",
                 "tls_server_config:\n  min_version: TLS13\n"))
    assert r.returncode == 2 and \
        "unknown.yml:2: tls_server_config.min_version: not supported" \
        in r.stderr, r.stderr
    r = exporter("--web.listen-address=0.0.0.0:%d" % free_port())
    assert r.returncode == 2 and "reachable from other hosts" in r.stderr, \
        r.stderr
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        r = exporter("--web.listen-address=127.0.0.1:%d" % port)
    assert r.returncode == 2 and "127.0.0.1:%d: cannot listen there: " \
        "Address already in use" % port in r.stderr, r.stderr
    r = exporter("--web.listen-address=nowhere")
    assert r.returncode == 2 and "--web.listen-address=nowhere" in r.stderr


def _curl(*args):
    return subprocess.run(["curl", "-sS", "--max-time", "5", *args],
                          capture_output=True, text=True)


def test_tls_and_basic_auth(built, tls, tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [built, "--web.listen-address=0.0.0.0:%d" % port,
         "--web.config.file=" + tls + "/web.yml", "--node=nodeX",
         "--socket=" + str(tmp_path / "none.sock"), "--no-slurm-labels"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        url = "https://127.0.0.1:%d/metrics" % port
        poll(lambda: _curl("--cacert", tls + "/ca.crt", url).returncode
             in (0, 22) and "401" in _curl(
                 "--cacert", tls + "/ca.crt", "-o", "/dev/null", "-w",
                 "%{http_code}", url).stdout, timeout=10,
             what="the exporter's HTTPS listener")
        ok = _curl("--cacert", tls + "/ca.crt", "-u",
                   "prometheus:" + PASSWORD, url)
        assert ok.returncode == 0, ok.stderr
        assert "slurm_energy_exporter_slurmd_up{node=\"nodeX\"} 0\n" \
            in ok.stdout, ok.stdout
        assert "slurm_energy_node_" not in ok.stdout   # nothing stale
        lint = subprocess.run([PROMTOOL, "check", "metrics"], input=ok.stdout,
                              capture_output=True, text=True)
        assert lint.returncode == 0, lint.stdout + lint.stderr
        bad = _curl("--cacert", tls + "/ca.crt", "-u", "prometheus:nope",
                    "-o", "/dev/null", "-w", "%{http_code}", url)
        assert bad.stdout == "401", bad.stdout
        plain = _curl("http://127.0.0.1:%d/metrics" % port)
        assert "slurm_energy" not in plain.stdout
        om = _curl("--cacert", tls + "/ca.crt", "-u", "prometheus:" +
                   PASSWORD, "-H", "Accept: application/openmetrics-text; "
                   "version=1.0.0", "-D", "-", url)
        assert "application/openmetrics-text" in om.stdout and \
            om.stdout.endswith("# EOF\n"), om.stdout
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0, out


def test_client_certificate_required(built, tls, tmp_path):
    """client_auth_type RequireAndVerifyClientCert: a client without a
    certificate the CA signed gets 403, one with it the exposition."""
    web = _web(tls, "mtls.yml", "tls_server_config:\n  cert_file: node.crt\n"
               "  key_file: node.key\n"
               "  client_auth_type: RequireAndVerifyClientCert\n"
               "  client_ca_file: ca.crt\n")
    port = free_port()
    proc = subprocess.Popen(
        [built, "--web.listen-address=127.0.0.1:%d" % port,
         "--web.config.file=" + web, "--socket=" + str(tmp_path / "none"),
         "--no-slurm-labels"], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True)
    try:
        url = "https://127.0.0.1:%d/metrics" % port
        code = ["--cacert", tls + "/ca.crt", "-o", "/dev/null", "-w",
                "%{http_code}", url]
        poll(lambda: _curl(*code).stdout not in ("", "000"), timeout=10,
             what="the exporter's HTTPS listener")
        assert _curl(*code).stdout == "403"
        mine = _curl("--cert", tls + "/client.crt", "--key",
                     tls + "/client.key", *code)
        assert mine.stdout == "200", mine.stdout + mine.stderr
        other = _curl("--cert", tls + "/node.crt", "--key",
                      tls + "/other.key", *code)
        assert other.stdout != "200", other.stdout
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0, out


# ------------------------------------------------------------ on a cluster

class Scraper(threading.Thread):
    """node's exposition every SCRAPE_S, kept with its time (None: the
    exporter did not answer)."""

    def __init__(self, exporters, node):
        super().__init__(daemon=True)
        self.exporters, self.node = exporters, node
        self.texts, self.stop_flag = [], threading.Event()

    def run(self):
        while not self.stop_flag.is_set():
            try:
                text = self.exporters.text(self.node, openmetrics=True)
            except Exception:       # noqa: BLE001 (recorded as no answer)
                text = None
            self.texts.append((time.time(), text))
            self.stop_flag.wait(SCRAPE_S)

    def stop(self):
        self.stop_flag.set()
        self.join(10)


def _last_job_values(texts, jobid):
    """{step: (time, value)} of the last scrape holding each step of
    jobid, and the time of the last scrape holding any."""
    last = {}
    for t, text in texts:
        for name, labels, v in series(text or ""):
            if name == JOBS and labels["jobid"] == str(jobid):
                last[labels["step"]] = (t, v)
    return last


@pytest.fixture(scope="module")
def run(cluster, tmp_path_factory):
    if not os.access(exporter_path(), os.X_OK):
        pytest.fail("%s not built" % exporter_path())
    workdir = str(tmp_path_factory.mktemp("exporter"))
    epoch = time.time()
    # node mode (the default): share mode is test_prometheus.py's
    extra = ""
    out = {}
    with cluster.configured(plugin_dirs=[PLUGIN_DIR],
                            energy_type="acct_gather_energy/modbus",
                            acct_gather_conf=modbus_conf(workdir, "counter",
                                                         extra=extra),
                            slurm_conf="PrologFlags=Contain\n") as c:
        meter = ModbusSim(TRACE, epoch, UNITS, SDM630_SIM, tcp=METER,
                          workdir=workdir).start()
        exporters = Exporters(c, ["node1"], workdir,
                              extra_args=["--max-watts=800"])
        scraper = None
        try:
            energy.wait_for_power(c, ["node1"])
            exporters.start()
            scraper = Scraper(exporters, "node1")
            scraper.start()
            proc = energy.run_timed(c, "exp-one", ["-w", "node1"], 5)
            # beside it, a batch job with an srun step: in node mode each
            # is charged the node's whole energy over its own steps
            script = "#!/bin/sh\nsrun %s\n" % " ".join(
                "'%s'" % a for a in energy.timed_command(4))
            out["batch"] = c.sbatch("-w", "node1", "-J", "exp-batch", "-o",
                                    os.path.join(workdir, "batch.out"),
                                    script=script)
            out["live"] = _live_text(exporters, proc, out["batch"])
            jobid, windows = energy.finish(c, proc, "exp-one", 90)
            out["jobid"], out["task_end"] = jobid, windows["node1"][1]
            out["sacct"] = energy.consumed_energy(c, jobid)
            out["batch_sacct"] = energy.consumed_energy(c, out["batch"])
            out["ended"] = time.time()
            time.sleep(3 * METER_PERIOD_S + 1.0)
            out["after_end"] = exporters.text("node1")
            out["restart"] = _restart_slurmd(c, exporters, scraper)
        finally:
            if scraper:
                scraper.stop()
                out["texts"] = scraper.texts
            exporters.stop()
            meter.stop()
    return out


def _live_text(exporters, proc, batch):
    """node1's exposition once the srun job's steps are listed, scraped
    while that job runs (under CI's load its step can start seconds
    after srun does, so a fixed wait read too early). If the job ends
    first, the last scrape is kept and test_live_exposition fails."""
    text = exporters.text("node1")
    while proc.poll() is None:
        steps = {lab["step"] for n, lab, v in series(text)
                 if n == JOBS and lab["jobid"] != str(batch)}
        if {"0", "extern"} <= steps:
            break
        time.sleep(SCRAPE_S)
        text = exporters.text("node1")
    return text


def _restart_slurmd(c, exporters, scraper):
    """Restart node1's slurmd under the scrapes; the scrapes' span."""
    before = exporters.text("node1", openmetrics=True)
    t0 = time.time()
    r = subprocess.run([c.script, "restart", "slurmd-node1"], env=c.env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    poll(lambda: value(exporters.text("node1"),
                       "slurm_energy_node_power_watts") is not None,
         timeout=30, what="node1's exporter to serve slurmd again")
    time.sleep(1)
    return {"before": before, "t0": t0, "t1": time.time(),
            "after": exporters.text("node1", openmetrics=True)}


def test_last_counter_is_the_sacct_energy(run):
    """Each step's last scraped value against its sacct figure (whole J:
    sacct rounds the settle's E(t1) - E(t0), the series lists that
    figure for two sampler periods after the reading past the end, and the
    scrapes come four times a period)."""
    jobid, sacct = run["jobid"], run["sacct"]
    last = _last_job_values(run["texts"], jobid)
    report = []
    for step in ("0", "extern"):
        want = sacct["%d.%s" % (jobid, step)]
        t, got = last[step]
        trail = [(round(ts - run["task_end"], 2), v)
                 for ts, text in run["texts"]
                 for n, lab, v in series(text or "")
                 if n == JOBS and lab["jobid"] == str(jobid) and
                 lab["step"] == step][-6:]
        report.append("%d.%s: last scrape %.3f J at %+.2f s from the task's "
                      "end, sacct %s J; the last scrapes (s, J): %s"
                      % (jobid, step, got, t - run["task_end"], want, trail))
        assert want is not None and abs(got - want) <= 1.0, report
    print("\n".join(report))
    assert set(last) == {"0", "extern"}, last


def test_batch_job_steps_end_at_their_sacct_energy(run):
    """The batch job beside it (node mode: each job the node's whole
    energy over its steps): its batch, srun and extern steps' last scraped
    values against sacct, to sacct's whole joule."""
    jobid, sacct = run["batch"], run["batch_sacct"]
    last = _last_job_values(run["texts"], jobid)
    assert set(last) == {"batch", "0", "extern"}, last
    report = []
    for step, (_, got) in sorted(last.items()):
        want = sacct["%d.%s" % (jobid, step)]
        report.append("%d.%s: last scrape %.3f J, sacct %s J"
                      % (jobid, step, got, want))
        assert want is not None and abs(got - want) <= 1.0, report
    print("\n".join(report))


def test_series_end_with_the_job(run):
    """No series of the job three sampler periods after it left the queue
    (a step's final figure is served for two periods after its end, and
    leaves at the split after that)."""
    assert JOBS in run["live"], run["live"]
    left = [(n, lab, v) for n, lab, v in series(run["after_end"])
            if n == JOBS]
    assert not left, left


def test_live_exposition(run):
    """While the job runs: the node's figures, its rated power as given,
    the meter ok, and the job's steps with slurmctld's labels."""
    text = run["live"]
    assert value(text, "slurm_energy_node_max_watts") == 800.0
    assert value(text, "slurm_energy_node_power_watts") > 0
    assert value(text, "slurm_energy_exporter_slurmd_up") == 1
    states = {lab["state"]: v for n, lab, v in series(text)
              if n == "slurm_energy_meter_state"}
    assert states == {"ok": 1, "stale": 0, "failed": 0}, states
    steps = {lab["step"]: lab for n, lab, v in series(text)
             if n == JOBS and lab["jobid"] != str(run["batch"])}
    assert set(steps) == {"0", "extern"}, steps
    assert steps["0"]["partition"] and steps["0"]["user"] == "root", steps


def test_promtool_clean_on_a_live_exposition(run):
    p = subprocess.run([PROMTOOL, "check", "metrics"], input=run["live"],
                       capture_output=True, text=True)
    assert p.returncode == 0 and not (p.stdout + p.stderr).strip(), \
        p.stdout + p.stderr


def test_slurmd_restart_is_a_clean_reset(run):
    """While slurmd is away the scrapes say so and show nothing of it;
    after, its total starts again from zero with a new _created."""
    rs = run["restart"]
    during = [text for t, text in run["texts"]
              if rs["t0"] <= t <= rs["t1"] and text]
    down = [text for text in during if value(
        text, "slurm_energy_exporter_slurmd_up") == 0]
    # slurmd may be back before a scrape falls in the gap: not required
    for text in down:
        assert "slurm_energy_node_" not in text and JOBS not in text, text
    created = [value(rs[k], "slurm_energy_node_energy_joules_created")
               for k in ("before", "after")]
    totals = [value(rs[k], "slurm_energy_node_energy_joules_total")
              for k in ("before", "after")]
    assert created[1] > created[0], created
    assert totals[1] < totals[0], totals
    # within one total (one _created), the counter never went down
    seen = {}
    for _, text in run["texts"]:
        c = value(text or "", "slurm_energy_node_energy_joules_created")
        v = value(text or "", "slurm_energy_node_energy_joules_total")
        if c is None or v is None:
            continue
        assert v >= seen.get(c, 0.0), (c, v, seen.get(c))
        seen[c] = v
    print("restart: total %.1f J -> %.1f J, _created %.3f -> %.3f; of %d "
          "scrapes during the restart (%.1f s), %d said slurmd_up 0"
          % (totals[0], totals[1], created[0], created[1], len(during),
             rs["t1"] - rs["t0"], len(down)))
