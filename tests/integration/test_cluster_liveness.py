"""contribs/cluster/cluster's check that a daemon of its pid files still runs.

A process whose first thread is a zombie while another thread runs is
alive.  Slurm 23.11 on re-execs slurmd and slurmctld from another thread at
every `scontrol reconfigure`: the kernel ends every other thread, the first
one left a zombie, until it gives the exec'ing thread the PID.  For those
milliseconds /proc/PID/stat (the first thread's) says Z, and `cluster
restart slurmd-node2` right after a reconfigure called the daemon "not
running" (test_shared_nodes' set-up on the 24.11 root: CI at d895329, and
one run of three here).  The same kernel state, held: a process whose main
thread called pthread_exit() while a second thread sleeps.  No cluster:
`cluster status` on a state dir holding only a pid file.
"""
import os
import re
import subprocess
import sys

import pytest

from selab.cluster import poll

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(REPO, "contribs", "cluster", "cluster")

# the main thread ends (ctypes releases the GIL around the call), the
# second sleeps on
FIRST_THREAD_GONE = (
    "import ctypes, threading, time\n"
    "threading.Thread(target=time.sleep, args=(600,)).start()\n"
    "ctypes.CDLL(None).pthread_exit(None)\n")


def _states(pid):
    """The state letter of each thread of PID."""
    out = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/stat" % (pid, tid)) as f:
            out.append(f.read().rsplit(") ", 1)[1].split()[0])
    return sorted(out)


def _status(state_dir, name, pid):
    """`cluster status` of a state dir whose only pid file is NAME's, for
    PID with its start time: what it says of NAME."""
    with open("/proc/%d/stat" % pid) as f:
        start = f.read().rsplit(") ", 1)[1].split()[19]
    os.makedirs(os.path.join(state_dir, "pids"), exist_ok=True)
    with open(os.path.join(state_dir, "pids", name + ".pid"), "w") as f:
        f.write("%d %s\n" % (pid, start))
    env = dict(os.environ, SE_CLUSTER_STATE=state_dir,
               SE_CLUSTER_BRIDGE="selive0", SE_CLUSTER_NS_PREFIX="selive-")
    out = subprocess.run([SCRIPT, "status"], env=env, capture_output=True,
                         text=True, timeout=30).stdout
    line = [l for l in out.splitlines() if l.split()[:1] == [name]]
    assert len(line) == 1, out
    return line[0]


@pytest.fixture
def first_thread_gone():
    p = subprocess.Popen([sys.executable, "-c", FIRST_THREAD_GONE])
    try:
        poll(lambda: _states(p.pid) == ["S", "Z"], timeout=10,
             what="the main thread of %d to end, the other sleeping" % p.pid)
        yield p.pid
    finally:
        p.kill()
        p.wait()


def test_first_thread_zombie_other_running_is_alive(first_thread_gone,
                                                    tmp_path):
    pid = first_thread_gone
    line = _status(str(tmp_path), "slurmd-node1", pid)
    assert re.search(r"\brunning +pid %d$" % pid, line), \
        "%s (threads %s)" % (line, _states(pid))


def test_exited_process_not_reaped_is_dead(tmp_path):
    """A process that exited and was not reaped yet (every thread a zombie)
    is not running: the check above can still say DEAD."""
    p = subprocess.Popen(["/bin/true"])
    try:
        poll(lambda: _states(p.pid) == ["Z"], timeout=10,
             what="/bin/true (%d) to exit" % p.pid)
        line = _status(str(tmp_path), "slurmd-node1", p.pid)
        assert "DEAD" in line, line
    finally:
        p.wait()
