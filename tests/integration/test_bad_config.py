"""Bad configuration on real daemons (issue #14): a few rows per plugin of
the table that tests/unit/test_bad_conf.c runs through every key.

What the man pages promise (section BAD CONFIGURATION), proven here:

* slurmd refuses to start with a refused value, and its log names the
  file, the key and the value (modbus, rrd; bmc's unsafe password file is
  test_bmc_energy.py's test_world_readable_password_file_is_refused);
* ``scontrol reconfigure`` with a refused value keeps the configuration
  slurmd had: slurmd stays up (same pid), says so, the node keeps
  reporting energy and a job run after it is measured as before (within
  the 1 % of the issue, against the trace's truth);
* a value with blanks must be quoted: EnergyBMCSensors as the man page's
  example gave it (unquoted) makes slurmctld exit at start with Slurm's
  parse error; quoted, the same list loads (test_secrets.py runs a whole
  cluster on the quoted form).

About 45 s on a 2-core machine.
"""
import os
import shutil
import time

import pytest

from selab import energy
from selab.cluster import ClusterError, PLUGIN_DIR, poll
from selab.meters import ModbusSim
from selab.files import write_file

HERE = os.path.dirname(os.path.abspath(__file__))
TRACE = os.path.abspath(os.path.join(HERE, "..", "..", "contribs", "trace",
                                     "examples", "cluster.trace"))
NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
METER = (NET + ".1", 15020)
UNITS = {1: "node1", 2: "chassis"}
JOB_SECONDS = 6
TOLERANCE = 0.01

pytestmark = pytest.mark.skipif(not PLUGIN_DIR, reason="SE_PLUGIN_DIR not "
                                "set (run contribs/test-all.sh)")


def _log(cluster, name):
    path = os.path.join(cluster.state, "log", name + ".log")
    try:
        with open(path, errors="replace") as handle:
            return handle.read()
    except FileNotFoundError:
        return ""


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def _fatal_lines(text):
    return [l for l in text.splitlines() if "fatal" in l.lower()]


def modbus_conf(workdir, extra=""):
    map_file = write_file(os.path.join(workdir, "modbus.map"),
                          "Nodes=node1 Unit=1\n"
                          "Nodes=node[2-3] Unit=2 Share=equal\n", 0o644)
    return ("EnergyModbusDevice=tcp://%s:%d\nEnergyModbusModel=sdm630\n"
            "EnergyModbusMap=%s\nEnergyModbusFrequency=1\n"
            "EnergyModbusTimeout=500\n%s" % (METER[0], METER[1], map_file,
                                            extra))


@pytest.fixture(scope="module")
def restore(cluster):
    """The tests below bring the cluster up with configurations that must
    fail, or restart it with their own: the session's cluster is back once,
    after the last of them."""
    before = list(cluster.current_args)
    yield cluster
    cluster.down()
    cluster.up(before)


def _up_expecting_failure(cluster, **kw):
    args = cluster.up_args(plugin_dirs=[PLUGIN_DIR], **kw)
    cluster.down()
    with pytest.raises(ClusterError):
        cluster.up(args)


# ------------------------------------------- slurmd refuses to start
def test_slurmd_refuses_a_bad_rrd_value(restore):
    """(modbus: at the end of the reconfigure test, on a running cluster)"""
    c = restore
    _up_expecting_failure(c, energy_type="acct_gather_energy/rrd",
                          acct_gather_conf="EnergyRRDFile=power-%n.rrd\n")
    fatal = _fatal_lines(_log(c, "slurmd-node1"))
    assert fatal, "slurmd-node1 did not stop with a fatal error"
    print(fatal[-1])
    assert ("acct_gather_energy/rrd: " in fatal[-1] and
            "acct_gather.conf: EnergyRRDFile=power-%n.rrd: must be an "
            "absolute path" in fatal[-1]), fatal[-1]


def test_unquoted_sensor_names_stop_slurmctld(restore):
    """The man page's example as it was written (issue #15): Slurm's parser
    ends the value at the first blank and takes "Input" for a key."""
    _up_expecting_failure(
        restore, energy_type="acct_gather_energy/bmc",
        acct_gather_conf="EnergyBMCMethod=sensors\n"
                         "EnergyBMCSensors=PSU1 Input Power,PSU2 Input Power\n")
    log = _log(restore, "slurmctld")
    fatal = _fatal_lines(log)
    assert fatal, "slurmctld did not stop:\n" + log[-2000:]
    assert "Could not open/read/parse acct_gather.conf" in fatal[-1], fatal


# --------------------------------------- reconfigure keeps the last good
@pytest.fixture(scope="module")
def modbus_cluster(restore, tmp_path_factory):
    c = restore
    work = str(tmp_path_factory.mktemp("bad-config-modbus"))
    epoch = time.time()
    c.restart(plugin_dirs=[PLUGIN_DIR],
              energy_type="acct_gather_energy/modbus",
              acct_gather_conf=modbus_conf(work) + "EnergySettleMaxWait=10\n",
              slurm_conf="DebugFlags=Energy\n")
    with ModbusSim(TRACE, epoch, UNITS, ["--model", "sdm630"],
                   tcp=METER).start():
        poll(lambda: energy.node_power(c, "node1"), timeout=60,
             what="CurrentWatts on node1")
        yield c, epoch


def test_reconfigure_keeps_the_last_good_configuration(modbus_cluster):
    c, epoch = modbus_cluster
    conf = os.path.join(c.state, "etc", "acct_gather.conf")
    pid = c.pids()["slurmd-node1"]
    starts = _log(c, "slurmd-node1").count("started on node node1")
    good = conf + ".good"
    shutil.copy(conf, good)
    try:
        # Slurm takes the last of a key given twice: the refused value
        with open(conf, "a") as handle:
            handle.write("EnergyModbusFrequency=2s\n")
        c.scontrol("reconfigure")
        want = ("acct_gather.conf: EnergyModbusFrequency=2s: not a number "
                "of seconds: keeping the configuration slurmd had")
        poll(lambda: want in _log(c, "slurmd-node1"), timeout=30,
             what="the refusal in slurmd-node1.log")
        # the same slurmd, its meter built again from the last good values
        poll(lambda: _log(c, "slurmd-node1").count("started on node node1")
             > starts, timeout=30, what="the meter started again")
        assert c.pids()["slurmd-node1"] == pid
        os.kill(pid, 0)
        line = [l for l in _log(c, "slurmd-node1").splitlines()
                if "started on node node1" in l][-1]
        print(line)
        # a job after the reconfigure is measured as before
        proc = c.popen(["srun", "-J", "after-reconfig", "-w", "node1",
                        *energy.timed_command(JOB_SECONDS)])
        out, err = proc.communicate(timeout=JOB_SECONDS + 90)
        assert proc.returncode == 0, err
        jobid = int(c.run(["sacct", "-n", "-X", "-P", "-o", "JobID",
                           "--name", "after-reconfig"]).stdout.split()[-1])
        windows = energy.windows(out)
        step = energy.consumed_energy(c, jobid)["%d.0" % jobid]
        truth = energy.true_energy(TRACE, epoch, windows,
                                   {"node1": "node1"}, {"node1": 1.0})
        err = energy.relative_error(step, truth)
        print("job %d after the refused reconfigure: sacct %s J, true "
              "%.1f J (%+.3f%%)" % (jobid, step, truth, 100 * err))
        assert step is not None and abs(err) < TOLERANCE
        assert c.pids()["slurmd-node1"] == pid

        # Started afresh with that file, slurmd refuses to start (it may
        # say "started" before it loads the energy plugin: wait for it to
        # be gone, whatever the restart command concluded).
        c.run([c.script, "restart", "slurmd-node1"], check=False)
        poll(lambda: _fatal_lines(_log(c, "slurmd-node1")), timeout=30,
             what="slurmd-node1's fatal error")
        poll(lambda: "slurmd-node1" not in c.pids() or
             not _alive(c.pids()["slurmd-node1"]), timeout=30,
             what="slurmd-node1 gone")
        fatal = _fatal_lines(_log(c, "slurmd-node1"))
        print(fatal[-1])
        assert ("acct_gather_energy/modbus: " in fatal[-1] and
                "acct_gather.conf: EnergyModbusFrequency=2s: not a number of "
                "seconds" in fatal[-1]), fatal[-1]
    finally:
        shutil.move(good, conf)
