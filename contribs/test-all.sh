#!/bin/sh
# Run every test of the suite on a Debian 12 machine, as root:
# build (contribs/build.sh), unit tests (make check), the unit tests again
# under AddressSanitizer + UndefinedBehaviorSanitizer, valgrind over the
# Slurm-free core, a short run of every libFuzzer target, make distcheck,
# then the integration tests (pytest) on the namespaced test cluster.
#
#   contribs/test-all.sh [pytest arguments...]
#
# SE_SLURM_RELEASE=24.11 (or 26.05): the same on that release's root
# (contribs/release/mkroot): the plugins and the fake NVML are built inside it
# (contribs/release/build), the test cluster runs its daemons, and pytest
# runs the list of issue #11 (tests/integration/conftest.py RELEASE_TESTS).
# The host build still provides the Slurm-free tools the tests run on the
# host (simulators, se-trace); unit tests and distcheck are the host's run's.
# A release whose Slurm source cannot be fetched (26.05 on this mirror) runs
# the cluster's own tests with stock plugins; the others are skipped saying so.
#
# Without SE_SLURM_RELEASE, the host's run is followed by one such run for
# each release of SE_TEST_RELEASES (default "24.11 26.05", less the host's
# own; empty: none), so this one command proves every supported release.
#
# The sanitizer, valgrind and fuzz stages are the host's run's only (each a
# one-line summary; a failure makes the exit non-zero, the next stages still
# run): SE_SKIP_ASAN=1, SE_SKIP_VALGRIND=1, SE_SKIP_FUZZ=1 skip them.
#
# Exits non-zero when any stage fails; prints Check's and pytest's summaries.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${SE_BUILD_DIR:-$top/_build}
export SE_BUILD_DIR="$build"

say() { printf '\n== %s\n' "$*"; }
rc=0
# seconds since $1, as "N min S s"
took() { t=$(( $(date +%s) - $1 )); printf '%d min %02d s' $((t / 60)) $((t % 60)); }

# (no pipe into tail: sh has no pipefail, and a failed build must stop here)
out=$("$top/contribs/build.sh")
plugin_dir=$(printf '%s\n' "$out" | tail -n 1)
export SE_PLUGIN_DIR="$plugin_dir"
export SE_BIN_DIR="$build/stage/bin"
# the fake libnvidia-ml.so.1 (a test double, built in tests/gpu/, never installed)
export SE_FAKE_NVML_DIR="$build/obj/tests/gpu/.libs"

release=${SE_SLURM_RELEASE:-22.05}
if [ "$release" != 22.05 ]; then
	export SE_SLURM_RELEASE="$release"
	rdir=${SE_RELEASES_DIR:-$top/_build/releases}/$release
	mkroot_log=$build/mkroot-$release.log
	"$top/contribs/release/mkroot" "$release" >"$mkroot_log" 2>&1 || :
	# A release whose source this mirror lacks (doc/releases-survey.md
	# section 2: 26.05) runs on stock plugins; any other failure to make
	# its root or fetch its source is an error, never a quiet fallback.
	if [ ! -f "$rdir/slurm-src/.pkgver" ]; then
		case " ${SE_RELEASES_NO_SOURCE-26.05} " in
		*" $release "*) ;;
		*)	tail -n 30 "$mkroot_log" >&2
			echo "test-all: contribs/release/mkroot $release failed (log: $mkroot_log)" >&2
			exit 1 ;;
		esac
	fi
	if [ -f "$rdir/slurm-src/.pkgver" ]; then
		say "Slurm $release: plugins built in its root (contribs/release/build)"
		out=$("$top/contribs/release/build" "$release")
		SE_PLUGIN_DIR=$(printf '%s\n' "$out" | tail -n 1)
		SE_FAKE_NVML_DIR="$rdir/obj/tests/gpu/.libs"
	else
		say "Slurm $release: no source (doc/releases-survey.md), stock plugins only"
		SE_PLUGIN_DIR=
		export SE_RELEASE_NO_PLUGINS="no Slurm $release source to build the plugins against (doc/releases-survey.md section 2)"
	fi
	[ -x "$rdir/root/usr/sbin/slurmd" ] || { echo "no root for Slurm $release" >&2; exit 1; }
	SE_SKIP_DISTCHECK=1 SE_SKIP_UNIT=1
fi

if [ "${SE_SKIP_UNIT:-0}" != 1 ]; then
say "unit tests (make check)"
cd "$build/obj"
if ! make -s check; then
	for f in $(find . -name 'test*.log'); do echo "--- $f"; cat "$f"; done
	exit 1
fi
for f in $(find tests -name 'test*.log' | sort); do
	grep -h '^[0-9]*%: Checks' "$f" | sed "s|^|$(basename "$f" .log): |"
done
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
	slurm_src=$("$top/contribs/get-slurm-source.sh" "$build/slurm-src" | tail -n 1)
	mkdir -p "$build/asan"
	cd "$build/asan"
	if { [ -f Makefile ] && [ ! "$top/configure" -nt config.status ]; } ||
		"$top/configure" -q --with-slurm-src="$slurm_src" \
			--prefix="$build/asan/stage" CFLAGS="$san" \
			LDFLAGS="-fsanitize=address,undefined" >configure.log 2>&1; then
		make -s -j"$(nproc)" check >check.log 2>&1 && asan_ok=1 || asan_ok=0
		pass=$(find . -name '*.trs' -exec grep -l '^:test-result: PASS' {} + | wc -l)
		fail=$(find . -name '*.trs' -exec grep -l '^:test-result: \(FAIL\|ERROR\)' {} + | wc -l)
		skip=$(find . -name '*.trs' -exec grep -l '^:test-result: SKIP' {} + | wc -l)
		if [ $asan_ok = 1 ] && [ "$fail" = 0 ]; then
			echo "asan: make check clean: $pass passed, $skip skipped ($(took $t0))"
		else
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
	else
		printf '%s\n' "$vg"
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
	else
		tail -n 80 fuzz-check.log
		echo "fuzz: FAILED ($(took $t0); $build/obj/fuzz-check.log, inputs in $build/obj/tests/fuzz/work/)"
		rc=1
	fi
fi
cd "$here"

if [ "${SE_SKIP_DISTCHECK:-0}" != 1 ]; then
	say "make distcheck"
	make -s distcheck >distcheck.log 2>&1 || { tail -n 60 distcheck.log; exit 1; }
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
	fi
fi

say "pymodbus (an independent Modbus server for the tests) in a venv"
venv="$build/venv"
if ! "$venv/bin/python" -c 'import pymodbus' 2>/dev/null; then
	/usr/bin/python3 -m venv --system-site-packages "$venv"
	"$venv/bin/pip" install -q --disable-pip-version-check "pymodbus==3.16.1"
fi
export SE_PYMODBUS_PYTHON="$venv/bin/python"

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
# shellcheck disable=SC2086 # $xdist: words
/usr/bin/python3 -m pytest -v -rs --durations=40 $xdist tests/integration "$@" || rc=$?

# The Debian packages (debian/, contribs/packages/): built once more (one
# compilation, no make check), installed on the host, where the cluster's
# nodes find them, a smoke test run from them (a job per meter plugin with
# its energy, a --gres=gpu:2 job, a policy-chosen frequency), then purged,
# and nothing may be left.  SE_SKIP_PACKAGES=1 skips it.
if [ -z "${SE_SLURM_RELEASE:-}" ] && [ "${SE_SKIP_PACKAGES:-0}" != 1 ]; then
	say "Debian packages: build, install, smoke test, purge (contribs/packages)"
	if debs=$("$top/contribs/packages/build" "$build/debs"); then
		"$top/contribs/packages/smoke" "$(printf '%s\n' "$debs" | tail -n 1)" || rc=1
	else
		rc=1
	fi
fi

# Then the other releases, each on its own root (issue #11's list), unless
# this run is one of them: SE_TEST_RELEASES (default "24.11 26.05"; empty:
# none), less the host's own release.
if [ -z "${SE_SLURM_RELEASE:-}" ]; then
	host=$(slurmd -V | sed -E 's/^[^0-9]*([0-9]+\.[0-9]+).*/\1/')
	for r in ${SE_TEST_RELEASES-24.11 26.05}; do
		[ "$r" = "$host" ] && continue
		say "Slurm $r: the release's own root and cluster"
		SE_SLURM_RELEASE=$r "$top/contribs/test-all.sh" "$@" || rc=1
	done
fi
exit $rc
