"""The Debian packages (debian/), installed where the cluster's daemons run.

contribs/packages/smoke drives this module; it is skipped otherwise.  It
builds the packages (contribs/packages/build), installs them with apt (on
the host for the host's Slurm: the nodes share its file system; inside the
release's root for another release), then runs pytest twice:

SE_PACKAGES=installed
    this module's checks of the installed packages (pinned to the installed
    slurmd, files in place, the PluginDir message, slurm-energy-check from
    /usr/sbin on the running configuration), with the smoke tests of the
    other modules on SE_PLUGIN_DIR=/usr/lib/<triplet>/slurm-energy: one job
    per meter plugin with its energy in sacct, a --gres=gpu:2 job and its
    GPU energy, a policy-chosen --cpu-freq.
SE_PACKAGES=purged
    after apt-get purge: nothing of any package is left.

SE_PACKAGES_DEBS is the directory of the .debs, SE_PACKAGES_INSTALL_LOG
apt's output of the install (the postinst messages).
"""
import glob
import os
import re
import subprocess

import pytest

from selab.cluster import Cluster, PLUGIN_DIR, RELEASES_DIR

STAGE = os.environ.get("SE_PACKAGES", "")
DEBS = os.environ.get("SE_PACKAGES_DEBS", "")
INSTALL_LOG = os.environ.get("SE_PACKAGES_INSTALL_LOG", "")
WHERE = Cluster()
ROOT = (os.path.join(RELEASES_DIR, WHERE.release, "root")
        if WHERE.in_release_root else "/")

# What each family's package must hold: its plugins, by file name.
PLUGINS = {
    "slurm-energy-modbus": ["acct_gather_energy_modbus.so"],
    "slurm-energy-bmc": ["acct_gather_energy_bmc.so"],
    "slurm-energy-rrd": ["acct_gather_energy_rrd.so"],
    "slurm-energy-snmp": ["acct_gather_energy_snmp.so"],
    "slurm-energy-settle": ["spank_energy_settle.so"],
    "slurm-energy-ext-sensors": ["ext_sensors_meters.so"],
    "slurm-energy-gpu": ["gres_gpu.so", "gpu_nvml.so",
                         "acct_gather_energy_gpu.so"],
    "slurm-energy-cpufreq": ["job_submit_energy_policy.so",
                             "cli_filter_energy_policy.so",
                             "spank_energy_policy.so"],
    "slurm-energy-tools": [],
    "slurm-energy-exporter": [],
}

pytestmark = pytest.mark.skipif(
    STAGE not in ("installed", "purged") or not DEBS,
    reason="run by contribs/packages/smoke (SE_PACKAGES, SE_PACKAGES_DEBS)")


def run(args, check=True):
    """A command where the daemons run (the release's root or the host)."""
    return subprocess.run(WHERE.in_root(args), capture_output=True,
                          text=True, check=check, timeout=120)


def debs():
    """{package: .deb path} of the built packages (debug symbols aside)."""
    out = {}
    for path in sorted(glob.glob(os.path.join(DEBS, "*.deb"))):
        name = subprocess.run(["dpkg-deb", "-f", path, "Package"],
                              capture_output=True, text=True,
                              check=True).stdout.strip()
        if not name.endswith("-dbgsym"):
            out[name] = path
    return out


def deb_files(path):
    """The regular files and links a .deb puts on the system."""
    out = subprocess.run(["dpkg-deb", "-c", path], capture_output=True,
                         text=True, check=True).stdout
    files = []
    for line in out.splitlines():
        fields = line.split()
        if line.startswith("d"):
            continue
        name = fields[5] if fields[0].startswith("-") else \
            fields[fields.index("->") - 1]
        files.append(name[1:])              # "./usr/..." -> "/usr/..."
    return files


def on_system(path):
    return os.path.join(ROOT, path.lstrip("/"))


def slurmd_version():
    return run(["dpkg-query", "-W", "-f=${Version}", "slurmd"]).stdout


# --------------------------------------------------------- installed
installed = pytest.mark.skipif(STAGE != "installed",
                               reason="SE_PACKAGES=installed only")
purged = pytest.mark.skipif(STAGE != "purged",
                            reason="SE_PACKAGES=purged only")


@installed
def test_every_family_built_for_this_release():
    """One package per family; ext_sensors only where Slurm has it."""
    expected = set(PLUGINS)
    if WHERE.other_release:             # 24.05 removed ext_sensors
        expected.discard("slurm-energy-ext-sensors")
    assert set(debs()) == expected


@installed
def test_installed_and_pinned_to_this_slurmd():
    """Each package is installed and depends on the installed slurmd's
    exact Debian version (a plugin of another release would be refused
    and the stock one loaded in its place)."""
    version = slurmd_version()
    assert re.match(r"\d+\.\d+\.\d+-", version), version
    pin = "slurm-wlm-basic-plugins (= %s)" % version
    for name in debs():
        status = run(["dpkg-query", "-W", "-f=${db:Status-Status}",
                      name]).stdout
        assert status == "installed", (name, status)
        depends = run(["dpkg-query", "-W", "-f=${Depends}", name]).stdout
        assert pin in depends, (name, depends)
        if PLUGINS[name]:
            daemons = re.findall(r"(slurmd|slurmctld) \(= ([^)]+)\)",
                                 depends)
            assert daemons and all(v == version for _, v in daemons), \
                (name, depends)


@installed
def test_meter_packages_depend_on_their_library():
    """The energy plugins open their meter's library at run time, in
    slurmd (src/common/se_dynlib.h): no NEEDED entry gives it to
    dh_shlibdeps, so debian/rules names it (${meter:Depends}).  Without
    it, a node that installs only the plugin's package has a slurmd that
    stops at start: "cannot load libmodbus.so.5"."""
    wanted = {"slurm-energy-modbus": ("libmodbus",),
              "slurm-energy-bmc": ("libfreeipmi", "libipmimonitoring"),
              "slurm-energy-rrd": ("librrd",),
              "slurm-energy-snmp": ("libsnmp",)}
    for name, libs in wanted.items():
        if name not in debs():
            continue
        depends = run(["dpkg-query", "-W", "-f=${Depends}", name]).stdout
        for lib in libs:
            assert re.search(r"(^|, )%s\d\S* \(>= [^)]+\)" % lib,
                             depends), (name, lib, depends)


@installed
def test_plugins_in_their_own_directory():
    """Plugins in /usr/lib/<triplet>/slurm-energy (none in Slurm's own
    directory), man pages in section 5, nothing else in the plugin dir."""
    assert os.path.basename(PLUGIN_DIR) == "slurm-energy", PLUGIN_DIR
    listed = {}
    for name in debs():
        files = run(["dpkg", "-L", name]).stdout.split()
        listed[name] = files
        sos = sorted(os.path.basename(f) for f in files if f.endswith(".so"))
        assert sos == sorted(PLUGINS[name]), (name, sos)
        for so in PLUGINS[name]:
            path = os.path.join(PLUGIN_DIR, so)
            assert path in files and os.path.isfile(on_system(path)), path
        assert "/usr/share/doc/%s/README.Debian" % name in files, name
    owned = {f for files in listed.values() for f in files}
    for so in os.listdir(on_system(PLUGIN_DIR)):
        assert os.path.join(PLUGIN_DIR, so) in owned, so
    slurm_dir = os.path.join(os.path.dirname(PLUGIN_DIR), "slurm-wlm")
    assert not [f for f in owned if f.startswith(slurm_dir + "/")]
    assert "/usr/share/man/man5/acct_gather_energy_modbus.5.gz" in \
        listed["slurm-energy-modbus"]
    assert "/usr/sbin/slurm-energy-check" in listed["slurm-energy-tools"]
    exporter = listed["slurm-energy-exporter"]
    assert "/usr/sbin/slurm-energy-exporter" in exporter, exporter
    assert "/usr/share/man/man8/slurm-energy-exporter.8.gz" in exporter
    assert "/usr/share/man/man8/slurm-energy-exporter.8.gz" not in \
        listed["slurm-energy-tools"]
    assert [f for f in exporter
            if f.endswith("/systemd/system/slurm-energy-exporter.service")], \
        exporter
    for f in ("slurm-energy.rules.yml", "slurm-energy.rules.test.yml",
              "grafana-slurm-energy.json", "README.md"):
        path = "/usr/share/slurm-energy/prometheus/" + f
        assert path in exporter and os.path.isfile(on_system(path)), path


@installed
def test_postinst_names_the_plugindir_line():
    """Installing says (debconf-free) which PluginDir line to add."""
    with open(INSTALL_LOG) as handle:
        text = handle.read()
    slurm_dir = os.path.join(os.path.dirname(PLUGIN_DIR), "slurm-wlm")
    line = "PluginDir=%s:%s" % (PLUGIN_DIR, slurm_dir)
    for name in debs():
        if PLUGINS[name]:
            assert re.search(r"%s: plugins installed in %s\.\n.*\n\s+%s\n"
                             % (re.escape(name), re.escape(PLUGIN_DIR),
                                re.escape(line)), text), (name, text)


def plugin_dirs(conf):
    with open(conf) as handle:
        match = re.search(r"^PluginDir=(.*)$", handle.read(), re.M)
    return match.group(1).split(":") if match else []


@pytest.fixture
def ours_first(cluster):
    """The running cluster, with our directory first in PluginDir: as the
    smoke's last module finds it (SE_CLUSTER_NO_RESTORE: the GPU or policy
    tests' configuration), else restarted so."""
    conf = os.path.join(cluster.state, "etc", "slurm.conf")
    if cluster.is_up() and plugin_dirs(conf)[:1] == [PLUGIN_DIR]:
        yield cluster, conf
        return
    with cluster.configured(plugin_dirs=[PLUGIN_DIR]) as c:
        yield c, conf


@installed
def test_check_tool_on_the_running_configuration(ours_first, tmp_path):
    """/usr/sbin/slurm-energy-check on the running cluster's slurm.conf:
    every installed plugin ok with the installed slurmd's version; the same
    configuration with the stock directory first fails, saying why."""
    cluster, conf = ours_first
    res = run(["/usr/sbin/slurm-energy-check", "--slurm-conf", conf],
              check=False)
    assert res.returncode == 0, res.stdout + res.stderr
    # one version line per plugin (the energy plugins' libraries have
    # lines of their own: test_build.py)
    oks = re.findall(r"^ok\s+(\S+\.so)\s+\S+\s+plugin_version", res.stdout,
                     re.M)
    assert sorted(oks) == sorted(os.listdir(on_system(PLUGIN_DIR))), \
        res.stdout
    versions = set(re.findall(r"plugin_version (\S+)", res.stdout))
    assert versions == {slurmd_version().split("-")[0]}, res.stdout

    # stock plugins first: the tool must say so and fail
    with open(conf) as handle:
        text = handle.read()
    slurm_dir = os.path.join(os.path.dirname(PLUGIN_DIR), "slurm-wlm")
    wrong = re.sub(r"^PluginDir=.*$", "PluginDir=%s:%s"
                   % (slurm_dir, PLUGIN_DIR), text, flags=re.M)
    assert wrong != text
    (tmp_path / "slurm.conf").write_text(wrong)
    res = run(["/usr/sbin/slurm-energy-check", "--slurm-conf",
               str(tmp_path / "slurm.conf")], check=False)
    assert res.returncode == 1, res.stdout
    assert "does not list %s first" % PLUGIN_DIR in res.stdout, res.stdout


# ------------------------------------------------------------ purged
@purged
def test_purge_leaves_nothing():
    """After apt-get purge: no package known to dpkg, dpkg -L empty, none
    of the files any .deb held, and no plugin directory."""
    for name, path in debs().items():
        status = run(["dpkg-query", "-W", "-f=${db:Status-Status}", name],
                     check=False)
        assert status.returncode != 0 or status.stdout == "not-installed", \
            (name, status.stdout)
        listing = run(["dpkg", "-L", name], check=False)
        assert listing.returncode != 0 and not listing.stdout.strip(), \
            (name, listing.stdout)
        left = [f for f in deb_files(path) if os.path.lexists(on_system(f))]
        assert not left, (name, left)
        assert not os.path.exists(on_system("/usr/share/doc/" + name)), name
    assert PLUGIN_DIR and not os.path.exists(on_system(PLUGIN_DIR)), \
        PLUGIN_DIR
