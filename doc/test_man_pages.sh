#!/bin/sh
# test_man_pages.sh - every man page renders without a groff warning (the
# check lintian runs), and every program make install puts in bin or sbin
# has a page in section 1 or 8 that make install installs too, and every
# configuration key the code reads is in a section 5 page.
set -u

srcdir=${srcdir:-.}
fails=0

inputs=$(${MAKE:-make} -s --no-print-directory se-man-inputs) || {
	echo "FAIL: make se-man-inputs"
	exit 1
}
programs=$(echo "$inputs" | sed -n 's/^programs: //p')
pages=$(echo "$inputs" | sed -n 's/^pages: //p')

for page in $pages; do
	path=$srcdir/$page
	[ -f "$path" ] || path=$page
	if [ ! -f "$path" ]; then
		echo "FAIL: $page: listed in man_MANS, not found"
		fails=$((fails + 1))
		continue
	fi
	# lintian's own invocation; any output on stderr is a warning
	warn=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 \
		man --warnings -E UTF-8 -l -Tutf8 -Z "$path" 2>&1 >/dev/null)
	if [ -n "$warn" ]; then
		echo "FAIL: $page:"
		echo "$warn"
		fails=$((fails + 1))
	fi
done

for prog in $programs; do
	name=${prog##*/}
	case " $pages " in
	*"/$name.1 "* | *"/$name.8 "*) ;;
	*)
		echo "FAIL: $name is installed but has no man page in man_MANS"
		fails=$((fails + 1)) ;;
	esac
done

# Every key of a key table in src/ (conf descriptors, the policy file's
# table: { "Key", handler, ... }) is documented in a section 5 page.
keys=$(grep -rhoE '\{[[:space:]]*"[A-Z][A-Za-z]+",[[:space:]]*[A-Za-z_|]+' \
	"$srcdir/src" --include='*.c' | grep -oE '"[A-Za-z]+"' | tr -d '"' |
	sort -u)
for key in $keys; do
	if ! grep -qE "(^|[^A-Za-z])(\\\\f[BI])?$key([^A-Za-z]|\$)" \
		"$srcdir"/doc/man/*.5; then
		echo "FAIL: key $key (a key table in src/) is in no section 5 page"
		fails=$((fails + 1))
	fi
done
[ -n "$keys" ] || { echo "FAIL: no key tables found in $srcdir/src"; fails=$((fails + 1)); }

n=$(echo $pages | wc -w)
echo "$n man pages checked, $(echo $programs | wc -w) programs have one," \
	"$(echo $keys | wc -w) configuration keys documented"
[ $fails -eq 0 ]
