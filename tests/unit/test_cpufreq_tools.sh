#!/bin/sh
# test_cpufreq_tools.sh - se-cpufreq-history and se-cpufreq-sweep without a
# cluster: a fake sacct, and a sweep re-read from CSV.  The sweep's
# min-energy mark must agree with the C model (test_cpufreq_model: the
# memory-bound case chooses 1.2 GHz at 5 %, 1.6 GHz at 3 %).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=${top_srcdir:-$here/../..}
tools=$top/contribs/cpufreq-sweep
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# ---- se-cpufreq-history from a fake sacct
cat > "$t/sacct" <<'EOS'
#!/bin/sh
cat <<'EOT'
10|lulesh|alice|COMPLETED|100|0|Unknown|Unknown|Unknown|
10.batch|batch||COMPLETED|100|25000|Unknown|Unknown|Unknown|
10.0|lulesh||COMPLETED|100|25000|Unknown|2.40G|Unknown|
11|x|alice|COMPLETED|104|0|Unknown|Unknown|Unknown|energy_key=alice/lulesh
11.0|x||COMPLETED|104|15600|Unknown|1.20G|Unknown|
12|y|bob|COMPLETED|50|0|Unknown|Unknown|Unknown|
12.0|y||COMPLETED|50|0|Unknown|1.60G|Unknown|
13|z|bob|COMPLETED|50|0|Unknown|Unknown|Unknown|
13.0|z||COMPLETED|50|900|1.20G|2.40G|Ondemand|
14|my job|carol|COMPLETED|7|0|Unknown|Unknown|Unknown|
14.0|my job||COMPLETED|7|700|Unknown|1600000|Unknown|
EOT
EOS
chmod +x "$t/sacct"
"$tools/se-cpufreq-history" --history "$t/h" --sacct "$t/sacct" >/dev/null
grep -q '^alice/lulesh 2400000 100.000 25000.000 10.0$' "$t/h" ||
	fail "job name key: $(cat "$t/h")"
grep -q '^alice/lulesh 1200000 104.000 15600.000 11.0$' "$t/h" ||
	fail "AdminComment key: $(cat "$t/h")"
grep -q '^carol/my_job 1600000 7.000 700.000 14.0$' "$t/h" ||
	fail "blank in job name: $(cat "$t/h")"
grep -q 'bob/' "$t/h" && fail "no energy / a range must be skipped"
n=$(grep -vc '^#' "$t/h")
[ "$n" = 3 ] || fail "3 runs expected, got $n"
# idempotent: the same steps are not added twice
"$tools/se-cpufreq-history" --history "$t/h" --sacct "$t/sacct" >/dev/null
n=$(grep -vc '^#' "$t/h")
[ "$n" = 3 ] || fail "refresh duplicated runs ($n)"

# ---- se-cpufreq-sweep --from-csv: the model's marks
cat > "$t/s.csv" <<'EOS'
freq_khz,repeat,jobid,elapsed_s,sacct_elapsed_s,wall_s,energy_j,avg_power_w,req_cpufreq_max_khz
1200000,0,1,104,104,104,15600,150,1200000
1200000,1,2,300,300,300,99999,333,1200000
1200000,2,3,103,103,103,15500,150,1200000
1600000,0,4,102,102,102,18400,180,1600000
2000000,0,5,101,101,101,21200,210,2000000
2400000,0,6,100,100,100,25000,250,2400000
EOS
out=$("$tools/se-cpufreq-sweep" --from-csv "$t/s.csv" --no-plot \
	--history "$t/h2" --key alice/mem)
echo "$out" | grep -q '^  1200000 kHz .*<- min energy' ||
	fail "min energy at 5 %: $out"
echo "$out" | grep -q '^  2400000 kHz .*<- min time' || fail "min time: $out"
out=$("$tools/se-cpufreq-sweep" --from-csv "$t/s.csv" --no-plot \
	--max-slowdown 3)
echo "$out" | grep -q '^  1600000 kHz .*<- min energy' ||
	fail "min energy at 3 %: $out"
n=$(grep -c '^alice/mem ' "$t/h2")
[ "$n" = 6 ] || fail "sweep history: $n runs"
echo "PASS: cpufreq tools"
