"""GPU plugins on the test cluster: gres/gpu, gpu/nvml and
acct_gather_energy/gpu of the suite, against the fake libnvidia-ml.so.1 of
tests/gpu and hwloc XML topologies with GPUs on two NUMA nodes.

Each node has 2 real CPUs (the cluster must keep the machine's PU count):
NUMA node 0 = CPU 0, NUMA node 1 = CPU 1.  The fake NVML's state file
(tests/gpu/nvml-cluster-*.state) gives each GPU a PCI bus id, a minor
number (/dev/nvidiaN), its local CPU and a power-trace column; the energy
counter is the exact integral of the trace from the state's epoch, so every
energy figure has a known truth (se-trace joules).

Our plugins must be proven to run, since Slurm silently falls back to stock
ones: CUDA_DEVICE_ORDER (stock never sets it), our log lines, and a
nonzero GPU energy (stock's NVML energy read is a stub, and Debian's stock
acct_gather_energy/gpu cannot even be loaded by slurmctld).

Needs the stage install and the build tree's fake NVML.  Run on an own
cluster instance (settings via SE_CLUSTER_*), e.g.:
  export SE_CLUSTER_STATE=/var/tmp/se-cluster-gpu SE_CLUSTER_NET=10.199.2 \\
    SE_CLUSTER_BRIDGE=sebr2 SE_CLUSTER_NS_PREFIX=seg- \\
    SE_CLUSTER_VETH_PREFIX=segv SE_CLUSTER_NAME=segpu \\
    SE_CLUSTER_CTLD_PORT=26817 SE_CLUSTER_SLURMD_PORT=26818 \\
    SE_CLUSTER_DBD_PORT=26819 SE_CLUSTER_DB_PORT=26306
  SE_PLUGIN_DIR=/work/build/gpu/stage/lib/slurm-energy \\
  SE_BIN_DIR=/work/build/gpu/stage/bin \\
  SE_FAKE_NVML_DIR=/work/build/gpu/tests/gpu/.libs \\
  python3 -m pytest -v -s tests/integration/test_gpu.py
(-s prints one "ENERGY ..." line per energy check with its error.)
"""

import os
import re
import shutil
import subprocess
import time

import pytest

from selab.cluster import PLUGIN_DIR, poll, slurmd_log
from selab.gpu_rig import (FAKE_NVML_DIR, GPU_DIR, SE_TRACE, gpu_setup,
                           parse_rows, timed_job, truth_j)

def slurm_selects_gpu_nvml():
    """Whether the cluster's Slurm loads a gpu/nvml plugin for
    AutoDetect=nvml at all.  Upstream's gpu.c (_get_gpu_type) picks
    gpu/nvml only when Slurm itself was configured with NVML (HAVE_NVML);
    Debian patches that check out, so its packages always do.  A Slurm built
    here from its tarball has no nvml.h to build with (CUDA is not on this
    machine's mirror) and picks gpu/generic: our gpu/nvml is not loaded there,
    while gres/gpu and acct_gather_energy/gpu (which opens NVML itself) are."""
    src = os.environ.get("SE_SLURM_SRC")
    if not os.environ.get("SE_SLURM_PREFIX") or not src:
        return True
    with open(os.path.join(src, "config.h")) as f:
        return re.search(r"^#define HAVE_NVML 1$", f.read(), re.M) is not None

pytestmark = pytest.mark.skipif(
    not (os.path.exists(os.path.join(PLUGIN_DIR, "gres_gpu.so"))
         and os.path.exists(os.path.join(FAKE_NVML_DIR, "libnvidia-ml.so.1"))
         and os.path.exists(SE_TRACE)),
    reason="needs SE_PLUGIN_DIR with gres_gpu.so, SE_FAKE_NVML_DIR with the "
           "fake libnvidia-ml.so.1 and se-trace (SE_BIN_DIR)")

# In a task: one line with everything the tests look at.
SHOW = ('echo "rank=$SLURM_PROCID cvd=$CUDA_VISIBLE_DEVICES'
        ' order=$CUDA_DEVICE_ORDER gpus=$SLURM_STEP_GPUS'
        ' cpus=$(awk \'/^Cpus_allowed_list/{print $2}\' /proc/self/status)"')


@pytest.fixture(scope="module")
def gpu2(cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu2")
    kw, info = gpu_setup(cluster, tmp, 2, "topo-cluster-2gpu.xml",
                         os.path.join(GPU_DIR, "nvml-cluster-2gpu.state"))
    with cluster.configured(**kw) as c:
        c.gpu = info
        info["gpus"].learn_indexes(slurmd_log(c, "node1"))
        yield c


@pytest.fixture(scope="module")
def gpu4(cluster, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("gpu4")
    kw, info = gpu_setup(cluster, tmp, 4, "topo-cluster-4gpu.xml",
                         os.path.join(GPU_DIR, "nvml-cluster-4gpu.state"))
    info["label"] = "4 GPUs, AutoDetect"
    with cluster.configured(**kw) as c:
        c.gpu = info
        info["gpus"].learn_indexes(slurmd_log(c, "node1"))
        yield c


@pytest.fixture(scope="module")
def gpu4_explicit(cluster, tmp_path_factory):
    """4 GPUs from the cluster's explicit gres.conf lines only (no
    AutoDetect): Slurm's device indexes follow the file names nvidia0..3,
    not the PCI bus."""
    tmp = tmp_path_factory.mktemp("gpu4x")
    kw, info = gpu_setup(cluster, tmp, 4, "topo-cluster-4gpu.xml",
                         os.path.join(GPU_DIR, "nvml-cluster-4gpu.state"),
                         autodetect=False)
    info["label"] = "4 GPUs, explicit gres.conf"
    with cluster.configured(**kw) as c:
        c.gpu = info
        info["gpus"].learn_indexes(slurmd_log(c, "node1"))
        yield c


REMOTE_LINE = "GPUs are not local to its CPUs (NUMA placement; said once per step)"


def _srun(c, *args, timeout=60):
    return parse_rows(c.srun("-w", "node1", *args, "bash", "-c", SHOW,
                             timeout=timeout).stdout)


def _minors(row, c):
    """Minor numbers (/dev/nvidiaN) of a task's SLURM_STEP_GPUS indexes."""
    g = c.gpu["gpus"]
    return [g.minor_of[int(x)] for x in row["gpus"].split(",") if x != ""]


def _report(what, got, truth):
    """One line per energy check (pytest -s shows them)."""
    print("\nENERGY %s: sacct %d J, truth %.1f J, error %+.2f %%"
          % (what, got, truth, 100.0 * (got - truth) / truth))


# --------------------------------------------------------- 2-GPU nodes
def test_our_plugins_loaded(gpu2):
    log = slurmd_log(gpu2, "node1")
    assert "gres/gpu: 2 GPU(s), numbered in PCI bus order" in log
    if slurm_selects_gpu_nvml():
        assert ("gpu/nvml: 2 GPU(s) detected through NVML "
                "(slurm-energy-plugins)") in log
    else:
        # Slurm says why, and no gpu/nvml of anyone's runs
        assert ("We were configured to autodetect nvml functionality, but "
                "we weren't able to find that lib when Slurm was "
                "configured.") in log
        assert "gpu/nvml:" not in log
    assert ("acct_gather_energy/gpu: sampling the energy counters of 2 GPU(s)"
            in log)


def test_gres_gpu_1(gpu2):
    (r,) = _srun(gpu2, "--gres=gpu:1")
    g = gpu2.gpu["gpus"]
    assert r["order"] == "PCI_BUS_ID"
    assert len(_minors(r, gpu2)) == 1
    assert r["cvd"] == g.cuda(_minors(r, gpu2))


def test_gres_gpu_2(gpu2):
    (r,) = _srun(gpu2, "--gres=gpu:2")
    assert r["order"] == "PCI_BUS_ID"
    assert r["cvd"] == "0,1"


def test_gpus_per_task(gpu2):
    rows = _srun(gpu2, "-n2", "--gpus-per-task=1")
    g = gpu2.gpu["gpus"]
    assert len(rows) == 2
    for r in rows:
        assert r["order"] == "PCI_BUS_ID"
        assert len(_minors(r, gpu2)) == 1
        assert r["cvd"] == g.cuda(_minors(r, gpu2))
    assert {rows[0]["cvd"], rows[1]["cvd"]} == {"0", "1"}


def test_gpu_bind_closest(gpu2):
    rows = _srun(gpu2, "-n2", "--gpus-per-task=1", "--gpu-bind=closest")
    g = gpu2.gpu["gpus"]
    for r in rows:
        cpu = int(r["cpus"])
        assert r["cvd"] == g.cuda(g.local_to(cpu)), r


def test_gpu_bind_map(gpu2):
    rows = _srun(gpu2, "-n2", "--gres=gpu:2", "--gpu-bind=map_gpu:1,0")
    g = gpu2.gpu["gpus"]
    assert [r["cvd"] for r in rows] == [g.cuda([g.minor_of[1]]),
                                        g.cuda([g.minor_of[0]])]


def test_gpu_bind_mask(gpu2):
    rows = _srun(gpu2, "-n2", "--gres=gpu:2", "--gpu-bind=mask_gpu:0x2,0x1")
    g = gpu2.gpu["gpus"]
    assert [r["cvd"] for r in rows] == [g.cuda([g.minor_of[1]]),
                                        g.cuda([g.minor_of[0]])]


def test_remote_placement_logged_once_per_step(gpu2):
    """Both tasks get the GPU of the other NUMA node: the placement is
    logged, and once for the step, not once per task."""
    g = gpu2.gpu["gpus"]
    cpus = [int(r["cpus"]) for r in _srun(gpu2, "-n2", "--gres=gpu:2")]
    remote = []
    for cpu in cpus:
        far = [i for i, m in enumerate(g.minor_of)
               if m not in g.local_to(cpu)]
        assert far, "no GPU remote from cpu %d in this topology" % cpu
        remote.append(far[0])
    before = slurmd_log(gpu2, "node1").count(REMOTE_LINE)
    rows = _srun(gpu2, "-n2", "--gres=gpu:2",
                 "--gpu-bind=map_gpu:%d,%d" % tuple(remote))
    assert [int(r["cpus"]) for r in rows] == cpus
    poll(lambda: slurmd_log(gpu2, "node1").count(REMOTE_LINE) > before,
         timeout=10, what="the remote-placement log line")
    time.sleep(1)   # a second task's line would have landed by now
    assert slurmd_log(gpu2, "node1").count(REMOTE_LINE) == before + 1


def test_membind_local(gpu2):
    """SLURM_ENERGY_GPU_MEMBIND=local in the job's environment binds each
    task's memory to its GPUs' NUMA node.  The host has only NUMA node 0
    (the topology's node 1 is fake): the task next to a NUMA-1 GPU cannot
    be bound, which is logged, and it runs anyway."""
    c = gpu2
    show = SHOW[:-1] + (' pol=$(grep -m1 -o "bind:[0-9,-]*\\|default"'
                        ' /proc/self/numa_maps)"')
    rows = parse_rows(c.srun("-w", "node1", "-n2", "--gpus-per-task=1",
                             "--gpu-bind=closest",
                             "--export=ALL,SLURM_ENERGY_GPU_MEMBIND=local",
                             "bash", "-c", show).stdout)
    pol = {int(r["cpus"]): r["pol"] for r in rows}
    assert pol == {0: "bind:0", 1: "default"}, rows
    log = slurmd_log(c, "node1")
    assert "cannot bind task memory to NUMA nodes 0x2" in log
    rows = parse_rows(c.srun("-w", "node1", "-n2", "--gpus-per-task=1",
                             "--gpu-bind=closest", "bash", "-c", show).stdout)
    assert all(r["pol"] == "default" for r in rows), rows


def _step_energy(c, jobid):
    """ConsumedEnergyRaw (J) of step 0, once sacct has it."""
    recs = c.wait_sacct(jobid, steps=("0",),
                        fields=("JobID", "JobName", "State",
                                "ConsumedEnergyRaw"))
    return int([r for r in recs if r["JobID"] == "%d.0" % jobid][0]
               ["ConsumedEnergyRaw"])


def test_two_jobs_never_share_and_own_energy(gpu2):
    """Two concurrent 1-GPU jobs on one node: different GPUs, overlapping
    in time, and each job's sacct energy is its own GPU's (within 1 %)."""
    c = gpu2
    procs = [timed_job(c, 20, "--gres=gpu:1", "-n1"),
             timed_job(c, 20, "--gres=gpu:1", "-n1")]
    outs = []
    for p in procs:
        out, err = p.communicate(timeout=90)
        assert p.returncode == 0, err
        outs.append((parse_rows(out)[0], err))
    (a, _), (b, _) = outs
    assert a["gpus"] != b["gpus"]
    assert a["cvd"] != b["cvd"]
    assert max(float(a["t0"]), float(b["t0"])) < min(float(a["t1"]),
                                                     float(b["t1"]))
    g = c.gpu["gpus"]
    results = []
    for row, _ in outs:
        j = int(row["job"])
        got = _step_energy(c, j)
        minor = _minors(row, c)[0]
        truth = truth_j(c, g.by_minor[minor]["col"], float(row["t0"]),
                        float(row["t1"]))
        results.append((j, minor, got, truth))
    for j, minor, got, truth in results:
        _report("job %d (nvidia%d, concurrent)" % (j, minor), got, truth)
    for j, minor, got, truth in results:
        assert abs(got - truth) <= 0.01 * truth, \
            "job %d GPU nvidia%d: sacct %d J, truth %.1f J (%s)" % (
                j, minor, got, truth, results)


def test_energy_gres_gpu2_within_1pct(gpu2):
    c = gpu2
    p = timed_job(c, 20, "--gres=gpu:2", "-n1")
    out, err = p.communicate(timeout=90)
    assert p.returncode == 0, err
    (row,) = parse_rows(out)
    got = _step_energy(c, int(row["job"]))
    g = c.gpu["gpus"]
    truth = sum(truth_j(c, g.by_minor[m]["col"], float(row["t0"]),
                        float(row["t1"])) for m in (0, 1))
    _report("gres/gpu:2", got, truth)
    assert abs(got - truth) <= 0.01 * truth, (got, truth)


def test_gpu_freq_low_set_and_reset(gpu2):
    """--gpu-freq=low on a GPU whose NVML has the locked-clock calls (the
    fake's default, as any NVML since CUDA 11): our gpu/nvml locks memory
    and graphics clocks at min = max, as Slurm 26.05's own does, sets no
    application clocks, and unlocks both at the step's end."""
    c = gpu2
    (r,) = _srun(c, "--gres=gpu:1", "--gpu-freq=low")
    minor = _minors(r, c)[0]
    bus = c.gpu["gpus"].by_minor[minor]["bus"]

    def lines():
        if not os.path.exists(c.gpu["log"]):
            return None
        with open(c.gpu["log"]) as f:
            text = f.read()
        found = [re.findall(r" %s index=\d+ bus=%s%s" % (what, bus, rest), text)
                 for what, rest in (("LOCK-MEM", r" min=(\d+) max=(\d+)"),
                                    ("LOCK-GPU", r" min=(\d+) max=(\d+)"),
                                    ("UNLOCK-MEM", ""), ("UNLOCK-GPU", ""))]
        return (found, text) if all(found) else None
    (mem, gfx, _, _), text = poll(lines, timeout=20,
                                  what="clocks locked+unlocked in fake NVML log")
    # "low" is the lowest graphics clock; memory follows GpuFreqDef's
    # default (memory=high): the highest memory clock
    assert mem[-1] == ("877", "877")
    assert gfx[-1] == ("135", "135")
    assert not re.search(r" SET index=\d+ bus=%s" % bus, text)
    assert text.rindex(" UNLOCK-GPU index") > text.rindex(" LOCK-GPU index")
    assert text.rindex(" UNLOCK-MEM index") > text.rindex(" LOCK-MEM index")


def test_autodetect_same_as_explicit(gpu2, tmp_path):
    """slurmd -G in node1's environment: gres.conf with AutoDetect=nvml
    only gives the same GPUs (files, indexes, counts) as explicit lines, and
    adds Cores= from the NVML affinity and Links= from NvLinks."""
    c = gpu2
    etc = os.path.join(c.state, "etc")
    # the cluster's explicit lines, one per device file
    explicit = []
    for line in open(os.path.join(etc, "gres.conf")):
        m = re.match(r"(NodeName=\S+ Name=gpu File=\S+nvidia)\[(\d+)-(\d+)\]",
                     line)
        if m:
            explicit += ["%s%d\n" % (m.group(1), i)
                         for i in range(int(m.group(2)), int(m.group(3)) + 1)]
    pid = open(os.path.join(c.state, "pids", "slurmd-node1.pid")).read().split()[0]
    env = dict(c.env)
    for line in open(os.path.join(c.state, "nodes", "node1", "env")):
        for kv in re.findall(r"(\w+)=(\S+)", line):
            env[kv[0]] = kv[1].strip("'")

    def gres_of(gres_conf):
        d = tmp_path / ("conf%d" % len(gres_conf))
        shutil.copytree(etc, d)
        (d / "gres.conf").write_text(gres_conf)
        p = subprocess.run(["nsenter", "-t", pid, "-u", "slurmd", "-G",
                            "-N", "node1", "-f", str(d / "slurm.conf")],
                           env=env, capture_output=True, text=True,
                           timeout=30)
        out = p.stdout + p.stderr
        return [dict(re.findall(r"(\w+)=(\S+)", l))
                for l in out.splitlines() if "Gres Name=gpu" in l]

    auto = gres_of("AutoDetect=nvml\n")
    expl = gres_of("".join(explicit))
    assert len(auto) == 2 and len(expl) == 2
    key = lambda r: r["File"]
    for a, e in zip(sorted(auto, key=key), sorted(expl, key=key)):
        for k in ("Name", "Count", "File"):
            assert a[k] == e[k], (a, e)
    g = c.gpu["gpus"]
    for a in auto:
        minor = int(a["File"].rsplit("nvidia", 1)[1])
        assert a["Cores"] == g.by_minor[minor]["cpus"]
        assert a["Links"] == g.by_minor[minor]["links"]


# --------------------------------------------------------- 4-GPU nodes
def test_4gpu_pci_order(gpu4):
    """Minor numbers not in PCI bus order: CUDA numbers follow the bus."""
    g = gpu4.gpu["gpus"]
    (r,) = _srun(gpu4, "--gres=gpu:4")
    assert r["cvd"] == "0,1,2,3" and r["order"] == "PCI_BUS_ID"
    rows = _srun(gpu4, "-n2", "--gres=gpu:4", "--gpu-bind=map_gpu:0,1")
    # map_gpu numbers are gres device indexes (AutoDetect: NVML order)
    assert [x["cvd"] for x in rows] == [g.cuda([g.minor_of[0]]),
                                        g.cuda([g.minor_of[1]])]
    for x in rows:
        assert x["cvd"] == g.cuda(_minors(x, gpu4))


def test_4gpu_closest(gpu4):
    g = gpu4.gpu["gpus"]
    rows = _srun(gpu4, "-n2", "--gpus-per-task=2", "--gpu-bind=closest")
    for r in rows:
        assert r["cvd"] == g.cuda(g.local_to(int(r["cpus"]))), r


def test_4gpu_gpus_per_task(gpu4):
    rows = _srun(gpu4, "-n2", "--gpus-per-task=2")
    seen = []
    for r in rows:
        assert len(r["cvd"].split(",")) == 2
        seen += r["cvd"].split(",")
    assert sorted(seen) == ["0", "1", "2", "3"]


def test_4gpu_energy_one_gpu(gpu4):
    c = gpu4
    p = timed_job(c, 20, "--gres=gpu:1", "-n1")
    out, err = p.communicate(timeout=90)
    assert p.returncode == 0, err
    (row,) = parse_rows(out)
    got = _step_energy(c, int(row["job"]))
    g = c.gpu["gpus"]
    minor = _minors(row, c)[0]
    truth = truth_j(c, g.by_minor[minor]["col"], float(row["t0"]),
                    float(row["t1"]))
    _report("gpu:1 nvidia%d, %s" % (minor, c.gpu["label"]), got, truth)
    assert abs(got - truth) <= 0.01 * truth, (minor, got, truth)


# ----------------------------------------- 4 GPUs, explicit gres.conf only
def test_4gpu_explicit_renumbered(gpu4_explicit):
    """Stock would set CUDA_VISIBLE_DEVICES to the device index (file
    order); ours numbers by PCI bus: nvidia0 is bus 86, the third."""
    c = gpu4_explicit
    g = c.gpu["gpus"]
    assert g.minor_of == [0, 1, 2, 3]
    rows = _srun(c, "-n2", "--gres=gpu:4", "--gpu-bind=map_gpu:0,3")
    assert [x["gpus"] for x in rows] == ["0", "3"]
    assert [x["cvd"] for x in rows] == ["2", "1"]
    assert all(x["order"] == "PCI_BUS_ID" for x in rows)
    rows = _srun(c, "-n2", "--gpus-per-task=2", "--gpu-bind=closest")
    for r in rows:
        assert r["cvd"] == g.cuda(g.local_to(int(r["cpus"]))), r


def test_4gpu_explicit_energy(gpu4_explicit):
    c = gpu4_explicit
    p = timed_job(c, 20, "--gres=gpu:1", "-n1")
    out, err = p.communicate(timeout=90)
    assert p.returncode == 0, err
    (row,) = parse_rows(out)
    got = _step_energy(c, int(row["job"]))
    g = c.gpu["gpus"]
    minor = _minors(row, c)[0]
    truth = truth_j(c, g.by_minor[minor]["col"], float(row["t0"]),
                    float(row["t1"]))
    _report("gpu:1 nvidia%d, %s" % (minor, c.gpu["label"]), got, truth)
    assert abs(got - truth) <= 0.01 * truth, (minor, got, truth)
