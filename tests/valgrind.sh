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
# tests/valgrind.supp (each one commented).
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
test_energy_query
test_power_trace
test_sampler
test_sampler_log
test_se_log
test_se_resolve
test_modbus_codec
test_bmc_dcmi
test_rrd_series
test_cpufreq_model
test_cpufreq_policy
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
	[ -x "$bin" ] || { printf '%-9s %-22s not built\n' "$tool" "$t"; return; }
	log=$out/$t.$tool.log
	start=$(date +%s)
	"$obj/libtool" --mode=execute valgrind --tool="$tool" -q \
		--error-exitcode=99 --suppressions="$supp" \
		--log-file="$log" "$@" "$bin" >"$log.out" 2>&1
	r=$?
	secs=$(( $(date +%s) - start ))
	checks=$(grep -ho '^[0-9]*%: Checks: [0-9]*, Failures: [0-9]*, Errors: [0-9]*' "$log.out")
	errors=$(grep -c '^==[0-9]*== [A-Z]' "$log" 2>/dev/null)
	if [ $r -eq 0 ]; then
		printf '%-9s %-22s clean  %4ss  %s\n' "$tool" "$t" "$secs" "$checks"
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
