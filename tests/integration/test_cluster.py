"""Integration tests of the test cluster itself (contribs/cluster).

They prove that the cluster is what later tests rely on: separate nodes
with their own hostname and address, accounting that records jobs, a fake
cpufreq tree per node that stock --cpu-freq drives, fake GPUs that gres/gpu
hands out, and a `down` that leaves nothing behind.  The last test cycles
the cluster down and up again.
"""

import os
import re
import shutil
import subprocess

import pytest

from selab.cluster import poll

NET_PREFIX = os.environ.get("SE_CLUSTER_NET", "10.199.0")
BRIDGE = os.environ.get("SE_CLUSTER_BRIDGE", "sebr0")
NS_PREFIX = os.environ.get("SE_CLUSTER_NS_PREFIX", "se-")
VETH_PREFIX = os.environ.get("SE_CLUSTER_VETH_PREFIX", "seveth")


def test_nodes_idle_with_gpus(cluster):
    out = cluster.run(["sinfo", "-h", "-N", "-o", "%N %T %G"]).stdout
    rows = [l.split() for l in out.splitlines()]
    assert [r[0] for r in rows] == ["node1", "node2", "node3"]
    for name, state, gres in rows:
        assert state == "idle", out
        assert gres == "gpu:2", out


def test_srun_three_distinct_hosts(cluster):
    out = cluster.srun("-N3", "hostname").stdout.split()
    assert len(out) == 3
    assert sorted(out) == ["node1", "node2", "node3"]


def test_each_node_has_its_own_address(cluster):
    # -l prefixes output with the task id; one task per node
    out = cluster.srun("-N3", "-l", "sh", "-c",
                       "echo $(hostname) $(ip -4 -o addr show dev eth0)").stdout
    seen = {}
    for line in out.splitlines():
        m = re.search(r"(node\d+) .* inet (\S+)/24", line)
        assert m, line
        seen[m.group(1)] = m.group(2)
    assert seen == {"node%d" % i: "%s.%d" % (NET_PREFIX, 10 + i)
                    for i in (1, 2, 3)}


def test_stepd_title_names_its_step(cluster):
    """The share mode finds a job in Slurm 26.05's SLUID-named cgroup v2
    directories by the title of the step's slurmstepd (src/common/cg_cpu.h):
    "slurmstepd: [<job>.<step>]", set by slurmstepd from the step's id, on
    every release.  A task's parent is its step's slurmstepd."""
    out = cluster.srun("-w", "node1", "-n1", "sh", "-c",
                       'tr "\\0" " " < /proc/$PPID/cmdline; echo; '
                       'echo $SLURM_JOB_ID').stdout.splitlines()
    assert len(out) == 2, out
    assert re.match(r"slurmstepd: \[%s\.0\] *$" % out[1], out[0]), out


def test_accounting_registers_energy_and_gpu_tres(cluster):
    clusters = cluster.sacctmgr("-n", "-P", "list", "cluster",
                                "format=Cluster").stdout.split()
    name = cluster.scontrol("show", "config").stdout
    cname = re.search(r"^ClusterName\s*=\s*(\S+)", name, re.M).group(1)
    assert cname in clusters
    tres = cluster.sacctmgr("-n", "-P", "show", "tres",
                            "format=Type,Name").stdout.split()
    assert "energy|" in tres
    assert "gres|gpu" in tres


def test_sbatch_recorded_by_sacct(cluster, tmp_path):
    out = tmp_path / "job.out"
    jobid = cluster.sbatch("-N1", "-w", "node3", "-J", "se-acct-test",
                           "-o", str(out),
                           script="#!/bin/sh\nhostname\nsrun true\nexit 0\n")
    rows = cluster.wait_sacct(jobid, "COMPLETED", steps=("batch", "0"),
                              expect={"JobName": "se-acct-test"})
    by_id = {r["JobID"]: r for r in rows}
    job = by_id[str(jobid)]
    assert job["JobName"] == "se-acct-test"
    assert job["ExitCode"] == "0:0"
    assert job["NodeList"] == "node3"
    assert by_id["%d.batch" % jobid]["State"] == "COMPLETED"
    assert by_id["%d.0" % jobid]["State"] == "COMPLETED"
    # the batch script really ran on node3
    assert out.read_text().split() == ["node3"]


def test_failed_job_recorded_as_failed(cluster):
    # the accounting path must report the truth, not always COMPLETED
    jobid = cluster.sbatch("-N1", "-o", "/dev/null", "--wrap", "exit 3")
    rows = cluster.wait_sacct(jobid, "FAILED")
    job = {r["JobID"]: r for r in rows}[str(jobid)]
    assert job["ExitCode"] == "3:0"


def _freq_snapshot(cluster, node):
    snap = {}
    for cpu in cluster.node_cpus(node):
        for f in ("scaling_setspeed", "scaling_governor",
                  "scaling_min_freq", "scaling_max_freq"):
            path = cluster.cpufreq_file(node, cpu, f)
            st = os.stat(path)
            snap[(cpu, f)] = (cluster.read_cpufreq(node, cpu, f),
                              st.st_mtime_ns)
    return snap


def test_cpu_freq_on_node2_only_during_step(cluster):
    avail = cluster.read_cpufreq("node2", 0,
                                 "scaling_available_frequencies").split()
    orig = cluster.read_cpufreq("node2", 0, "scaling_setspeed")
    orig_gov = cluster.read_cpufreq("node2", 0, "scaling_governor")
    target = next(f for f in avail if f != orig)   # a listed, different one
    others = {n: _freq_snapshot(cluster, n) for n in ("node1", "node3")}
    ncpu = len(cluster.node_cpus("node2"))

    # The step prints node2's /sys view, then waits until the host has seen
    # the same value in node2's tree (a file in the state dir), so both
    # views are checked while the step runs.
    mark = os.path.join(cluster.state, "nodes", "node2", "seen-by-host")
    if os.path.exists(mark):
        os.unlink(mark)
    step = ("grep . /sys/devices/system/cpu/cpu*/cpufreq/scaling_setspeed;"
            " echo ready; i=0; while [ ! -e %s ] && [ $i -lt 300 ];"
            " do sleep 0.1; i=$((i+1)); done" % mark)
    p = cluster.popen(["srun", "-w", "node2", "-N1", "-n1", "-c", str(ncpu),
                       "--cpu-freq=%s" % target, "sh", "-c", step])
    try:
        poll(lambda: all(cluster.read_cpufreq("node2", c, "scaling_setspeed")
                         == target for c in range(ncpu)),
             timeout=30, what="node2 scaling_setspeed == %s" % target)
        during_gov = cluster.read_cpufreq("node2", 0, "scaling_governor")
        during_others = {n: _freq_snapshot(cluster, n) for n in others}
        open(mark, "w").close()
        stdout, stderr = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, stderr
    lines = [l for l in stdout.splitlines() if "scaling_setspeed" in l]
    assert len(lines) == ncpu, stdout
    for line in lines:               # what the step itself saw
        assert line.endswith(":" + target), stdout
    assert during_gov == "userspace"
    assert during_others == others
    # restored after the step
    poll(lambda: all(cluster.read_cpufreq("node2", c, "scaling_setspeed")
                     == orig for c in range(ncpu)),
         timeout=30, what="node2 scaling_setspeed restored to %s" % orig)
    poll(lambda: cluster.read_cpufreq("node2", 0, "scaling_governor")
         == orig_gov, timeout=30, what="node2 governor restored")
    assert {n: _freq_snapshot(cluster, n) for n in others} == others


def test_gres_gpu_sets_one_cuda_device(cluster):
    out = cluster.srun("--gres=gpu:1", "printenv",
                       "CUDA_VISIBLE_DEVICES").stdout.split()
    assert len(out) == 1
    assert re.fullmatch(r"[01]", out[0]), out


def test_gres_gpu_two_devices_per_node(cluster):
    out = cluster.srun("-N3", "--gres=gpu:2", "printenv",
                       "CUDA_VISIBLE_DEVICES").stdout.split()
    assert out == ["0,1"] * 3


def test_gres_devices_are_fake_char_devices(cluster):
    import stat
    for node in ("node1", "node2", "node3"):
        for i in (0, 1):
            st = os.stat(os.path.join(cluster.node_dir(node), "dev",
                                      "nvidia%d" % i))
            assert stat.S_ISCHR(st.st_mode)
            assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (195, i)


def test_up_when_up_fails_clearly(cluster):
    before = cluster.pids()
    p = subprocess.run([cluster.script, "up"], capture_output=True,
                       text=True, env=cluster.env, timeout=60)
    assert p.returncode != 0
    assert "already" in p.stderr
    assert cluster.pids() == before
    assert sorted(cluster.srun("-N3", "hostname").stdout.split()) == \
        ["node1", "node2", "node3"]


def test_up_clears_the_remains_of_a_killed_cluster(cluster):
    """A run killed with its cluster (a CI job cancelled, a machine that
    lost its processes) leaves namespaces and a bridge with no daemon
    alive; the next `up` with that identity clears them and starts, where
    it used to fail "already (partly) up" on every later run.  A cluster
    of its own identity beside the session's, one node."""
    env = dict(cluster.env)
    # beside the session's state dir: munged (user munge) must reach it
    state = cluster.state.rstrip("/") + "-k"
    net = NET_PREFIX.rsplit(".", 1)
    env.update({
        "SE_CLUSTER_STATE": state,
        "SE_CLUSTER_NET": "%s.%d" % (net[0], (int(net[1]) + 50) % 250 + 1),
        "SE_CLUSTER_BRIDGE": (BRIDGE + "k")[:15],
        "SE_CLUSTER_NS_PREFIX": NS_PREFIX + "k-",
        "SE_CLUSTER_VETH_PREFIX": (VETH_PREFIX[:6] + "k")[:8],
        "SE_CLUSTER_NAME": env.get("SE_CLUSTER_NAME", "secluster") + "k",
        "SLURM_CONF": os.path.join(state, "etc", "slurm.conf"),
    })
    for key, default in (("CTLD_PORT", 16817), ("SLURMD_PORT", 16818),
                         ("DBD_PORT", 16819), ("DB_PORT", 16306)):
        env["SE_CLUSTER_" + key] = str(
            int(os.environ.get("SE_CLUSTER_" + key, default)) + 500)
    ns = env["SE_CLUSTER_NS_PREFIX"] + "node1"
    bridge = env["SE_CLUSTER_BRIDGE"]
    subprocess.run(["ip", "netns", "add", ns], check=True)
    subprocess.run(["ip", "link", "add", bridge, "type", "bridge"],
                   check=True)
    run = lambda *a: subprocess.run(  # noqa: E731
        [cluster.script, *a], capture_output=True, text=True, env=env,
        timeout=300)
    try:
        up = run("up", "--nodes", "1")
        assert up.returncode == 0, up.stdout + up.stderr
        assert "no daemon alive: clearing them first" in up.stdout + up.stderr
        assert run("status").returncode == 0
    finally:
        down = run("down")
    assert down.returncode == 0, down.stdout + down.stderr
    assert ns not in subprocess.run(["ip", "netns", "list"],
                                    capture_output=True, text=True).stdout
    assert subprocess.run(["ip", "link", "show", bridge],
                          capture_output=True).returncode != 0
    assert run("status").returncode == 3
    shutil.rmtree(state)


def _config(cluster):
    out = cluster.scontrol("show", "config").stdout
    return dict(re.findall(r"^(\w+)\s*=\s*(.*?)\s*$", out, re.M))


def test_configured_restart_applies_options_then_restores(cluster, tmp_path):
    """The mechanism later plugin tests use (Cluster.configured)."""
    plugdir = tmp_path / "plugins"
    plugdir.mkdir()
    with cluster.configured(nodes=2, gpus=1, plugin_dirs=[str(plugdir)],
                            energy_type="acct_gather_energy/none",
                            acct_gather_conf="# se-test-marker\n",
                            slurm_conf="JobAcctGatherFrequency=7\n"):
        conf = _config(cluster)
        assert conf["PluginDir"] == "%s:%s" % (plugdir,
                                               cluster.stock_plugin_dir)
        assert conf["JobAcctGatherFrequency"] == "7"   # later key wins
        # 22.05 names the none plugin; 24.11 and later print "(null)"
        assert conf["AcctGatherEnergyType"] in (
            ("acct_gather_energy/none", "(null)") if cluster.other_release
            else ("acct_gather_energy/none",))
        with open(os.path.join(cluster.state, "etc", "acct_gather.conf")) as f:
            assert "# se-test-marker" in f.read()
        assert cluster.run(["sinfo", "-h", "-N", "-o", "%N %G"]).stdout.split() \
            == ["node1", "gpu:1", "node2", "gpu:1"]
        assert sorted(cluster.srun("-N2", "hostname").stdout.split()) == \
            ["node1", "node2"]
    # restored
    conf = _config(cluster)
    assert conf["JobAcctGatherFrequency"] == "1"
    assert cluster.node_names() == ["node1", "node2", "node3"]


# ------------------------------------------------------------ down / up
def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"   # a zombie has exited; init reaps it later


def _leftovers(cluster, pids):
    links = subprocess.run(["ip", "-o", "link"], capture_output=True,
                           text=True).stdout
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True,
                           text=True).stdout
    with open("/proc/self/mountinfo") as f:
        mounts = f.read()
    left = []
    left += [l for l in links.splitlines()
             if re.search(r"\d+: (%s|%s\d+)[@:]" % (BRIDGE, VETH_PREFIX), l)]
    left += [l for l in netns.splitlines() if l.startswith(NS_PREFIX)]
    left += [l for l in mounts.splitlines()
             if cluster.state in l or "/run/netns/" + NS_PREFIX in l]
    left += ["pid %d (%s) alive" % (pid, name)
             for name, pid in pids.items() if _alive(pid)]
    return left


def test_zz_down_leaves_nothing_then_up_again(cluster):
    """Runs last (file order): full down, check, up with the same options."""
    pids = cluster.pids()
    assert {"munged", "mariadb", "slurmdbd", "slurmctld", "slurmd-node1",
            "slurmd-node2", "slurmd-node3"} <= set(pids)
    assert all(_alive(p) for p in pids.values())
    assert _leftovers(cluster, {})   # sanity: the checks do see bridge etc.

    args = list(cluster.current_args)
    cluster.down()
    assert _leftovers(cluster, pids) == []
    assert subprocess.run([cluster.script, "status"], capture_output=True,
                          env=cluster.env).returncode != 0

    cluster.up(args)
    assert sorted(cluster.srun("-N3", "hostname").stdout.split()) == \
        ["node1", "node2", "node3"]
    new = cluster.pids()
    assert set(new) == set(pids) and not set(new.values()) & set(pids.values())
