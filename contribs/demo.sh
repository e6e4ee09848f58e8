#!/bin/sh
# The demo, on a fresh Debian 12 machine, as root:
#   build everything (contribs/build.sh), bring up the 3-node test cluster
#   with acct_gather_energy/modbus and simulated meters, run jobs, print
#   their energy from sacct beside the true energy, and plot node power.
#
#   contribs/demo.sh [--keep] [--out DIR]
#
# SE_SLURM_RELEASE=24.11: the same on Slurm 24.11 (its root, made by
# contribs/release/mkroot): plugins built inside it (contribs/release/build),
# the cluster's daemons and clients from it; the simulators are the host's.
# Not set, or the host's own release: the host's Slurm (Debian 12's 22.05,
# Debian 13's 24.11, ...).
#
# It stops at the first step that fails, with that step's error.  A
# checkout configured in-tree by the README's production build is built
# from a copy (contribs/lib/source-tree.sh), so the demo runs after it.
# SE_SLURM_PREFIX=PREFIX SE_SLURM_SRC=TREE: the same on a Slurm built from
# source and installed in PREFIX (contribs/release/slurm-from-tarball makes
# one): the plugins built against TREE in _build/src-releases/VERSION.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export SE_BUILD_DIR="${SE_BUILD_DIR:-$top/_build}"
# Each build prints the plugin directory on its last line.  No pipe into
# tail: sh has no pipefail, and a failed build must stop the demo here,
# with the build's own error above this line.
plugin_dir_of() { # WHAT COMMAND...
	what=$1; shift
	out=$("$@") || {
		echo "demo: $what failed (its error is above); the demo stops here" >&2
		exit 1
	}
	dir=$(printf '%s\n' "$out" | tail -n 1)
	[ -d "$dir" ] || {
		echo "demo: $what printed no plugin directory (last line: '$dir')" >&2
		exit 1
	}
	echo "$dir"
}
# the host's build: the simulators and tools the demo runs on the host
SE_PLUGIN_DIR=$(plugin_dir_of "the build (contribs/build.sh)" \
	env -u SE_SLURM_PREFIX -u SE_SLURM_SRC "$top/contribs/build.sh")
export SE_BIN_DIR="$SE_BUILD_DIR/stage/bin"
if [ -n "${SE_SLURM_PREFIX:-}" ]; then
	export SE_SLURM_PREFIX SE_SLURM_SRC
	version=$("$SE_SLURM_PREFIX/sbin/slurmd" -V | sed -n 's/^slurm[-a-z]* //p')
	[ -n "$version" ] || { echo "demo: $SE_SLURM_PREFIX/sbin/slurmd -V gave no version" >&2; exit 1; }
	SE_PLUGIN_DIR=$(plugin_dir_of "the build against Slurm $version" \
		env SE_BUILD_DIR="$SE_BUILD_DIR/src-releases/$version" "$top/contribs/build.sh")
elif [ -n "${SE_SLURM_RELEASE:-}" ] && [ "$SE_SLURM_RELEASE" != "$(slurmd -V 2>/dev/null |
	sed -E 's/^[^0-9]*([0-9]+\.[0-9]+).*/\1/')" ]; then
	export SE_SLURM_RELEASE
	SE_PLUGIN_DIR=$(plugin_dir_of "the build in the root of Slurm $SE_SLURM_RELEASE" \
		"$top/contribs/release/build" "$SE_SLURM_RELEASE")
fi
export SE_PLUGIN_DIR
exec /usr/bin/python3 "$top/contribs/demo.py" "$@"
