"""The installed plugins are what slurmd will accept, and export only entry points.

Runs on the stage install made by contribs/build.sh (SE_PLUGIN_DIR): no
cluster needed.

On another release (SE_SLURM_RELEASE=24.11 ...) the plugins were built in
that release's root (contribs/release/build) against its glibc and
libslurmfull: slurm-energy-check (the release's build of it, next to the
plugins in _build/releases/REL/stage) and `slurmd -V` run inside the root,
where the release's daemons run (selab Cluster.in_root); the host can load
none of them.
"""
import glob
import os
import re
import subprocess

import pytest

from selab.cluster import Cluster, PLUGIN_DIR

BIN_DIR = os.environ.get("SE_BIN_DIR", "")
SBIN_DIR = os.path.join(os.path.dirname(BIN_DIR), "sbin") if BIN_DIR else ""
# where the release's daemons run: the host (22.05) or the release's root
WHERE = Cluster()
if WHERE.other_release and PLUGIN_DIR:
    # the release's own build: <stage>/lib/slurm-energy -> <stage>/sbin
    SBIN_DIR = os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(PLUGIN_DIR))), "sbin")

# What Slurm looks up with dlsym() (and energy_settle.so in our energy
# plugins); anything else exported is a leak.
ENTRY_POINT = re.compile(
    r"^(plugin_name|plugin_type|plugin_version|init|fini|"
    r"se_energy_step_settle|se_energy_settle_spank_present|"
    r"acct_gather_energy_p_\w+|ext_sensors_p_\w+|gres_p_\w+|gpu_p_\w+|"
    r"job_submit|job_modify|job_submit_p_\w+|cli_filter_p_\w+|"
    r"slurm_spank_\w+|spank_\w+)$")

pytestmark = pytest.mark.skipif(not PLUGIN_DIR,
                                reason="SE_PLUGIN_DIR not set (run contribs/test-all.sh)")


def plugins():
    found = sorted(glob.glob(os.path.join(PLUGIN_DIR, "*.so")))
    assert found, "no plugins installed in %s" % PLUGIN_DIR
    return found


def installed_slurm_version_number():
    """The version of the slurmd the plugins load in (the release's root's
    on another release)."""
    out = subprocess.run(WHERE.in_root(["slurmd", "-V"]),
                         capture_output=True, text=True, check=True).stdout
    major, minor, micro = (int(x) for x in
                           re.search(r"(\d+)\.(\d+)\.(\d+)", out).groups())
    return (major << 16) | (minor << 8) | micro


def test_check_tool_accepts_every_plugin():
    """slurm-energy-check loads each plugin as Slurm does and compares versions."""
    tool = os.path.join(SBIN_DIR, "slurm-energy-check")
    res = subprocess.run(WHERE.in_root([tool, "--plugin-dir", PLUGIN_DIR]),
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    # each plugin "ok" with the version of the slurmd beside it (24.11.5:
    # "plugin_version 24.11.5 (0x180b05)")
    want = "(0x%06x)" % installed_slurm_version_number()
    lines = res.stdout.splitlines()
    for path in plugins():
        line = [x for x in lines
                if x.startswith("ok   " + os.path.basename(path) + " ")]
        assert line, res.stdout
        assert want in line[0], res.stdout


def test_check_tool_loads_each_meter_library():
    """The energy plugins open their meter's library in slurmd only (no
    NEEDED entry), so loading the plugin no longer proves the library is
    there: slurm-energy-check loads each one, as slurmd will at start."""
    tool = os.path.join(SBIN_DIR, "slurm-energy-check")
    res = subprocess.run(WHERE.in_root([tool, "--plugin-dir", PLUGIN_DIR]),
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    names = {os.path.basename(p) for p in plugins()}
    wanted = {"acct_gather_energy_modbus.so": ("libmodbus.so.",),
              "acct_gather_energy_bmc.so": ("libfreeipmi.so.",
                                            "libipmimonitoring.so.",
                                            "libcurl.so.", "libjson-c.so."),
              "acct_gather_energy_rrd.so": ("librrd.so.",)}
    seen = 0
    for plugin, libs in wanted.items():
        if plugin not in names:
            continue
        for lib in libs:
            assert re.search(r"^ok   %s +opens %s\d+ in slurmd: it loads$"
                             % (re.escape(plugin), re.escape(lib)),
                             res.stdout, re.M), res.stdout
            seen += 1
    assert seen, "no energy plugin of ours in %s" % PLUGIN_DIR


def test_plugin_version_equals_installed_slurmd():
    """Read plugin_version straight from each .so's data (not via our tool)."""
    want = installed_slurm_version_number()
    for path in plugins():
        # Read the 4 bytes of the symbol from the file.
        sym = subprocess.run(["nm", "-D", "--defined-only", path],
                             capture_output=True, text=True, check=True).stdout
        addr = int(re.search(r"^([0-9a-f]+) [RD] plugin_version$", sym, re.M).group(1), 16)
        with open(path, "rb") as handle:
            data = handle.read()
        offset = _file_offset(path, addr)
        got = int.from_bytes(data[offset:offset + 4], "little")
        assert got == want, "%s: plugin_version 0x%06x, slurmd is 0x%06x" % (
            path, got, want)


def _file_offset(path, vaddr):
    """Map a virtual address to a file offset through the program headers."""
    out = subprocess.run(["readelf", "-lW", path], capture_output=True,
                         text=True, check=True).stdout
    for line in out.splitlines():
        fields = line.split()
        if fields and fields[0] == "LOAD":
            offset, virt, filesz = (int(fields[1], 16), int(fields[2], 16),
                                    int(fields[4], 16))
            if virt <= vaddr < virt + filesz:
                return offset + (vaddr - virt)
    raise AssertionError("address 0x%x not in a LOAD segment of %s" % (vaddr, path))


def test_only_entry_points_exported():
    for path in plugins():
        out = subprocess.run(["nm", "-D", "--defined-only", path],
                             capture_output=True, text=True, check=True).stdout
        names = [line.split()[-1] for line in out.splitlines() if line.strip()]
        leaked = [n for n in names if not ENTRY_POINT.match(n)]
        assert not leaked, "%s exports %s" % (os.path.basename(path), leaked)
        assert "plugin_version" in names and "plugin_type" in names


def _check_tool_with(tmp_path, acct_gather, plugstack=None,
                     energy_type="acct_gather_energy/modbus"):
    """slurm-energy-check --slurm-conf on a Modbus node's files in
    tmp_path (bound into a release's root, as /tmp is): its output and
    exit status."""
    (tmp_path / "modbus.map").write_text("Nodes=node1 Unit=1\n")
    conf = ["AcctGatherEnergyType=%s" % energy_type,
            "PluginDir=%s" % PLUGIN_DIR]
    if plugstack is not None:
        (tmp_path / "plugstack.conf.d").mkdir(exist_ok=True)
        (tmp_path / "plugstack.conf").write_text(
            "include %s/plugstack.conf.d/*.conf\n" % tmp_path)
        (tmp_path / "plugstack.conf.d" / "energy.conf").write_text(plugstack)
        conf.append("PlugStackConfig=%s/plugstack.conf" % tmp_path)
    (tmp_path / "slurm.conf").write_text("\n".join(conf) + "\n")
    (tmp_path / "acct_gather.conf").write_text(
        "EnergyModbusDevice=tcp://127.0.0.1:502\nEnergyModbusModel=sdm630\n"
        "EnergyModbusMap=%s/modbus.map\n%s" % (tmp_path, acct_gather))
    res = subprocess.run(WHERE.in_root([
        os.path.join(SBIN_DIR, "slurm-energy-check"), "--plugin-dir",
        PLUGIN_DIR, "--slurm-conf", str(tmp_path / "slurm.conf"),
        "--conf-check", os.path.join(SBIN_DIR, "se-conf-check")]),
        capture_output=True, text=True)
    return res.stdout + res.stderr, res.returncode


def test_check_tool_on_the_settle(tmp_path):
    """Issue #30: the settle is the energy plugin's; slurm-energy-check
    says a listed spank_energy_settle.so (here through an include) is no
    longer needed, says when nothing settles, and refuses a bad settle key
    naming file, key and value."""
    out, rc = _check_tool_with(tmp_path, "", "optional %s/spank_energy_"
                               "settle.so max_wait=30\n" % PLUGIN_DIR)
    assert rc == 0, out
    assert re.search(r"^ok   acct_gather_energy/settle: ", out, re.M), out
    assert re.search(r"^note .*energy\.conf: spank_energy_settle\.so is no "
                     r"longer needed: acct_gather_energy/modbus settles "
                     r"each step itself", out, re.M), out
    out, rc = _check_tool_with(tmp_path, "EnergySettle=no\n", "")
    assert rc == 0, out
    assert "EnergySettle=no and no spank_energy_settle.so" in out, out
    out, rc = _check_tool_with(tmp_path, "EnergySettleMaxWait=5s\n")
    assert rc == 1, out
    assert ("FAIL acct_gather_energy/settle: %s/acct_gather.conf: "
            "EnergySettleMaxWait=5s: not an unsigned integer" % tmp_path
            in out), out


def test_check_tool_warns_unverified_redfish(tmp_path):
    """Issue #41: EnergyBMCMethod=redfish with EnergyBMCTLSVerify=no sends
    the BMC password to whoever answers: slurm-energy-check warns (the
    configuration stays valid, exit status 0), and does not when TLS is
    verified.  A bad Redfish key fails, naming file, key and value."""
    redfish = "EnergyBMCMethod=redfish\nEnergyBMCHost=%n-bmc.mgmt\n"
    out, rc = _check_tool_with(tmp_path, redfish + "EnergyBMCTLSVerify=no\n",
                               energy_type="bmc")
    assert rc == 0, out
    assert re.search(r"^ok   acct_gather_energy/bmc: ", out, re.M), out
    assert re.search(r"^WARN .*acct_gather\.conf: EnergyBMCTLSVerify=no: the "
                     r"BMC's certificate is not verified", out, re.M), out
    out, rc = _check_tool_with(tmp_path, redfish, energy_type="bmc")
    assert rc == 0, out
    assert "WARN" not in out, out
    out, rc = _check_tool_with(tmp_path, redfish +
                               "EnergyBMCRedfishSource=counter\n",
                               energy_type="bmc")
    assert rc == 1, out
    assert ("%s/acct_gather.conf: EnergyBMCRedfishSource=counter: must be "
            "auto, energy, power or a resource URI" % tmp_path in out), out


def test_check_tool_on_stacked_energy_plugins(tmp_path):
    """Issue #31: Slurm loads every plugin AcctGatherEnergyType lists and
    adds their figures.  slurm-energy-check reads the list (with or without
    the acct_gather_energy/ prefix): it still checks acct_gather.conf for
    the first plugin of ours (a bad key fails the list as it fails the
    plugin alone), and warns, keeping the exit status, that gpu beside it
    counts every GPU twice (the way to do it: EnergyGPU=nvml) and that two
    node meters count the node twice."""
    stacked = "acct_gather_energy/modbus,acct_gather_energy/gpu"
    out, rc = _check_tool_with(tmp_path, "", energy_type=stacked)
    assert rc == 0, out
    assert re.search(r"^ok   acct_gather_energy/modbus: ", out, re.M), out
    assert re.search(r"^ok   acct_gather_energy/settle: ", out, re.M), out
    warn = [line for line in out.splitlines() if line.startswith("WARN ")]
    assert len(warn) == 1, out
    assert warn[0].startswith("WARN %s: AcctGatherEnergyType=%s: Slurm adds "
                              "the plugins' totals, so every GPU is counted "
                              "twice" % (tmp_path / "slurm.conf", stacked)), out
    assert ("Use AcctGatherEnergyType=acct_gather_energy/modbus and "
            "EnergyGPU=nvml in acct_gather.conf" in warn[0]), out
    out, rc = _check_tool_with(tmp_path, "EnergySettleMaxWait=5s\n",
                               energy_type=stacked)
    assert rc == 1, out
    assert "FAIL acct_gather_energy/settle: " in out, out
    # no prefix, ours second: the same plugin is found and checked
    out, rc = _check_tool_with(tmp_path, "", energy_type="gpu,modbus")
    assert rc == 0, out
    assert re.search(r"^ok   acct_gather_energy/modbus: ", out, re.M), out
    assert "every GPU is counted twice" in out, out
    out, rc = _check_tool_with(tmp_path, "", energy_type="modbus,bmc")
    assert rc == 0, out
    assert re.search(r"^WARN .*: AcctGatherEnergyType=modbus,bmc: .*the node "
                     r"is counted twice .* Use one: AcctGatherEnergyType="
                     r"acct_gather_energy/modbus\.$", out, re.M), out
    assert "every GPU" not in out, out
    # one plugin: no warning
    out, rc = _check_tool_with(tmp_path, "")
    assert rc == 0, out
    assert "WARN" not in out, out
