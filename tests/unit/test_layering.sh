#!/bin/sh
# test_layering.sh - no new circle between the source files of src/
# (tests/check_layering.py over this build's objects; the known ones are
# listed in tests/layering-baseline.txt, which may only shrink).
top_srcdir=${top_srcdir:-${srcdir:-.}}
exec /usr/bin/python3 "$top_srcdir/tests/check_layering.py" "${top_builddir:-.}" \
	--src-dir "$top_srcdir" --baseline "$top_srcdir/tests/layering-baseline.txt"
