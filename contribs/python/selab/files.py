"""Files the integration tests write for the cluster to read: maps,
password files, plugstack.conf, traces, simulators' control files."""
import os


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
