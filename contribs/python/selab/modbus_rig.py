"""The Modbus energy rig of test_modbus_energy and test_modbus_faults:
the meters' layout on the test cluster, acct_gather.conf for it, and the
1 % check of a job's energy against the trace's truth (selab.energy).

    node1          -> unit 1, its own meter            (column node1)
    node2, node3   -> unit 2, one chassis meter split   (column chassis,
                      equally: each node is billed half)
"""
import os

from . import energy
from .cluster import REPO
from .files import write_file

TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")
# the host side of the cluster bridge (SE_CLUSTER_NET as in contribs/cluster)
METER = (os.environ.get("SE_CLUSTER_NET", "10.199.0") + ".1", 15020)
UNITS = {1: "node1", 2: "chassis"}
COLUMN_OF = {"node1": "node1", "node2": "chassis", "node3": "chassis"}
SHARE_OF = {"node1": 1.0, "node2": 0.5, "node3": 0.5}
TOLERANCE = 0.01                       # the 1 % for jobs >= 30 s
JOB_SECONDS = 30
FINISH_S = JOB_SECONDS + 90            # an srun's wait (energy.finish)

# The SDM630's map (input registers, float32 big-endian): power at 30053
# -> 52 in watts, total import energy at 30073 -> 72 in kWh.
SDM630_SIM = ["--model", "sdm630"]
PATHS = {
    # counter path: the model's energy register
    "counter": "EnergyModbusModel=sdm630\n",
    # power path: the same meter read by a custom map without energy
    "power": ("EnergyModbusModel=custom\nEnergyModbusRegisterKind=input\n"
              "EnergyModbusPowerRegister=52\nEnergyModbusPowerType=float32\n"
              "EnergyModbusWordOrder=abcd\n"),
}


def modbus_conf(workdir, path, device="tcp://%s:%d" % METER,
                map_lines=("Nodes=node1 Unit=1",
                           "Nodes=node[2-3] Unit=2 Share=equal"),
                extra=""):
    map_file = write_file(os.path.join(workdir, "modbus.map"),
                          "\n".join(map_lines) + "\n")
    return ("EnergyModbusDevice=%s\n%sEnergyModbusMap=%s\n"
            "EnergyModbusFrequency=1\nEnergyModbusTimeout=500\n%s"
            % (device, PATHS[path], map_file, extra))


def check_energy(cluster, epoch, jobid, windows):
    recorded = energy.consumed_energy(cluster, jobid)
    truth = energy.true_energy(TRACE, epoch, windows, COLUMN_OF, SHARE_OF)
    step = recorded["%d.0" % jobid]
    job = recorded[str(jobid)]
    assert step is not None and job is not None, recorded
    err = energy.relative_error(step, truth)
    assert abs(err) < TOLERANCE, (
        "job %d on %s: sacct %d J, true %.0f J (%+.2f%%)"
        % (jobid, sorted(windows), step, truth, 100 * err))
    # an srun-only job is its step: the job row must carry the same energy
    assert job == step, recorded
    return err
