#!/bin/bash
# bench/modbus/run.sh - benchmark of the Modbus energy path, without Slurm.
#
# Starts se-modbus-sim meters on loopback TCP and on two socat pty pairs,
# runs se-bench-modbus against them and prints markdown tables on stdout
# (paste them into BENCHMARKS.md).  Builds nothing: it expects the build.
#
#   bench/modbus/run.sh [OBJDIR]      OBJDIR: the build tree
#                                     (default: _build/obj next to bench/)
# Environment:
#   SE_BENCH_SECONDS   length of the energy-error run (default 240 s: the
#                      120 s windows then start anywhere in 120 s)
#   SE_BENCH_WINDOWS   windows per length (default 200)
#   SE_MODBUS_SIM, SE_BENCH_MODBUS   binaries, instead of OBJDIR's
#
# Everything it starts is stopped by PID on exit; its files live in one
# mktemp directory, removed on exit (logs are shown if a step fails).
# A full run takes about 5 minutes.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
OBJ=${1:-$SRC/_build/obj}
SIM=${SE_MODBUS_SIM:-$OBJ/contribs/modbus-sim/se-modbus-sim}
BENCH=${SE_BENCH_MODBUS:-$OBJ/bench/modbus/se-bench-modbus}
SECONDS_ERR=${SE_BENCH_SECONDS:-240}
WINDOWS=${SE_BENCH_WINDOWS:-200}
EX=$SRC/contribs/trace/examples

for b in "$SIM" "$BENCH"; do
	[ -x "$b" ] || { echo "run.sh: $b missing: build first" >&2; exit 2; }
done
command -v socat >/dev/null || { echo "run.sh: socat missing" >&2; exit 2; }

T=$(mktemp -d /tmp/se-bench-modbus.XXXXXX)
PIDS=()
OK=0

# A child that has exited but is not yet reaped is not alive.
alive() {
	local st
	st=$(ps -o stat= -p "$1" 2>/dev/null) || return 1
	[[ $st != Z* ]]
}

# Stop one child by PID: SIGTERM, repeated each second (se-modbus-sim can
# take a TERM that lands in select() and then block in accept(); the next
# one interrupts that), SIGKILL after 5 s.
stop_pid() {
	local i
	for i in $(seq 50); do
		alive "$1" || break
		[ $((i % 10)) = 1 ] && kill -TERM "$1" 2>/dev/null
		sleep 0.1
	done
	alive "$1" && kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null || true
}

cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		stop_pid "$p"
	done
	if [ "$OK" != 1 ]; then
		tail -n 20 "$T"/*.log >&2 2>/dev/null || true
	fi
	rm -rf "$T"
}
trap cleanup EXIT

# Poll (bounded) until a file exists.
wait_file() {
	local i
	for i in $(seq 100); do
		[ -e "$1" ] && return 0
		sleep 0.1
	done
	echo "run.sh: $1 did not appear" >&2
	return 1
}

# sim NAME ARGS...: start a simulator; wait for its pidfile.
sim() {
	local name=$1
	shift
	"$SIM" --pidfile "$T/$name.pid" --log "$T/$name.log" "$@" &
	PIDS+=($!)
	wait_file "$T/$name.pid"
}

# tcp_sim NAME ARGS...: a TCP simulator on a kernel-chosen loopback port;
# prints its device string.
tcp_sim() {
	local name=$1
	shift
	sim "$name" --tcp 127.0.0.1:0 --port-file "$T/$name.port" "$@"
	wait_file "$T/$name.port"
}

tcp_dev() {
	echo "tcp://127.0.0.1:$(cat "$T/$1.port")"
}

# rtu_sim REGS: a pty pair and a meter whose power (float32 at 0) and
# energy (float32 at REGS-2) take exactly REGS registers; paced 9600 8N1.
rtu_sim() {
	local n=$1
	socat pty,raw,echo=0,link="$T/ttyA$n" pty,raw,echo=0,link="$T/ttyB$n" \
		2>"$T/socat$n.log" &
	PIDS+=($!)
	wait_file "$T/ttyA$n"
	wait_file "$T/ttyB$n"
	sim "rtu$n" --rtu "$T/ttyA$n" --baud 9600 --parity N --data-bits 8 \
		--stop-bits 1 --trace "$EX/cluster.trace" --column node1 \
		--kind input --order abcd \
		--power-reg 0 --power-type float32 --power-scale 1 \
		--energy-reg $((n - 2)) --energy-type float32 \
		--energy-scale 3600000
}

EPOCH=$(date +%s)
tcp_sim smooth --trace "$EX/cluster.trace" --column node1 --model sdm630 \
	--epoch "$EPOCH"
tcp_sim square --trace "$EX/square.trace" --column n1 --model sdm630 \
	--epoch "$EPOCH"
tcp_sim stall --trace "$EX/cluster.trace" --column node1 --model sdm630 \
	--control "$T/stall.ctl"
rtu_sim 4
rtu_sim 12

echo "## Modbus energy path"
echo
echo "Run $(date -u '+%Y-%m-%d %H:%M UTC') on $(nproc) cores," \
	"Debian $(cat /etc/debian_version), Linux $(uname -r);" \
	"simulator: se-modbus-sim, model sdm630 (float32 W, float32 kWh)" \
	"on loopback TCP unless stated; load average at start:" \
	"$(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "### a. Energy error"
echo
"$BENCH" error --epoch "$EPOCH" --seconds "$SECONDS_ERR" \
	--windows "$WINDOWS" --seed 1 \
	--case "smooth,$(tcp_dev smooth),$EX/cluster.trace,node1" \
	--case "square,$(tcp_dev square),$EX/square.trace,n1" \
	2>>"$T/bench.log"
echo
echo "### b. CPU per sample"
echo
"$BENCH" cpu --device "$(tcp_dev smooth)" --seconds 10 --period 0.05 \
	2>>"$T/bench.log"
echo
echo "### c. Reader latency while the meter stalls"
echo
"$BENCH" stall --device "$(tcp_dev stall)" --control "$T/stall.ctl" \
	--seconds 5 2>>"$T/bench.log"
echo
echo "### d. RTU read latency, 9600 8N1"
echo
"$BENCH" rtu --reads 40 --baud 9600 \
	--case "4,rtu:$T/ttyB4" --case "12,rtu:$T/ttyB12" 2>>"$T/bench.log"
echo
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
OK=1
