#!/bin/sh
# Run every test of the suite on a Debian 12 (or 13) machine, as root:
# build (contribs/build.sh), unit tests (make check), the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer, valgrind over the
# Slurm-free core, a short run of every libFuzzer target, make distcheck,
# then the integration tests (pytest) on the namespaced test cluster.
#
#   contribs/test-all.sh [pytest arguments...]
#
# SE_SLURM_RELEASE=24.11: the same on that Debian release's root
# (contribs/release/mkroot): the plugins and the fake NVML are built inside it
# (contribs/release/build), make check runs inside it, the test cluster runs
# its daemons, and pytest runs the release list (tests/integration/conftest.py
# RELEASE_TESTS).
# SE_SLURM_RELEASE=26.05.3 (a full version): Slurm built from its upstream
# tarball into a prefix on the host (contribs/release/slurm-from-tarball;
# SE_SLURM_TARBALLS names the directory of the tarballs), the suite built
# against it, make check, and the release list on a cluster of its daemons.
# The host build still provides the Slurm-free tools the tests run on the
# host (simulators, se-trace); distcheck is the host's run's.  A release that
# cannot be made fails the run: none falls back to skips.
#
# Without SE_SLURM_RELEASE, the host's run is followed by one such run for
# each release of SE_TEST_RELEASES (default "24.11 26.05.3", less the host's
# own; empty: none), so this one command proves every supported release.
# There a release built from its tarball runs its list but not its make
# check (the "make check" stage says "off"): the matrix runs that
# (contribs/release/matrix), and CI's minutes go to the clusters.
# SE_SKIP_UNIT=1 leaves out make check of any run.
#
# The sanitizer, valgrind and fuzz stages are the host's run's only (each a
# one-line summary; a failure makes the exit non-zero, the next stages still
# run): SE_SKIP_ASAN=1, SE_SKIP_VALGRIND=1, SE_SKIP_FUZZ=1 skip them;
# SE_SKIP_INTEGRATION=1 skips pytest (contribs/release/matrix --no-list).
#
# Exits non-zero when any stage fails; prints Check's and pytest's summaries.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${SE_BUILD_DIR:-$top/_build}
export SE_BUILD_DIR="$build"
# The tarballs' directory made absolute: the README names it relative to the
# clone (../shared/slurm-src), and the stages run from other directories
# (the releases made ahead, in the background, ran from _build/obj and did
# not find it).
if [ -n "${SE_SLURM_TARBALLS:-}" ] && [ -d "$SE_SLURM_TARBALLS" ]; then
	SE_SLURM_TARBALLS=$(cd "$SE_SLURM_TARBALLS" && pwd)
fi

say() { printf '\n== %s\n' "$*"; }
rc=0
# Each stage's outcome, one line a stage, for contribs/release/matrix and the
# summary at the end: $build/stages/RELEASE.tsv (stage, ok|FAIL, seconds,
# detail), started afresh by each run of a release.
# the releases a host run goes on to (empty: none)
test_releases=${SE_TEST_RELEASES-24.11 26.05.3}
# The host's own Slurm release (its slurmd -V: 22.05 on Debian 12, 24.11 on
# Debian 13), the packages installed first so that a fresh machine has one.
"$top/contribs/install-deps.sh" >&2
host=$(slurmd -V | sed -E 's/^[^0-9]*([0-9]+\.[0-9]+).*/\1/')
stages_dir=$build/stages
stage_file=$stages_dir/${SE_SLURM_RELEASE:-$host}.tsv
record() { # STAGE ok|FAIL T0 DETAIL
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$(( $(date +%s) - $3 ))" "$4" \
		>>"$stage_file"
}
# The configure and build stages of the build in OBJ: both ok, or which of
# the two failed (configure wrote its Makefile: it was make).
record_build() { # ok|FAIL OBJ T0
	if [ "$1" = ok ]; then
		record configure ok "$3" "--enable-all"
		record build ok "$3" "-Werror"
	elif [ -f "$2/Makefile" ]; then
		record configure ok "$3" ""
		record build FAIL "$3" "make (-Werror)"
	else
		record configure FAIL "$3" "$2/config.log"
	fi
}
# "N passed, N failed, N skipped" of the automake test results under $1
trs_counts() {
	for r in PASS FAIL SKIP; do
		find "$1" -name '*.trs' -exec grep -l "^:test-result: $r" {} + 2>/dev/null | wc -l
	done | tr '\n' ' ' | { read -r p f s || :; echo "$p passed, $f failed, $s skipped"; }
}
# seconds since $1, as "N min S s"
took() { t=$(( $(date +%s) - $1 )); printf '%d min %02d s' $((t / 60)) $((t % 60)); }

mkdir -p "$stages_dir"
: >"$stage_file"
# (no pipe into tail: sh has no pipefail, and a failed build must stop here)
t0=$(date +%s)
out=$(env -u SE_SLURM_PREFIX -u SE_SLURM_SRC "$top/contribs/build.sh") || {
	record host-build FAIL "$t0" "contribs/build.sh (Slurm $host, the host's)"
	exit 1
}
if [ "${SE_SLURM_RELEASE:-$host}" = "$host" ]; then
	record slurm ok "$t0" "Debian $(cut -d. -f1 /etc/debian_version) package (the host's)"
	record_build ok "$build/obj" "$t0"
fi
plugin_dir=$(printf '%s\n' "$out" | tail -n 1)
export SE_PLUGIN_DIR="$plugin_dir"
export SE_BIN_DIR="$build/stage/bin"
# the fake libnvidia-ml.so.1 (a test double, built in tests/gpu/, never installed)
export SE_FAKE_NVML_DIR="$build/obj/tests/gpu/.libs"

release=${SE_SLURM_RELEASE:-$host}
# Where the unit tests of this run's build run: the host, or inside the
# release's root ($run_in); in the build dir $unit_dir.
unit_dir=$build/obj run_in=
case "$release" in
"$host") ;;
*.*.*)
	# A Slurm built from its upstream tarball into a prefix on the host,
	# as most sites build it; the suite built against it.  No tarball, no
	# build: the run fails (a release never falls back to skips).
	say "Slurm $release: built from its tarball (contribs/release/slurm-from-tarball)"
	t0=$(date +%s)
	[ -n "${SE_SLURM_TARBALLS:-}" ] || {
		echo "test-all: Slurm $release is built from its tarball: set SE_SLURM_TARBALLS to the directory holding slurm-$release.tar.xz (.ci/run: ../shared/slurm-src)" >&2
		record slurm FAIL "$t0" "SE_SLURM_TARBALLS not set"
		exit 1
	}
	out=$("$top/contribs/release/slurm-from-tarball" "$release") || {
		record slurm FAIL "$t0" "contribs/release/slurm-from-tarball $release"
		exit 1
	}
	SE_SLURM_PREFIX=$(printf '%s\n' "$out" | sed -n 's/^SE_SLURM_PREFIX=//p')
	SE_SLURM_SRC=$(printf '%s\n' "$out" | sed -n 's/^SE_SLURM_SRC=//p')
	export SE_SLURM_PREFIX SE_SLURM_SRC
	echo "Slurm $release in $SE_SLURM_PREFIX ($(took $t0))"
	record slurm ok "$t0" "from its tarball, $(sed -n 's/^seconds_make /make /p' "${SE_SLURM_PREFIX%/prefix}/done") s when built"
	say "Slurm $release: the suite built against it (contribs/build.sh)"
	t0=$(date +%s)
	rbuild=$build/src-releases/$release
	out=$(SE_BUILD_DIR="$rbuild" "$top/contribs/build.sh") || {
		record_build FAIL "$rbuild/obj" "$t0"
		exit 1
	}
	record_build ok "$rbuild/obj" "$t0"
	SE_PLUGIN_DIR=$(printf '%s\n' "$out" | tail -n 1)
	SE_FAKE_NVML_DIR=$rbuild/obj/tests/gpu/.libs
	unit_dir=$rbuild/obj
	# the release's own programs (test_powercap_records: its daemon)
	export SE_RELEASE_OBJ="$unit_dir"
	echo "built in $rbuild ($(took $t0))"
	# the cluster and the tests take the release from the prefix's slurmd
	export SE_SLURM_RELEASE="${release%.*}"
	SE_SKIP_DISTCHECK=1
	;;
*)
	# A Debian release in a root of its own (contribs/release/mkroot): its
	# packaged Slurm, the suite built inside the root.  A root or source
	# that cannot be made fails the run.
	export SE_SLURM_RELEASE="$release"
	rdir=${SE_RELEASES_DIR:-$top/_build/releases}/$release
	mkroot_log=$build/mkroot-$release.log
	t0=$(date +%s)
	"$top/contribs/release/mkroot" "$release" >"$mkroot_log" 2>&1 || {
		tail -n 30 "$mkroot_log" >&2
		echo "test-all: contribs/release/mkroot $release failed (log: $mkroot_log)" >&2
		record slurm FAIL "$t0" "contribs/release/mkroot $release"
		exit 1
	}
	record slurm ok "$t0" "Debian package in its root"
	say "Slurm $release: plugins built in its root (contribs/release/build)"
	t0=$(date +%s)
	out=$("$top/contribs/release/build" "$release") || {
		record_build FAIL "$rdir/obj" "$t0"
		exit 1
	}
	record_build ok "$rdir/obj" "$t0"
	SE_PLUGIN_DIR=$(printf '%s\n' "$out" | tail -n 1)
	SE_FAKE_NVML_DIR="$rdir/obj/tests/gpu/.libs"
	unit_dir=$rdir/obj
	export SE_RELEASE_OBJ="$unit_dir"
	run_in="$top/contribs/release/in-root $release"
	[ -x "$rdir/root/usr/sbin/slurmd" ] || { echo "no root for Slurm $release" >&2; exit 1; }
	SE_SKIP_DISTCHECK=1
	;;
esac

if [ "${SE_SKIP_UNIT:-0}" != 1 ]; then
say "unit tests (make check${SE_SLURM_RELEASE:+, Slurm $release})"
t0=$(date +%s)
cd "$unit_dir"
# A test per CPU, as the sanitizer run below: the timing-sensitive tests
# hold under that load (a tighter bound than the CI machine's idle CPU).
# shellcheck disable=SC2086 # $run_in: words (empty on the host)
if ! $run_in make -s -j"$(nproc)" check; then
	for f in $(find . -name 'test*.log'); do echo "--- $f"; cat "$f"; done
	record "make check" FAIL "$t0" "$(trs_counts .)"
	exit 1
fi
for f in $(find tests -name 'test*.log' | sort); do
	grep -h '^[0-9]*%: Checks' "$f" | sed "s|^|$(basename "$f" .log): |"
done
# A unit test that skips (exit 77) proves nothing: none may.
skipped=$(find . -name '*.trs' -exec grep -l '^:test-result: SKIP' {} + 2>/dev/null || :)
if [ -n "$skipped" ]; then
	echo "make check: skipped (exit 77), which no unit test may:" $skipped >&2
	record "make check" FAIL "$t0" "$(trs_counts .)"
	exit 1
fi
record "make check" ok "$t0" "$(trs_counts .)"
else
	record "make check" off "$(date +%s)" "${SE_SKIP_UNIT_WHY:-SE_SKIP_UNIT=1}"
fi

here=$(pwd)
# The unit tests once more, built with AddressSanitizer and UBSan (any report
# fails: -fno-sanitize-recover) in a build dir of their own, configured as
# contribs/build.sh configures obj/ but without -Werror: gcc's -O1 with the
# sanitizers' instrumentation warns where -O2 does not (format-truncation in
# gres_gpu.c); obj/ is the build that holds the code to its warnings.  The
# leaks kept on purpose: tests/lsan.supp; bmc-sim and test_doc_examples
# preload the ASan runtime into ipmi_sim, slurmd and srun, which load the
# instrumented modules.
if [ -z "${SE_SLURM_RELEASE:-}" ] && [ "${SE_SKIP_ASAN:-0}" != 1 ]; then
	say "unit tests under AddressSanitizer + UBSan ($build/asan)"
	t0=$(date +%s)
	san="-O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
	slurm_src=$("$top/contribs/get-slurm-source.sh" "$build/slurm-src")
	# the tree obj/ was configured from (the checkout, or its copy)
	. "$top/contribs/lib/source-tree.sh"
	src=$(se_source_tree "$top" "$build")
	[ "$(cat "$build/asan/.se-source-tree" 2>/dev/null || echo "$top")" = "$src" ] ||
		rm -rf "$build/asan"
	mkdir -p "$build/asan"
	cd "$build/asan"
	if { [ -f Makefile ] && [ ! "$src/configure" -nt config.status ]; } ||
		{ echo "$src" >.se-source-tree && "$src/configure" -q --with-slurm-src="$slurm_src" \
			--prefix="$build/asan/stage" CFLAGS="$san" \
			LDFLAGS="-fsanitize=address,undefined" >configure.log 2>&1; }; then
		make -s -j"$(nproc)" check >check.log 2>&1 && asan_ok=1 || asan_ok=0
		pass=$(find . -name '*.trs' -exec grep -l '^:test-result: PASS' {} + | wc -l)
		fail=$(find . -name '*.trs' -exec grep -l '^:test-result: \(FAIL\|ERROR\)' {} + | wc -l)
		skip=$(find . -name '*.trs' -exec grep -l '^:test-result: SKIP' {} + | wc -l)
		if [ $asan_ok = 1 ] && [ "$fail" = 0 ] && [ "$skip" = 0 ]; then
			echo "asan: make check clean: $pass passed, $skip skipped ($(took $t0))"
			record asan ok "$t0" "$pass passed, $fail failed, $skip skipped"
		else
			record asan FAIL "$t0" "$pass passed, $fail failed, $skip skipped"
			for f in $(find . -name '*.trs' -exec grep -l '^:test-result: \(FAIL\|ERROR\)' {} +); do
				echo "--- ${f%.trs}.log"; tail -n 80 "${f%.trs}.log"
			done
			[ "$fail" != 0 ] || tail -n 40 check.log
			echo "asan: make check FAILED: $fail failed, $pass passed ($(took $t0); $build/asan)"
			rc=1
		fi
	else
		tail -n 40 configure.log
		echo "asan: configure FAILED ($build/asan/configure.log)"
		record asan FAIL "$t0" "configure"
		rc=1
	fi
fi

# valgrind over the unit tests of the Slurm-free core (memcheck; helgrind on
# the sampler and the energy query server), in obj/ (built by make check).
if [ -z "${SE_SLURM_RELEASE:-}" ] && [ "${SE_SKIP_VALGRIND:-0}" != 1 ]; then
	say "valgrind: memcheck and helgrind (tests/valgrind.sh)"
	t0=$(date +%s)
	if vg=$(sh "$top/tests/valgrind.sh" "$build/obj"); then
		echo "valgrind: $(printf '%s\n' "$vg" | grep -c ' clean ') runs clean ($(took $t0))"
		record valgrind ok "$t0" "$(printf '%s\n' "$vg" | grep -c ' clean ') runs clean"
	else
		printf '%s\n' "$vg"
		record valgrind FAIL "$t0" "tests/valgrind.sh"
		echo "valgrind: FAILED ($(took $t0); logs in $build/obj/tests/valgrind/)"
		rc=1
	fi
fi

# Every libFuzzer target: its corpus (seeds, kept crash inputs) replayed,
# then 10 s of fuzzing each (tests/fuzz/README.md; the long runs are in
# BENCHMARKS.md).
if [ -z "${SE_SLURM_RELEASE:-}" ] && [ "${SE_SKIP_FUZZ:-0}" != 1 ]; then
	say "fuzz: corpus replay and 10 s per target (make fuzz-check)"
	t0=$(date +%s)
	cd "$build/obj"
	if FUZZ_JOBS=$(nproc) make -s fuzz-check FUZZ_SECONDS=10 >fuzz-check.log 2>&1; then
		grep -E '^(target|fuzz_)' fuzz-check.log || :
		echo "fuzz: $(grep -c ' ok$' fuzz-check.log) targets ok ($(took $t0))"
		record fuzz ok "$t0" "$(grep -c ' ok$' fuzz-check.log) targets ok"
	else
		tail -n 80 fuzz-check.log
		record fuzz FAIL "$t0" "make fuzz-check"
		echo "fuzz: FAILED ($(took $t0); $build/obj/fuzz-check.log, inputs in $build/obj/tests/fuzz/work/)"
		rc=1
	fi
fi
cd "$here"

if [ "${SE_SKIP_DISTCHECK:-0}" != 1 ]; then
	say "make distcheck"
	t0=$(date +%s)
	# in the build (the unit stage's cd is skipped with SE_SKIP_UNIT=1,
	# which left this in the checkout: "No rule to make target 'distcheck'")
	cd "$unit_dir"
	# The tarball is built, installed, uninstalled and cleaned out of tree;
	# its unit tests are the sources make check ran above (every tracked
	# file is in the tarball, checked below), so they do not run a third
	# time (TESTS= on the command line reaches distcheck's inner make).
	make -s distcheck TESTS= >distcheck.log 2>&1 || {
		tail -n 60 distcheck.log
		record distcheck FAIL "$t0" "make distcheck"
		exit 1
	}
	grep -E 'archives ready|ready for distribution' -A2 distcheck.log || true
	# distcheck builds what the tarball holds, so a file only scripts or
	# tests use (no rule names it) can go missing unseen: every tracked
	# file but the CI hook and the Debian packaging must be in the tarball.
	if git -C "$top" rev-parse --git-dir >/dev/null 2>&1; then
		tarball=$(ls -t slurm-energy-plugins-*.tar.* | head -n 1)
		tar tf "$tarball" | sed 's|^[^/]*/||' | sort >distfiles.txt
		missing=$(git -C "$top" ls-files | grep -Ev '^(\.ci/|\.gitignore$|debian/)' |
			sort | comm -23 - distfiles.txt)
		if [ -n "$missing" ]; then
			echo "tracked files missing from $tarball (add them to EXTRA_DIST):" >&2
			printf '  %s\n' $missing >&2
			exit 1
		fi
		echo "every tracked file is in $tarball"
		record distcheck ok "$t0" "every tracked file in the tarball"
	else
		# (a tree without git, e.g. from git archive: nothing to compare)
		record distcheck ok "$t0" "no git here: tracked files not compared"
	fi
fi

# The releases built from their tarballs cost minutes of CPU to make (Slurm,
# then the suite against it), a Debian release's root minutes of unpacking,
# the Debian packages a compilation, and the integration tests below mostly
# wait on the clock: make them meanwhile, on the CPU time they leave idle.
# The release's own stage later finds them made (slurm-from-tarball waits
# on a lock while a build of the same tarball runs; build.sh is then
# incremental; mkroot reuses a complete root) and records its stages as
# usual; the packages' stage waits for their build.
# SCHED_IDLE (and the lowest I/O class): the builds only get CPU time the
# tests leave unused, so their timing is as without them.
idle="chrt --idle 0 ionice -c 3 nice -n 19"
bg_pid= pkg_pid=
if [ -z "${SE_SLURM_RELEASE:-}" ]; then
	(
	for r in $test_releases; do
		# the host's own (24.11 on Debian 13) has no root to make
		[ "$r" = "$host" ] && continue
		case $r in
		*.*.*)
			[ -n "${SE_SLURM_TARBALLS:-}" ] || continue
			out=$($idle "$top/contribs/release/slurm-from-tarball" "$r") || continue
			SE_SLURM_PREFIX=$(printf '%s\n' "$out" | sed -n 's/^SE_SLURM_PREFIX=//p') \
			SE_SLURM_SRC=$(printf '%s\n' "$out" | sed -n 's/^SE_SLURM_SRC=//p') \
			SE_BUILD_DIR="$build/src-releases/$r" \
				$idle "$top/contribs/build.sh" || :
			;;
		*)
			$idle "$top/contribs/release/mkroot" "$r" || :
			;;
		esac
	done
	) >"$build/releases-ahead.log" 2>&1 &
	bg_pid=$!
	if [ "${SE_SKIP_PACKAGES:-0}" != 1 ]; then
		rm -f "$build/debs.list"
		$idle "$top/contribs/packages/build" "$build/debs" \
			>"$build/debs.list" 2>"$build/debs-build.log" &
		pkg_pid=$!
	fi
fi

say "pymodbus, redfish-service-validator, sushy-tools (independent peers for the tests) in a venv"
venv="$build/venv"
# pinned: tests/integration/test_redfish_sim.py drives the validator's library
# (contribs/redfish-sim/validate_uris.py) and compares with sushy-static
if ! "$venv/bin/python" -c 'import pymodbus, redfish_service_validator, sushy_tools' 2>/dev/null; then
	/usr/bin/python3 -m venv --system-site-packages "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check "pymodbus==3.16.1" \
		"redfish-service-validator==3.1.8" "sushy-tools==2.2.0"
fi
export SE_PYMODBUS_PYTHON="$venv/bin/python"
export SE_REDFISH_PYTHON="$venv/bin/python"

say "snmpsim (a real SNMP agent for the SNMP tests) in a venv of its own"
# pinned; its own venv: snmpsim's AES (v3 authPriv) needs cryptography >= 43,
# and the peers' venv above sees Debian's python3-cryptography 38
snmp_venv="$build/snmp-venv"
if ! "$snmp_venv/bin/python" -c 'import snmpsim, snmpsim_data' 2>/dev/null; then
	/usr/bin/python3 -m venv "$snmp_venv"
	"$snmp_venv/bin/pip" install -q --disable-pip-version-check \
		"snmpsim==1.2.2" "snmpsim-data==1.0.1" "pysnmp==7.1.30" \
		"cryptography==50.0.2"
fi
export SE_SNMPSIM_PYTHON="$snmp_venv/bin/python"

if [ "${SE_SKIP_INTEGRATION:-0}" != 1 ]; then
say "integration tests (pytest on the test cluster${SE_SLURM_RELEASE:+, Slurm $SE_SLURM_RELEASE})"
cd "$top"
# Two clusters side by side (pytest-xdist workers, a test file each at a
# time, tests/integration/conftest.py gives each its own names and ports):
# the suite is mostly jobs waiting on the clock, so this halves its time
# on two cores.  SE_TEST_WORKERS=1 runs one cluster, as before.
workers=${SE_TEST_WORKERS:-2} xdist=
if [ "$workers" -gt 1 ] && /usr/bin/python3 -c 'import xdist' 2>/dev/null; then
	xdist="-n $workers --dist loadfile"
fi
# Every skip and xfail must be on the reviewed list (tests/skip-budget.txt),
# or the run fails (conftest.py prints the budget's table).
export SE_SKIP_BUDGET="$top/tests/skip-budget.txt"
junit=${stage_file%.tsv}-pytest.xml
t0=$(date +%s) prc=0
# shellcheck disable=SC2086 # $xdist: words
/usr/bin/python3 -m pytest -v -rs --durations=40 $xdist --junitxml="$junit" \
	tests/integration "$@" || prc=$?
# The counts, and the failed tests by name: the summary table is the end
# of the log, what a truncated CI log still shows.
counts=$(/usr/bin/python3 -c '
import sys, xml.etree.ElementTree as ET
n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
root = ET.parse(sys.argv[1]).getroot()
for s in root.iter("testsuite"):
    for k in n:
        n[k] += int(s.get(k, 0))
failed = ["%s::%s" % (c.get("classname", "").split(".")[-1], c.get("name"))
          for c in root.iter("testcase")
          if c.find("failure") is not None or c.find("error") is not None]
print("%d passed, %d failed, %d skipped%s" % (
    n["tests"] - n["failures"] - n["errors"] - n["skipped"],
    n["failures"] + n["errors"], n["skipped"],
    (": " + ", ".join(failed)) if failed else ""))' "$junit" 2>/dev/null || echo "no result")
if [ "$prc" = 0 ]; then
	record pytest ok "$t0" "$counts"
else
	record pytest FAIL "$t0" "$counts (pytest exit $prc)"
	rc=1
fi
fi

# The Debian packages (debian/, contribs/packages/): built once more (one
# compilation, no make check), installed on the host, where the cluster's
# nodes find them, a smoke test run from them (a job per meter plugin with
# its energy, a --gres=gpu:2 job, a policy-chosen frequency), then purged,
# and nothing may be left.  SE_SKIP_PACKAGES=1 skips it.
# What was made ahead is done before the packages are installed: mkroot
# may install mmdebstrap through apt, which the install would wait on.
if [ -z "${SE_SLURM_RELEASE:-}" ] && [ -n "$bg_pid" ]; then
	wait "$bg_pid" || :
fi
if [ -z "${SE_SLURM_RELEASE:-}" ] && [ "${SE_SKIP_PACKAGES:-0}" != 1 ]; then
	say "Debian packages: build, install, smoke test, purge (contribs/packages)"
	t0=$(date +%s)
	# built above, beside the tests ($build/debs-build.log)
	if wait "$pkg_pid" && debs=$(cat "$build/debs.list") &&
		"$top/contribs/packages/smoke" "$(printf '%s\n' "$debs" | tail -n 1)"; then
		record packages ok "$t0" "build, install, smoke, purge"
	else
		tail -n 60 "$build/debs-build.log" >&2
		record packages FAIL "$t0" "contribs/packages/build, smoke"
		rc=1
	fi
fi

# Then the other releases, each on its own root or prefix (the release list),
# unless this run is one of them: SE_TEST_RELEASES (default "24.11 26.05.3";
# empty: none), less the host's own release.
if [ -z "${SE_SLURM_RELEASE:-}" ]; then
	for r in $test_releases; do
		[ "$r" = "$host" ] && continue
		say "Slurm $r: the release's own root and cluster"
		# A release built from its tarball: its make check is the
		# matrix's (contribs/release/matrix, the README's table), not
		# CI's: CI's minutes go to the list on its cluster.
		unit=0
		case $r in *.*.*) unit=1 ;; esac
		SE_SKIP_UNIT=$unit SE_SKIP_UNIT_WHY="contribs/release/matrix runs it" \
			SE_SLURM_RELEASE=$r "$top/contribs/test-all.sh" "$@" || rc=1
	done
	# One table of every stage of every release this run made.
	say "summary (stage, result, seconds, detail)"
	for r in $host $(printf '%s\n' $test_releases | grep -vxF "$host"); do
		f=$stages_dir/$r.tsv
		[ -f "$f" ] || { printf '%-8s (no stage ran)\n' "$r"; rc=1; continue; }
		awk -F'\t' -v r="$r" '{ printf "%-8s %-11s %-4s %5s s  %s\n", r, $1, $2, $3, $4 }' "$f"
	done
fi
exit $rc
