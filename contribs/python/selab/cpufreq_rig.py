"""The cpufreq rig of test_cpufreq and test_cpufreq_meter: the nodes' fake
cpufreq trees (contribs/cluster), the sweep tool, energy_policy.conf, and
a step's view of the frequency Slurm set.
"""
import os
import re

from .cluster import REPO

SWEEP = os.path.join(REPO, "contribs", "cpufreq-sweep", "se-cpufreq-sweep")
FREQS = (1200000, 1600000, 2000000, 2400000)
SYS = "/sys/devices/system/cpu"

# Inside a step: the first CPU the task may run on, and its cpufreq files.
SHOW = ("cpu=$(awk '/^Cpus_allowed_list/{print $2}' /proc/self/status"
        " | cut -d, -f1 | cut -d- -f1); d=%s/cpu$cpu/cpufreq;"
        " echo cpu=$cpu setspeed=$(cat $d/scaling_setspeed)"
        " governor=$(cat $d/scaling_governor)"
        " max=$(cat $d/scaling_max_freq)" % SYS)


def policy(c, text):
    """Write energy_policy.conf (a new mtime: the plugin re-reads it)."""
    path = os.path.join(c.state, "etc", "energy_policy.conf")
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("Frequencies=%s\n" % ",".join(str(x) for x in FREQS))
        f.write(text)
    os.rename(tmp, path)
    return path


def step_view(c, *args, check=True):
    """Run SHOW in a one-task step on node1; returns (dict, proc)."""
    p = c.srun("-N1", "-n1", "-w", "node1", *args, "bash", "-c", SHOW,
               check=check)
    m = re.search(r"cpu=(\d+) setspeed=(\S+) governor=(\S+) max=(\S+)",
                  p.stdout)
    if not m:
        return None, p
    return {"cpu": int(m.group(1)), "setspeed": m.group(2),
            "governor": m.group(3), "max": m.group(4)}, p
