#!/usr/bin/env bash
# Install what a fresh machine lacks: the Debian packages that build and boot
# both ports, and the pinned Python environment in .venv.  Safe to run again:
# it installs only what is missing.  `make test`, `make run` and .ci/run call it.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
command -v qemu-system-arm    >/dev/null || need+=(qemu-system-arm)
command -v arm-none-eabi-gcc  >/dev/null || need+=(gcc-arm-none-eabi)
command -v grub-mkrescue      >/dev/null || need+=(grub-common)
[ -d /usr/lib/grub/i386-pc ]             || need+=(grub-pc-bin)
command -v xorriso            >/dev/null || need+=(xorriso)
command -v mformat            >/dev/null || need+=(mtools)
command -v mkimage            >/dev/null || need+=(u-boot-tools)
# qemu-arm runs arm-imx6 POSIX processes under Linux's system calls (tests/test_posix_build.py).
command -v qemu-arm           >/dev/null || need+=(qemu-user)
# Redis's own test suite (tools/redis_suite.py) is Tcl.
command -v tclsh              >/dev/null || need+=(tcl)
# A guest's NIC on a tap device (tools/net_tap.py) is set up with iproute2.
command -v ip                 >/dev/null || need+=(iproute2)
command -v make               >/dev/null || need+=(make)
command -v gcc                >/dev/null || need+=(gcc)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)
# The host side of the Redis benchmark: Debian's Redis (the clients, and the server the
# differential tests compare with), and Java with Maven for YCSB (tools/ycsb.py).
command -v redis-server       >/dev/null || need+=(redis-server)
command -v redis-cli          >/dev/null || need+=(redis-tools)
command -v java               >/dev/null || need+=(default-jre-headless)
command -v javac              >/dev/null || need+=(default-jdk-headless)
command -v mvn                >/dev/null || need+=(maven)

if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing packages: ${need[*]} (install them as root: apt-get install ${need[*]})" >&2
        exit 1
    fi
    echo "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # An index a mirror is still syncing fails the update; install says if it mattered.
    apt-get update -qq || true
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# U-Boot for the Sabre Lite, to boot the ARM port's uImage and boot.scr in
# QEMU as the board does (docs/arm-imx6.md).  Debian ships it, built for the
# board, in the armhf package u-boot-imx; only its files are unpacked here.
uboot=.deps/u-boot-imx/usr/lib/u-boot/mx6qsabrelite/u-boot-dtb.imx
if [ ! -f "$uboot" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "note: U-Boot for the Sabre Lite is not in .deps (run as root to fetch it; its tests skip)" >&2
    else
        echo "fetching U-Boot for the Sabre Lite (Debian u-boot-imx, armhf)"
        dpkg --print-foreign-architectures | grep -qx armhf || dpkg --add-architecture armhf
        apt-get update -qq 2>/dev/null || true
        rm -rf .deps/u-boot-imx && mkdir -p .deps/u-boot-imx
        if (cd .deps && apt-get download -qq -o APT::Sandbox::User=root u-boot-imx:armhf) && dpkg-deb -x .deps/u-boot-imx_*_armhf.deb .deps/u-boot-imx; then
            rm -f .deps/u-boot-imx_*_armhf.deb
        else
            echo "note: could not fetch u-boot-imx:armhf; the U-Boot boot tests skip" >&2
        fi
    fi
fi

# Debian source packages that `apt-get source` unpacks into .deps/<name>: lwIP, the guest's
# TCP/IP stack (docs/network.md), and musl and Redis, which build the POSIX processes
# (docs/posix-build.md).  The system's lists have no deb-src entry, so each fetch uses a
# private sources list and lists directory and leaves the system's configuration alone.
# fetch_source PACKAGE VERSION_GLOB CHECK_FILE WHAT_SKIPS: unpacks PACKAGE's source (the
# directory PACKAGE-VERSION_GLOB) into .deps/PACKAGE unless CHECK_FILE is already there.
fetch_source() {
    local package=$1 version=$2 check=$3 skips=$4
    [ -f ".deps/$package/$check" ] && return 0
    echo "fetching $package (Debian source package $package, bookworm)"
    local apt_dir="$PWD/.deps/$package-apt" src
    rm -rf "$apt_dir" ".deps/$package" && mkdir -p "$apt_dir/lists/partial" "$apt_dir/src"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main" \
        >"$apt_dir/sources.list"
    local apt_private=(-o Dir::Etc::sourcelist="$apt_dir/sources.list" -o Dir::Etc::sourceparts=-
                       -o Dir::State::Lists="$apt_dir/lists" -o APT::Sandbox::User=root)
    command -v dpkg-source >/dev/null || { [ "$(id -u)" -eq 0 ] && apt-get install -y -qq --no-install-recommends dpkg-dev >/dev/null; } || true
    if apt-get -qq "${apt_private[@]}" update 2>/dev/null &&
       (cd "$apt_dir/src" && apt-get -qq "${apt_private[@]}" source "$package" >/dev/null 2>&1) &&
       src=$(ls -d "$apt_dir/src/$package"-$version/ 2>/dev/null | head -n 1) && [ -f "$src/$check" ]; then
        mv "$src" ".deps/$package"
    else
        echo "note: could not fetch $package's source (apt-get source $package); $skips skip" >&2
    fi
    rm -rf "$apt_dir"
}
fetch_source lwip  '2.1.3*'  src/core/tcp.c   "the network tests"
fetch_source musl  '1.2.3*'  src/internal/syscall.h "the POSIX build tests (tests/test_posix_build.py)"
fetch_source redis '7.0.15*' src/server.c     "the POSIX build tests (tests/test_posix_build.py)"

if [ ! -x .venv/bin/python ] || ! cmp -s requirements.txt .venv/requirements.installed; then
    echo "setting up the Python environment in .venv"
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
    cp requirements.txt .venv/requirements.installed
fi
