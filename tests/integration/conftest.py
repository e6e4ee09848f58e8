"""pytest fixtures for integration tests on the namespace test cluster.

The cluster is built by ``contribs/cluster/cluster`` (see its README.md).

Fixtures
--------
``cluster`` (session scope)
    Brings the cluster up with default options (3 nodes, 2 fake GPUs each,
    ``acct_gather_energy/none``) unless one is already up, yields a
    :class:`Cluster` helper and tears the cluster down at the end of the
    session if this session started it.  With ``SE_CLUSTER_REUSE=1`` an
    already running cluster is required (and left running).

Using other plugins or configuration
------------------------------------
Tests that need another configuration restart the cluster with
:meth:`Cluster.restart` or, better, the :meth:`Cluster.configured` context
manager, which restores the session's configuration afterwards::

    @pytest.fixture(scope="module")
    def modbus_cluster(cluster):
        with cluster.configured(
                energy_type="acct_gather_energy/modbus",
                plugin_dirs=[BUILD_DIR + "/src/.libs"],
                acct_gather_conf="EnergyModbusHost=10.199.0.1\\n",
                slurm_conf="DebugFlags=Energy\\n") as c:
            yield c

Every keyword maps to an option of ``cluster up`` (see
:meth:`Cluster.up_args`).  A restart is a full ``down`` + ``up`` (a few
seconds) with a fresh state dir: job ids start again at 1 and the
accounting database is empty.

On any failing test the tail of every daemon log is attached to the report
(section "cluster logs"), so CI output shows why.

Slurm release
-------------
``SE_SLURM_RELEASE=24.11`` (or ``26.05``) runs the cluster, and every Slurm
command of the tests, from that release's root (``contribs/release/mkroot``).
A cluster already up with another release is an error, not reused.
"""

import os
import sys

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(REPO, "contribs", "python"))

from selab.cluster import (Cluster, ClusterError, LOG_TAIL_LINES,  # noqa: E402
                           RELEASE, STATE, poll)

__all__ = ["Cluster", "ClusterError", "poll"]


@pytest.fixture(scope="session")
def cluster():
    c = Cluster()
    reuse = os.environ.get("SE_CLUSTER_REUSE") == "1"
    already = c.is_up()
    running = c.running_release()
    if already and running != c.release:
        pytest.fail("a cluster of Slurm %s is up in %s but SE_SLURM_RELEASE=%s "
                    "(bring it down or set SE_CLUSTER_STATE)"
                    % (running, STATE, RELEASE))
    if reuse and not already:
        pytest.fail("SE_CLUSTER_REUSE=1 but no cluster is up in %s "
                    "(run contribs/cluster/cluster up)" % STATE)
    if not already:
        c.up()
    original = list(c.current_args)
    yield c
    if not already:
        c.down()
    elif c.current_args != original or not c.is_up():
        # someone else's cluster: hand it back as we found it
        c.down()
        c.up(original)


# ------------------------------------------------------------------ hooks
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and "cluster" in getattr(item, "fixturenames", ()):
        try:
            text = Cluster().logs(tail=LOG_TAIL_LINES)
        except Exception as e:  # never hide the real failure
            text = "(could not read cluster logs: %s)" % e
        report.sections.append(("cluster logs (last %d lines each)"
                                % LOG_TAIL_LINES, text))
