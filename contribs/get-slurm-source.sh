#!/bin/sh
# Obtain and configure the Slurm source tree that matches the installed slurmd,
# through apt (deb-src), so our plugins can use Slurm's internal headers.
#
#   contribs/get-slurm-source.sh [DESTDIR]      (default: ./slurm-src)
#
# Prints the path of the configured tree on stdout, and nothing else (so
# src=$(contribs/get-slurm-source.sh DIR) works); everything else goes to
# stderr.  Run as root on a Debian machine with slurmd installed.  Nothing
# is fetched outside apt.
#
# When apt has no source for the installed slurmd, the deb-src entries it
# lacks are made from every apt source the machine has, in either format
# (sources.list and sources.list.d/*.list one-line, sources.list.d/*.sources
# deb822; contribs/apt-deb-src), into
# /etc/apt/sources.list.d/slurm-energy-deb-src.sources, and apt-get update
# runs.  When the source still cannot be had, it stops there, saying what it
# tried and what to do.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
dest=${1:-$(pwd)/slurm-src}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)

say() { printf 'get-slurm-source: %s\n' "$*" >&2; }
die() { printf 'get-slurm-source: %s\n' "$*" >&2; exit 1; }

pkgver=$(dpkg-query -W -f='${Version}' slurmd 2>/dev/null) && [ -n "$pkgver" ] ||
	die "slurmd is not installed (dpkg-query -W slurmd): install it first (apt-get install slurmd, or contribs/install-deps.sh), so that the source matches it"
upver=${pkgver%%-*}          # 22.05.8-4+deb12u3 -> 22.05.8
tree="$dest/slurm-wlm-$upver"

if [ -f "$tree/config.h" ] && [ -f "$dest/.pkgver" ] &&
	[ "$(cat "$dest/.pkgver")" = "$pkgver" ]; then
	echo "$tree"
	exit 0
fi

# Where apt says the installed slurmd comes from ("URI suite/component"),
# for the messages.
origin() {
	apt-cache policy slurmd 2>/dev/null | awk '
		/^ \*\*\* / { f = 1; next }
		f && /^ +[0-9]+ / { if ($2 !~ /^\//) { print "  " $2 " " $3; n++ } next }
		{ f = 0 }
		END { if (!n) print "  no archive of the apt sources has it now (only dpkg knows it)" }'
}

# What to do when all else failed, for every message that ends here.
advice="What to do: make sure a deb-src entry names the archive and suite
slurmd $pkgver came from (apt-cache policy slurmd; Debian's security updates
are in SUITE-security), run apt-get update and this again; or fetch and
configure the Slurm $upver source yourself and give its directory to
configure (--with-slurm-src=DIR; SE_SLURM_SRC=DIR for debian/rules)."

have_source() { apt-get source --print-uris -qq "slurm-wlm=$pkgver" >/dev/null 2>&1; }

# A deb-src entry for every deb entry that lacks one: the archives slurmd
# came from, security and updates included (or the source would fall behind
# the installed binaries).
src_list=/etc/apt/sources.list.d/slurm-energy-deb-src.sources
tried="apt-get source slurm-wlm=$pkgver with the existing deb-src entries"
if ! have_source; then
	[ "$(id -u)" = 0 ] ||
		die "apt has no source of slurm-wlm $pkgver and adding deb-src entries needs root: run this as root, or add them yourself.
$advice"
	entries=$("$here/apt-deb-src" --exclude "${src_list##*/}") ||
		die "cannot make deb-src entries from the apt sources (above).
$advice"
	if [ -n "$entries" ]; then
		{
			echo "# Written by slurm-energy-plugins' contribs/get-slurm-source.sh: the"
			echo "# deb-src entries of this machine's deb entries, for apt-get source."
			printf '%s\n' "$entries"
		} > "$src_list"
		say "deb-src entries for $(printf '%s\n' "$entries" | sed -n 's/^# for deb //p' | sed 's/ (.*//' | paste -sd ';' | sed 's/;/; /g') written to $src_list"
		tried="$tried; deb-src entries made from every deb entry of /etc/apt/sources.list and sources.list.d/*.list, *.sources, written to $src_list"
	else
		# every deb entry has its deb-src elsewhere: ours would repeat them
		rm -f "$src_list"
		tried="$tried (every deb entry has one)"
	fi
	if apt-get update -qq >&2; then
		tried="$tried; apt-get update"
	else
		tried="$tried; apt-get update, which failed (above)"
	fi
	have_source || die "apt has no source package slurm-wlm $pkgver, the version of the installed slurmd.
Tried: $tried.
slurmd $pkgver comes from:
$(origin)
$advice"
fi
command -v dpkg-source >/dev/null || apt-get install -y -qq dpkg-dev >&2

# When the mirror lacks one of the files at the place the index names (seen:
# a security update's .dsc missing from both pools), fetch each file through
# apt's own downloader from any configured deb-src archive, checked against
# the SHA256 of the signed Sources index, and unpack as dpkg-source would
# (orig tarball, debian tarball, debian/patches/series in order).
# Returns non-zero, having said why, when a file cannot be had.
fetch_by_hand() {
	work="$dest/.fetch"
	rm -rf "$work"
	mkdir -p "$work"
	bases=$(apt-get indextargets --format '$(REPO_URI)' 'Created-By: Sources' 2>/dev/null | sort -u)
	apt-get source --print-uris -qq "slurm-wlm=$pkgver" | grep "^'" > "$work/uris" || {
		say "apt-get source --print-uris slurm-wlm=$pkgver lists no file"
		return 1
	}
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
		[ -n "$ok" ] || { say "cannot fetch $name ($size bytes) from $uri or any deb-src archive"; return 1; }
	done < "$work/uris"
	orig=$(ls "$work"/*.orig.tar.* 2>/dev/null | head -n 1)
	deb=$(ls "$work"/*.debian.tar.* 2>/dev/null | head -n 1)
	[ -n "$orig" ] && [ -n "$deb" ] || { say "the source package has no orig or debian tarball"; return 1; }
	mkdir -p "$work/x"
	tar -xf "$orig" -C "$work/x" || return 1
	top_dir=$(ls "$work/x")
	mv "$work/x/$top_dir" "$tree" || return 1
	tar -xf "$deb" -C "$tree" || return 1
	if [ -f "$tree/debian/patches/series" ]; then
		sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$tree/debian/patches/series" > "$work/series"
		while read -r patch opts; do
			# shellcheck disable=SC2086 # opts: the series' own patch options
			(cd "$tree" && patch -s -t -F0 -N -p1 --no-backup-if-mismatch ${opts:-} < "debian/patches/$patch") || {
				say "patch $patch does not apply"
				return 1
			}
		done < "$work/series"
	fi
	rm -rf "$work"
}

rm -rf "$tree"
if ! (cd "$dest" && apt-get source -qq "slurm-wlm=$pkgver" >/dev/null); then
	say "apt-get source failed (above); fetching the files one by one"
	rm -rf "$tree"
	fetch_by_hand || die "cannot get the source of slurm-wlm $pkgver into $dest.
Tried: apt-get source slurm-wlm=$pkgver, then each file from every deb-src archive (apt-helper download-file).
$advice"
fi
[ -d "$tree" ] || die "apt-get source did not produce $tree (a source package of another name or layout?).
$advice"

# The same configure line as Debian's build, as far as headers care.  It
# needs libmunge-dev (--with-munge) and a C compiler: the packages of
# contribs/install-deps.sh, or debian/control's Build-Depends.  Its output
# (a score of warnings about optional libraries) is kept in a file, and
# shown when it fails.
(cd "$tree" && ./configure -q --prefix=/usr --libdir=/usr/lib/x86_64-linux-gnu \
	--sysconfdir=/etc/slurm --with-munge --enable-multiple-slurmd \
	--disable-debug --without-rpath) > "$dest/configure.out" 2>&1 || {
	tail -n 15 "$dest/configure.out" >&2
	die "Slurm's configure failed in $tree (its last lines above; $tree/config.log says more): install what it names (contribs/install-deps.sh installs everything), then run this again"
}
echo "$pkgver" > "$dest/.pkgver"
echo "$tree"
