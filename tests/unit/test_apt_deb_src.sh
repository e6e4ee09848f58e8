#!/bin/sh
# test_apt_deb_src.sh - contribs/apt-deb-src, which get-slurm-source.sh uses
# to add the deb-src entries apt-get source needs, on fixture apt trees
# (SE_APT_ETC): the one-line format with [options], comments and cdrom
# lines; deb822 with several suites and components, "Enabled: no" and a key
# written into the stanza; deb-src entries that exist already; and no
# usable entry at all (a message naming the files, exit 1).  Where apt-get
# is installed, apt itself parses the output and must see exactly the
# expected deb-src targets.  Runs under every awk installed of gawk and
# mawk (Debian's default awk is mawk, a build host's may be gawk).
set -u

top_srcdir=${top_srcdir:-${srcdir:-.}}
tool="$top_srcdir/contribs/apt-deb-src"
fails=0
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL ($awk_name): $*"; fails=$((fails + 1)); }

# etc DIR: a fresh fixture tree; files come from here-documents.
etc() { rm -rf "$tmp/$1"; mkdir -p "$tmp/$1/sources.list.d"; echo "$tmp/$1"; }

# run ETC [ARGS]: the tool's stdout in $tmp/out, stderr in $tmp/err, $rc
run() {
	e=$1
	shift
	rc=0
	SE_APT_ETC=$e "$tool" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
}

# same_text WHAT: $tmp/out must equal $tmp/want
same_text() {
	if ! cmp -s "$tmp/out" "$tmp/want"; then
		fail "$1: output differs from the expected:"
		diff -u "$tmp/want" "$tmp/out" | sed 's/^/    /'
	fi
}

# apt_sees WHAT "TYPE URI SUITE COMP"...: apt parses $tmp/out and lists
# exactly these source targets (URIs as apt writes them, with a slash; a
# flat repository has no component, which apt prints as $(COMPONENT))
apt_sees() {
	what=$1
	shift
	command -v apt-get >/dev/null || return 0
	rm -rf "$tmp/apt"
	mkdir -p "$tmp/apt/parts" "$tmp/apt/lists/partial"
	cp "$tmp/out" "$tmp/apt/parts/test.sources"
	got=$(apt-get -o Dir::Etc::SourceList=/dev/null \
		-o Dir::Etc::SourceParts="$tmp/apt/parts" \
		-o Dir::State::Lists="$tmp/apt/lists" \
		indextargets --no-release-info 'Created-By: Sources' \
		--format '$(TARGET_OF) $(REPO_URI) $(RELEASE) $(COMPONENT)' 2>&1 | sort)
	want=$(printf '%s\n' "$@" | sort)
	[ "$got" = "$want" ] || fail "$what: apt reads the output as
$got
    want
$want"
}

cases() {
# ---- one-line: options, comments, a cdrom line, deb-src for some of it
e=$(etc oneline)
cat > "$e/sources.list" <<'EOF'
# deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD Binary-1 20240210-11:28]/ bookworm main
deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD Binary-1 20240210-11:28]/ bookworm contrib main

#deb http://old.example.org/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian/ bookworm main contrib non-free-firmware
deb-src http://deb.debian.org/debian bookworm main
	deb http://deb.debian.org/debian bookworm-updates main   # updates
deb http://security.debian.org/debian-security bookworm-security main contrib
deb-src [ signed-by=/usr/share/keyrings/debian-archive-keyring.gpg ] http://security.debian.org/debian-security/ bookworm-security main
EOF
run "$e"
[ $rc = 0 ] || fail "one-line: exit $rc, $(cat "$tmp/err")"
[ ! -s "$tmp/err" ] || fail "one-line: stderr: $(cat "$tmp/err")"
cat > "$tmp/want" <<EOF
# for deb http://deb.debian.org/debian/ bookworm ($e/sources.list:5)
Types: deb-src
URIs: http://deb.debian.org/debian/
Suites: bookworm
Components: contrib non-free-firmware
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# for deb http://deb.debian.org/debian bookworm-updates ($e/sources.list:7)
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-updates
Components: main

# for deb http://security.debian.org/debian-security bookworm-security ($e/sources.list:8)
Types: deb-src
URIs: http://security.debian.org/debian-security
Suites: bookworm-security
Components: contrib
EOF
same_text "one-line"
apt_sees "one-line" \
	"deb-src http://deb.debian.org/debian/ bookworm contrib" \
	"deb-src http://deb.debian.org/debian/ bookworm non-free-firmware" \
	"deb-src http://deb.debian.org/debian/ bookworm-updates main" \
	"deb-src http://security.debian.org/debian-security/ bookworm-security contrib"

# ---- deb822: several suites and components, a disabled stanza, a stanza
# with deb and deb-src, a key in the stanza, comments; and a .list beside
e=$(etc deb822)
cat > "$e/sources.list.d/debian.sources" <<'EOF'
# Debian, as the installer of Debian 13 writes it
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie trixie-updates
# a comment inside the stanza
Components: main contrib
Architectures: amd64
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb deb-src
URIs: http://deb.debian.org/debian-security
Suites: trixie-security
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie-backports
Components: main
Enabled: no
EOF
cat > "$e/sources.list.d/site.sources" <<'EOF'
Types: deb
URIs: https://repo.example.org/a https://repo.example.org/b
Suites: stable
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mDMEZxxxxxYJKwYBBAHaRw8BAQdAexample
 -----END PGP PUBLIC KEY BLOCK-----
X-Repolib-Name: site
EOF
cat > "$e/sources.list.d/local.list" <<'EOF'
deb [trusted=yes] file:/srv/repo ./
EOF
# apt reads neither of these (suffix, characters): neither may we
echo "deb http://ignored.example.org/debian trixie main" > "$e/sources.list.d/old.list.disabled"
echo "deb http://ignored.example.org/debian trixie main" > "$e/sources.list.d/my repo.list"
run "$e"
[ $rc = 0 ] || fail "deb822: exit $rc, $(cat "$tmp/err")"
[ ! -s "$tmp/err" ] || fail "deb822: stderr: $(cat "$tmp/err")"
cat > "$tmp/want" <<EOF
# for deb http://deb.debian.org/debian trixie trixie-updates ($e/sources.list.d/debian.sources:2)
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: trixie trixie-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

# for deb file:/srv/repo ./ ($e/sources.list.d/local.list:1)
Types: deb-src
URIs: file:/srv/repo
Suites: ./
Trusted: yes

# for deb https://repo.example.org/a stable ($e/sources.list.d/site.sources:1)
Types: deb-src
URIs: https://repo.example.org/a
Suites: stable
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mDMEZxxxxxYJKwYBBAHaRw8BAQdAexample
 -----END PGP PUBLIC KEY BLOCK-----
X-Repolib-Name: site

# for deb https://repo.example.org/b stable ($e/sources.list.d/site.sources:1)
Types: deb-src
URIs: https://repo.example.org/b
Suites: stable
Components: main
Signed-By:
 -----BEGIN PGP PUBLIC KEY BLOCK-----
 .
 mDMEZxxxxxYJKwYBBAHaRw8BAQdAexample
 -----END PGP PUBLIC KEY BLOCK-----
X-Repolib-Name: site
EOF
same_text "deb822"
apt_sees "deb822" \
	"deb-src http://deb.debian.org/debian/ trixie main" \
	"deb-src http://deb.debian.org/debian/ trixie contrib" \
	"deb-src http://deb.debian.org/debian/ trixie-updates main" \
	"deb-src http://deb.debian.org/debian/ trixie-updates contrib" \
	'deb-src file:/srv/repo/ ./ $(COMPONENT)' \
	"deb-src https://repo.example.org/a/ stable main" \
	"deb-src https://repo.example.org/b/ stable main"

# ---- both formats at once, the same archive in both: one entry each;
# --exclude leaves out an earlier output file (whose entries would
# otherwise count as existing)
e=$(etc both)
cat > "$e/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb http://deb.debian.org/debian-security bookworm-security main
EOF
cat > "$e/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian/
Suites: bookworm bookworm-updates
Components: main
EOF
cat > "$e/sources.list.d/slurm-energy-deb-src.sources" <<'EOF'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
EOF
run "$e" --exclude slurm-energy-deb-src.sources
[ $rc = 0 ] || fail "both formats: exit $rc, $(cat "$tmp/err")"
cat > "$tmp/want" <<EOF
# for deb http://deb.debian.org/debian bookworm ($e/sources.list:1)
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main

# for deb http://deb.debian.org/debian-security bookworm-security ($e/sources.list:2)
Types: deb-src
URIs: http://deb.debian.org/debian-security
Suites: bookworm-security
Components: main

# for deb http://deb.debian.org/debian/ bookworm-updates ($e/sources.list.d/debian.sources:1)
Types: deb-src
URIs: http://deb.debian.org/debian/
Suites: bookworm-updates
Components: main
EOF
same_text "both formats"
apt_sees "both formats" \
	"deb-src http://deb.debian.org/debian/ bookworm main" \
	"deb-src http://deb.debian.org/debian-security/ bookworm-security main" \
	"deb-src http://deb.debian.org/debian/ bookworm-updates main"
# without --exclude the earlier file covers two of them
run "$e"
grep -q '^Suites: bookworm-security$' "$tmp/out" && [ "$(grep -c '^Types:' "$tmp/out")" = 1 ] ||
	fail "both formats without --exclude: want only bookworm-security, got: $(cat "$tmp/out")"

# ---- everything has its deb-src already: nothing to print, exit 0
e=$(etc covered)
cat > "$e/sources.list" <<'EOF'
deb http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian bookworm main
EOF
run "$e"
[ $rc = 0 ] && [ ! -s "$tmp/out" ] || fail "all covered: exit $rc, output '$(cat "$tmp/out")'"

# ---- no usable entry: comments, deb-src only, a disabled stanza, a disc
e=$(etc unusable)
cat > "$e/sources.list" <<'EOF'
# deb http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian bookworm main
deb cdrom:[Debian GNU/Linux 12.5.0 _Bookworm_ - Official amd64 DVD Binary-1 20240210-11:28]/ bookworm main
EOF
cat > "$e/sources.list.d/debian.sources" <<'EOF'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Enabled: no
EOF
run "$e"
[ $rc = 1 ] || fail "no usable entry: exit $rc, want 1"
[ ! -s "$tmp/out" ] || fail "no usable entry: output '$(cat "$tmp/out")'"
grep -q "no enabled \"deb\" entry in $e/sources.list, $e/sources.list.d/debian.sources; add the Debian archive" "$tmp/err" ||
	fail "no usable entry: message '$(cat "$tmp/err")'"

# ---- no source file at all
e=$(etc empty)
run "$e"
[ $rc = 1 ] || fail "no file: exit $rc, want 1"
grep -q "no apt source file: neither $e/sources.list nor" "$tmp/err" ||
	fail "no file: message '$(cat "$tmp/err")'"

# ---- usage
run "$e" --bogus
[ $rc = 2 ] || fail "unknown argument: exit $rc, want 2"
}

# Each awk the machine has of Debian's two, as "awk" in PATH.
ran=0
for awk_name in gawk mawk; do
	a=$(command -v $awk_name) || continue
	mkdir -p "$tmp/bin-$awk_name"
	ln -sf "$a" "$tmp/bin-$awk_name/awk"
	PATH="$tmp/bin-$awk_name:$PATH"
	cases
	PATH=${PATH#"$tmp/bin-$awk_name:"}
	ran=$((ran + 1))
done
if [ $ran = 0 ]; then
	awk_name=awk
	cases
fi

[ $fails = 0 ] && echo "ok: apt-deb-src ($ran awk)"
[ $fails = 0 ]
