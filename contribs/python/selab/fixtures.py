"""pytest fixtures that several test modules share.

Each is made by a function, so that a module says what differs (a prefix,
a text) where it takes the fixture; pytest finds a fixture bound to a
name of the test module:

    from selab import fixtures

    workdir = fixtures.workdir("se-bmc-test-")
    certs = fixtures.certs()

Only the test modules import this (it needs pytest); the rigs, the demo and
the benchmarks do not.
"""
import os
import shutil

import pytest

from selab import redfish_rig
from selab.bmc_rig import BMC_SIM
from selab.cluster import PLUGIN_DIR
from selab.files import scratch_dir, write_file

# What a module needs to run at all, for its pytestmark (a list of marks).
NEEDS_PLUGINS = pytest.mark.skipif(
    not PLUGIN_DIR, reason="SE_PLUGIN_DIR not set (run contribs/test-all.sh)")
NEEDS_LOAD_METER = pytest.mark.skipif(
    not os.environ.get("SE_PYMODBUS_PYTHON"),
    reason="SE_PYMODBUS_PYTHON not set (the load meter runs on pymodbus; "
    "contribs/test-all.sh makes the venv)")
NEEDS_BMC_SIM = [
    pytest.mark.skipif(not os.access(BMC_SIM, os.X_OK),
                       reason="%s not built" % BMC_SIM),
    pytest.mark.skipif(not shutil.which("ipmi_sim"),
                       reason="ipmi_sim not installed (Debian: openipmi)"),
]


def workdir(prefix, mode=None, subdirs=(), name="workdir"):
    """A module's scratch directory (selab.files.scratch_dir: /var/tmp,
    *prefix*, *mode*), removed after the module's last test.  subdirs:
    (name, mode) pairs made in it first; name: the fixture's."""
    @pytest.fixture(scope="module", name=name)
    def _workdir():
        with scratch_dir(prefix, mode) as path:
            for sub, sub_mode in subdirs:
                os.makedirs(os.path.join(path, sub))
                os.chmod(os.path.join(path, sub), sub_mode)
            yield path
    return _workdir


def trace_file(text, name="rf.trace"):
    """*text* (a power trace, contribs/trace/FORMAT.md) as file *name* in
    the module's workdir: its path."""
    @pytest.fixture(scope="module", name="trace_file")
    def _trace_file(workdir):
        return write_file(os.path.join(workdir, name), text)
    return _trace_file


def certs():
    """A CA and a server certificate for 127.0.0.1 / localhost in the
    module's workdir (redfish_rig.make_certs): {ca, ca_key, cert, key}."""
    @pytest.fixture(scope="module", name="certs")
    def _certs(workdir):
        return redfish_rig.make_certs(os.path.join(workdir, "pki"))
    return _certs
