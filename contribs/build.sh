#!/bin/sh
# Build the suite on a Debian machine, from nothing, as root:
#   1. install the Debian packages it needs (contribs/install-deps.sh),
#   2. fetch and configure the Slurm source of the installed slurmd (apt),
#   3. autoreconf, configure and make out of tree in $SE_BUILD_DIR,
#   4. install into $SE_BUILD_DIR/stage (plugins in stage/lib/slurm-energy).
#
#   contribs/build.sh            (SE_BUILD_DIR defaults to ./_build)
#
# Against a Slurm built from source (contribs/release/slurm-from-tarball, or a
# site's /opt/slurm): SE_SLURM_PREFIX=PREFIX SE_SLURM_SRC=TREE, the prefix it
# was installed into and the configured tree it was built from; step 2 is
# then skipped.
#
# The test cluster and the tests load the plugins from the stage directory,
# so nothing is written to /usr.  The last line printed is the plugin dir.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
build=${SE_BUILD_DIR:-$top/_build}
mkdir -p "$build"
build=$(cd "$build" && pwd)     # configure wants an absolute --prefix

say() { printf '== %s\n' "$*" >&2; }

say "Debian packages"
"$top/contribs/install-deps.sh" >&2

if [ -n "${SE_SLURM_PREFIX:-}" ]; then
	[ -n "${SE_SLURM_SRC:-}" ] ||
		{ echo "build.sh: SE_SLURM_PREFIX is set but SE_SLURM_SRC (its configured source tree) is not" >&2; exit 1; }
	slurm_src=$SE_SLURM_SRC
	with_slurm="--with-slurm=$SE_SLURM_PREFIX"
else
	say "Slurm source tree matching the installed slurmd"
	# (it prints only the tree; no pipe, so its failure stops the build here)
	slurm_src=$("$top/contribs/get-slurm-source.sh" "$build/slurm-src")
	with_slurm=
fi

say "configure"
# The checkout, or a copy of it when it is configured in-tree (the README's
# production build): contribs/lib/source-tree.sh.
. "$top/contribs/lib/source-tree.sh"
src=$(se_source_tree "$top" "$build")
# Only when an autotools input is newer than configure: a forced autoreconf
# would make every build dir of the checkout (the host's, each release's)
# configure and compile again, and other builds may be reading it.
if [ ! -x "$src/configure" ] || [ ! -f "$src/Makefile.in" ] ||
	[ -n "$(cd "$src" && find . -path './_build*' -prune -o \( -name configure.ac \
		-o -name Makefile.am -o -name Makefile.inc -o -name '*.m4' \) \
		-newer configure -print 2>/dev/null)" ]; then
	(cd "$src" && autoreconf -fi >/dev/null 2>&1) || (cd "$src" && autoreconf -fi)
fi
# A build dir configured from another tree (the checkout before it was
# configured in-tree, or its copy after a make distclean) starts afresh
# (a build dir without the stamp predates it: the checkout's).
if [ -f "$build/obj/config.status" ] &&
	[ "$(cat "$build/obj/.se-source-tree" 2>/dev/null || echo "$top")" != "$src" ]; then
	rm -rf "$build/obj"
fi
mkdir -p "$build/obj"
cd "$build/obj"
if [ ! -f Makefile ] || [ "$src/configure" -nt config.status ]; then
	# shellcheck disable=SC2086 # $with_slurm: empty or one word
	"$src/configure" -q --with-slurm-src="$slurm_src" $with_slurm \
		--prefix="$build/stage" --enable-werror --enable-all >&2
	echo "$src" >.se-source-tree
fi

say "make"
make -s -j"$(nproc)" >&2
# libtool's "Libraries have been installed in..." banner is noise here.
make -s install >install.log 2>&1 || { cat install.log >&2; exit 1; }
echo "$build/stage/lib/slurm-energy"
