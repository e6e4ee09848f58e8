#!/bin/sh
# test_man_pages.sh - every man page renders without a groff warning (the
# check lintian runs), and every program make install puts in bin or sbin
# has a page in section 1 or 8 that make install installs too.
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

n=$(echo $pages | wc -w)
echo "$n man pages checked, $(echo $programs | wc -w) programs have one"
[ $fails -eq 0 ]
