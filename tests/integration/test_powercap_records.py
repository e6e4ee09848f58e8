"""Each capped job's record in its AdminComment (issue #45,
PowerCapJobRecords=yes): slurm-energy-powercapd on the session's test
cluster (its slurmctld through libslurm: slurm_load_jobs every round with its
update time, slurm_update_job2 while the job runs: slurmctld refuses to
update a finished job), two agents named after the cluster's
nodes over fake RAPL trees and se-fake-node-power (test_powercap_daemon's
rig: the caps are real, the nodes' power a file's watts).  Demands 180 W
on both, cap 300 W over 100..200 W nodes: both capped at 150 W.  A job on
node1 for 4 s: its final record, logged by the daemon at its end, is
set in its accounting record once the job's end is in slurmdbd
(slurmdb_job_modify: sacct's AdminComment shows it, not the record
written while it ran), and slurm-energy-report's time capped for its
account is that final record.  About 15 s; no cluster restart.
"""
import json
import os
import re
import shutil
import subprocess
import time

import pytest

import test_powercap_daemon as pcd

REPORT = os.path.join(pcd.REPO, "contribs", "report", "slurm-energy-report")
# The daemon of the cluster's release (contribs/test-all.sh sets
# SE_RELEASE_OBJ to a release's build: its libslurm talks to that
# slurmctld), run where that release's programs run (Cluster.in_root: a
# Debian root's chroot, a tarball prefix's PATH); the agents and the fake
# node power are Slurm-free, the host's build.
DAEMON = os.path.join(os.environ.get("SE_RELEASE_OBJ", pcd.OBJ), "src",
                      "powercap", "slurm-energy-powercapd")
NODES = ["node1", "node2"]
CAP_W = 300


@pytest.fixture(scope="module")
def capped(cluster):
    for prog in (DAEMON, pcd.AGENT, pcd.POWER):
        if not os.access(prog, os.X_OK):
            pytest.fail("%s not built (make; or set SE_BUILD_OBJ)" % prog)
    munged = shutil.which("munged") or "/usr/sbin/munged"
    r = pcd.Rig()
    r.start_munged(munged)
    conf = ("PowerCapWatts=%d\nPowerCapPeriod=0.2\nPowerCapRaiseGate=100\n"
            "PowerCapHoldSeconds=2\nPowerCapFloorWatts=100\n"
            "PowerCapMaxWatts=200\nPowerCapNodes=%s\n"
            "PowerCapController=127.0.0.1:%d\n"
            % (CAP_W, ",".join(NODES), pcd.PORT + 1))
    try:
        r.wait_for(r.munge, "munged socket")
        for n in NODES:
            r.fake_zone(n, 200000000, 200000000)
            pcd.put(os.path.join(r.dir, n + ".watts"), "180\n")
            pcd.put(os.path.join(r.dir, n + ".conf"), conf +
                    "PowerCapKnobs=rapl:root=%s:min_pct=50\n"
                    % os.path.join(r.dir, n))
            r.start("power-" + n, [pcd.POWER,
                                   os.path.join(r.dir, n + ".sock"),
                                   os.path.join(r.dir, n + ".watts"), "50"])
        pcd.put(os.path.join(r.dir, "powercapd.conf"), conf +
                "PowerCapKnobs=rapl\nPowerCapJobRecords=yes\n")
        for n in NODES:
            r.wait_for(os.path.join(r.dir, n + ".sock"), "query socket")
        env_before = dict(os.environ)
        os.environ["SLURM_CONF"] = cluster.env["SLURM_CONF"]
        try:
            r.daemon(DAEMON, cluster.in_root)  # the cluster's slurm.conf
        finally:
            os.environ.clear()
            os.environ.update(env_before)
        for n in NODES:
            r.agent(n)
        r.cluster = cluster
        yield r
    finally:
        r.close()


def test_capped_job_recorded_in_admin_comment(capped):
    c = capped.cluster
    deadline = time.monotonic() + 10
    while not all("node %s: agent connected" % n in capped.log("daemon")
                  for n in NODES):
        assert time.monotonic() < deadline, "\n".join(
            capped.log(p)[-1500:] for p in
            ["daemon"] + ["agent-" + n for n in NODES])
        time.sleep(0.05)
    time.sleep(0.5)     # answered: not charged their maximum any more
    caps = pcd.settled(capped, NODES, CAP_W)
    assert all(abs(v - 150) < 0.5 for v in caps.values()), caps
    t0 = time.monotonic()
    start = int(time.time()) - 1
    jobid = c.sbatch("-N1", "-w", "node1", "--wrap", "sleep 4")
    c.wait_sacct(jobid)
    ran = time.monotonic() - t0
    # the final record, logged at its end (seen within a round): capped
    # all along, the 4 s of sleep and some of its start and end
    deadline = time.monotonic() + 15
    final = "job %d ended: powercap=capped:(\\d+)s,min:150W" % jobid
    while not re.search(final, capped.log("daemon")):
        assert time.monotonic() < deadline, capped.log("daemon")[-2000:]
        time.sleep(0.2)
    f = re.search(final, capped.log("daemon"))
    assert 4 <= int(f.group(1)) <= ran + 1, (f.group(0), ran)
    # and set in its accounting record once slurmctld's end record is in
    # slurmdbd (slurmctld refuses to update a finished job): sacct's
    # AdminComment is the final record, not the one written while it ran
    # (when first seen capped: 0 or 1 s)
    want = "powercap=capped:%ss,min:150W" % f.group(1)
    ended = time.monotonic()
    deadline = ended + 15
    while True:
        rows = c.sacct(jobid, fields=("JobID", "AdminComment"))
        comment = rows[0]["AdminComment"] if rows else ""
        if want in comment:
            break
        assert time.monotonic() < deadline, (want, rows, [
            line for line in capped.log("daemon").splitlines()
            if "round" not in line][-40:])
        time.sleep(0.5)
    assert comment.count("powercap=") == 1, comment
    # no error said of the records, by the daemon or by libslurm in it
    # (slurm_update_job with a job id string logged "error: Use
    # slurm_update_job2() ..." at every write); a round's error before
    # the agents answered (every node charged its maximum) is not one
    errors = [line for line in capped.log("daemon").splitlines()
              if "error" in line and ": round " not in line]
    assert not errors, errors
    said = "job %d: final record in its accounting: %s" % (jobid, want)
    assert said in capped.log("daemon"), capped.log("daemon")[-2000:]
    m = re.search(r"powercap=capped:(\d+)s,min:(\d+)W", comment)
    print("AdminComment %r (%.1f s after the daemon logged the job's end); "
          "final %r; job %.1f s" % (comment, time.monotonic() - ended,
                                    f.group(0), ran))
    # slurm-energy-report's time capped, from the record the daemon wrote
    # (read back through sacct's AdminComment, as an admin runs it)
    account = c.sacct(jobid, fields=("JobID", "Account"))[0]["Account"]
    p = subprocess.run(
        ["/usr/bin/python3", REPORT, "--by", "account", "--json",
         "--start", str(start), "--end", str(int(time.time()) + 60)],
        env=c.env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    rows = {r["group"]: r for r in json.loads(p.stdout)["by"]["account"]}
    row = rows[account]
    assert (row["capped_jobs"], row["capped_job_s"], row["min_cap_w"]) == \
        (1, int(m.group(1)), 150), row
    print("slurm-energy-report, account %s: %d capped job, %d s, min %d W"
          % (account, row["capped_jobs"], row["capped_job_s"],
             row["min_cap_w"]))
