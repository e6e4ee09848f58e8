#!/bin/sh
# bench/load/run.sh - what each plugin costs every slurmstepd to load: the
# shared objects it maps and the time of its dlopen (median and 90th
# percentile over fresh processes, bench/load/se-bench-dlopen.c), for our
# plugins and Slurm's stock ones beside them.  A table on stdout.
#
#   bench/load/run.sh [BUILD_OBJ_DIR] [RUNS] [BEFORE_DIR]
#
# BUILD_OBJ_DIR: the build (default _build/obj), whose .libs/ holds the
# plugins; RUNS: processes per plugin (default 300); BEFORE_DIR: a
# directory of older builds of the same plugins, measured in the same
# run for a before/after table.  Slurm's plugin directory (libslurmfull.so
# and the stock plugins) comes from the build's configure.
set -eu

obj=$(cd "${1:-_build/obj}" && pwd)
runs=${2:-300}
before=${3:-}
tool=$obj/bench/load/se-bench-dlopen
[ -x "$tool" ] || { echo "run.sh: $tool missing: build first" >&2; exit 2; }
slurm_dir=$(sed -n 's/^SLURM_PLUGINDIR = //p' "$obj/Makefile")
full=$slurm_dir/libslurmfull.so

# measure FILE: "objects median p90" over $runs processes
measure() {
	i=0
	while [ $i -lt "$runs" ]; do
		"$tool" "$full" "$1" || exit 1
		i=$((i + 1))
	done | sort -k2 -n | awk '{n[NR] = $1; t[NR] = $2}
		END {printf "%d %.3f %.3f\n", n[1], t[int((NR + 1) / 2)],
		     t[int(NR * 0.9)]}'
}

row() {	# row NAME FILE [BEFORE-FILE]
	set -- "$1" "$2" "${3:-}" $(measure "$2")
	if [ -n "$3" ] && [ -f "$3" ]; then
		set -- "$@" $(measure "$3")
		printf '| %s | %s | %s ms | %s ms | %s | %s ms |\n' \
			"$1" "$4" "$5" "$6" "$7" "$8"
	else
		printf '| %s | %s | %s ms | %s ms |\n' "$1" "$4" "$5" "$6"
	fi
}

echo "Loading a plugin into a fresh process after libslurmfull.so, as"
echo "slurmstepd does for every step ($runs processes each; $(nproc) CPUs)."
echo
if [ -n "$before" ]; then
	echo "| plugin | objects mapped | dlopen median | p90 | before: objects | before: median |"
	echo "|---|---:|---:|---:|---:|---:|"
else
	echo "| plugin | objects mapped | dlopen median | p90 |"
	echo "|---|---:|---:|---:|"
fi
for p in acct_gather_energy_modbus acct_gather_energy_bmc \
	 acct_gather_energy_rrd acct_gather_energy_gpu gres_gpu \
	 spank_energy_settle spank_energy_policy cli_filter_energy_policy; do
	so=$obj/.libs/$p.so
	[ -f "$so" ] || continue
	row "$p (ours)" "$so" "${before:+$before/$p.so}"
done
for p in acct_gather_energy_none acct_gather_energy_ipmi gres_gpu; do
	so=$slurm_dir/$p.so
	[ -f "$so" ] && row "$p (Slurm's)" "$so"
done
