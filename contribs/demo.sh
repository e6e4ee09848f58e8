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
# SE_SLURM_PREFIX=PREFIX SE_SLURM_SRC=TREE: the same on a Slurm built from
# source and installed in PREFIX (contribs/release/slurm-from-tarball makes
# one): the plugins built against TREE in _build/src-releases/VERSION.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export SE_BUILD_DIR="${SE_BUILD_DIR:-$top/_build}"
# the host's build: the simulators and tools the demo runs on the host
SE_PLUGIN_DIR=$(env -u SE_SLURM_PREFIX -u SE_SLURM_SRC "$top/contribs/build.sh" | tail -n 1)
export SE_BIN_DIR="$SE_BUILD_DIR/stage/bin"
if [ -n "${SE_SLURM_PREFIX:-}" ]; then
	export SE_SLURM_PREFIX SE_SLURM_SRC
	version=$("$SE_SLURM_PREFIX/sbin/slurmd" -V | sed -n 's/^slurm[-a-z]* //p')
	SE_PLUGIN_DIR=$(SE_BUILD_DIR="$SE_BUILD_DIR/src-releases/$version" \
		"$top/contribs/build.sh" | tail -n 1)
elif [ "${SE_SLURM_RELEASE:-22.05}" != 22.05 ]; then
	export SE_SLURM_RELEASE
	SE_PLUGIN_DIR=$("$top/contribs/release/build" "$SE_SLURM_RELEASE" | tail -n 1)
fi
export SE_PLUGIN_DIR
exec /usr/bin/python3 "$top/contribs/demo.py" "$@"
