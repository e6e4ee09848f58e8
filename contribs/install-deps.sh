#!/bin/sh
# Install every Debian package the suite needs to build, test and run its demo
# on a fresh Debian 12 machine (as root).  Idempotent: a second run is quick.
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
librrd-dev
rrdtool
rrdcached
slurm-wlm-rrd-plugin
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
python3-matplotlib
python3-venv
"

if [ "$(id -u)" != 0 ]; then
	echo "install-deps: must run as root (apt-get install)" >&2
	exit 1
fi

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# No service may start during install: there is no init here, and a CI
# machine must not have daemons we did not start ourselves.
if [ ! -e /usr/sbin/policy-rc.d ]; then
	printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
	chmod 755 /usr/sbin/policy-rc.d
fi
apt-get install -y -qq --no-install-recommends $missing
