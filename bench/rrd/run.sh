#!/bin/bash
# bench/rrd/run.sh - controller time per ext_sensors round: ext_sensors/meters
# (ours) against upstream's ext_sensors/rrd (Debian slurm-wlm-rrd-plugin),
# same RRD files, same run.  Prints a markdown table on stdout.
#
#   bench/rrd/run.sh [OBJDIR]        OBJDIR: the build tree
#                                    (default: _build/obj next to bench/)
# Environment:
#   SE_BENCH_NODES    node counts (default "1000 10000")
#   SE_BENCH_ROUNDS   rounds per plugin, the first is a warm-up (default 6)
#   SE_BENCH_FREQ     ExtSensorsFreq, seconds between rounds (default 10)
#   SE_PLUGIN_DIR     our plugins (default OBJDIR/../stage/lib/slurm-energy)
#   SE_RRD_FEED, SE_BENCH_EXT_SENSORS   binaries, instead of OBJDIR's
#   SE_BENCH_DIR      where the RRD files go (default a mktemp dir under
#                     /var/tmp, removed on exit; 10,000 files take 2.9 GB)
#
# For each node count it writes one RRD file per node (se-rrd-feed --once,
# 10 s step, the last 10 minutes of the cluster trace's node1), then runs
# se-bench-ext-sensors once per plugin: it loads the plugin from PluginDir
# through libslurmfull's ext_sensors_init() and calls
# ext_sensors_g_update_component_data() every ExtSensorsFreq seconds, as
# slurmctld's background thread does under the node write lock.
# Nothing runs in the background; no daemon is started.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
OBJ=${1:-$SRC/_build/obj}
FEED=${SE_RRD_FEED:-$OBJ/contribs/rrd-feeder/se-rrd-feed}
BENCH=${SE_BENCH_EXT_SENSORS:-$OBJ/bench/rrd/se-bench-ext-sensors}
OURS=${SE_PLUGIN_DIR:-$OBJ/../stage/lib/slurm-energy}
STOCK=/usr/lib/x86_64-linux-gnu/slurm-wlm
NODES=${SE_BENCH_NODES:-1000 10000}
ROUNDS=${SE_BENCH_ROUNDS:-6}
FREQ=${SE_BENCH_FREQ:-10}
TRACE=$SRC/contribs/trace/examples/cluster.trace

for b in "$FEED" "$BENCH"; do
	[ -x "$b" ] || { echo "run.sh: $b missing: build first" >&2; exit 2; }
done
[ -f "$OURS/ext_sensors_meters.so" ] ||
	{ echo "run.sh: no ext_sensors_meters.so in $OURS" >&2; exit 2; }
[ -f "$STOCK/ext_sensors_rrd.so" ] ||
	{ echo "run.sh: apt-get install slurm-wlm-rrd-plugin" >&2; exit 2; }

if [ -n "${SE_BENCH_DIR:-}" ]; then
	T=$SE_BENCH_DIR; KEEP=1; mkdir -p "$T"
else
	T=$(mktemp -d /var/tmp/se-bench-rrd.XXXXXX); KEEP=0
fi
cleanup() { [ "$KEEP" = 1 ] || rm -rf "$T"; }
trap cleanup EXIT

# conf DIR NODES TYPE PLUGINDIR EXTRA: slurm.conf + ext_sensors.conf
conf() {
	mkdir -p "$1"
	cat > "$1/slurm.conf" <<EOF
ClusterName=bench
SlurmctldHost=localhost
PluginDir=$4
ExtSensorsType=$3
ExtSensorsFreq=$FREQ
NodeName=n[1-$2] CPUs=1 State=UNKNOWN
EOF
	# Upstream's keys, the same for both; ours may add its own (upstream
	# rejects unknown keys): the files are written once, so keep their
	# rows "fresh" for the whole run.
	cat > "$1/ext_sensors.conf" <<EOF
JobData=energy
NodeData=energy
EnergyRRA=watts
EnergyPathRRD=$T/files/%n.rrd
MaxWatt=2000
$5
EOF
}

echo "| nodes | plugin | call ms (median) | call ms (max) | CPU ms per round (all threads) | nodes with data |"
echo "|---:|---|---:|---:|---:|---:|"
for n in $NODES; do
	rm -rf "$T/files"
	mkdir -p "$T/files"
	"$FEED" --once --step 10 --backfill 600 --path "$T/files/%n.rrd" \
		"$TRACE" "n[1-$n]=node1" >"$T/feed.log" 2>&1 ||
		{ cat "$T/feed.log" >&2; exit 1; }
	# drop nothing from the page cache: both plugins read warm files
	for which in meters rrd; do
		if [ $which = meters ]; then
			conf "$T/$which-$n" "$n" ext_sensors/meters \
				"$OURS:$STOCK" "MaxAge=3600"
		else
			conf "$T/$which-$n" "$n" ext_sensors/rrd "$STOCK" ""
		fi
		"$BENCH" "$T/$which-$n/slurm.conf" "$ROUNDS" \
			>"$T/$which-$n.out" 2>"$T/$which-$n.err" ||
			{ cat "$T/$which-$n.err" >&2; exit 1; }
		# prove which plugin ran (Slurm falls back silently)
		case $which in
		meters) grep -q "ExtSensors meters plugin (slurm-energy-plugins) loaded" "$T/$which-$n.err" ;;
		rrd) grep -q "ext_sensors/rrd" "$T/$which-$n.err" ||
			grep -q "ExtSensors rrd" "$T/$which-$n.err" ;;
		esac || { echo "run.sh: $which did not load" >&2;
			  cat "$T/$which-$n.err" >&2; exit 1; }
		sed -n 's/^SUMMARY //p' "$T/$which-$n.out" | tr ' ' '\n' |
			awk -F= -v n="$n" -v p="$which" '
			{ v[$1] = $2 }
			END { printf "| %s | ext_sensors/%s | %s | %s | %s | %s |\n",
				n, p, v["call_ms_median"], v["call_ms_max"],
				v["cpu_ms_per_round"], v["valid"] }'
		cat "$T/$which-$n.out" >&2
	done
done
