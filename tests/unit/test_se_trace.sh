#!/bin/sh
# test_se_trace.sh - the se-trace tool on the example traces: values, and
# exit status 2 with a message naming file and line on bad input.
set -u

# automake exports srcdir (the top source dir: one Makefile)
top_srcdir=${top_srcdir:-${srcdir:-.}}
ex="$top_srcdir/contribs/trace/examples"
tool=${SE_TRACE:-contribs/trace/se-trace}
fails=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

expect() {	# expect WANT ARGS...: stdout must be WANT, status 0
	want=$1
	shift
	got=$("$tool" "$@" 2>&1)
	if [ $? -ne 0 ] || [ "$got" != "$want" ]; then
		echo "FAIL: se-trace $*: got '$got', want '$want'"
		fails=$((fails + 1))
	fi
}

refuse() {	# refuse MESSAGE ARGS...: stderr must be MESSAGE, status 2
	want=$1
	shift
	got=$("$tool" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 2 ] || [ "$got" != "$want" ]; then
		echo "FAIL: se-trace $*: status $rc, '$got', want 2, '$want'"
		fails=$((fails + 1))
	fi
}

expect 12000.000 joules "$ex/constant.trace" n1 0 60
expect 150.000 watts "$ex/constant.trace" n2 1e6
expect 5250.000 joules "$ex/ramp.trace" n1 0 30
expect 15000.000 joules "$ex/ramp.trace" n3 0 60
expect 200000.000 joules "$ex/square.trace" n1 5 1005
expect 300.000 watts "$ex/square.trace" n1 10
expect 15000.000 joules "$ex/sine.trace" n1 0 60
# ramp n1 is 100 W at 0 s rising 5 W/s (see examples/ramp.trace)
expect "0.000000 100.000
5.000000 125.000
10.000000 150.000" series "$ex/ramp.trace" n1 0 10 5
expect "n1
n2
n3" columns "$ex/square.trace"

printf 'time a\n0 100\n5 x\n' > "$tmp/bad.trace"
refuse "se-trace: $tmp/bad.trace:3: column a: 'x' is not a number of watts" \
	joules "$tmp/bad.trace" a 0 1
refuse "se-trace: $ex/ramp.trace: no column 'n9' (columns: n1 n2 n3)" \
	joules "$ex/ramp.trace" n9 0 1
refuse "se-trace: T0 'abc' is not a number of seconds" \
	joules "$ex/ramp.trace" n1 abc 1
refuse "se-trace: T1 1 is before T0 2" joules "$ex/ramp.trace" n1 2 1
refuse "se-trace: $tmp/none: No such file or directory" \
	columns "$tmp/none"
"$tool" frobnicate >/dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: usage status"; fails=$((fails + 1)); }

[ $fails -eq 0 ] && echo "se-trace: all checks passed"
exit $((fails != 0))
