"""contribs/examples/ on the test cluster: every example configuration is
loaded as written, so it cannot rot.

Each example directory holds the files a site adds (slurm.conf lines,
acct_gather.conf, map files, plugstack.conf, gres.conf,
energy_policy.conf).  A test copies them, applies SUBSTITUTIONS (below, the
only edits: meter and BMC addresses into the cluster's network, /etc/slurm
and the plugin directory into the test's own), starts the daemons with them
and checks that our plugin is the one running and that it reports the
energy of a known trace, or that the policy applies.

One cluster bring-up per configuration: the Modbus example and the DVFS
example share one (the power budget needs a meter's CurrentWatts); BMC, RRD
and GPU each have their own.  The session's cluster is restored once, at the
end of the module.

Tolerances: these tests prove the examples load and work, not the last
digit (that is test_modbus_energy.py and the others, on 30-65 s jobs).
Jobs are short, so the bounds are a few percent: still far from zero,
missing or double-counted energy (-100 %, +100 %).
"""
import contextlib
import os
import re
import shutil
import subprocess
import time

import pytest

from selab import energy, fixtures
from selab import redfish_rig as rr
from selab import snmp_rig as sr
from selab.bmc_rig import BMC_ADDR, BMC_SIM, PORT_BASE, PORT_OF
from selab.cluster import PLUGIN_DIR, poll, slurmd_log
from selab.gpu_rig import (FAKE_NVML_DIR, GPU_DIR, gpu_setup, parse_rows,
                           timed_job, truth_j)
from selab.meters import ModbusSim, tool

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
EXAMPLES = os.path.join(REPO, "contribs", "examples")
TRACE = os.path.join(REPO, "contribs", "trace", "examples", "cluster.trace")
NET = os.environ.get("SE_CLUSTER_NET", "10.199.0")
HOST = NET + ".1"                      # host side of the cluster bridge
MODBUS_PORT = 15020
NODES = ("node1", "node2", "node3")
FREQS = (1200000, 1600000, 2000000, 2400000)   # the DVFS example's
SITE_PLUGIN_DIR = "/usr/lib/x86_64-linux-gnu/slurm-energy"
SITE_ETC = "/etc/slurm/"

pytestmark = pytest.mark.skipif(not PLUGIN_DIR,
                                reason="SE_PLUGIN_DIR not set "
                                       "(run contribs/test-all.sh)")


# ------------------------------------------------------------------
# THE SUBSTITUTIONS: the only changes made to an example before it runs.
# Every key must occur in the example (a substitution that no longer
# matches fails the test instead of silently testing something else).
# ------------------------------------------------------------------
def substitutions(name, work):
    common = {SITE_PLUGIN_DIR: PLUGIN_DIR}
    # files the example names under /etc/slurm -> the test's copies
    etc = {SITE_ETC: work + "/"}
    site = {
        "modbus-pdu-racks": dict(etc, **{
            # rack 1's Modbus TCP gateway -> the simulator on the bridge
            "tcp://rack1-gw.mgmt.example.org:502":
                "tcp://%s:%d" % (HOST, MODBUS_PORT)}),
        "bmc-lan": dict(etc, **{
            # each node's BMC -> its simulated BMC (one port per node)
            "10.20.0.1%d:623" % i: "%s:%d" % (BMC_ADDR, PORT_OF[n])
            for i, n in enumerate(NODES, 1)}),
        "rrd-collectd": dict(etc, **{
            # collectd's DataDir -> the feeder's directory
            "/var/lib/collectd/rrd/": work + "/rrd/"}),
        "gpu-nodes": {},
        "gpu-bmc": dict(etc, **{
            "10.20.0.1%d:623" % i: "%s:%d" % (BMC_ADDR, PORT_OF[n])
            for i, n in enumerate(NODES, 1)}),
        "dvfs-power-budget": dict(etc),
        "redfish-bmc": dict(etc, **{
            # each node's Redfish BMC -> its simulator (one port per node)
            "10.20.0.1%d:443" % i: "%s:%d" % (BMC_ADDR, RF_PORT_OF[n])
            for i, n in enumerate(NODES, 1)}),
        "redfish-pdu": dict(etc, **{
            # the rack's two Redfish PDUs -> two simulators
            "https://rack1-pdu%s.mgmt.example.org" % p:
                "https://%s:%d" % (BMC_ADDR, port)
            for p, port in PDU_PORT.items()}),
        "snmp-pdu-rack": dict(etc, **{
            # the two PDUs -> one snmpsim agent on the bridge, a recording
            # each; snmpsim picks a v3 recording by context name
            "Host=rack1-pdua.mgmt.example.org":
                "Host=%s:%d Context=rack1-pdua" % (BMC_ADDR, SNMP_PORT),
            "Host=rack1-pdub.mgmt.example.org":
                "Host=%s:%d" % (BMC_ADDR, SNMP_PORT)}),
    }[name]
    return dict(common, **site)


# Which fixture loads each example (test_every_example_is_loaded).
LOADED_BY = {
    "modbus-pdu-racks": "modbus_dvfs",
    "dvfs-power-budget": "modbus_dvfs",
    "bmc-lan": "bmc_lan",
    "rrd-collectd": "rrd_collectd",
    "gpu-nodes": "gpu_nodes",
    "gpu-bmc": "gpu_bmc",
    "redfish-bmc": "redfish_bmc",
    "redfish-pdu": "redfish_pdu",
    "snmp-pdu-rack": "snmp_pdu_rack",
}
# The Redfish simulators' ports (test_redfish_energy's: the two never run
# at once on one cluster)
RF_PORT_OF = {n: PORT_BASE + 8 + i for i, n in enumerate(NODES, 1)}
PDU_PORT = {"a": PORT_BASE + 12, "b": PORT_BASE + 13}
SNMP_PORT = PORT_BASE + 14      # test_snmp_energy's (never at once)


def test_every_example_is_loaded():
    """A new example directory without a test here fails."""
    dirs = sorted(d for d in os.listdir(EXAMPLES)
                  if os.path.isdir(os.path.join(EXAMPLES, d)))
    assert dirs == sorted(LOADED_BY), (
        "contribs/examples/ has %s; this module loads %s"
        % (dirs, sorted(LOADED_BY)))
    for name in dirs:                   # and each has its substitutions
        substitutions(name, "/tmp/x")


def load_examples(names, work):
    """Copy the examples' files into work (files of the same name, such as
    slurm.conf and plugstack.conf, are joined), substituted; returns
    {file name: text}."""
    files = {}
    for name in names:
        subst = substitutions(name, work)
        used = set()
        src = os.path.join(EXAMPLES, name)
        for fname in sorted(os.listdir(src)):
            with open(os.path.join(src, fname)) as handle:
                text = handle.read()
            for old, new in subst.items():
                if old in text:
                    used.add(old)
                    text = text.replace(old, new)
            files[fname] = files.get(fname, "") + text
        missing = set(subst) - used
        assert not missing, "%s: substitutions no longer match: %s" % (
            name, sorted(missing))
    for fname, text in files.items():
        path = os.path.join(work, fname)
        with open(path, "w") as handle:
            handle.write(text)
        os.chmod(path, 0o600 if fname.endswith(".password") else 0o644)
    return files


def cluster_args(files, **kw):
    """Cluster.up_args keywords that load the example's files."""
    extra = {f: t for f, t in files.items() if f == "energy_policy.conf"}
    return dict(slurm_conf=files["slurm.conf"] + "DebugFlags=Energy\n",
                acct_gather_conf=files.get("acct_gather.conf"),
                gres_conf=files.get("gres.conf"),
                extra_confs=extra or None, **kw)


def start_line(cluster, node, plugin):
    return [l for l in slurmd_log(cluster, node).splitlines()
            if "%s: slurm-energy-plugins" % plugin in l
            and "started on node %s" % node in l]


def timed_jobs(cluster, jobs, seconds):
    """Run srun jobs {name: [args]} at once; returns {name: (jobid,
    windows)}."""
    procs = {name: cluster.popen(["srun", "-J", name, *args,
                                  *energy.timed_command(seconds)])
             for name, args in jobs.items()}
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=seconds + 120)
        assert proc.returncode == 0, "srun %s: %s" % (name, stderr)
        jobid = int(cluster.run(["sacct", "-n", "-X", "-P", "-o", "JobID",
                                 "--name", name]).stdout.split()[-1])
        out[name] = (jobid, energy.windows(stdout))
    return out


def check_step_energy(cluster, jobid, truth, tolerance, what):
    recorded = energy.consumed_energy(cluster, jobid)
    got = recorded.get("%d.0" % jobid)
    assert got is not None, "%s: no step energy in sacct: %s" % (what,
                                                                 recorded)
    err = energy.relative_error(got, truth)
    print("%s: job %d sacct %d J, true %.1f J (%+.2f%%)"
          % (what, jobid, got, truth, 100 * err))
    assert abs(err) <= tolerance, (
        "%s: job %d sacct %d J, true %.0f J (%+.2f%%, allowed %.0f%%)"
        % (what, jobid, got, truth, 100 * err, 100 * tolerance))
    return got


def check_job_on_trace(cluster, epoch, name, args, seconds, what):
    """One srun job NAME on ARGS (timed_jobs): its step's sacct energy
    within 2 % of the trace's joules over its task's windows."""
    (jobid, win), = timed_jobs(cluster, {name: args}, seconds).values()
    check_step_energy(cluster, jobid, energy.true_energy(TRACE, epoch, win),
                      0.02, what)


# ------------------------------------------------------------ fixtures
workroot = fixtures.workdir("se-examples-", name="workroot")


def _workdir(root, name):
    path = os.path.join(root, name)
    os.makedirs(path)
    return path


# ---------------------------------- Modbus PDUs per rack + DVFS policy
@pytest.fixture(scope="module")
def modbus_dvfs(module_cluster, workroot):
    c = module_cluster
    work = _workdir(workroot, "modbus-dvfs")
    files = load_examples(["modbus-pdu-racks", "dvfs-power-budget"], work)
    epoch = time.time()
    # rack 1's bus: unit 1 = node1's meter, unit 2 = the chassis meter
    meter = ModbusSim(TRACE, epoch, {1: "node1", 2: "chassis"},
                      ["--model", "sdm630"], tcp=(HOST, MODBUS_PORT)).start()
    try:
        c.restart(**cluster_args(files, freqs=FREQS))
        yield c, epoch, files, work
    finally:
        meter.stop()


def test_modbus_example_plugin_is_ours(modbus_dvfs):
    c = modbus_dvfs[0]
    for node in NODES:
        lines = start_line(c, node, "acct_gather_energy/modbus")
        assert lines, "no start line of our plugin in slurmd-%s.log" % node
        assert "(counter path)" in lines[-1], lines[-1]


def test_modbus_example_energy(modbus_dvfs):
    """node1 on its own meter, node2 billed half the chassis meter."""
    c, epoch = modbus_dvfs[:2]
    jobs = timed_jobs(c, {"ex-own": ["-w", "node1"],
                          "ex-chassis": ["-w", "node2"]}, 10)
    jobid, win = jobs["ex-own"]
    check_step_energy(c, jobid, energy.true_energy(TRACE, epoch, win),
                      0.02, "modbus own meter")
    jobid, win = jobs["ex-chassis"]
    check_step_energy(c, jobid, energy.true_energy(
        TRACE, epoch, win, {"node2": "chassis"}, {"node2": 0.5}),
        0.02, "modbus half chassis")


def _step_freq(c, *args, check=True):
    """(scaling_setspeed of the step's first CPU, srun's result)."""
    show = ("cpu=$(awk '/^Cpus_allowed_list/{print $2}' /proc/self/status"
            " | cut -d, -f1 | cut -d- -f1);"
            " cat /sys/devices/system/cpu/cpu$cpu/cpufreq/scaling_setspeed")
    p = c.srun("-N1", "-n1", "-w", "node1", *args, "sh", "-c", show,
               check=check)
    return p.stdout.strip(), p


def test_dvfs_example_rule_applies(modbus_dvfs):
    """Partition debug: 2.0 GHz by default, 2.4 GHz refused naming the
    range (the cluster's partition is called debug)."""
    c = modbus_dvfs[0]
    speed, _ = _step_freq(c)
    assert speed == "2000000", speed
    speed, p = _step_freq(c, "--cpu-freq=2400000", check=False)
    assert p.returncode != 0
    assert "rule 'debug' allows up to 2000000 kHz" in p.stderr, p.stderr


def test_dvfs_example_power_budget(modbus_dvfs):
    """Over the budget a job gets BudgetCeiling (1.6 GHz) instead of the
    rule's 2.0 GHz.  The example's 40 kW are scaled to the 3-node cluster
    (a few hundred watts) by this one marked change, in place: the plugin
    re-reads the file when it changes."""
    c, _, files, _ = modbus_dvfs
    assert "PowerBudget=40000" in files["energy_policy.conf"]
    poll(lambda: all(energy.node_power(c, n) and
                     energy.node_power(c, n)[0] > 0 for n in NODES),
         timeout=90, what="CurrentWatts of every node in slurmctld")
    path = os.path.join(c.state, "etc", "energy_policy.conf")
    scaled = files["energy_policy.conf"].replace(
        "PowerBudget=40000", "PowerBudget=100")      # <- the substitution
    with open(path + ".tmp", "w") as handle:
        handle.write(scaled)
    os.rename(path + ".tmp", path)
    speed, _ = _step_freq(c)
    assert speed == "1600000", speed


# ------------------------------------------------------ BMC over the LAN
@contextlib.contextmanager
def bmc_sims(work, epoch):
    """One simulated BMC per node playing its TRACE column, with the
    examples' user and password file (in work); stopped at the end.
    Skips the test when bmc-sim or ipmi_sim is missing."""
    if not os.access(BMC_SIM, os.X_OK) or not shutil.which("ipmi_sim"):
        pytest.skip("bmc-sim not built or ipmi_sim not installed")
    started = []

    def sim(cmd, node, *extra):
        p = subprocess.run([BMC_SIM, cmd, "--state",
                            os.path.join(work, "bmc-" + node), *extra],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, "bmc-sim %s %s: %s%s" % (
            cmd, node, p.stdout, p.stderr)
    try:
        for node in NODES:
            sim("start", node, "--port", str(PORT_OF[node]),
                "--addr", BMC_ADDR, "--trace", TRACE, "--column", node,
                "--epoch", "%.6f" % epoch, "--user", "energy",
                "--password-file", os.path.join(work, "bmc.password"))
            started.append(node)
        yield
    finally:
        for node in started:
            sim("stop", node)


@pytest.fixture(scope="module")
def bmc_lan(module_cluster, workroot):
    c = module_cluster
    work = _workdir(workroot, "bmc-lan")
    files = load_examples(["bmc-lan"], work)
    epoch = time.time()
    with bmc_sims(work, epoch):
        c.restart(**cluster_args(files))
        yield c, epoch


def test_bmc_example(bmc_lan):
    c, epoch = bmc_lan
    for node in NODES:
        lines = start_line(c, node, "acct_gather_energy/bmc")
        assert lines, "no start line of our plugin in slurmd-%s.log" % node
        assert "dcmi over lan 2.0 to %s:%d" % (BMC_ADDR, PORT_OF[node]) \
            in lines[-1], lines[-1]
    check_job_on_trace(c, epoch, "ex-bmc", ["-N2", "-w", "node[1-2]"], 10,
                       "bmc dcmi, 2 nodes")


# ------------------------------------------------ Redfish BMCs and PDUs
@contextlib.contextmanager
def redfish_sims(work, epoch, prefix, peers):
    """contribs/redfish-sim peers over HTTPS, their certificates signed by
    a CA made here and installed where the example names it
    (PREFIX-ca.pem), with the example's user and password
    (PREFIX.password).  peers: {name: (port, RedfishSim keywords)}."""
    certs = rr.make_certs(os.path.join(work, "pki"), ips=(BMC_ADDR,))
    shutil.copy(certs["ca"], os.path.join(work, prefix + "-ca.pem"))
    with open(os.path.join(work, prefix + ".password")) as handle:
        password = handle.read().strip()
    sims = []
    try:
        for name, (port, kw) in peers.items():
            sims.append(rr.RedfishSim(
                TRACE, epoch, certs=certs, addr=BMC_ADDR, port=port,
                user="energy", password=password, sensing_interval=0.1,
                workdir=_workdir(work, "sim-" + name), **kw))
            sims[-1].start()
        yield
    finally:
        for sim in sims:
            sim.stop()


def source_line(cluster, node):
    lines = [l for l in slurmd_log(cluster, node).splitlines()
             if "energy and power read from" in l]
    assert lines, "no Redfish source line in slurmd-%s.log" % node
    return lines[-1]


@pytest.fixture(scope="module")
def redfish_bmc(module_cluster, workroot):
    c = module_cluster
    work = _workdir(workroot, "redfish-bmc")
    files = load_examples(["redfish-bmc"], work)
    epoch = time.time()
    peers = {n: (RF_PORT_OF[n], {"column": n}) for n in NODES}
    with redfish_sims(work, epoch, "bmc", peers):
        c.restart(**cluster_args(files))
        rr.wait_first_readings(c, NODES)
        yield c, epoch


def test_redfish_bmc_example(redfish_bmc):
    c, epoch = redfish_bmc
    for node in NODES:
        assert "EnvironmentMetrics EnergyJoules (counter)" in \
            source_line(c, node)
    check_job_on_trace(c, epoch, "ex-rf-bmc", ["-N3", "-w", "node[1-3]"], 10,
                       "redfish bmc, 3 nodes")


@pytest.fixture(scope="module")
def redfish_pdu(module_cluster, workroot):
    c = module_cluster
    work = _workdir(workroot, "redfish-pdu")
    files = load_examples(["redfish-pdu"], work)
    epoch = time.time()
    # the map's outlets, each playing a share of its node's column
    peers = {"a": (PDU_PORT["a"], {"outlets": [
        ("A1", "node1", 0.5), ("A2", "node2", 0.5), ("B1", "node3", 0.5),
        ("B2", "node3", 0.5)]}),
        "b": (PDU_PORT["b"], {"outlets": [
            ("A1", "node1", 0.5), ("A2", "node2", 0.5)]})}
    with redfish_sims(work, epoch, "pdu", peers):
        c.restart(**cluster_args(files))
        rr.wait_first_readings(c, NODES)
        yield c, epoch


def test_redfish_pdu_example(redfish_pdu):
    c, epoch = redfish_pdu
    for node in NODES:
        assert "summed over the resources" in source_line(c, node)
    assert "2 of them in one GET" in source_line(c, "node3")
    check_job_on_trace(c, epoch, "ex-rf-pdu", ["-N3", "-w", "node[1-3]"], 10,
                       "redfish pdu outlets, 3 nodes")


# ------------------------------------------------- SNMP rack PDUs
@pytest.fixture(scope="module")
def snmp_pdu_rack(module_cluster, workroot):
    c = module_cluster
    work = _workdir(workroot, "snmp-pdu-rack")
    files = load_examples(["snmp-pdu-rack"], work)
    os.chmod(os.path.join(work, "snmp.secrets"), 0o600)
    epoch = time.time()
    # the map's outlets, each playing half its node's column: PDU A's
    # recording by its v3 context, PDU B's by its v2c community
    recs = {"rack1-pdua": {}, "metering-ro": {}}
    for rec, outlet, node in (("rack1-pdua", "1", "node1"),
                              ("metering-ro", "1", "node1"),
                              ("rack1-pdua", "2", "node2"),
                              ("metering-ro", "2", "node2"),
                              ("rack1-pdua", "23", "node3"),
                              ("rack1-pdua", "24", "node3")):
        args = "column=%s,share=0.5" % node
        recs[rec][sr.APC_POWER + outlet] = args + ",what=power"
        recs[rec][sr.APC_ENERGY + outlet] = (
            args + ",what=energy,unit_j=360000,base_j=987654321")
    sim = sr.SnmpSim(TRACE, epoch, recs, addr=BMC_ADDR, port=SNMP_PORT,
                     v3={"user": "slurm-energy", "auth": "change-me-auth",
                         "priv": "change-me-priv"})
    try:
        sim.start()
        c.restart(**cluster_args(files))
        yield c, epoch
    finally:
        sim.stop()


def test_snmp_pdu_rack_example(snmp_pdu_rack):
    c, epoch = snmp_pdu_rack
    for node in NODES:
        assert start_line(c, node, "acct_gather_energy/snmp"), node
    check_job_on_trace(c, epoch, "ex-snmp", ["-N3", "-w", "node[1-3]"], 10,
                       "snmp pdu outlets, 3 nodes")


# -------------------------------------------------- RRD from collectd
@pytest.fixture(scope="module")
def rrd_collectd(module_cluster, workroot):
    c = module_cluster
    work = _workdir(workroot, "rrd-collectd")
    files = load_examples(["rrd-collectd"], work)
    for node in NODES:
        os.makedirs(os.path.join(work, "rrd", node, "snmp-outlet"))
    epoch = int(time.time())
    feeder = os.path.join(REPO, "contribs", "rrd-feeder", "rrd-feeder")
    run = os.path.join(work, "feed")
    env = dict(os.environ, SE_RRD_FEED=tool("se-rrd-feed"))
    # collectd's files: a DERIVE "joules" of the outlets' energy counter
    # every 10 s (the example's types.db entry), the last two minutes
    # written at once
    subprocess.run([feeder, "start", run, "--", "--path",
                    os.path.join(work, "rrd", "%n", "snmp-outlet",
                                 "node_energy.rrd"),
                    "--step", "10", "--ds", "derive", "--epoch", str(epoch),
                    "--backfill", "120", TRACE, *NODES],
                   env=env, check=True, timeout=60)
    try:
        c.restart(**cluster_args(files))
        yield c, epoch
    finally:
        subprocess.run([feeder, "stop", run], check=True, timeout=60)


def test_rrd_example(rrd_collectd):
    c, epoch = rrd_collectd
    for node in NODES:
        assert start_line(c, node, "acct_gather_energy/rrd"), node
    check_job_on_trace(c, epoch, "ex-rrd", ["-w", "node1"], 30,
                       "rrd energy-counter rows + settle")


# ------------------------------------------------------------ GPU nodes
@pytest.fixture(scope="module")
def gpu_nodes(module_cluster, workroot, tmp_path_factory):
    if not os.path.exists(os.path.join(FAKE_NVML_DIR,
                                       "libnvidia-ml.so.1")):
        pytest.skip("the fake NVML is not built (SE_FAKE_NVML_DIR)")
    c = module_cluster
    work = _workdir(workroot, "gpu-nodes")
    files = load_examples(["gpu-nodes"], work)
    # the fake GPUs (test_gpu's): 2 per node, a trace column each
    kw, info = gpu_setup(
        c, tmp_path_factory.mktemp("ex-gpu"), 2, "topo-cluster-2gpu.xml",
        os.path.join(GPU_DIR, "nvml-cluster-2gpu.state"))
    c.restart(**cluster_args(files, nodes=2, gpus=2,
                             node_env=kw["node_env"],
                             hwloc_xml=kw["hwloc_xml"]))
    c.gpu = info
    yield c


def test_gpu_example(gpu_nodes):
    c = gpu_nodes
    log = slurmd_log(c, "node1")
    assert ("gpu/nvml: 2 GPU(s) detected through NVML "
            "(slurm-energy-plugins)") in log
    assert "CUDA_DEVICE_ORDER=PCI_BUS_ID" in log
    p = timed_job(c, 10, "--gres=gpu:2", "-n1")
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    (row,) = parse_rows(out)
    g = c.gpu["gpus"]
    truth = sum(truth_j(c, g.by_minor[m]["col"], float(row["t0"]),
                        float(row["t1"])) for m in (0, 1))
    check_step_energy(c, int(row["job"]), truth, 0.02, "gpu:2")


# ------------------------------------------- GPU nodes metered by the BMC
# The fake GPUs play low columns (20-45 W each, ramps) under the BMC sims'
# node power (the cluster trace: 100 W at the lowest on node1), which does
# not follow them: the GPUs' part is checked against their own truth, the
# node's identity against the meter.
GPU_BMC_TRACE = """\
@repeat 20
time low0 low1
0    20   30
10   35   45
20   20   30
"""
GPU_BMC_FACTOR = 1.06           # the example's EnergyGPUFactor
STEP_SLACK_S = 1.0              # a step's life beyond its task's window


@pytest.fixture(scope="module")
def gpu_bmc(module_cluster, workroot):
    c = module_cluster
    work = _workdir(workroot, "gpu-bmc")
    files = load_examples(["gpu-bmc"], work)
    assert "EnergyGPUFactor=%g" % GPU_BMC_FACTOR in files["acct_gather.conf"]
    epoch = time.time()
    trace = os.path.join(work, "gpu.trace")
    with open(trace, "w") as handle:
        handle.write(GPU_BMC_TRACE)
    with open(os.path.join(GPU_DIR, "nvml-cluster-2gpu.state")) as handle:
        body = handle.read().replace("col=gpu0", "col=low0").replace(
            "col=gpu1", "col=low1")
    state = os.path.join(work, "nvml.state")
    with open(state, "w") as handle:
        handle.write(body + "epoch %.3f\ntrace %s\n" % (epoch, trace))
    node_env = {
        "LD_LIBRARY_PATH": FAKE_NVML_DIR,
        "FAKE_NVML_STATE": state,
        "SLURM_ENERGY_NVML_DEVICE_PATH":
            os.path.join(c.state, "nodes", "%h", "dev", "nvidia%u"),
    }
    with bmc_sims(work, epoch):
        c.restart(**cluster_args(files, gpus=2, node_env=node_env,
                                 hwloc_xml=os.path.join(
                                     GPU_DIR, "topo-cluster-2gpu.xml")))
        yield c, epoch, trace


def _every_gpu_read(kv):
    """A split (slurmd's totals) that read every GPU ("gpuN=MINOR:in")."""
    gpus = [v for k, v in kv.items() if re.fullmatch(r"gpu\d+", k)]
    return gpus and all(v.endswith(":in") for v in gpus)


def test_gpu_bmc_example(gpu_bmc):
    """The BMC plugin reads the GPUs too; a 1-GPU job's GPU part (its
    settle line with DebugFlags=Energy) is the factor times its GPU's
    joules; slurmd's totals keep charged + unattributed = measured."""
    c, epoch, trace = gpu_bmc
    log = slurmd_log(c, "node1")
    assert start_line(c, "node1", "acct_gather_energy/bmc"), "no start line"
    assert re.search(r"EnergyGPU=nvml: 2 GPU\(s\) metered through NVML",
                     log), "no GPU metering line in slurmd-node1.log"
    # slurmd was just restarted: its split counts a GPU from the first
    # interval that begins after the GPU's first sample (before, the
    # GPU's energy stays in the node's, by CPU time).  A job launched in
    # that first second lost up to 0.4 s of its GPU part (-3.5 % on a
    # quiet host); wait for a split that read every GPU.
    c.attribution("node1", since=time.time(), ready=_every_gpu_read)
    jobs = timed_jobs(c, {"ex-gpu-bmc": ["-w", "node1", "-n1",
                                         "--gres=gpu:1"]}, 10)
    jobid, win = jobs["ex-gpu-bmc"]
    t0, t1 = win["node1"]

    def settle_line():
        m = re.findall(r"step %d\.0: (\d+) J, of which (\d+) J its GPUs' "
                       r"\(minors (\d+)\)" % jobid, slurmd_log(c, "node1"))
        return m[-1] if m else None
    step_j, gpu_j, minor = poll(settle_line, timeout=30,
                                what="job %d's settle line" % jobid)
    col = "low%s" % minor           # minor m plays column low<m>
    # the step outlives its task's window (srun's launch and end: a
    # fraction of a second on 22.05, most of one on 24.11): its GPU part
    # lies between F x its GPU's joules over the task's window and over
    # that window widened by STEP_SLACK_S on each side
    inner = GPU_BMC_FACTOR * energy.trace_joules(trace, col, epoch, t0, t1)
    outer = GPU_BMC_FACTOR * energy.trace_joules(
        trace, col, epoch, t0 - STEP_SLACK_S, t1 + STEP_SLACK_S)
    print("gpu-bmc: job %d step %s J, its GPU (minor %s) %s J; 1.06 x its "
          "joules over the task's window %.0f J, widened by %g s %.0f J"
          % (jobid, step_j, minor, gpu_j, inner, STEP_SLACK_S, outer))
    assert 0.98 * inner <= float(gpu_j) <= 1.02 * outer, (gpu_j, inner, outer)
    kv = c.attribution("node1")
    # (+ what is held for a new step's GPUs at that sample, if any)
    assert int(kv["charged_mj"]) + int(kv["unattributed_mj"]) + \
        int(kv["gpu_held_mj"]) == int(kv["measured_mj"]), kv
    assert int(kv["gpu_charged_mj"]) > 0, kv
