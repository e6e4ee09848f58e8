"""slurm-energy-report on the test cluster (issue #32).

Three jobs at once on the Modbus meters (counter path, our simulator
playing contribs/trace/examples/cluster.trace): two users (root and
nobody) in two accounts (phys and chem), one job per node.  The report,
running the cluster's sacct itself, must give each account and each user
the sum of its jobs' sacct energy to the joule, and the truth (the trace's
exact integral over each task's own start and end, selab.energy) within
the jobs' own 1 %; its cost and CO2 must be the energy times a flat price
and intensity.  Its plots are drawn from these jobs, and its HTML page is
opened in headless Chromium, which must decode every figure.  The first
job is profiled (acct_gather_profile/hdf5, --profile=energy, a sample a
second): its power profile, read back through sh5util, must follow the
trace and add up to the job's energy.  The phys job is given a power cap
record in its AdminComment while it runs (what slurm-energy-powercapd
writes with PowerCapJobRecords=yes, among a site's word): the report,
reading the cluster's sacct, must give phys that job's capped seconds,
cap and share of its ElapsedRaw, chem none (issue #45).
"""
import functools
import http.server
import json
import os
import re
import shutil
import subprocess
import threading
import time

import pytest

from selab import energy
from selab.cluster import PLUGIN_DIR, poll
from selab.trace import Trace
from selab.meters import ModbusSim

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
REPORT = os.path.join(REPO, "contribs", "report", "slurm-energy-report")
TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")
METER = (os.environ.get("SE_CLUSTER_NET", "10.199.0") + ".1", 15020)
UNITS = {1: "node1", 2: "chassis"}
COLUMN_OF = {"node1": "node1", "node2": "chassis", "node3": "chassis"}
SHARE_OF = {"node1": 1.0, "node2": 0.5, "node3": 0.5}
JOB_SECONDS = 30
TOLERANCE = 0.01            # each job's own bound (test_modbus_energy)
PRICE = 0.25                # per kWh
INTENSITY = 300.0           # g/kWh
# the first job's srun options: an energy sample a second in its profile
PROFILED = ("--profile=energy", "--acctg-freq=energy=1")
# the phys job's AdminComment: a site's word and the daemon's record
CAP_COMMENT = "site=x powercap=capped:7s,min:123W"
# (name, user, account, node)
JOBS = (("rep-phys-root", "root", "phys", "node1"),
        ("rep-chem-root", "root", "chem", "node2"),
        ("rep-chem-nobody", "nobody", "chem", "node3"))


@pytest.fixture(scope="module")
def report(cluster, tmp_path_factory):
    """The jobs run, then the report's JSON by account and by user, the
    jobs' sacct energy and their truth."""
    workdir = str(tmp_path_factory.mktemp("report"))
    epoch = time.time()
    map_file = os.path.join(workdir, "modbus.map")
    with open(map_file, "w") as f:
        f.write("Nodes=node1 Unit=1\nNodes=node[2-3] Unit=2 Share=equal\n")
    hdf5_dir = os.path.join(workdir, "hdf5")
    os.makedirs(hdf5_dir)
    conf = ("EnergyModbusDevice=tcp://%s:%d\nEnergyModbusModel=sdm630\n"
            "EnergyModbusMap=%s\nEnergyModbusFrequency=1\n"
            "EnergyModbusTimeout=500\n"
            "ProfileHDF5Dir=%s\nProfileHDF5Default=None\n"
            % (METER[0], METER[1], map_file, hdf5_dir))
    with cluster.configured(plugin_dirs=[PLUGIN_DIR],
                            energy_type="acct_gather_energy/modbus",
                            acct_gather_conf=conf,
                            slurm_conf="AcctGatherProfileType="
                                       "acct_gather_profile/hdf5\n") as c, \
            ModbusSim(TRACE, epoch, UNITS, ["--model", "sdm630"],
                      tcp=METER).start():
        name = c.scontrol("show", "config").stdout
        cname = [l.split("=", 1)[1].strip() for l in name.splitlines()
                 if l.startswith("ClusterName")][0]
        c.sacctmgr("-i", "add", "account", "phys,chem", "Cluster=" + cname)
        c.sacctmgr("-i", "add", "user", "root", "Account=phys,chem",
                   "Cluster=" + cname)
        c.sacctmgr("-i", "add", "user", "nobody", "Account=chem",
                   "DefaultAccount=chem", "Cluster=" + cname)
        poll(lambda: all(energy.node_power(c, n) for _, _, _, n in JOBS),
             timeout=60, what="CurrentWatts on every node")
        try:
            # the period: from now (earlier modules' jobs have ended)
            start = int(time.time())
            procs = [(n, c.popen(["srun", "-J", n, "-A", acct, "-w", node,
                                  "--uid=" + user, "--chdir=/tmp",
                                  *(PROFILED if n == JOBS[0][0] else ()),
                                  *energy.timed_command(JOB_SECONDS)]))
                     for n, user, acct, node in JOBS]
            _set_admin_comment(c, JOBS[0][0], CAP_COMMENT)
            jobs, docs = {}, {}
            for n, p in procs:
                out, err = p.communicate(timeout=JOB_SECONDS + 90)
                assert p.returncode == 0, "srun %s: %s" % (n, err)
                jobid = int(c.run(["sacct", "-n", "-X", "-P", "-o", "JobID",
                                   "--name", n]).stdout.split()[-1])
                jobs[n] = (jobid, energy.windows(out))
            recorded = {n: _job_energy(c, jobid)
                        for n, (jobid, _) in jobs.items()}
            docs["elapsed"] = {
                n: int(c.run(["sacct", "-n", "-X", "-P", "-j", str(jobid),
                              "-o", "ElapsedRaw"]).stdout.split()[0])
                for n, (jobid, _) in jobs.items()}
            truth = {n: energy.true_energy(TRACE, epoch, w, COLUMN_OF,
                                           SHARE_OF)
                     for n, (_, w) in jobs.items()}
            end = int(time.time()) + 60
            for by in ("account", "user"):
                p = subprocess.run(
                    ["/usr/bin/python3", REPORT, "--by", by, "--json",
                     "--start", str(start), "--end", str(end),
                     "--price", str(PRICE), "--intensity", str(INTENSITY)],
                    env=c.env, capture_output=True, text=True, timeout=60)
                assert p.returncode == 0, p.stderr
                docs[by] = json.loads(p.stdout)
            p = subprocess.run(
                ["/usr/bin/python3", REPORT, "--by", "account,user",
                 "--start", str(start), "--end", str(end),
                 "--price", str(PRICE), "--intensity", str(INTENSITY),
                 "--html", os.path.join(workdir, "report.html"),
                 "--plot", os.path.join(workdir, "plots")],
                env=c.env, capture_output=True, text=True, timeout=120)
            assert p.returncode == 0, p.stderr
            docs["workdir"] = workdir
            p = subprocess.run(
                ["/usr/bin/python3", REPORT, "--json", "--start",
                 str(start), "--end", str(end), "--profile",
                 str(jobs[JOBS[0][0]][0]), "--profile-dir", hdf5_dir],
                env=c.env, capture_output=True, text=True, timeout=120)
            assert p.returncode == 0, p.stderr
            docs["profile"] = json.loads(p.stdout)["profiles"][0]
            docs["epoch"] = epoch
            docs["env"] = c.env
            yield docs, jobs, recorded, truth
        finally:
            for what in (("user", "where", "name=nobody"),
                         ("user", "where", "name=root", "account=phys,chem"),
                         ("account", "where", "name=phys,chem")):
                c.sacctmgr("-i", "delete", *what, check=False)


def _set_admin_comment(c, name, comment):
    """The running job's AdminComment (as root, as the daemon does it:
    slurmctld refuses to update a finished job)."""
    def running():
        out = c.run(["squeue", "-h", "-n", name, "-t", "R", "-o",
                     "%i"]).stdout.split()
        return out[0] if out else None
    jobid = poll(running, timeout=JOB_SECONDS, what="job %s running" % name)
    c.scontrol("update", "JobId=" + jobid, "AdminComment=" + comment)


def _job_energy(c, jobid):
    """The job line's ConsumedEnergyRaw once slurmdbd has it."""
    def got():
        out = c.run(["sacct", "-n", "-X", "-P", "-j", str(jobid), "-o",
                     "ConsumedEnergyRaw,State"]).stdout.split("|")
        return int(out[0]) if out[0].strip().isdigit() and \
            out[1].startswith("COMPLETED") and int(out[0]) > 0 else None
    return poll(got, timeout=60, what="job %d's energy in sacct" % jobid)


def _groups(doc, by):
    return {r["group"]: r for r in doc["by"][by]}


@pytest.mark.parametrize("by,column", [("account", 2), ("user", 1)])
def test_energy_per_group_is_the_sum_of_its_jobs(report, by, column):
    """Per account and per user: the sum of the group's jobs' sacct energy
    to the joule, every job counted, none without energy."""
    docs, _, recorded, _ = report
    want, jobs = {}, {}
    for job in JOBS:
        g = job[column]
        want[g] = want.get(g, 0) + recorded[job[0]]
        jobs[g] = jobs.get(g, 0) + 1
    got = _groups(docs[by], by)
    assert {g: got[g]["energy_j"] for g in want} == want, (got, recorded)
    assert {g: got[g]["jobs"] for g in want} == jobs, got
    assert all(got[g]["jobs_without_energy"] == 0 for g in want), got


def test_each_account_within_its_jobs_error_of_the_truth(report):
    docs, _, _, truth = report
    got = _groups(docs["account"], "account")
    for acct in ("phys", "chem"):
        true_j = sum(truth[n] for n, _, a, _ in JOBS if a == acct)
        err = energy.relative_error(got[acct]["energy_j"], true_j)
        print("account %s: report %d J, true %.0f J (%+.3f %%)"
              % (acct, got[acct]["energy_j"], true_j, 100 * err))
        assert abs(err) < TOLERANCE, (acct, got[acct], true_j)


def test_cost_and_co2_are_energy_times_price_and_intensity(report):
    docs, _, recorded, _ = report
    got = _groups(docs["account"], "account")
    for acct, row in got.items():
        if acct not in ("phys", "chem"):
            continue
        kwh = row["energy_j"] / 3.6e6
        assert row["cost"] == pytest.approx(kwh * PRICE, rel=1e-9)
        assert row["co2_kg"] == pytest.approx(kwh * INTENSITY / 1000,
                                              rel=1e-9)


def test_time_capped_from_sacct_admin_comment(report):
    """The phys job's record, read back from the cluster's sacct through
    the report's AdminComment field: 1 job, 7 s, 123 W, 7 s over the
    account's ElapsedRaw; chem has none."""
    docs = report[0]
    got = _groups(docs["account"], "account")
    phys_s = docs["elapsed"][JOBS[0][0]]
    assert (got["phys"]["capped_jobs"], got["phys"]["capped_job_s"],
            got["phys"]["min_cap_w"]) == (1, 7, 123), got["phys"]
    assert got["phys"]["capped_pct"] == pytest.approx(100.0 * 7 / phys_s,
                                                      rel=1e-12)
    assert (got["chem"]["capped_jobs"], got["chem"]["capped_job_s"],
            got["chem"]["min_cap_w"]) == (0, 0, None), got["chem"]
    users = _groups(docs["user"], "user")
    assert users["root"]["capped_job_s"] == 7 and \
        users["nobody"]["capped_jobs"] == 0, users


# ------------------------------------------------------ plots and page
def test_plots_drawn_from_the_cluster_jobs(report):
    """Each plot a PNG of the cluster's jobs: it decodes, and it is a
    picture (thousands of distinct pixels), not an empty canvas."""
    import matplotlib.image
    plots = os.path.join(report[0]["workdir"], "plots")
    names = sorted(os.listdir(plots))
    assert names == ["energy-per-account-month.png",
                     "energy-vs-node-hours.png"], names
    for name in names:
        img = matplotlib.image.imread(os.path.join(plots, name))
        h, w = img.shape[:2]
        assert w >= 400 and h >= 300, (name, img.shape)
        colours = {tuple(px) for px in img.reshape(-1, img.shape[2])[::7]}
        assert len(colours) > 20, (name, len(colours))


# The report's page in an iframe of the same origin (both served on
# loopback): every <img> once decoded, with its natural size, and the
# page's text.
CHECK_PAGE = """<!DOCTYPE html><html><body>
<iframe id="r" src="report.html" width="1200" height="900"></iframe>
<pre id="out">pending</pre>
<script>
document.getElementById("r").onload = function () {
  var d = this.contentDocument, imgs = d.images, res = [], left = imgs.length;
  function done() {
    document.getElementById("out").textContent = JSON.stringify(
      {images: res, text: d.body.innerText});
  }
  if (!left) { done(); return; }
  Array.prototype.forEach.call(imgs, function (im) {
    function rec() {
      res.push({alt: im.alt, w: im.naturalWidth, h: im.naturalHeight});
      if (--left === 0) done();
    }
    if (im.complete) rec(); else { im.onload = rec; im.onerror = rec; }
  });
};
</script></body></html>
"""


def _chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("no chromium (contribs/install-deps.sh installs it)")


def _served(directory):
    """An HTTP server of directory on loopback, in a thread."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    handler = functools.partial(Quiet, directory=directory)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def test_html_page_opens_in_chromium_with_its_figures(report):
    """Headless Chromium opens the page: its two figures decode at the
    PNGs' own sizes, and its tables name both accounts and users."""
    import matplotlib.image
    workdir = report[0]["workdir"]
    with open(os.path.join(workdir, "check.html"), "w") as f:
        f.write(CHECK_PAGE)
    server = _served(workdir)
    try:
        url = "http://127.0.0.1:%d/check.html" % server.server_address[1]
        # loopback only: anything else goes to a closed local port
        p = subprocess.run(
            [_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync",
             "--proxy-server=127.0.0.1:9", "--user-data-dir=%s"
             % os.path.join(workdir, "chromium-profile"),
             "--virtual-time-budget=10000", "--dump-dom", url],
            capture_output=True, text=True, timeout=120)
    finally:
        server.shutdown()
        server.server_close()
    m = re.search(r'<pre id="out">(.*?)</pre>', p.stdout, re.S)
    assert m and m.group(1) != "pending", (p.returncode, p.stderr[-2000:])
    import html as html_mod
    got = json.loads(html_mod.unescape(m.group(1)))
    want = {}
    for name in sorted(os.listdir(os.path.join(workdir, "plots"))):
        h, w = matplotlib.image.imread(
            os.path.join(workdir, "plots", name)).shape[:2]
        want[(w, h)] = want.get((w, h), 0) + 1
    sizes = {}
    for im in got["images"]:
        sizes[(im["w"], im["h"])] = sizes.get((im["w"], im["h"]), 0) + 1
    assert sizes == want, got["images"]
    for name in ("phys", "chem", "root", "nobody"):
        assert name in got["text"], got["text"][:2000]


# --------------------------------------------------------- power profile
def test_power_profile_follows_the_trace(report):
    """The profiled job: a sample a second on node1 over its whole run,
    whose energy (each sample held a second) is the trace's over the same
    seconds.  A sample is the power slurmd's sampler last read (once a
    second), so the samples lag the trace by a second or so: the bound is
    that lag times the trace's change over the span, plus 1 %."""
    docs, jobs, _, _ = report
    pr, epoch = docs["profile"], docs["epoch"]
    name = JOBS[0][0]
    assert pr["job"] == jobs[name][0] and pr["nodes"] == ["node1"], pr
    assert pr["samples"] >= JOB_SECONDS - 2, pr
    (t0, t1), = jobs[name][1].values()
    assert pr["start"] <= t0 + 2 and pr["end"] >= t1 - 2, (pr, t0, t1)
    truth = energy.trace_joules(TRACE, "node1", epoch, pr["start"],
                                pr["end"])
    pts = Trace(TRACE).series("node1", pr["start"] - epoch,
                              pr["end"] - epoch, 1.0)
    allowed = 2.0 * abs(pts[-1][1] - pts[0][1]) + 0.01 * truth
    print("profile of %s: %d samples, %.0f J, trace %.0f J over the same "
          "%d s (%+.2f %%, allowed +/-%.0f J)"
          % (name, pr["samples"], pr["joules"], truth,
             pr["end"] - pr["start"], 100 * (pr["joules"] - truth) / truth,
             allowed))
    assert abs(pr["joules"] - truth) <= allowed, (pr, truth)


def test_power_profile_samples_are_the_meters_power(report):
    """Each sample is the trace's power at an instant of the second before
    its time stamp (slurmd's last reading, stamped in whole seconds), in
    whole watts as the profile keeps it: within 1 W of the trace's range
    over [t - 2, t + 1]."""
    docs = report[0]
    pr, epoch = docs["profile"], docs["epoch"]
    tr = Trace(TRACE)
    worst = 0.0
    for node, _, t, w in pr["series"]:
        pts = [p for _, p in tr.series(node, t - 2 - epoch, t + 1 - epoch,
                                       0.05)]
        lo, hi = min(pts), max(pts)
        off = max(lo - w, w - hi, 0.0)
        worst = max(worst, off)
        assert off <= 1.0, (t, w, lo, hi)
    print("%d samples, worst %.2f W outside the trace's range"
          % (len(pr["series"]), worst))


def test_power_profile_plotted(report):
    """--profile with --plot: the job's power as a figure of its own."""
    docs, jobs = report[0], report[1]
    jobid = jobs[JOBS[0][0]][0]
    out = os.path.join(docs["workdir"], "profile-plots")
    p = subprocess.run(
        ["/usr/bin/python3", REPORT, "--sacct-file", "/dev/null",
         "--profile", str(jobid), "--profile-user", "root",
         "--profile-dir", os.path.join(docs["workdir"], "hdf5"),
         "--plot", out], env=docs["env"], capture_output=True, text=True,
        timeout=120)
    assert p.returncode == 0, p.stderr
    assert "power-profile-%d.png" % jobid in os.listdir(out)
