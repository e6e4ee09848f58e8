"""A real Prometheus (Debian's package) for the tests: started on loopback
with a generated configuration, its storage in a temporary directory,
stopped by its PID; and the HTTP API's queries.  Also the exporters it
scrapes: one slurm-energy-exporter per node of the test cluster, in the
node's network namespace (``Exporters``).

    with PrometheusRig(["10.199.0.11:9945", ...], interval="1s") as prom:
        prom.wait_scraped(len(targets))
        prom.query('slurm_energy_node_power_watts')      # [(labels, value)]
        prom.increase('slurm_energy_node_energy_joules_total', t0, t1)

Reaching the cluster's nodes: contribs/cluster/cluster puts each node in a
network namespace whose eth0 (NodeAddr, 10.199.0.1N) sits on the bridge
sebr0, and gives the host the bridge's address (10.199.0.1, where
slurmctld listens).  A process on the host therefore reaches every node's
address directly through the bridge: Prometheus runs on the host, listens
on 127.0.0.1 only, and scrapes the exporters at their node addresses.
Nothing leaves the machine (loopback and the bridge's /24).
"""
import json
import os
import shutil
import subprocess
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

from selab.meters import stop_process
from selab.redfish_rig import free_port

PROMETHEUS = os.environ.get("SE_PROMETHEUS", "/usr/bin/prometheus")
PROMTOOL = os.path.join(os.path.dirname(PROMETHEUS), "promtool")
# contribs/cluster/cluster's names (SE_CLUSTER_* as there)
NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
NS_PREFIX = os.environ.get("SE_CLUSTER_NS_PREFIX", "se-")
EXPORTER_PORT = 9945        # the exporter's default port


def config_text(targets, interval="1s", job="slurm-energy", rule_files=(),
                scrape_timeout=None):
    """prometheus.yml scraping *targets* (host:port) every *interval*."""
    timeout = scrape_timeout or interval
    lines = ["global:",
             "  scrape_interval: %s" % interval,
             "  evaluation_interval: %s" % interval,
             "  scrape_timeout: %s" % timeout]
    if rule_files:
        lines += ["rule_files:"] + ["  - %s" % json.dumps(f)
                                    for f in rule_files]
    lines += ["scrape_configs:",
              "  - job_name: %s" % json.dumps(job),
              "    static_configs:",
              "      - targets: %s" % json.dumps(list(targets))]
    return "\n".join(lines) + "\n"


class PrometheusError(Exception):
    pass


class PrometheusRig:
    """Prometheus scraping *targets*; a context manager (stop at exit)."""

    def __init__(self, targets, interval="1s", rule_files=(), workdir=None,
                 scrape_timeout=None, extra_args=()):
        self.owns_workdir = workdir is None
        self.workdir = workdir or tempfile.mkdtemp(prefix="se-prometheus-")
        self.targets = list(targets)
        self.config = os.path.join(self.workdir, "prometheus.yml")
        with open(self.config, "w") as f:
            f.write(config_text(self.targets, interval,
                                rule_files=rule_files,
                                scrape_timeout=scrape_timeout))
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.log = os.path.join(self.workdir, "prometheus.log")
        self.argv = [PROMETHEUS, "--config.file=" + self.config,
                     "--storage.tsdb.path=" + os.path.join(self.workdir,
                                                           "data"),
                     "--web.listen-address=127.0.0.1:%d" % self.port,
                     "--log.level=warn", *extra_args]
        self.proc = None

    # ------------------------------------------------------------ process
    def start(self, timeout=30):
        if not os.access(PROMETHEUS, os.X_OK):
            raise PrometheusError("%s not found: install Debian's "
                                  "prometheus (contribs/install-deps.sh)"
                                  % PROMETHEUS)
        self.proc = subprocess.Popen(self.argv, cwd=self.workdir,
                                     stdout=open(self.log, "ab"),
                                     stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise PrometheusError("prometheus exited (%s) at start:\n%s"
                                      % (self.proc.returncode,
                                         self.log_tail()))
            try:
                if self._get("/-/ready", raw=True).startswith(b"Prometheus"):
                    return self
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise PrometheusError("prometheus not ready in %ss:\n%s"
                                      % (timeout, self.log_tail()))
            time.sleep(0.1)

    def stop(self, timeout=15):
        """SIGTERM to our own PID (SIGKILL after timeout); the storage goes
        with the work dir when the rig made it."""
        stop_process(self.proc, timeout)
        if self.owns_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def log_tail(self, lines=30):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return ""

    # ------------------------------------------------------------ HTTP API
    def _get(self, path, params=None, raw=False, timeout=10):
        url = self.url + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=timeout) as r:
            body = r.read()
        return body if raw else json.loads(body)

    def api(self, path, **params):
        """The data of /api/v1/PATH; PrometheusError on an error answer."""
        try:
            answer = self._get("/api/v1/" + path, params)
        except urllib.error.HTTPError as e:
            answer = json.loads(e.read() or b"{}")
        if answer.get("status") != "success":
            raise PrometheusError("%s %s: %s" % (path, params,
                                                 answer.get("error", answer)))
        return answer["data"]

    def query(self, expr, at=None):
        """An instant query: [(labels, value)] (a scalar: [({}, value)])."""
        params = {"query": expr}
        if at is not None:
            params["time"] = "%.3f" % at
        data = self.api("query", **params)
        if data["resultType"] in ("scalar", "string"):
            return [({}, float(data["result"][1]))]
        if data["resultType"] == "matrix":
            return [(r["metric"], [(float(t), float(v))
                                   for t, v in r["values"]])
                    for r in data["result"]]
        return [(r["metric"], float(r["value"][1])) for r in data["result"]]

    def query_range(self, expr, start, end, step):
        """[(labels, [(t, value)])] of a range query."""
        data = self.api("query_range", query=expr, start="%.3f" % start,
                        end="%.3f" % end, step=str(step))
        return [(r["metric"], [(float(t), float(v)) for t, v in r["values"]])
                for r in data["result"]]

    def samples(self, selector, t0, t1):
        """The raw samples Prometheus stored for *selector* in [t0, t1]:
        [(labels, [(t, value)])] (a range selector at t1)."""
        return self.query("%s[%dms]" % (selector, round((t1 - t0) * 1000)),
                          at=t1)

    def increase(self, selector, t0, t1):
        """{node: increase()} of a counter over [t0, t1], as Prometheus
        computes it (extrapolated to the window's edges)."""
        out = self.query("sum by (node) (increase(%s[%dms]))"
                         % (selector, round((t1 - t0) * 1000)), at=t1)
        return {labels.get("node"): v for labels, v in out}

    def last_values(self, selector, at=None, lookback="5m"):
        """[(labels, last sample (t, value))] of every series of *selector*
        seen within *lookback* of *at*: the last scraped value even of a
        series that has ended (an instant query would drop a series
        marked stale)."""
        out = []
        for labels, points in self.query("%s[%s]" % (selector, lookback),
                                         at=at):
            if points:
                out.append((labels, points[-1]))
        return out

    def targets_health(self):
        """{scrapeUrl-ish target: (health, lastError)} of active targets."""
        data = self.api("targets", state="active")
        return {t["labels"].get("instance"): (t["health"], t["lastError"])
                for t in data["activeTargets"]}

    def wait_scraped(self, timeout=30):
        """Wait until every target has been scraped and is up."""
        deadline = time.monotonic() + timeout
        while True:
            health = self.targets_health()
            if len(health) == len(self.targets) and \
                    all(h == "up" for h, _ in health.values()):
                return health
            if time.monotonic() > deadline:
                raise PrometheusError("targets not up in %ss: %s"
                                      % (timeout, health))
            time.sleep(0.2)


# ---------------------------------------------------------------- exporters
def node_addr(node):
    """NodeAddr of nodeN (contribs/cluster/cluster's node_addr)."""
    return "%s.%d" % (NET, 10 + int(node[len("node"):]))


def exporter_target(node, port=EXPORTER_PORT):
    return "%s:%d" % (node_addr(node), port)


def exporter_path():
    """The staged slurm-energy-exporter (SE_BIN_DIR/../sbin)."""
    from .meters import bin_dir
    return os.path.join(os.path.dirname(bin_dir()), "sbin",
                        "slurm-energy-exporter")


class Exporters:
    """One slurm-energy-exporter per node of *cluster*, each in its node's
    network namespace (nsenter --net, as slurmd runs) listening on the
    node's address, so Prometheus on the host reaches it over the bridge.
    nsenter execs the exporter: the PIDs we keep are the exporters'."""

    def __init__(self, cluster, nodes, workdir, exporter=None,
                 extra_args=(), node_args=None):
        self.c, self.nodes, self.workdir = cluster, list(nodes), workdir
        self.exporter = exporter or exporter_path()
        self.extra_args = list(extra_args)
        self.node_args = dict(node_args or {})   # node: [more args]
        self.procs = {}

    def argv(self, node):
        return ["nsenter", "--net=/run/netns/%s%s" % (NS_PREFIX, node), "--",
                self.exporter, "--node=" + node,
                "--spool-dir=" + os.path.join(self.c.state, "nodes", node,
                                              "spool"),
                "--web.listen-address=" + exporter_target(node),
                "--web.allow-insecure-listen", *self.extra_args,
                *self.node_args.get(node, ())]

    def _log_path(self, node):
        return os.path.join(self.workdir, "exporter-%s.log" % node)

    def start(self, timeout=20):
        if not os.access(self.exporter, os.X_OK):
            raise PrometheusError("%s not built" % self.exporter)
        for node in self.nodes:
            self.procs[node] = subprocess.Popen(
                self.argv(node), env=self.c.env,
                stdout=open(self._log_path(node), "ab"),
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        for node in self.nodes:
            while self.text(node, check=False) is None:
                if time.monotonic() > deadline:
                    raise PrometheusError("exporter on %s not answering in "
                                          "%ss: %s" % (node, timeout,
                                                       self.log(node)))
                time.sleep(0.1)
        return self

    def text(self, node, openmetrics=False, check=True):
        """One exposition of node's exporter; None when it does not answer
        (yet) and check is False."""
        proc = self.procs[node]
        if proc.poll() is not None:
            raise PrometheusError("exporter on %s exited (%s): %s"
                                  % (node, proc.returncode, self.log(node)))
        req = urllib.request.Request("http://%s/metrics"
                                     % exporter_target(node))
        if openmetrics:
            req.add_header("Accept",
                           "application/openmetrics-text; version=1.0.0")
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                return r.read().decode()
        except OSError:
            if check:
                raise
            return None

    def rss_kib(self, node):
        """VmRSS of node's exporter (KiB)."""
        with open("/proc/%d/status" % self.procs[node].pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return None

    def cpu_s(self, node):
        """CPU seconds (user + system) node's exporter has used."""
        with open("/proc/%d/stat" % self.procs[node].pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def log(self, node):
        try:
            with open(self._log_path(node), errors="replace") as f:
                return f.read()[-2000:]
        except OSError:
            return ""

    def stop(self, timeout=10):
        """SIGTERM to each exporter's own PID, SIGKILL after timeout."""
        for proc in self.procs.values():
            stop_process(proc, timeout)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
