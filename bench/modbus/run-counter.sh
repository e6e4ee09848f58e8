#!/bin/bash
# bench/modbus/run-counter.sh - the built-in Modbus models' energy registers
# as meters in service show them, before and after the fix of issue #19
# (commit 548f625), without Slurm.
#
#   bench/modbus/run-counter.sh [OBJDIR]   OBJDIR: the build tree of this
#                                          checkout (default: _build/obj)
#
# "after" is OBJDIR's se-bench-counter (this tree).  "before" is the same
# source, bench/modbus/se-bench-counter.c, built against the code of the
# commit before the fix: a temporary git worktree at $SE_BENCH_BEFORE_REV
# (ead2501), configured in a build dir of its own, where make builds
# libsecore.la and libsemodbus.la and links the bench with that tree's own
# Makefile variables (the same compiler, warnings and flags as automake's
# rule for the bench in bench/Makefile.inc).  The worktree and its build
# are removed on exit.  Prints markdown tables on stdout (before, after,
# and a comparison) and writes the raw numbers as CSV.
#
# Environment:
#   SE_BENCH_SECONDS     simulated seconds per run (default 86400: a day)
#   SE_BENCH_JOBS        30 s jobs per run (default 200)
#   SE_BENCH_CSV_DIR     where the CSV files go (default: the current dir):
#                        counter-before-{day,jobs}.csv, counter-after-...
#   SE_BENCH_BEFORE_REV  the code before the fix (default ead2501)
#   SE_BENCH_BEFORE_DIR  worktree and build (default OBJDIR/../before)
#   SE_SLURM_SRC         the configured Slurm source tree for configure
#                        (default: OBJDIR/../slurm-src/slurm-wlm-*, else
#                        _build/slurm-src/slurm-wlm-*)
#
# Network: loopback only (the meter peer is a thread of the bench).
# About 40 s on 2 cores: 10 s to build "before", 15 s per run.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
OBJ=$(cd "${1:-$SRC/_build/obj}" && pwd)
AFTER=$OBJ/bench/modbus/se-bench-counter
REV=${SE_BENCH_BEFORE_REV:-ead2501}
WORK=${SE_BENCH_BEFORE_DIR:-$(dirname "$OBJ")/before}
SECS=${SE_BENCH_SECONDS:-86400}
JOBS=${SE_BENCH_JOBS:-200}
CSV=${SE_BENCH_CSV_DIR:-.}
JOBS_MAKE=${SE_BENCH_MAKE_JOBS:-2}

[ -x "$AFTER" ] || { echo "run-counter.sh: $AFTER missing: build first" >&2; exit 2; }
if [ -z "${SE_SLURM_SRC:-}" ]; then
	for d in "$(dirname "$OBJ")"/slurm-src/slurm-wlm-* \
		 "$SRC"/_build/slurm-src/slurm-wlm-*; do
		[ -d "$d" ] && { SE_SLURM_SRC=$d; break; }
	done
fi
[ -d "${SE_SLURM_SRC:-}" ] || { echo "run-counter.sh: no Slurm source tree (SE_SLURM_SRC)" >&2; exit 2; }
[ -e "$WORK" ] && { echo "run-counter.sh: $WORK exists (a run interrupted? remove it: git worktree remove --force $WORK/src; rm -rf $WORK)" >&2; exit 2; }
mkdir -p "$CSV"
CSV=$(cd "$CSV" && pwd)

LOG=$(mktemp /tmp/se-bench-counter.XXXXXX)
OK=0
cleanup() {
	if [ -d "$WORK/src" ]; then
		git -C "$SRC" worktree remove --force "$WORK/src" >>"$LOG" 2>&1 || true
	fi
	git -C "$SRC" worktree prune >>"$LOG" 2>&1 || true
	rm -rf "$WORK"
	[ "$OK" = 1 ] || tail -n 40 "$LOG" >&2
	rm -f "$LOG"
}
trap cleanup EXIT

# ----------------------------------------------------------------- before
echo "run-counter.sh: building the code before the fix ($REV) in $WORK" >&2
mkdir -p "$WORK/obj"
git -C "$SRC" worktree add --detach "$WORK/src" "$REV" >>"$LOG" 2>&1
BEFORE_COMMIT=$(git -C "$WORK/src" log -1 --format='%h, %cs')
(cd "$WORK/src" && autoreconf -fi) >>"$LOG" 2>&1
(cd "$WORK/obj" && "$WORK/src/configure" -q --with-slurm-src="$SE_SLURM_SRC" \
	--enable-werror) >>"$LOG" 2>&1
# The bench's rule, with the before tree's own Makefile variables; make
# builds the two libraries it links first.
make -s -C "$WORK/obj" -j"$JOBS_MAKE" -f Makefile -f - \
	BENCH_SRC="$SRC/bench/modbus/se-bench-counter.c" \
	se-bench-counter-before >>"$LOG" 2>&1 <<'EOF'
se-bench-counter-before: $(BENCH_SRC) libsemodbus.la libsecore.la
	$(LIBTOOL) --quiet --tag=CC --mode=link $(CC) -DHAVE_CONFIG_H \
		-I$(top_builddir) -I$(top_srcdir)/src/common \
		-I$(top_srcdir)/src/meters/modbus \
		-I$(top_srcdir)/src/acct_gather_energy/modbus \
		$(MODBUS_CFLAGS) $(SE_WARN_CFLAGS) $(PTHREAD_CFLAGS) \
		$(CFLAGS) $(LDFLAGS) -o $@ $(BENCH_SRC) \
		libsemodbus.la libsecore.la $(MODBUS_LIBS) $(PTHREAD_LIBS) -lm
EOF
BEFORE=$WORK/obj/se-bench-counter-before

# -------------------------------------------------------------------- run
AFTER_COMMIT=$(git -C "$SRC" log -1 --format='%h, %cs')
if ! git -C "$SRC" diff --quiet HEAD -- src/common src/meters/modbus; then
	AFTER_COMMIT="$AFTER_COMMIT (+ uncommitted changes in src/)"
fi

echo "## Modbus energy registers in service (issue #19)"
echo
echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores," \
	"Debian $(cat /etc/debian_version), Linux $(uname -r); load average" \
	"at start: $(cut -d' ' -f1-3 /proc/loadavg). $SECS simulated seconds" \
	"per row, $JOBS jobs of 30 s."
for label in before after; do
	if [ $label = before ]; then
		bin=$BEFORE
		what="before the fix: commit $BEFORE_COMMIT"
	else
		bin=$AFTER
		what="after the fix: commit $AFTER_COMMIT (this tree)"
	fi
	echo
	echo "### $label"
	echo
	echo "Code $what."
	echo
	"$bin" --seconds "$SECS" --jobs "$JOBS" --label "$label" \
		--csv "$CSV/counter-$label" 2>>"$LOG"
done
echo
echo "### before -> after"
echo
python3 - "$CSV/counter-before-day.csv" "$CSV/counter-after-day.csv" <<'EOF'
import csv, sys

def rows(path):
    with open(path) as f:
        return {(r["model"], r["load_w"], r["max_power_w"]): r
                for r in csv.DictReader(f)}

b, a = rows(sys.argv[1]), rows(sys.argv[2])
print("| model | load | MaxPower | day error | readings refused | 30 s jobs: median | 30 s jobs: worst | worst, power register alone |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")

def worst(r, p="job"):
    lo, hi = float(r[p + "_min_pct"]), float(r[p + "_max_pct"])
    return lo if abs(lo) > abs(hi) else hi

for k in b:
    if k not in a:
        continue
    x, y = b[k], a[k]
    mp = "100 kW" if float(k[2]) == 100000 else "%.0f W" % float(k[2])
    print("| %s | %s W | %s | %+.3f %% -> %+.3f %% | %s -> %s | %+.3f %% -> %+.3f %% | %+.2f %% -> %+.2f %% | %+.2f %% |" % (
        k[0], k[1], mp, float(x["error_pct"]), float(y["error_pct"]),
        x["refused"], y["refused"], float(x["job_median_pct"]),
        float(y["job_median_pct"]), worst(x), worst(y),
        worst(y, "power_only_job")))
EOF
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
OK=1
