#!/bin/sh
# test_plugin_libs.sh - the energy plugins do not link their meter's library
# (src/common/se_dynlib.h): Slurm loads them in every slurmstepd, which
# never reads the meter, and librrd alone brings 44 more libraries.  For each
# plugin this build has: no NEEDED entry for the library, and no undefined
# symbol of it left for the loader (every entry point the back-end calls is
# one of the plugin's own wrappers, src/meters/*/*_dl.c).
set -u

command -v readelf >/dev/null && command -v nm >/dev/null || exit 77
fails=0
checked=0

check() {	# check PLUGIN LIBRARY-PATTERN SYMBOL-PATTERN
	so=.libs/acct_gather_energy_$1.so
	[ -f "$so" ] || return 0
	checked=$((checked + 1))
	needed=$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
		 grep -E "$2")
	if [ -n "$needed" ]; then
		echo "FAIL: $so links $(echo $needed) (NEEDED): every slurmstepd would map it"
		fails=$((fails + 1))
	fi
	undef=$(nm -D --undefined-only "$so" | awk '{print $2}' | grep -E "$3")
	if [ -n "$undef" ]; then
		echo "FAIL: $so leaves $(echo $undef) to the loader: not wrapped in its *_dl.c"
		fails=$((fails + 1))
	fi
}

check modbus '^libmodbus' '^modbus_'
check bmc '^lib(freeipmi|ipmimonitoring|gcrypt|curl|json-c)' '^(ipmi_|curl_|json_)'
check rrd '^librrd' '^rrdc?_'
[ $checked -gt 0 ] || exit 77
echo "$checked plugin(s) checked, $fails failure(s)"
[ $fails -eq 0 ]
