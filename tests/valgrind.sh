#!/bin/sh
# valgrind over the unit tests of the Slurm-free core (tests/unit/core.inc)
# and of the meters' pure codecs: memcheck on each (no invalid access, no
# uninitialised use, no definite or indirect leak), helgrind on the threaded
# ones (the sampler, energy_query's readers): no data race, no lock-order
# inversion, no misuse of the pthread API.  Check runs in-process
# (CK_FORK=no) so valgrind sees the tests themselves.
#
#   tests/valgrind.sh BUILD_OBJ_DIR      (after make check there)
#
# Prints one line per run and exits non-zero when any run reports an
# error; the logs stay in BUILD_OBJ_DIR/tests/valgrind/.  Suppressions:
# tests/valgrind.supp (each one commented).  A run where a Check test
# fails (the sampler tests' 10 ms deadlines, under valgrind's slowdown) is
# run once more, and its line says so; that second run must be clean.
set -u

obj=$(cd "${1:?usage: tests/valgrind.sh BUILD_OBJ_DIR}" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
supp=$src/tests/valgrind.supp
out=$obj/tests/valgrind
mkdir -p "$out"

memcheck_tests="
test_attrib
test_conf
test_counter
test_energy_acc
test_energy_carry
test_energy_query
test_energy_query_snapshot
test_exporter
test_power_trace
test_sampler
test_sampler_log
test_se_dynlib
test_se_log
test_se_resolve
test_modbus_codec
test_bmc_dcmi
test_rrd_series
test_cpufreq_model
test_cpufreq_policy
test_powercap_agent
test_powercap_conf
test_powercap_core
test_powercap_ctl
test_powercap_knob
test_powercap_lease
"
helgrind_tests="
test_sampler
test_sampler_log
test_energy_query
"

export CK_FORK=no
# valgrind runs the code 20-50x slower: Check's per-test timers too
export CK_TIMEOUT_MULTIPLIER=20

rc=0
run() { # tool test valgrind-options...
	tool=$1 t=$2
	shift 2
	bin=$obj/tests/unit/$t
	[ -x "$bin" ] || { printf '%-9s %-22s FAILED: not built\n' "$tool" "$t"; rc=1; return; }
	log=$out/$t.$tool.log
	start=$(date +%s)
	note=
	rm -f "$log.1" "$log.1.out"
	for try in 1 2; do
		"$obj/libtool" --mode=execute valgrind --tool="$tool" -q \
			--error-exitcode=99 --suppressions="$supp" \
			--log-file="$log" "$@" "$bin" >"$log.out" 2>&1
		r=$?
		checks=$(grep -ho '^[0-9]*%: Checks: [0-9]*, Failures: [0-9]*, Errors: [0-9]*' "$log.out")
		# A check that failed under valgrind (20-50x slower, one thread
		# at a time) is one of the sampler tests' timing assertions (a
		# 10 ms deadline), not a memory error; and the test it ended
		# (CK_FORK=no) leaves its sampler thread reading a fake on the
		# dead test's stack, so valgrind's reports after it prove
		# nothing.  Run it again, once: the second run must be clean of
		# both.  The first run's logs stay as LOG.1.
		case $checks in 100%:*) break ;; esac
		[ $try = 1 ] || break
		mv "$log" "$log.1"
		mv "$log.out" "$log.1.out"
		note=" (2nd run; the 1st: ${checks:-no Check summary}, $log.1)"
	done
	secs=$(( $(date +%s) - start ))
	if [ $r -eq 0 ]; then
		printf '%-9s %-22s clean  %4ss  %s%s\n' "$tool" "$t" "$secs" \
			"$checks" "$note"
	else
		printf '%-9s %-22s FAILED %4ss  %s (exit %s, %s)\n' "$tool" "$t" \
			"$secs" "$checks" "$r" "$log"
		rc=1
	fi
}

for t in $memcheck_tests; do
	run memcheck "$t" --leak-check=full \
		--errors-for-leak-kinds=definite,indirect \
		--show-leak-kinds=definite,indirect --track-origins=yes
done
for t in $helgrind_tests; do
	run helgrind "$t"
done
exit $rc
