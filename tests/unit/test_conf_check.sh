#!/bin/sh
# test_conf_check.sh - se-conf-check refuses what slurmd refuses, with the
# file, the keys and the figures, and passes what slurmd takes.
set -u

tool=${SE_CONF_CHECK:-contribs/conf-check/se-conf-check}
fails=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

if ! "$tool" --type acct_gather_energy/modbus /dev/null >/dev/null 2>&1 &&
   "$tool" --type acct_gather_energy/modbus /dev/null 2>&1 |
	grep -q "not a plugin of this build"; then
	echo "SKIP: acct_gather_energy/modbus not built"
	exit 77
fi

check() {	# check WANT_STATUS WANT_TEXT FILE: status and a substring
	out=$("$tool" --type acct_gather_energy/modbus "$3" 2>&1)
	rc=$?
	case $out in
	*"$2"*) ;;
	*) rc=999 ;;
	esac
	if [ $rc -ne "$1" ]; then
		echo "FAIL: $3: status $rc, output '$out'; want $1 and '$2'"
		fails=$((fails + 1))
	fi
}

# A 16-bit counter of joules wraps every 65.5 kJ; 100 kW (the default
# MaxPower) can count 200 kJ in Frequency + Timeout (2 s): refused.
cat >"$tmp/wraps.conf" <<'CONF'
# a PDU channel read as a 16-bit joule counter
EnergyModbusDevice=tcp://127.0.0.1:1502
EnergyModbusPowerRegister=10
EnergyModbusEnergyRegister=20
EnergyModbusEnergyType=uint16
EnergyModbusEnergyScale=1
CONF
check 1 "FAIL acct_gather_energy/modbus: $tmp/wraps.conf: EnergyModbusEnergyType=uint16 EnergyModbusEnergyScale=1 EnergyModbusMaxPower=100000: the register wraps every 65536 J, and at 100000 W it may count 200000 J in EnergyModbusFrequency + EnergyModbusTimeout (2.000 s)" "$tmp/wraps.conf"

# The same register with MaxPower at the node's real peak is good.
{ cat "$tmp/wraps.conf"; echo "EnergyModbusMaxPower=3000"; } >"$tmp/ok.conf"
check 0 "ok   acct_gather_energy/modbus: $tmp/ok.conf" "$tmp/ok.conf"

# Every built-in model at its default MaxPower is good.
for model in sdm630 sdm72d em24 pm5300; do
	printf 'EnergyModbusDevice=tcp://127.0.0.1:1502\nEnergyModbusModel=%s\n' \
		"$model" >"$tmp/$model.conf"
	check 0 "ok" "$tmp/$model.conf"
done

# A bad value is named with its line.
printf 'EnergyModbusDevice=tcp://127.0.0.1:1502\nEnergyModbusModel=sdm630\nEnergyModbusFrequency=abc\n' >"$tmp/bad.conf"
check 1 "EnergyModbusFrequency=abc: not a number of seconds (line 3)" \
	"$tmp/bad.conf"

# A missing file is named.
check 1 "$tmp/missing.conf" "$tmp/missing.conf"

# A typo of one of our keys: Slurm's parser refuses an unknown key and
# slurmd does not start, so the check must not say ok.
printf 'EnergyModbusDevice=tcp://127.0.0.1:1502\nEnergyModbusModel=sdm630\nEnergyModbusFrequncy=2\n' >"$tmp/typo.conf"
check 1 "EnergyModbusFrequncy=2: unknown key (line 3" "$tmp/typo.conf"

# A map that cannot be read names the key that names it.
printf 'EnergyModbusDevice=tcp://127.0.0.1:1502\nEnergyModbusModel=sdm630\nEnergyModbusMap=%s/no.map\n' "$tmp" >"$tmp/nomap.conf"
check 1 "EnergyModbusMap=$tmp/no.map: No such file or directory" "$tmp/nomap.conf"

# acct_gather_energy/bmc: sensor names with blanks must be quoted in
# acct_gather.conf (Slurm's parser, and so slurmctld, refuses them bare).
if "$tool" --type acct_gather_energy/bmc /dev/null >/dev/null 2>&1; then
	check_bmc() {	# as check, for the bmc plugin
		out=$("$tool" --type acct_gather_energy/bmc "$3" 2>&1)
		rc=$?
		case $out in
		*"$2"*) ;;
		*) rc=999 ;;
		esac
		if [ $rc -ne "$1" ]; then
			echo "FAIL: $3: status $rc, output '$out'; want $1 and '$2'"
			fails=$((fails + 1))
		fi
	}
	echo 'EnergyBMCSensors="PSU1 Input Power,PSU2 Input Power"' >"$tmp/quoted.conf"
	check_bmc 0 "ok" "$tmp/quoted.conf"
	echo 'EnergyBMCSensors=PSU1 Input Power,PSU2 Input Power' >"$tmp/bare.conf"
	check_bmc 1 "'Input': expected key=value" "$tmp/bare.conf"
	# the password file as slurmd checks it: mode, and never its content
	printf 'hunter2-secret\n' >"$tmp/pw"
	chmod 644 "$tmp/pw"
	printf 'EnergyBMCHost=10.0.0.1\nEnergyBMCPasswordFile=%s\n' "$tmp/pw" >"$tmp/pw.conf"
	check_bmc 1 "EnergyBMCPasswordFile=$tmp/pw: mode 0644 lets group or others access it" "$tmp/pw.conf"
	if "$tool" --type acct_gather_energy/bmc "$tmp/pw.conf" 2>&1 |
		grep -q hunter2; then
		echo "FAIL: se-conf-check printed the password"
		fails=$((fails + 1))
	fi
	chmod 600 "$tmp/pw"
	check_bmc 0 "ok" "$tmp/pw.conf"
fi

[ $fails -eq 0 ] && echo "test_conf_check: all passed"
[ $fails -eq 0 ]
