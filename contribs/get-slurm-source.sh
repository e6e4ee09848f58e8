#!/bin/sh
# Obtain and configure the Slurm source tree that matches the installed slurmd,
# through apt (deb-src), so our plugins can use Slurm's internal headers.
#
#   contribs/get-slurm-source.sh [DESTDIR]      (default: ./slurm-src)
#
# Prints the path of the configured tree on its last line.  Run as root on a
# Debian machine with slurmd installed.  Nothing is fetched outside apt.
set -eu

dest=${1:-$(pwd)/slurm-src}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

pkgver=$(dpkg-query -W -f='${Version}' slurmd 2>/dev/null) || {
	echo "get-slurm-source: slurmd is not installed (dpkg)" >&2
	exit 1
}
upver=${pkgver%%-*}          # 22.05.8-4+deb12u3 -> 22.05.8
tree="$dest/slurm-wlm-$upver"

if [ -f "$tree/config.h" ] && [ -f "$dest/.pkgver" ] &&
	[ "$(cat "$dest/.pkgver")" = "$pkgver" ]; then
	echo "$tree"
	exit 0
fi

# A deb-src entry mirroring the binary sources (security included, or the
# source would fall behind the installed binaries).
src_list=/etc/apt/sources.list.d/slurm-energy-deb-src.sources
if ! apt-get source --print-uris "slurm-wlm=$pkgver" >/dev/null 2>&1; then
	sed 's/^Types:.*/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$src_list"
	apt-get update -qq
fi
command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev

rm -rf "$tree"
(cd "$dest" && apt-get source -qq "slurm-wlm=$pkgver" >/dev/null)
[ -d "$tree" ] || {
	echo "get-slurm-source: apt-get source did not produce $tree" >&2
	exit 1
}

# The same configure line as Debian's build, as far as headers care.
(cd "$tree" && ./configure -q --prefix=/usr --libdir=/usr/lib/x86_64-linux-gnu \
	--sysconfdir=/etc/slurm --with-munge --enable-multiple-slurmd \
	--disable-debug --without-rpath >/dev/null)
echo "$pkgver" > "$dest/.pkgver"
echo "$tree"
