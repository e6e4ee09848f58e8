"""Files the integration tests write for the cluster to read: maps,
password files, plugstack.conf, traces, simulators' control files, and
the scratch directories they go in."""
import contextlib
import os
import shutil
import tempfile


def write_file(path, text, mode=None, atomic=False):
    """Write *text* to *path* and return *path*.

    mode: chmod the file to it (a password file wants 0o600); None leaves
    the mode the file was created with.  atomic: write a ``.tmp`` beside it
    and rename it over *path*, so that a reader polling the file (a
    simulator's control file) never sees half of it.
    """
    target = path + ".tmp" if atomic else path
    with open(target, "w") as handle:
        handle.write(text)
    if atomic:
        os.replace(target, path)
    if mode is not None:
        os.chmod(path, mode)
    return path


@contextlib.contextmanager
def scratch_dir(prefix, mode=None, parent="/var/tmp"):
    """A new directory named *prefix* + a random tail in *parent*, removed
    with all it holds on leaving the ``with``.

    /var/tmp by default: the test cluster's daemons see it at the same path
    (their root binds /tmp and /var/tmp), and it outlives a tmpfs /tmp's
    size.  mode: chmod the directory to it (0o755: the slurm user reads
    what the test writes there); None leaves mkdtemp's 0o700.
    """
    path = tempfile.mkdtemp(prefix=prefix, dir=parent)
    try:
        if mode is not None:
            os.chmod(path, mode)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
