"""Users told at submit while the cluster is power-capped (issue #45):
cli_filter/energy_policy in the real sbatch and salloc of the release
under test (the host's, a prefix's, a Debian root's), reading
PowerCapStateFile from powercap.conf next to slurm.conf, then the state
file slurm-energy-powercapd publishes (its format: pcap_state.h; the
daemon writing it: test_powercap_daemon.py).

No cluster: cli_filter's pre_submit runs before the client contacts
slurmctld, so a slurm.conf whose controller is a closed port is enough
(the submission then fails at once, "connect failure"; that line is not
ours).  Each case about 10 ms; the file about 0.5 s.
"""

import os
import shutil
import subprocess
import time

import pytest

from selab.cluster import PLUGIN_DIR, PREFIX, release_argv

LINE = "the cluster is power-capped"


# Slurm's own plugins where the release under test keeps them
SLURM_LIBDIR = (os.path.join(PREFIX, "lib", "slurm") if PREFIX
                else "/usr/lib/x86_64-linux-gnu/slurm-wlm")


pytestmark = pytest.mark.skipif(
    not os.path.exists(os.path.join(PLUGIN_DIR,
                                    "cli_filter_energy_policy.so")),
    reason="needs SE_PLUGIN_DIR with cli_filter_energy_policy.so "
           "(make install prefix=.../stage)")


@pytest.fixture
def site(tmp_path):
    (tmp_path / "slurm.conf").write_text(
        "ClusterName=pcsubmit\n"
        "SlurmctldHost=localhost(127.0.0.1)\nSlurmctldPort=1\n"
        "PluginDir=%s:%s\nCliFilterPlugins=energy_policy\n"
        "MessageTimeout=1\n"
        "NodeName=n1 CPUs=1\nPartitionName=p Nodes=n1 Default=yes\n"
        % (PLUGIN_DIR, SLURM_LIBDIR))
    (tmp_path / "powercap.conf").write_text(
        "# the daemon's keys; a submit host needs only the last\n"
        "PowerCapWatts=1000\nPowerCapStateFile=%s\n" % (tmp_path / "state"))
    return tmp_path


def state(site, capping=True, written=0, valid=15, since=130):
    now = int(time.time()) + written
    (site / "state").write_text(
        "slurm-energy-powercap-state 1\ntime=%d\nvalid_until=%d\n"
        "capping=%s\nsince=%d\ncap_w=1000.0\npower_w=990.4\nnodes=4\n"
        "capped_nodes=%d\n" % (now, now + valid,
                               "yes" if capping else "no",
                               now - since if capping else 0,
                               3 if capping else 0))


def submit(site, cmd="sbatch", *args):
    """stderr of cmd (its submission fails: no controller), seconds."""
    t0 = time.monotonic()
    argv = {"sbatch": ["sbatch", "--wrap", "true"],
            "salloc": ["salloc", "true"]}[cmd]
    # the release under test's own client (its root's: /tmp bound, the
    # test's files are there): the plugin is built for it alone
    p = subprocess.run(release_argv(argv + list(args), binds="/tmp"),
                       capture_output=True, text=True,
                       timeout=30,
                       env=dict(os.environ,
                                SLURM_CONF=str(site / "slurm.conf")))
    assert "Unable to contact slurm controller" in p.stderr or \
        "connect failure" in p.stderr, p.stderr
    return p.stderr, time.monotonic() - t0


def test_told_while_capping(site):
    state(site)
    err, _ = submit(site)
    assert ("sbatch: the cluster is power-capped (for 2 min: drawing 990 W "
            "of its 1000 W cap, 3 of 4 nodes capped); jobs may run slower "
            "than usual") in err, err
    err, _ = submit(site, "salloc")
    assert "salloc: " + LINE in err, err


def test_silent_otherwise(site):
    state(site, capping=False)
    assert LINE not in submit(site)[0]
    state(site, written=-20)                # stale: a dead daemon's
    err, _ = submit(site, "sbatch", "-vv")
    assert LINE not in err, err
    assert "not capping (or stale)" in err, err
    state(site, written=120)                # a clock gone wrong
    assert LINE not in submit(site)[0]
    (site / "state").write_text("garbage\n")
    err, _ = submit(site, "sbatch", "-vv")
    assert LINE not in err and "not a state file" in err, err
    (site / "state").unlink()
    err, _ = submit(site, "sbatch", "-vv")
    assert "No such file or directory" in err, err
    (site / "powercap.conf").write_text("PowerCapWatts=1000\n")
    state(site)
    err, _ = submit(site, "sbatch", "-vv")
    assert LINE not in err and "no PowerCapStateFile" in err, err


def test_a_hung_file_system_does_not_hold_the_submit(site):
    # open(2) of a FIFO without a writer blocks as a read from a dead NFS
    # server does: the submit goes on after the cli_filter's 200 ms
    state(site)
    fast = min(submit(site)[1] for _ in range(3))
    (site / "state").unlink()
    os.mkfifo(site / "state")
    err, took = submit(site, "sbatch", "-vv")
    assert "no answer within 200 ms" in err, err
    assert LINE not in err, err
    print("submit %.3f s, with a hung state file %.3f s" % (fast, took))
    assert 0.19 <= took - fast < 0.4, (took, fast)
