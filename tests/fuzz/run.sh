#!/bin/sh
# Run libFuzzer targets of tests/fuzz: replay the committed corpus (seeds
# and kept crash inputs) once, then fuzz each target for SECONDS from it.
# New inputs go to a scratch corpus under work/ of the build tree; the
# source corpus is never written.  One line per target:
#   target  seconds  execs  execs/s  cov  ft  corpus  result
#
#   tests/fuzz/run.sh SECONDS BUILT-TARGET...
#
# FUZZ_JOBS (default 1): targets fuzzed at once.  FUZZ_NICE: run under
# nice -n FUZZ_NICE.  Exits non-zero when any target fails (a crash, an
# invariant, a sanitizer report, a leak, a timeout of 10 s per input); its
# log (work/TARGET.log) is printed and the input kept as work/crash-*.
set -u

if [ "${1:-}" = --one ]; then
	secs=$2
	shift 2
	set -- --one "$1"
else
	secs=${1:?usage: run.sh SECONDS TARGET...}
	shift
fi
src=$(cd "$(dirname "$0")" && pwd)
jobs=${FUZZ_JOBS:-1}
nice=${FUZZ_NICE:+nice -n $FUZZ_NICE}

# halt_on_error: UBSan's reports fail the run like ASan's
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1

one() {
	t=$1 name=$(basename "$1")
	dir=$(dirname "$t")/work
	corpus=$src/corpus/$name
	mkdir -p "$dir/$name"
	log=$dir/$name.log
	# 1. every committed input once (regressions first)
	if ! $nice "$t" -runs=0 "$corpus" >"$log.replay" 2>&1; then
		cat "$log.replay"
		printf '%-20s FAILED replaying %s\n' "$name" "$corpus"
		return 1
	fi
	# 2. fuzz from it
	$nice "$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=1024 \
		-print_final_stats=1 -artifact_prefix="$dir/" \
		"$dir/$name" "$corpus" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(printf '%s\n' "$last" | sed -n 's/.* corp: \([0-9]*\/[0-9]*[a-zA-Z]*\).*/\1/p')
	if [ $rc -ne 0 ]; then
		tail -n 60 "$log"
		printf '%-20s %6s %10s %8s %6s %6s %12s FAILED (%s)\n' "$name" \
			"$secs" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" \
			"${corp:-?}" "$log"
		return 1
	fi
	printf '%-20s %6s %10s %8s %6s %6s %12s ok\n' "$name" "$secs" \
		"${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}"
}

if [ "${1:-}" = --one ]; then	# one target (run by xargs -P below)
	one "$2" >"$(dirname "$2")/work.$(basename "$2").out" 2>&1
	exit 0
fi

printf '%-20s %6s %10s %8s %6s %6s %12s %s\n' target seconds execs \
	execs/s cov ft corpus result
printf '%s\n' "$@" | FUZZ_SECS=$secs xargs -P "$jobs" -n 1 sh -c \
	'"$0" --one "$FUZZ_SECS" "$1"' "$0"
rc=0
for t in "$@"; do
	out="$(dirname "$t")/work.$(basename "$t").out"
	cat "$out"
	grep -q ' ok$' "$out" || rc=1
	rm -f "$out"
done
exit $rc
