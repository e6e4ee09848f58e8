#!/bin/sh
# bench/report/run.sh - slurm-energy-report on a synthetic month of one
# million job lines (bench/report/gen.py, seed 32), with a weekly
# time-of-use tariff and an hourly grid intensity series, every grouping
# (--by account,user,partition,qos,nodes) and --top 10.  A table on
# stdout: jobs, wall seconds, peak RSS, microseconds per job line.
#
#   bench/report/run.sh [JOBS] [WORKDIR]
#
# Three rows:
#   file, Unix times  --sacct-file with Start/End as Unix seconds (what the
#                     tool's own sacct runs print: SLURM_TIME_FORMAT=%s)
#   file, local %FT%T --sacct-file as a plain `sacct -P` saves it
#   sacct, 31 days    the tool runs a fake sacct once per day, which prints
#                     what `sacct -S DAY -E DAY+1` would (every job that
#                     ran in the day: jobs over several days come again;
#                     split_days.py), so the chunked path and its
#                     deduplication are measured, not sacct itself
# TZ is Europe/Paris (the month holds the end of summer time, 25 Oct),
# unless TZ is set.  Generating the data (~1 min) is not timed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$here/../..
tool=$top/contribs/report/slurm-energy-report
jobs=${1:-1000000}
work=${2:-}
if [ -z "$work" ]; then
	work=$(mktemp -d)
	trap 'rm -rf "$work"' EXIT
fi
TZ=${TZ:-Europe/Paris}
export TZ
py=/usr/bin/python3

$py "$here/gen.py" "$work/epoch" "$jobs"
$py "$here/gen.py" "$work/iso" "$jobs" --iso
$py "$here/split_days.py" "$work/epoch/jobs.txt" "$work/days" 2026-10
cat > "$work/sacct" <<EOF
#!/bin/sh
# fake sacct: the day file of -S's date
while [ \$# -gt 0 ]; do
	[ "\$1" = -S ] && { d=\$(echo "\$2" | cut -c1-10); }
	shift
done
exec cat "$work/days/day-\$d.txt"
EOF
chmod +x "$work/sacct"

common="--month 2026-10 --by account,user,partition,qos,nodes --top 10
	--tariff $work/epoch/tariff.csv --intensity-file $work/epoch/intensity.csv"

# measure NAME LINES ARGS...: one row (GNU time: wall seconds, peak RSS)
measure() {
	name=$1
	in_lines=$2
	shift 2
	/usr/bin/time -f "%e %M" -o "$work/time" "$tool" $common "$@" \
		> "$work/out-$name.txt"
	read -r wall rss < "$work/time"
	n=$(sed -n 's/^TOTAL *\([0-9]*\) .*/\1/p' "$work/out-$name.txt" |
		head -n 1)
	awk -v name="$name" -v n="$n" -v wall="$wall" -v rss="$rss" \
		-v in_lines="$in_lines" 'BEGIN {
		printf "| %-18s | %9s | %9d | %6.1f | %6.0f | %6.1f |\n",
		    name, in_lines, n, wall, rss / 1024, wall * 1e6 / in_lines }'
}

epoch_lines=$(wc -l < "$work/epoch/jobs.txt")
day_lines=$(cat "$work/days"/day-*.txt | wc -l)
echo "| input              | lines in  | jobs kept | wall s | RSS MB | us/line |"
echo "|---|---|---|---|---|---|"
measure file-unix-times "$epoch_lines" --sacct-file "$work/epoch/jobs.txt"
measure file-local-times "$epoch_lines" --sacct-file "$work/iso/jobs.txt"
measure sacct-31-days "$day_lines" --sacct "$work/sacct"
# Unix times, read from a file or through sacct, must agree exactly; local
# times agree on jobs, node-hours and energy, but not always on CO2 and
# cost: sacct's %FT%T is ambiguous in the hour repeated when summer time
# ends (25 Oct 02:00-03:00), so a job starting or ending then may be put an
# hour off.  Printed, not hidden.
a=$(grep -m1 '^TOTAL' "$work/out-file-unix-times.txt")
b=$(grep -m1 '^TOTAL' "$work/out-sacct-31-days.txt")
c=$(grep -m1 '^TOTAL' "$work/out-file-local-times.txt")
[ "$a" = "$b" ] || { echo "run.sh: file and sacct disagree:" >&2
	echo "$a" >&2; echo "$b" >&2; exit 1; }
[ "$(echo "$a" | awk '{print $2, $4, $6}')" = \
  "$(echo "$c" | awk '{print $2, $4, $6}')" ] ||
	{ echo "run.sh: local times change jobs or energy" >&2; exit 1; }
echo
echo "TOTAL rows (jobs, no-energy %, node-h, GPU-h, kWh, kW, kWh/node-h," \
	"cost EUR, CO2 kg):"
echo "  Unix times, file and sacct: $a"
echo "  local times:                $c"
echo
echo "cpus: $(nproc), load average after the runs: $(cut -d' ' -f1-3 /proc/loadavg), TZ=$TZ"
echo "first rows of the report (file, Unix times):"
head -n 16 "$work/out-file-unix-times.txt"
