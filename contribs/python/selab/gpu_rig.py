"""The fake GPUs of test_gpu and test_examples: the fake NVML
(tests/gpu, SE_FAKE_NVML_DIR) playing a power trace per GPU column, the
cluster options that put it under slurmd, a timed job on a node's GPUs and
the trace's truth for it (se-trace).  col_switch() makes a GPU play another
column from a given instant (the fake's "col" control line, which
load_meter.py --gpu-control follows too) and played_j() gives a GPU's true
joules across such switches.
"""
import csv
import math
import os
import re
import subprocess
import time

from .cluster import PLUGIN_DIR, REPO, poll
from .trace import Trace

GPU_DIR = os.path.join(REPO, "tests", "gpu")
BIN_DIR = os.environ.get(
    "SE_BIN_DIR", os.path.normpath(os.path.join(PLUGIN_DIR, "..", "..", "bin")))
FAKE_NVML_DIR = os.environ.get(
    "SE_FAKE_NVML_DIR",
    os.path.normpath(os.path.join(PLUGIN_DIR, "..", "..", "..", "tests",
                                  "gpu", ".libs")))
SE_TRACE = os.path.join(BIN_DIR, "se-trace")

# Power per GPU column (W), repeating every 40 s: ramps and steps, so that
# energy is not simply power x time.
TRACE = """\
@repeat 40
time gpu0 gpu1 gpu2 gpu3
0    150  100  250  80
20   250  100  150  80
20   250  200  150  120
40   150  200  250  120
"""


def parse_rows(out):
    """The "rank=R k=v ..." lines tasks printed (test_gpu's SHOW, or
    timed_job's) as dicts, sorted by rank."""
    rows = []
    for line in out.splitlines():
        if "rank=" not in line:
            continue
        rows.append(dict(kv.split("=", 1) for kv in line.split()
                         if "=" in kv))
    return sorted(rows, key=lambda r: int(r["rank"]))


class Gpus:
    """The fake GPUs of a node, from the NVML state template."""

    def __init__(self, template):
        self.by_minor = {}
        with open(template) as f:
            for line in f:
                if not line.startswith("gpu "):
                    continue
                kv = dict(x.split("=", 1) for x in line.split()[1:])
                self.by_minor[int(kv["minor"])] = kv
        buses = sorted(g["bus"] for g in self.by_minor.values())
        self.rank = {m: buses.index(g["bus"])
                     for m, g in self.by_minor.items()}

    def cuda(self, minors):
        """CUDA_VISIBLE_DEVICES (PCI_BUS_ID order) of device files nvidiaM."""
        return ",".join(str(r) for r in sorted(self.rank[m] for m in minors))

    def local_to(self, cpu):
        return sorted(m for m, g in self.by_minor.items()
                      if g["cpus"] == str(cpu))

    def learn_indexes(self, slurmd_log):
        """Slurm's gres device index -> minor number, from our gres/gpu's
        load line (devices listed in index order).  The order depends on
        gres.conf: with AutoDetect it is NVML's (PCI bus) order."""
        m = re.findall(r"numbered in PCI bus order \(CUDA_DEVICE_ORDER="
                       r"PCI_BUS_ID\): (.*) \(slurm-energy-plugins\)",
                       slurmd_log)
        assert m, "no gres/gpu load line"
        paths = [x.split("=")[0] for x in m[-1].split()]
        self.minor_of = [int(p.rsplit("nvidia", 1)[1]) for p in paths]


def nvml_env(cluster, state):
    """The environment that puts the fake NVML under every slurmd of
    cluster (Cluster.up_args' node_env), playing the state file state;
    each node's GPU device files are its own."""
    return {
        "LD_LIBRARY_PATH": FAKE_NVML_DIR,
        "FAKE_NVML_STATE": str(state),
        "SLURM_ENERGY_NVML_DEVICE_PATH":
            os.path.join(cluster.state, "nodes", "%h", "dev", "nvidia%u"),
    }


def profile_gpu_power(cluster, jobid, hdf5_dir, out_dir, step="0"):
    """[(EpochTime, GPUPower)] of step `step` of job jobid's energy
    profile (acct_gather_profile/hdf5 under hdf5_dir), sorted, through the
    release's own sh5util (merged once the node files are there)."""
    merged = os.path.join(out_dir, "%d.h5" % jobid)
    csv_out = os.path.join(out_dir, "%d.csv" % jobid)
    poll(lambda: cluster.run(["sh5util", "-j", str(jobid), "-o", merged,
                              "-S", "-p", hdf5_dir],
                             check=False).returncode == 0,
         timeout=60, what="job %d's profile merged" % jobid)
    cluster.run(["sh5util", "-j", str(jobid), "-E", "-i", merged, "-s",
                 "Energy", "-l", "Node:TimeSeries", "-o", csv_out])
    with open(csv_out) as f:
        rows = [r for r in csv.DictReader(f) if r["Step"] == step]
    return sorted((int(r["EpochTime"]), float(r["GPUPower"])) for r in rows)


def profile_joules(pts):
    """The energy of profile samples [(t, W)]: each sample's power is its
    interval's since the sample before."""
    return sum(w1 * (t1 - t0) for (t0, _), (t1, w1) in zip(pts, pts[1:]))


def gpu_setup(cluster, tmp, gpus, topo, template, autodetect=True):
    trace = tmp / "gpu.trace"
    trace.write_text(TRACE)
    log = tmp / "nvml.log"
    epoch = float(int(time.time()))
    state = tmp / "nvml.state"
    with open(template) as f:
        body = f.read()
    state.write_text(body + "epoch %.3f\ntrace %s\nlog %s\n"
                     % (epoch, trace, log))
    node_env = nvml_env(cluster, state)
    kw = dict(nodes=2, gpus=gpus, plugin_dirs=[PLUGIN_DIR],
              energy_type="acct_gather_energy/gpu",
              gres_conf="AutoDetect=nvml\n" if autodetect else "",
              slurm_conf="DebugFlags=Energy,Gres\n",
              node_env=node_env, hwloc_xml=os.path.join(GPU_DIR, topo))
    return kw, dict(trace=str(trace), log=str(log), epoch=epoch,
                    state=str(state), gpus=Gpus(template))


SHOW_TIMED = ('t0=$(date +%%s.%%N); sleep %d; t1=$(date +%%s.%%N); '
              'echo "rank=$SLURM_PROCID job=$SLURM_JOB_ID gpus=$SLURM_STEP_GPUS'
              ' cvd=$CUDA_VISIBLE_DEVICES t0=$t0 t1=$t1"')


def timed_job(c, seconds, *args):
    return c.popen(["srun", "-w", "node1", "-J", "gpujob", *args,
                    "bash", "-c", SHOW_TIMED % seconds])


def truth_j(c, col, t0, t1):
    out = subprocess.run([SE_TRACE, "joules", c.gpu["trace"], col,
                          "%.6f" % (t0 - c.gpu["epoch"]),
                          "%.6f" % (t1 - c.gpu["epoch"])],
                         capture_output=True, text=True, check=True).stdout
    return float(out.split()[0])


def col_switch(control, node, idx, column, wall=None, lead=1.0):
    """Make GPU idx (NVML index) of node play trace column `column` from
    wall-clock `wall` on (default: now + lead s), in the fake NVML's control
    file `control` (<state>.control), and return that instant.

    The line is appended to what the file holds (the faults already there
    stay), through a rename so that no reader sees half of it.  A switch is
    history, not a fault: keep its line there.  `lead` must leave the
    readers time to see it first (the fake re-reads the file every 100 ms,
    load_meter.py at each sample and freezes each tick it begins: lead of
    two ticks at least; 1 s is ample at 10 Hz)."""
    if wall is None:
        wall = time.time() + lead
    try:
        with open(control) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    if text and not text.endswith("\n"):
        text += "\n"
    tmp = control + ".tmp"
    with open(tmp, "w") as f:
        f.write(text + "%s col %s %s %.6f\n" % (node, idx, column, wall))
    os.replace(tmp, control)
    return wall


def played_j(trace, epoch, column, switches, t0, t1):
    """True joules (what the fake NVML's counter adds) of a GPU over
    wall-clock [t0, t1]: it plays `column` of `trace` (a path or a
    selab.trace.Trace, time 0 at wall `epoch`), then from each switch
    (wall, column) on, that column.  switches: as col_switch wrote them for
    this GPU (any order; of two at one instant, the later one wins)."""
    tr = trace if isinstance(trace, Trace) else Trace(trace)
    pieces = [(-math.inf, column)] + sorted(switches, key=lambda s: s[0])
    total = 0.0
    for i, (start, col) in enumerate(pieces):
        end = pieces[i + 1][0] if i + 1 < len(pieces) else math.inf
        a, b = max(t0, start), min(t1, end)
        if b > a:
            total += tr.joules(col, a - epoch, b - epoch)
    return total
