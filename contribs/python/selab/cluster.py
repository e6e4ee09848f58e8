"""The namespaced test cluster, driven from Python (tests, demo, benchmarks).

``Cluster`` runs Slurm commands against the cluster that
``contribs/cluster/cluster`` builds and restarts it with other plugins or
configuration; ``poll`` waits for a condition instead of sleeping.

Slurm release: ``SE_SLURM_RELEASE`` (unset, or the release of the host's
own ``slurmd -V``: the host's Slurm, 22.05 on Debian 12, 24.11 on Debian 13;
another, e.g. ``24.11`` on Debian 12: the daemons and clients of that
release's Debian root, see
``contribs/cluster/README.md``), or ``SE_SLURM_PREFIX`` (a Slurm built from
source and installed there, e.g. by ``contribs/release/slurm-from-tarball``;
its release is what its slurmd says).  Commands run through
:meth:`Cluster.run` then find that release's ``srun``, ``sbatch`` ... first
on ``PATH``.
"""


import atexit
import contextlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CLUSTER = os.path.join(REPO, "contribs", "cluster", "cluster")
STATE = os.environ.get("SE_CLUSTER_STATE", "/var/tmp/slurm-energy-cluster")
LOG_TAIL_LINES = int(os.environ.get("SE_CLUSTER_LOG_TAIL", "150"))
# The release the whole suite is written for (Debian 12's); the tests of
# any other run their release list (tests/integration/conftest.py).
BASE_RELEASE = "22.05"
PREFIX = os.environ.get("SE_SLURM_PREFIX") or None
# The plugins under test (contribs/test-all.sh sets it to the stage
# install); "": not built, and the tests that load plugins skip.
PLUGIN_DIR = os.environ.get("SE_PLUGIN_DIR", "")


def prefix_release(prefix):
    """MAJOR.MINOR of the slurmd installed in *prefix*."""
    out = subprocess.run([os.path.join(prefix, "sbin", "slurmd"), "-V"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"(\d+)\.(\d+)\.\d+", out)
    if not m:
        raise RuntimeError("%s/sbin/slurmd -V said %r" % (prefix, out))
    return "%s.%s" % m.groups()


def host_release():
    """MAJOR.MINOR of the host's own slurmd (None when it has none)."""
    try:
        out = subprocess.run(["slurmd", "-V"], capture_output=True,
                             text=True).stdout
    except OSError:
        return None
    m = re.match(r"slurm\S* (\d+)\.(\d+)\.", out)
    return "%s.%s" % m.groups() if m else None


# What `contribs/cluster/cluster up` runs when no release is given.
HOST_RELEASE = host_release()
RELEASE = (prefix_release(PREFIX) if PREFIX
           else os.environ.get("SE_SLURM_RELEASE") or HOST_RELEASE
           or BASE_RELEASE)
RELEASES_DIR = os.environ.get("SE_RELEASES_DIR",
                              os.path.join(REPO, "_build", "releases"))
IN_ROOT = os.path.join(REPO, "contribs", "release", "in-root")


class ClusterError(Exception):
    pass


def release_argv(args, release=RELEASE, prefix=PREFIX,
                 binds="/tmp /var/tmp"):
    """argv running *args* (a list, or a string split as sh would) as a
    Slurm release's own programs run: unchanged for the host's release,
    with a tarball prefix's sbin and bin first in PATH (its programs find
    their libslurmfull by rpath), or chrooted into a Debian release's
    root (contribs/release/in-root, with *binds* bound)."""
    args = shlex.split(args) if isinstance(args, str) else list(args)
    if prefix:
        path = "%s/sbin:%s/bin:%s" % (prefix, prefix,
                                       os.environ.get("PATH", os.defpath))
        return ["env", "PATH=" + path] + args
    if release == HOST_RELEASE:
        return args
    return ["env", "SE_IN_ROOT_BINDS=" + binds,
            "SE_RELEASES_DIR=" + RELEASES_DIR, IN_ROOT, release] + args


def poll(predicate, timeout=30.0, interval=0.2, what="condition"):
    """Call predicate() until it returns a truthy value; return that value.

    Raises AssertionError naming *what* (a string, or a callable giving
    one) after *timeout* seconds.  Use this
    instead of sleeping: sacct records, node states, cpufreq restores all
    land some time after the event that causes them.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            if callable(what):
                what = what()
            raise AssertionError("timed out after %.0fs waiting for %s"
                                 % (timeout, what))
        time.sleep(interval)


def slurmd_log(cluster, node):
    """The whole slurmd log of *node* so far (undecodable bytes replaced)."""
    with open(os.path.join(cluster.state, "log", "slurmd-%s.log" % node),
              errors="replace") as handle:
        return handle.read()


class Cluster:
    """Run Slurm commands against the test cluster and (re)configure it."""

    def __init__(self, state=STATE, script=CLUSTER, release=RELEASE,
                 prefix=PREFIX):
        self.state = state
        self.script = script
        self.release = release
        self.prefix = prefix
        self.env = dict(os.environ)
        self.env["SLURM_CONF"] = os.path.join(state, "etc", "slurm.conf")
        self.env["SE_CLUSTER_STATE"] = state
        self.env["SE_SLURM_RELEASE"] = release
        if prefix:
            self.env["SE_SLURM_PREFIX"] = prefix
        else:
            self.env.pop("SE_SLURM_PREFIX", None)
        if self.in_release_root or prefix:
            # the release's clients: wrappers made by `cluster up`
            self.env["PATH"] = os.path.join(state, "bin") + os.pathsep + \
                self.env.get("PATH", os.defpath)
        # a caller's SLURM_* job variables must not leak into our commands
        for k in list(self.env):
            if k.startswith(("SLURM_JOB", "SLURM_STEP", "SBATCH_", "SRUN_",
                             "SALLOC_")):
                del self.env[k]
        self._inputs = tempfile.mkdtemp(prefix="se-cluster-inputs-")
        atexit.register(shutil.rmtree, self._inputs, True)
        self.current_args = self._read_up_args()

    # ----------------------------------------------------------- release
    @property
    def other_release(self):
        """True when the cluster runs another release than Debian 12's
        22.05, the one the whole suite is written for (a release's root, a
        Slurm built into a prefix, or the host's own on Debian 13)."""
        return self.release != BASE_RELEASE or bool(self.prefix)

    @property
    def in_release_root(self):
        """True when the daemons and clients run in a release's root
        (contribs/release/mkroot), not from the host or a prefix."""
        return not self.prefix and self.release != HOST_RELEASE

    @property
    def stock_plugin_dir(self):
        """Where the cluster's Slurm keeps its own plugins (last in
        PluginDir)."""
        if self.prefix:   # where `cluster up` looks: lib/, then lib64/
            for lib in ("lib", "lib64"):
                d = os.path.join(self.prefix, lib, "slurm")
                if os.path.exists(os.path.join(d, "libslurmfull.so")):
                    return d
            return os.path.join(self.prefix, "lib", "slurm")
        return "/usr/lib/x86_64-linux-gnu/slurm-wlm"

    def _state_file(self, name):
        """The text of a file `cluster up` wrote in the state dir (None
        when there is none)."""
        try:
            with open(os.path.join(self.state, name)) as f:
                return f.read().strip()
        except OSError:
            return None

    def running_prefix(self):
        """The prefix of the cluster in the state dir ("" for none)."""
        return self._state_file("prefix") or ""

    def running_release(self):
        """The release of the cluster in the state dir (None: no state)."""
        release = self._state_file("release")
        if release is None and os.path.exists(
                os.path.join(self.state, "env.sh")):
            return HOST_RELEASE or BASE_RELEASE
        return release

    def in_root(self, args):
        """argv running *args* where the cluster's daemons run: unchanged for
        the host's release, else chrooted into the release's root (with the
        state dir, /tmp and /var/tmp bound, as for the daemons)."""
        return release_argv(args, self.release, self.prefix,
                            "/tmp /var/tmp " + self.state)

    # ---------------------------------------------------------- commands
    def run(self, args, timeout=60, check=True, input=None):
        """Run a command (list or string) with SLURM_CONF set; returns
        CompletedProcess with text stdout/stderr."""
        if isinstance(args, str):
            args = shlex.split(args)
        try:
            p = subprocess.run(args, env=self.env, input=input,
                               capture_output=True, text=True,
                               timeout=timeout)
        except subprocess.TimeoutExpired as e:
            raise ClusterError("%s timed out after %ss\nstdout:%s\nstderr:%s"
                               % (args, timeout, e.stdout, e.stderr))
        if check and p.returncode != 0:
            raise ClusterError("%s failed (%d)\nstdout:\n%s\nstderr:\n%s"
                               % (args, p.returncode, p.stdout, p.stderr))
        return p

    def popen(self, args, **kw):
        """Start a command in the background (e.g. an srun to watch)."""
        return subprocess.Popen(args, env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, **kw)

    def srun(self, *args, timeout=60, check=True):
        return self.run(["srun", *args], timeout=timeout, check=check)

    def scontrol(self, *args, timeout=30, check=True):
        return self.run(["scontrol", *args], timeout=timeout, check=check)

    def sacctmgr(self, *args, timeout=30, check=True):
        return self.run(["sacctmgr", *args], timeout=timeout, check=check)

    def sbatch(self, *args, script=None, timeout=30):
        """Submit; returns the job id (int).  *script* is the batch script
        text (otherwise pass --wrap in args)."""
        p = self.run(["sbatch", "--parsable", *args], input=script,
                     timeout=timeout)
        return int(p.stdout.strip().split(";")[0])

    def sacct(self, jobid, fields=("JobID", "JobName", "State", "ExitCode",
                                   "NodeList"), extra=()):
        """sacct rows of a job (all steps) as a list of dicts."""
        p = self.run(["sacct", "-j", str(jobid), "-n", "-P",
                      "-o", ",".join(fields), *extra], timeout=30)
        return [dict(zip(fields, line.split("|")))
                for line in p.stdout.splitlines() if line.strip()]

    def wait_sacct(self, jobid, state="COMPLETED", timeout=60,
                   fields=("JobID", "JobName", "State", "ExitCode",
                           "NodeList"), steps=(), expect=None):
        """Poll sacct until the job's allocation row has *state*, the named
        *steps* (e.g. ("batch", "0")) are recorded and the allocation row
        matches *expect* ({field: value}); return all rows.

        Records converge over a second or two (slurmdbd may store a step
        before the job's start record and show JobName "allocation" until
        it arrives), so the rows must also read the same twice in a row.
        """
        expect = dict(expect or {})
        fields = tuple(fields) + tuple(f for f in expect if f not in fields)
        last = [None]

        def ready():
            rows = self.sacct(jobid, fields=fields)
            by_id = {r["JobID"]: r for r in rows}
            job = by_id.get(str(jobid))
            ok = (job is not None and job["State"].startswith(state)
                  and all("%s.%s" % (jobid, s) in by_id for s in steps)
                  and all(job.get(k) == v for k, v in expect.items()))
            stable = ok and rows == last[0]
            last[0] = rows if ok else None
            return rows if stable else None
        return poll(ready, timeout=timeout, interval=0.3,
                    what=lambda: "sacct to show job %s %s %s (now: %s)"
                    % (jobid, state, expect, self.sacct(jobid, fields)))

    def wait_job_gone(self, jobid, timeout=60):
        poll(lambda: not self.run(["squeue", "-h", "-j", str(jobid)],
                                  check=False).stdout.strip(),
             timeout=timeout, what="job %s to leave the queue" % jobid)

    # ------------------------------------------------------- node views
    def node_names(self):
        return self.run(["sinfo", "-h", "-N", "-o", "%N"]).stdout.split()

    def node_dir(self, node):
        """Host path of a node's private files (cpu/, dev/, spool/)."""
        return os.path.join(self.state, "nodes", node)

    def attribution(self, node, since=None, ready=None, timeout=30):
        """slurmd's share-mode totals of NODE, its .attribution file
        (acct_gather_energy_attribution(5)), as a dict of strings.  With
        *since* (wall clock, time.time()): once slurmd rewrote it after
        then (a split taken from then on); with *ready*, once ready(kv)
        holds too.  Raises AssertionError after *timeout* seconds."""
        path = os.path.join(self.node_dir(node), "spool",
                            "slurm-energy-%s.attribution" % node)

        def fresh():
            try:
                with open(path) as f:
                    kv = dict(w.split("=", 1) for w in f.read().split())
            except (OSError, ValueError):
                return None
            if since is not None and float(kv.get("time", 0)) <= since:
                return None
            return kv if ready is None or ready(kv) else None
        return poll(fresh, timeout=timeout,
                    what=lambda: "%s rewritten after %s%s" % (
                        path, since, " and ready" if ready else ""))

    def cpufreq_file(self, node, cpu, name):
        """Host path of the node's fake /sys/.../cpuN/cpufreq/NAME."""
        return os.path.join(self.node_dir(node), "cpu", "cpu%d" % cpu,
                            "cpufreq", name)

    def read_cpufreq(self, node, cpu, name):
        with open(self.cpufreq_file(node, cpu, name)) as f:
            return f.read().strip()

    def node_cpus(self, node):
        return sorted(int(d[3:]) for d in
                      os.listdir(os.path.join(self.node_dir(node), "cpu")))

    def pids(self):
        """{name: pid} from the cluster's pid files."""
        out = {}
        d = os.path.join(self.state, "pids")
        for f in os.listdir(d) if os.path.isdir(d) else []:
            if f.endswith(".pid"):
                with open(os.path.join(d, f)) as fh:
                    out[f[:-4]] = int(fh.read().split()[0])
        return out

    @staticmethod
    def _shared_objects(maps):
        """File names of the shared objects in a /proc/PID/maps text."""
        return {os.path.basename(line.split()[5])
                for line in maps.splitlines()
                if len(line.split()) > 5 and ".so" in line}

    def mapped_libraries(self, pid):
        """File names of the shared objects process *pid* has mapped
        (/proc/PID/maps; the cluster shares the host's pid namespace)."""
        with open("/proc/%d/maps" % pid) as f:
            return self._shared_objects(f.read())

    # A step's task that prints its parent's (its slurmstepd's) maps, a
    # blank line and the parent's name: step_maps reads its output.
    STEP_MAPS_COMMAND = ("sh", "-c",
                         "cat /proc/$PPID/maps; echo; cat /proc/$PPID/comm")

    @classmethod
    def step_maps(cls, out):
        """(the task's parent's name, file names of the shared objects it
        has mapped) from STEP_MAPS_COMMAND's output."""
        maps, _, comm = out.rpartition("\n\n")
        return comm.strip(), cls._shared_objects(maps)

    def step_libraries(self, node):
        """File names of the shared objects the slurmstepd of a step on
        *node* has mapped while its task runs (the task's parent)."""
        out = self.srun("-w", node, "-N1", "-n1", *self.STEP_MAPS_COMMAND,
                        timeout=60).stdout
        parent, libraries = self.step_maps(out)
        if parent != "slurmstepd":
            raise ClusterError("the task's parent is %r, not slurmstepd"
                               % parent)
        return libraries

    def logs(self, tail=None):
        args = [self.script, "logs"] + (["-n", str(tail)] if tail else [])
        return subprocess.run(args, capture_output=True, text=True,
                              env=self.env, timeout=30).stdout

    # -------------------------------------------------------- lifecycle
    def is_up(self):
        p = subprocess.run([self.script, "status"], capture_output=True,
                           text=True, env=self.env, timeout=60)
        return p.returncode == 0

    def _read_up_args(self):
        try:
            with open(os.path.join(self.state, "up.args")) as f:
                return [l for l in f.read().split("\n") if l]
        except OSError:
            return []

    def _input_file(self, name, text):
        # A new file every time: `configured` blocks nest, and restoring
        # the outer configuration must not read the inner one's text.
        fd, path = tempfile.mkstemp(prefix=name + ".", dir=self._inputs)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        return path

    def up_args(self, nodes=None, gpus=None, plugin_dirs=(), energy_type=None,
                acct_gather_conf=None, slurm_conf=None, gres_conf=None,
                extra_confs=None, overlays=(), node_env=None, hwloc_xml=None,
                freqs=None, debug=None, extra_args=()):
        """Translate keywords into `cluster up` options.

        plugin_dirs: directories put before Debian's plugin dir in PluginDir.
        energy_type: AcctGatherEnergyType (default acct_gather_energy/none).
        acct_gather_conf, slurm_conf, gres_conf: text appended to the
            generated acct_gather.conf / slurm.conf / gres.conf (later
            slurm.conf keys override earlier ones).
        extra_confs: {file name: text} written next to slurm.conf (configs
            the cluster does not generate, e.g. ext_sensors.conf).
        overlays: paths of overlay files ([slurm.conf] ... sections).
        node_env: {VAR: value} exported to every slurmd (e.g. LD_LIBRARY_PATH).
        hwloc_xml: topology XML used by every node.
        """
        a = []
        if nodes is not None:
            a += ["--nodes", str(nodes)]
        if gpus is not None:
            a += ["--gpus", str(gpus)]
        for d in plugin_dirs:
            a += ["--plugin-dir", d]
        if energy_type:
            a += ["--energy-type", energy_type]
        if acct_gather_conf is not None:
            a += ["--acct-gather-conf",
                  self._input_file("acct_gather.conf", acct_gather_conf)]
        if slurm_conf is not None:
            a += ["--slurm-conf", self._input_file("slurm.conf", slurm_conf)]
        if gres_conf is not None:
            a += ["--gres-conf", self._input_file("gres.conf", gres_conf)]
        for name, text in (extra_confs or {}).items():
            a += ["--extra-conf",
                  "%s=%s" % (name, self._input_file("extra-" + name, text))]
        for o in overlays:
            a += ["--config-overlay", o]
        for k, v in (node_env or {}).items():
            a += ["--node-env", "%s=%s" % (k, v)]
        if hwloc_xml:
            a += ["--hwloc-xml", hwloc_xml]
        if freqs:
            a += ["--freqs", " ".join(str(f) for f in freqs)]
        if debug:
            a += ["--debug", debug]
        return a + list(extra_args)

    def up(self, args=()):
        """`cluster up ARGS`; raises ClusterError with the logs on failure."""
        p = subprocess.run([self.script, "up", *args], capture_output=True,
                           text=True, env=self.env, timeout=300)
        if p.returncode != 0:
            raise ClusterError("cluster up %s failed:\n%s%s\n%s" % (
                " ".join(args), p.stdout, p.stderr,
                self.logs(tail=LOG_TAIL_LINES)))
        self.current_args = list(args)
        return p

    def down(self):
        p = subprocess.run([self.script, "down"], capture_output=True,
                           text=True, env=self.env, timeout=300)
        if p.returncode != 0:
            raise ClusterError("cluster down failed:\n%s%s"
                               % (p.stdout, p.stderr))
        return p

    def restart(self, **kw):
        """down + up with options from up_args(**kw)."""
        args = self.up_args(**kw)
        self.down()
        return self.up(args)

    @contextlib.contextmanager
    def configured(self, **kw):
        """Run the block on a cluster restarted with up_args(**kw), then
        restore the configuration it had before.

        SE_CLUSTER_NO_RESTORE=1 leaves the block's configuration up: for a
        run whose every test restarts the cluster it needs anyway
        (contribs/packages/smoke), a restore in between only costs a
        restart (10-20 s each)."""
        before = list(self.current_args)
        try:
            self.restart(**kw)
        except Exception:
            # The block's configuration did not come up: still hand the
            # next tests the cluster they had.
            try:
                self.down()
                self.up(before)
            except Exception:
                pass
            raise
        try:
            yield self
        finally:
            if os.environ.get("SE_CLUSTER_NO_RESTORE") != "1":
                self.down()
                self.up(before)
