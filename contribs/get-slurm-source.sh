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

# When the mirror lacks one of the files at the place the index names (seen:
# a security update's .dsc missing from both pools), fetch each file through
# apt's own downloader from any configured deb-src archive, checked against
# the SHA256 of the signed Sources index, and unpack as dpkg-source would
# (orig tarball, debian tarball, debian/patches/series in order).
fetch_by_hand() {
	work="$dest/.fetch"
	rm -rf "$work"
	mkdir -p "$work"
	bases=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Sources' 2>/dev/null | sort -u)
	apt-get source --print-uris -qq "slurm-wlm=$pkgver" | grep "^'" |
	while read -r uri name size hash; do
		uri=${uri#\'}
		uri=${uri%\'}
		case "$name" in *.dsc) continue ;; esac
		path=${uri#*/pool/}
		path=${path#updates/}
		ok=
		for b in "${uri%%/pool/*}/" $bases; do
			for p in "pool/$path" "pool/updates/$path"; do
				if /usr/lib/apt/apt-helper -qq download-file "$b$p" \
					"$work/$name" "$hash" >/dev/null 2>&1; then
					ok=1
					break 2
				fi
			done
		done
		[ -n "$ok" ] || { echo "get-slurm-source: cannot fetch $name" >&2; exit 1; }
	done
	orig=$(ls "$work"/*.orig.tar.* | head -n 1)
	deb=$(ls "$work"/*.debian.tar.* | head -n 1)
	mkdir -p "$work/x"
	tar -xf "$orig" -C "$work/x"
	top_dir=$(ls "$work/x")
	mv "$work/x/$top_dir" "$tree"
	tar -xf "$deb" -C "$tree"
	if [ -f "$tree/debian/patches/series" ]; then
		sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$tree/debian/patches/series" |
		while read -r patch opts; do
			(cd "$tree" && patch -s -t -F0 -N -p1 --no-backup-if-mismatch ${opts:-} < "debian/patches/$patch") || {
				echo "get-slurm-source: patch $patch does not apply" >&2
				exit 1
			}
		done
	fi
	rm -rf "$work"
}

rm -rf "$tree"
(cd "$dest" && apt-get source -qq "slurm-wlm=$pkgver" >/dev/null) || {
	echo "get-slurm-source: apt-get source failed; fetching the files one by one" >&2
	fetch_by_hand
}
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
