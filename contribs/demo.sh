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
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
export SE_BUILD_DIR="${SE_BUILD_DIR:-$top/_build}"
SE_PLUGIN_DIR=$("$top/contribs/build.sh" | tail -n 1)
if [ "${SE_SLURM_RELEASE:-22.05}" != 22.05 ]; then
	export SE_SLURM_RELEASE
	SE_PLUGIN_DIR=$("$top/contribs/release/build" "$SE_SLURM_RELEASE" | tail -n 1)
fi
export SE_PLUGIN_DIR
export SE_BIN_DIR="$SE_BUILD_DIR/stage/bin"
exec /usr/bin/python3 "$top/contribs/demo.py" "$@"
