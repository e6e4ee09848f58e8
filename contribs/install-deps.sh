#!/bin/sh
# Install every Debian package the suite needs to build, test and run its demo
# on a fresh Debian 12 or 13 (or testing) machine, as root.  Idempotent: a
# second run is quick.
#
#   contribs/install-deps.sh           install what is missing
#   contribs/install-deps.sh --list    print the required packages (one a line;
#                                      contribs/release/mkroot installs them)
set -eu

PKGS="
autoconf
automake
libtool
pkg-config
make
gcc
binutils
dpkg-dev
build-essential
debhelper
lintian
rsync
check
slurmctld
slurmd
slurmdbd
slurm-client
libslurm-dev
munge
libmunge-dev
mariadb-server
mariadb-client
libmodbus-dev
libfreeipmi-dev
libipmimonitoring-dev
freeipmi-tools
openipmi
libopenipmi-dev
libcurl4-openssl-dev
libsnmp-dev
librrd-dev
rrdtool
rrdcached
slurm-wlm-ipmi-plugins
hwloc
libhwloc-dev
socat
iproute2
iptables
util-linux
procps
python3
python3-pytest
python3-pytest-xdist
python3-matplotlib
python3-hypothesis
python3-venv
"
# slurm-energy-exporter (issue #43): HTTP and TLS (libmicrohttpd over GnuTLS),
# Prometheus' web configuration (libyaml), bcrypt (libxcrypt's crypt(3)).
PKGS="$PKGS
libmicrohttpd-dev
libyaml-dev
libgnutls28-dev
libcrypt-dev
"
# Prometheus: its promtool checks contribs/prometheus in make check (also in
# a release's root, where make check runs), and the integration tests start
# Prometheus itself on loopback (tests/integration/test_prometheus.py),
# never as a service.
PKGS="$PKGS
prometheus
"
# What Slurm's own configure needs to build a release tarball the way sites
# do (contribs/release/slurm-from-tarball): the MariaDB client library for
# slurmdbd's accounting_storage/mysql, munge (above), and the libraries a
# site's build links (D-Bus, JSON, PAM, LZ4; hwloc above).
PKGS="$PKGS
libmariadb-dev
libdbus-1-dev
libjson-c-dev
libpam0g-dev
liblz4-dev
"
# Slurm's energy profile (acct_gather_profile/hdf5) and sh5util: the
# energy report's power profiles and the GPU part of a step's profile
# (tests/integration/test_gpu_share.py) on every release: Debian's plugin
# on the host and in a release's root; libhdf5-dev (the host's, below) for
# a release built from its tarball (Slurm's configure finds h5cc and builds
# the plugin and sh5util).
PKGS="$PKGS
slurm-wlm-hdf5-plugin
"
# The host's only (not in --list, and not installed inside a release root,
# contribs/release/in-root sets SE_IN_RELEASE_ROOT: the roots run neither):
# clang and its libFuzzer/sanitizer runtimes for tests/fuzz (make fuzz),
# valgrind for tests/valgrind.sh, chromium for the energy report's HTML page
# (tests/integration/test_energy_report.py opens it headless), libhdf5-dev
# for the releases built from their tarballs here.  Unversioned names: clang-14 on Debian 12,
# the release's own clang elsewhere (configure looks for clang-14, then
# clang).  The sanitizer build of the unit tests uses gcc's own runtimes
# (libasan8, libubsan1: gcc-12 has them through libgcc-12-dev).
HOST_PKGS="
clang
libclang-rt-dev
valgrind
chromium
libhdf5-dev
"
[ -z "${SE_IN_RELEASE_ROOT:-}" ] || HOST_PKGS=""
# Installed when the release has them: ext_sensors/rrd (and its package) is
# gone from Slurm 24.05 on (Debian 13 and later).
OPTIONAL_PKGS="
slurm-wlm-rrd-plugin
"

if [ "${1:-}" = --list ]; then
	printf '%s\n' $PKGS
	exit 0
fi

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: must run as root (apt-get install)" >&2
	exit 1
fi

missing=""
for p in $PKGS $HOST_PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
for p in $OPTIONAL_PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p?"
done
[ -z "$missing" ] && exit 0
# Only optional ones missing (each marked "?"), and already looked up on
# this release: done.  (The pattern here matched any name, so Debian 13,
# which has no slurm-wlm-rrd-plugin, ran apt-get update on every call.)
required=$(echo "$missing" | tr ' ' '\n' | grep -v -e '?$' -e '^$' || :)
[ -n "$required" ] || [ ! -f /var/lib/apt/lists/.se-optional-checked ] || exit 0

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
want=""
for p in $missing; do
	case "$p" in
	*\?)
		p=${p%\?}
		# only when this release has it
		cand=$(apt-cache policy "$p" 2>/dev/null | sed -n 's/^ *Candidate: *//p')
		[ -n "$cand" ] && [ "$cand" != "(none)" ] && want="$want $p" ;;
	*) want="$want $p" ;;
	esac
done
# No service may start during install: there is no init here, and a CI
# machine must not have daemons we did not start ourselves.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
fi
[ -z "$want" ] || apt-get install -y -qq --no-install-recommends $want
# Remember that the optional packages were looked up: their absence on this
# release is not "missing".
touch /var/lib/apt/lists/.se-optional-checked
