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
command -v make               >/dev/null || need+=(make)
command -v gcc                >/dev/null || need+=(gcc)
python3 -c 'import venv, ensurepip' 2>/dev/null || need+=(python3-venv)

if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "missing packages: ${need[*]} (install them as root: apt-get install ${need[*]})" >&2
        exit 1
    fi
    echo "installing: ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

if [ ! -x .venv/bin/python ] || ! cmp -s requirements.txt .venv/requirements.installed; then
    echo "setting up the Python environment in .venv"
    python3 -m venv .venv
    .venv/bin/pip install -q --disable-pip-version-check -r requirements.txt
    cp requirements.txt .venv/requirements.installed
fi
