#!/bin/sh
# test_source_tree.sh - contribs/lib/source-tree.sh, which lets the demo and
# the test command build a checkout that the README's production build
# configured in-tree (automake refuses any other build from such a tree).
# On a fixture checkout with the suite's own .gitignore:
#   - not configured in-tree: the checkout itself, nothing copied;
#   - configured in-tree (config.status): a copy in BUILD/src with every
#     source file and none of the in-tree build's output (Makefile,
#     config.status, se_config.h, objects, .libs, the generated configure),
#     and a line on stderr naming config.status;
#   - built again: an edited source reaches the copy, a deleted one leaves
#     it, the copy's own autoreconf output is kept (no autoreconf each time),
#     an unchanged file keeps its mtime (make stays incremental).
set -u

top_srcdir=${top_srcdir:-${srcdir:-.}}
lib="$top_srcdir/contribs/lib/source-tree.sh"
fails=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
has() { [ -e "$1" ] || fail "missing: $1"; }
hasnt() { [ ! -e "$1" ] || fail "copied, but build output: $1"; }

# shellcheck source=../../contribs/lib/source-tree.sh
. "$lib"

co=$tmp/checkout build=$tmp/checkout/_build
mkdir -p "$co/src/common" "$co/src/common/.libs" "$co/.git" "$build/obj"
cp "$top_srcdir/.gitignore" "$co/.gitignore"
for f in configure.ac Makefile.am src/common/sampler.c src/common/Makefile.inc \
	src/common/gone.c; do
	echo "source $f" >"$co/$f"
done

# 1. not configured in-tree
out=$(se_source_tree "$co" "$build" 2>"$tmp/err") || fail "se_source_tree failed (1)"
[ "$out" = "$co" ] || fail "not configured: printed '$out', want the checkout"
[ ! -e "$build/src" ] || fail "not configured: a copy was made"
[ ! -s "$tmp/err" ] || fail "not configured: said '$(cat "$tmp/err")'"

# 2. configured in-tree, as ./configure && make leave it
for f in configure Makefile.in Makefile config.status config.log se_config.h \
	libtool stamp-h1 src/common/sampler.lo src/common/sampler.o \
	src/common/.libs/libsecore.so src/common/libsecore.la; do
	echo "output $f" >"$co/$f"
done
echo "objects" >"$build/obj/Makefile"
out=$(se_source_tree "$co" "$build" 2>"$tmp/err") || fail "se_source_tree failed (2)"
[ "$out" = "$build/src" ] || fail "configured: printed '$out', want $build/src"
grep -q "config.status" "$tmp/err" || fail "configured: stderr names no config.status: $(cat "$tmp/err")"
for f in configure.ac Makefile.am src/common/sampler.c src/common/Makefile.inc \
	src/common/gone.c .gitignore; do
	has "$build/src/$f"
done
for f in configure Makefile.in Makefile config.status config.log se_config.h \
	libtool stamp-h1 src/common/sampler.lo src/common/sampler.o \
	src/common/.libs src/common/libsecore.la .git _build; do
	hasnt "$build/src/$f"
done

# 3. built again after an edit, a deletion, and the copy's own autoreconf
echo "autoreconf in the copy" >"$build/src/configure"
touch -d '2020-01-01 00:00:00' "$co/Makefile.am" "$build/src/Makefile.am"
sleep 1
echo "edited" >"$co/src/common/sampler.c"
touch -d '2021-06-01 12:00:00' "$co/src/common/sampler.c"
rm "$co/src/common/gone.c"
before=$(stat -c %Y "$build/src/Makefile.am")
out=$(se_source_tree "$co" "$build" 2>"$tmp/err") || fail "se_source_tree failed (3)"
[ "$(cat "$build/src/src/common/sampler.c")" = edited ] || fail "the edit did not reach the copy"
[ ! -e "$build/src/src/common/gone.c" ] || fail "a deleted source stayed in the copy"
[ "$(cat "$build/src/configure" 2>/dev/null)" = "autoreconf in the copy" ] ||
	fail "the copy's configure was removed or replaced"
[ "$(stat -c %Y "$build/src/Makefile.am")" = "$before" ] ||
	fail "an unchanged file got a new mtime (make would rebuild everything)"
[ "$(stat -c %Y "$build/src/src/common/sampler.c")" = \
	"$(stat -c %Y "$co/src/common/sampler.c")" ] ||
	fail "a copied file has not the checkout's mtime (the next copy would rebuild it again)"

# 4. a copy that cannot be made is an error, not a silent checkout
mkdir -p "$tmp/ro" && echo x >"$tmp/ro/config.status"
if se_source_tree "$tmp/ro" /proc/no-such-dir >/dev/null 2>"$tmp/err"; then
	fail "an unwritable build dir was not an error"
fi

if [ "$fails" -ne 0 ]; then
	echo "$fails failed"
	exit 1
fi
echo "4 cases, all passed"
