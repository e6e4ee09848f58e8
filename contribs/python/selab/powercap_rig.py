"""What the power cap's rigs share (tests/integration/test_powercap_*.py,
bench/powercap/cluster_run.py): a node's fake RAPL tree for the rapl knob
(root=ROOT), and a munged of the rig's own for the daemon's and agents'
credentials."""
import os
import shutil


def fake_rapl_zone(root, max_uw, limit_uw):
    """A RAPL tree under root: one package zone, intel-rapl:0, one
    long_term constraint.  Returns its limit file's path (what the knob
    writes)."""
    zone = os.path.join(root, "intel-rapl:0")
    os.makedirs(zone)
    for name, value in (("name", "package-0"),
                        ("constraint_0_name", "long_term"),
                        ("constraint_0_max_power_uw", max_uw),
                        ("constraint_0_power_limit_uw", limit_uw)):
        with open(os.path.join(zone, name), "w") as f:
            f.write("%s\n" % value)
    return os.path.join(zone, "constraint_0_power_limit_uw")


def start_munged(workdir, start, munged=None):
    """munged with a fresh key, its socket, pid, log and seed files in
    workdir (which munged wants searchable: mode 0755), started through
    start(name, argv) (the rig's, which keeps the Popen to stop it by its
    PID).  Returns the socket's path; the caller waits for it."""
    munged = munged or shutil.which("munged") or "/usr/sbin/munged"
    key = os.path.join(workdir, "munge.key")
    fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, os.urandom(1024))
    os.close(fd)
    sock = os.path.join(workdir, "munge.socket")
    start("munged", [munged, "--foreground", "--socket=" + sock,
                     "--key-file=" + key] +
          ["--%s-file=%s" % (k, os.path.join(workdir, "munged." + k))
           for k in ("pid", "log", "seed")])
    return sock
