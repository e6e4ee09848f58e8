"""cpufreq policies on the test cluster: job_submit/energy_policy,
cli_filter/energy_policy and the SPANK options, against the nodes' fake
cpufreq trees (contribs/cluster: slurmd's stock --cpu-freq code writes
scaling_setspeed/scaling_governor there during a step and restores them).

Needs the stage install (SE_PLUGIN_DIR, as contribs/test-all.sh sets it).
Every test writes its own energy_policy.conf next to slurm.conf; the plugin
re-reads it at the next submission when its mtime changed.

Run on an own cluster instance (settings via SE_CLUSTER_*), e.g.:
  SE_CLUSTER_STATE=/var/tmp/se-cluster-freq SE_CLUSTER_NET=10.199.3 ... \\
  SE_PLUGIN_DIR=/work/build/freq/stage/lib/slurm-energy \\
  python3 -m pytest -v tests/integration/test_cpufreq.py
"""

import os
import subprocess
import time

import pytest

from selab.cluster import PLUGIN_DIR, poll
from selab.cpufreq_rig import FREQS, SHOW, SWEEP, SYS, policy, step_view

pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(PLUGIN_DIR,
                                    "job_submit_energy_policy.so")),
    reason="needs SE_PLUGIN_DIR with job_submit_energy_policy.so "
           "(make install prefix=.../stage)")


@pytest.fixture(scope="module")
def fc(cluster, tmp_path_factory):
    d = tmp_path_factory.mktemp("cpufreq")
    plugstack = d / "plugstack.conf"
    plugstack.write_text("required %s/spank_energy_policy.so\n" % PLUGIN_DIR)
    conf = ("JobSubmitPlugins=energy_policy\n"
            "CliFilterPlugins=energy_policy\n"
            "PlugStackConfig=%s\n"
            "DebugFlags=CpuFrequency\n" % plugstack)
    with cluster.configured(nodes=2, plugin_dirs=[PLUGIN_DIR],
                            slurm_conf=conf,
                            freqs=FREQS) as c:
        c.tmp = d
        yield c


# SHOW inside a double-quoted `bash -c "..."` of a batch script
SHOW_Q = SHOW.replace('"', '\\"').replace("$", "\\$")


def batch_output(c, name, script, *args):
    """script as a one-node batch job on node1 (sbatch options args);
    (job id, its output) once it is recorded."""
    out = os.path.join(str(c.tmp), name + ".out")
    jobid = c.sbatch("-N1", "-w", "node1", "-o", out, *args, script=script)
    c.wait_sacct(jobid)
    with open(out) as f:
        return jobid, f.read()


def restored(c, node, cpu):
    return (c.read_cpufreq(node, cpu, "scaling_governor") == "ondemand" and
            c.read_cpufreq(node, cpu, "scaling_max_freq") == str(FREQS[-1]))


def test_help_lists_options(fc):
    for cmd in ("srun", "sbatch", "salloc"):
        out = fc.run([cmd, "--help"]).stdout
        assert "--energy-policy=NAME" in out, cmd
        assert "--energy-tag=TAG" in out, cmd


def test_rule_default_set_during_step_and_restored(fc):
    policy(fc, "Rule=dbg Partition=debug DefaultFreq=1600000 "
               "AllowedMin=1200000 AllowedMax=2000000\n")
    before2 = fc.read_cpufreq("node2", 0, "scaling_setspeed")
    v, p = step_view(fc)
    assert v["setspeed"] == "1600000", p.stdout + p.stderr
    assert v["governor"] == "userspace"
    # restored after the step; the other node never touched
    poll(lambda: restored(fc, "node1", v["cpu"]), 20, what="restore")
    assert fc.read_cpufreq("node2", 0, "scaling_setspeed") == before2
    assert fc.read_cpufreq("node2", 0, "scaling_governor") == "ondemand"


def test_rule_default_governor(fc):
    policy(fc, "Rule=dbg Partition=debug DefaultGovernor=performance\n")
    v, p = step_view(fc)
    assert v["governor"] == "performance", p.stdout + p.stderr


def test_rule_default_in_batch_job_steps(fc):
    """A batch job's steps run at the job's frequency: job_submit wrote it
    into the script's environment (SLURM_CPU_FREQ_REQ, as sbatch
    --cpu-freq does), so srun asks slurmctld nothing (cli_filter's RPC and
    its "runs at the job's" line are absent); without the variable, the
    step gets it through that RPC."""
    policy(fc, "Rule=dbg Partition=debug DefaultFreq=2000000\n")
    jobid, text = batch_output(
        fc, "batch", "#!/bin/bash\n"
        "echo REQ=$SLURM_CPU_FREQ_REQ\n"
        "srun -v -n1 bash -c \"%s\"\n"
        "echo NOENV\n"
        "env -u SLURM_CPU_FREQ_REQ srun -v -n1 bash -c \"%s\"\n"
        % (SHOW_Q, SHOW_Q))
    assert "REQ=2000000\n" in text, text
    with_env, without = text.split("NOENV")
    assert "setspeed=2000000" in with_env, text
    assert "runs at the job's --cpu-freq" not in with_env, text
    assert "setspeed=2000000" in without, text
    assert "runs at the job's --cpu-freq=2000000" in without, text
    job = fc.scontrol("show", "job", str(jobid)).stdout
    assert "CPU_max_freq=2000000" in job, job


def test_batch_steps_of_a_rule_without_default_ask_nothing(fc):
    """A rule that gives jobs asking for nothing no frequency: a batch
    job's step that asks for none skips cli_filter's RPC (it says so with
    -v) and runs at the node's own setting; a job whose user asked
    sbatch --cpu-freq still gets it in its steps (SLURM_CPU_FREQ_REQ)."""
    policy(fc, "Rule=dbg Partition=debug AllowedMin=1200000 "
               "AllowedMax=2000000\n")
    script = "#!/bin/bash\nsrun -v -n1 bash -c \"%s\"\n" % SHOW_Q
    _, text = batch_output(fc, "nodefault", script)
    assert "gives no frequency to a job that asks for none; not asking " \
        "slurmctld" in text, text
    assert "governor=ondemand" in text, text
    assert "runs at the job's" not in text, text
    _, text = batch_output(fc, "nodefault", script, "--cpu-freq=1200000")
    assert "setspeed=1200000" in text, text
    assert "not asking slurmctld" not in text, text


def test_explicit_allowed_request_honoured(fc):
    policy(fc, "Rule=dbg Partition=debug DefaultFreq=1600000 "
               "AllowedMin=1200000 AllowedMax=2000000 "
               "AllowedGovernors=userspace,performance,ondemand\n")
    v, p = step_view(fc, "--cpu-freq=1200000")
    assert v["setspeed"] == "1200000", p.stdout + p.stderr
    v, p = step_view(fc, "--cpu-freq=performance")
    assert v["governor"] == "performance", p.stdout + p.stderr
    v, p = step_view(fc, "--cpu-freq=low")
    assert v["setspeed"] == "1200000", p.stdout + p.stderr


def test_out_of_range_rejected_with_range(fc):
    policy(fc, "Rule=dbg Partition=debug DefaultFreq=1600000 "
               "AllowedMin=1200000 AllowedMax=2000000 "
               "AllowedGovernors=userspace,ondemand OutOfRange=reject\n")
    want = ("rule 'dbg' allows 1200000-2000000 kHz, governors "
            "ondemand,userspace")
    # a range without a governor: 24.11's srun refuses it itself ("You
    # must explicitly choose a governor when defining a range", no
    # CpuFreqDef) before any plugin sees it; there with one
    ranged = "1200000-2400000" + (":ondemand" if fc.other_release else "")
    for req in ("2400000", "high", "performance", ranged):
        p = fc.srun("-N1", "--cpu-freq=" + req, "true", check=False)
        assert p.returncode != 0, req
        assert "--cpu-freq=%s is not allowed here" % req in p.stderr, \
            p.stderr
        assert want in p.stderr, p.stderr
    p = fc.run(["sbatch", "--cpu-freq=2400000", "--wrap", "true"],
               check=False)
    assert p.returncode != 0 and want in p.stderr, p.stderr


def test_out_of_range_clamped(fc):
    policy(fc, "Rule=dbg Partition=debug AllowedMax=2000000 "
               "OutOfRange=clamp\n")
    v, p = step_view(fc, "--cpu-freq=2400000")
    assert v["setspeed"] == "2000000", p.stdout + p.stderr
    assert "clamped to 2000000" in p.stderr, p.stderr


def test_step_requests_in_allocation_checked(fc):
    """job_submit sees jobs, not steps: cli_filter checks an explicit
    --cpu-freq of a step inside an allocation against the same rules."""
    policy(fc, "Rule=dbg Partition=debug AllowedMin=1200000 "
               "AllowedMax=2000000 OutOfRange=reject\n")
    _, text = batch_output(
        fc, "steps", "#!/bin/bash\n"
        "srun -n1 --cpu-freq=2400000 true; echo rc=$?\n"
        "srun -n1 --cpu-freq=1200000 bash -c \"%s\"\n" % SHOW_Q)
    assert "--cpu-freq=2400000 is not allowed here: rule 'dbg' allows " \
        "1200000-2000000 kHz" in text, text
    assert "rc=1" in text, text
    assert "setspeed=1200000" in text, text
    # clamp: the step runs at the limit, and says so
    policy(fc, "Rule=dbg Partition=debug AllowedMax=2000000 "
               "OutOfRange=clamp\n")
    _, text = batch_output(
        fc, "steps", "#!/bin/bash\nsrun -n1 --cpu-freq=2400000 bash -c "
        "\"%s\"\n" % SHOW_Q)
    assert "setspeed=2000000" in text, text
    assert "clamped to 2000000" in text, text


def test_unknown_policy_refused_by_client(fc):
    p = fc.srun("-N1", "--energy-policy=greenest", "true", check=False)
    assert p.returncode != 0
    assert "--energy-policy=greenest: must be one of" in p.stderr


HISTORY = """# se-cpufreq-history 1
root/memapp 1200000 104 15600 1
root/memapp 1200000 103 15500 2
root/memapp 1600000 102 18400 3
root/memapp 2000000 101 21200 4
root/memapp 2400000 100 25000 5
root/cpuapp 1200000 200 16000 6
root/cpuapp 1600000 150 17000 7
root/cpuapp 2000000 120 19000 8
root/cpuapp 2400000 100 22000 9
"""


def test_min_energy_from_history(fc):
    hist = fc.tmp / "history"
    hist.write_text(HISTORY)
    policy(fc, "HistoryFile=%s MaxSlowdown=5\n"
               "Rule=dbg Partition=debug DefaultFreq=2000000\n" % hist)
    # memory-bound: 1.2 GHz is 4 % slower and 38 % cheaper
    v, p = step_view(fc, "--energy-policy=min_energy", "-J", "memapp")
    assert v["setspeed"] == "1200000", p.stdout + p.stderr
    assert "min_energy chose 1200000 kHz for root/memapp" in p.stderr
    # compute-bound: every lower frequency is > 5 % slower
    v, p = step_view(fc, "--energy-policy=min_energy", "-J", "x",
                     "--energy-tag=cpuapp")
    assert v["setspeed"] == "2400000", p.stdout + p.stderr
    # no history: the rule default, and a note that the run is recorded
    v, p = step_view(fc, "--energy-policy=min_energy", "-J", "newapp")
    assert v["setspeed"] == "2000000", p.stdout + p.stderr
    assert "too little history for root/newapp" in p.stderr
    assert "this run is recorded" in p.stderr
    # batch jobs too; the key is recorded for se-cpufreq-history in the
    # AdminComment (users cannot set it), the choice in the Comment
    jobid = fc.sbatch("--energy-policy=min_energy", "-J", "memapp",
                      "-o", "/dev/null", "--wrap", "true")
    job = fc.scontrol("show", "job", str(jobid)).stdout
    assert "AdminComment=energy_key=root/memapp" in job, job
    assert "min_energy chose 1200000 kHz for root/memapp" in job, job
    assert "CPU_max_freq=1200000" in job, job


def test_min_time_power_cap(fc):
    hist = fc.tmp / "history"
    hist.write_text(HISTORY)
    # cpuapp: 80, 113, 158, 220 W
    policy(fc, "HistoryFile=%s\n"
               "Rule=dbg Partition=debug Policy=min_time PowerCap=160\n"
               % hist)
    v, p = step_view(fc, "-J", "cpuapp")
    assert v["setspeed"] == "2000000", p.stdout + p.stderr


def test_sweep_tool_runs_each_frequency(fc):
    pytest.importorskip("matplotlib")
    policy(fc, "")
    out = str(fc.tmp / "sweep")
    hist = str(fc.tmp / "sweep-history")
    # a "workload" whose time falls with the frequency set for it
    cmd = ("f=$(cat %s/cpu0/cpufreq/scaling_setspeed);"
           " python3 -c \"import time; time.sleep(2.4e6/$f*0.5)\"" % SYS)
    p = subprocess.run([SWEEP, "--repeats", "2", "--srun-args",
                        "-N1 -w node1", "--time-source", "wall",
                        "--out", out, "--history", hist, "--key",
                        "root/sleeper", "--", "bash", "-c", cmd],
                       env=fc.env, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    rows = open(out + ".csv").read().strip().split("\n")[1:]
    assert len(rows) == 2 * len(FREQS)
    seen = {}
    for r in rows:
        f = r.split(",")
        seen.setdefault(int(f[0]), []).append(float(f[5]))
        assert int(f[8]) == int(f[0])      # sacct's ReqCPUFreqMax
    # time ~ 1/f: the slowest frequency takes longest
    assert min(seen[1200000]) > max(seen[2400000])
    assert os.path.getsize(out + ".png") > 10000
    lines = [l for l in open(hist) if l.startswith("root/sleeper ")]
    assert len(lines) == 2 * len(FREQS)
