"""Energy of jobs on the test cluster, and the truth to compare it with.

A timed job prints, from inside each task, the precise wall-clock instants
at which it starts and ends its work (``SE_T0 host t`` / ``SE_T1 host t``).
The true energy of a job is the trace's exact integral over each node's
window, summed over the job's nodes.  That truth comes from selab.trace, a
Python implementation of the trace format written apart from the C one the
simulators play (se-trace, src/common/power_trace.c), so a misreading of a
trace in either shows up as a disagreement (tests/integration/
test_trace_truth.py).  sacct's Start/End are whole seconds and would alone
cost up to 2 s of a node's power.
"""
import re

from . import meters
from .cluster import poll
from .trace import Trace

tool = meters.tool      # energy.tool("se-trace"): for callers that run it

MARK = re.compile(r"^SE_T([01]) (\S+) ([0-9.]+)$", re.M)


def timed_command(seconds, work="sleep"):
    """A shell command for srun/sbatch that marks its own start and end."""
    body = "sleep %g" % seconds if work == "sleep" else work
    return ["sh", "-c",
            'echo SE_T0 $(hostname) $(date +%%s.%%N); %s; '
            'echo SE_T1 $(hostname) $(date +%%s.%%N)' % body]


def run_timed(cluster, name, args, seconds):
    """Start ``srun -J name ARGS`` of a timed command; returns the Popen
    (its output gives the windows)."""
    return cluster.popen(["srun", "-J", name, *args,
                          *timed_command(seconds)])


def finish(cluster, proc, name, timeout):
    """Wait (*timeout* s at most) for run_timed's srun *proc* of job *name*;
    returns (job id, windows).  The srun must succeed."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, "srun %s failed: %s" % (name, err)
    jobid = int(cluster.run(["sacct", "-n", "-X", "-P", "-o", "JobID",
                             "--name", name]).stdout.split()[-1])
    return jobid, windows(out)


def windows(output):
    """{host: (t0, t1)} from a timed job's output (earliest start, latest end
    per host when several tasks ran there)."""
    starts, ends = {}, {}
    for which, host, stamp in MARK.findall(output):
        t = float(stamp)
        if which == "0":
            starts[host] = min(t, starts.get(host, t))
        else:
            ends[host] = max(t, ends.get(host, t))
    if set(starts) != set(ends):
        raise ValueError("unmatched start/end marks in %r" % output)
    return {h: (starts[h], ends[h]) for h in starts}


def trace_joules(trace, column, epoch, t0, t1):
    """True energy of one trace column over wall-clock [t0, t1]."""
    if t1 < t0:
        raise ValueError("window ends (%r) before it starts (%r)" % (t1, t0))
    return Trace(trace).joules(column, t0 - epoch, t1 - epoch)


def presence(truth):
    """When a job's cgroup was there, from load_meter's record of it (trace
    time): from midway between the meter's last sample without it and its
    first with it, to midway between its last with it and its first
    without.  The meter samples at 10 Hz; a sample late on a loaded host
    widens its gap, and the middle of the gap stays the best guess (first
    to last alone is biased short: test_gpu_share's exclusive job read
    3 % over it once under load)."""
    gone = truth.get("gone", truth["last"] + 0.1)
    return (truth["before"] + truth["first"]) / 2, (truth["last"] + gone) / 2


def presence_gaps(truth):
    """The meter's sampling gaps around a job's arrival and departure."""
    return "%.2f s, %.2f s" % (truth["first"] - truth["before"],
                               truth.get("gone", truth["last"] + 0.1) -
                               truth["last"])


def chord_error(trace, column, epoch, t0, t1, step=0.1):
    """Joules between a trace column and the straight line from its power
    at wall-clock t0 to that at t1: the most a gap bridged linearly over
    [t0, t1] can be off (sum of |P - chord| x step)."""
    points = Trace(trace).series(column, t0 - epoch, t1 - epoch, step)
    if len(points) < 2 or points[-1][0] <= points[0][0]:
        return 0.0      # shorter than a step: no chord to miss
    (ta, pa), (tb, pb) = points[0], points[-1]
    return sum(abs(p - (pa + (pb - pa) * (t - ta) / (tb - ta))) * step
               for t, p in points)


def true_energy(trace, epoch, node_windows, column_of=None, share_of=None):
    """Sum over nodes of share x trace energy of the node's column.

    column_of: {node: column} (default: the node's own name);
    share_of: {node: fraction of that column the node is billed} (default 1).
    """
    total = 0.0
    for node, (t0, t1) in node_windows.items():
        column = (column_of or {}).get(node, node)
        share = (share_of or {}).get(node, 1.0)
        total += share * trace_joules(trace, column, epoch, t0, t1)
    return total


def consumed_energy(cluster, jobid):
    """{JobID: ConsumedEnergyRaw (int J, or None)} for a job and its steps,
    once sacct has the completed record.  The job must first leave the
    queue: a step that settles its energy (in the energy plugin's fini(), or
    spank_energy_settle) reports it
    after its job ended, while the job is still completing, and until then
    sacct shows the step with the job's end and no energy."""
    cluster.wait_job_gone(jobid, timeout=120)
    rows = cluster.wait_sacct(jobid, fields=("JobID", "State",
                                             "ConsumedEnergyRaw"))
    out = {}
    for row in rows:
        raw = row["ConsumedEnergyRaw"].strip()
        out[row["JobID"]] = int(raw) if raw.isdigit() else None
    return out


def node_power(cluster, node):
    """(CurrentWatts, AveWatts) of a node from scontrol, or None while the
    node has no energy data ("n/s").  (Slurm 22.05's scontrol shows no
    ConsumedJoules; sinfo -O ConsumedEnergy would.)"""
    text = cluster.scontrol("show", "node", node).stdout
    match = re.search(r"CurrentWatts=(\d+) AveWatts=(\d+)", text)
    return (int(match.group(1)), int(match.group(2))) if match else None


def wait_for_power(cluster, nodes):
    """Wait (60 s at most) until every node of *nodes* shows CurrentWatts:
    the plugins have their first readings."""
    poll(lambda: all(node_power(cluster, n) for n in nodes),
         timeout=60, what="CurrentWatts on %s" % ",".join(nodes))


def relative_error(measured, truth):
    return (measured - truth) / truth if truth else float("inf")
