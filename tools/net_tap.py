"""A tap device for a guest's NIC: the host's own TCP stack talks to the guest's lwIP directly.

QEMU's user network (slirp, `qemu_run.py --net`) ends each host connection in QEMU and opens
its own to the guest. It keeps each connection's bytes in order but not the order between
connections: it queues what it sends to the guest in one list per socket and serves the lists
in turn. So commands written on three connections one after the other can reach the guest in
another order (docs/network.md, "Order between connections, and the tap device"). On a tap
device the host's packets reach the guest's NIC in the order the host sends them, as on a real
network.

The guest's address is fixed (userland/net/channel_netif.c: 10.0.2.15, gateway 10.0.2.2), so
the tap device takes the gateway's address, and only one tap guest runs on the host at a time:
a host-wide lock file serialises them. A device is named after the qemu_run process that made
it, and one left behind by a process that no longer exists is removed before the next is made.

This needs root (CAP_NET_ADMIN), /dev/net/tun and iproute2's `ip`: unavailable() says which is
missing.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Iterator

GUEST_ADDRESS = "10.0.2.15"
HOST_ADDRESS = "10.0.2.2"
PREFIX = 24
LOCK_FILE = Path("/tmp/.kernel-net-tap.lock")
DEVICE_PREFIX = "ktap"
DEVICE = re.compile(rf"^\d+: ({DEVICE_PREFIX}(\d+))[:@]")


def unavailable() -> str | None:
    """Why this host cannot make a tap device, or None when it can."""
    if os.geteuid() != 0:
        return "a tap device needs root (CAP_NET_ADMIN)"
    if not os.path.exists("/dev/net/tun"):
        return "a tap device needs /dev/net/tun"
    if shutil.which("ip") is None:
        return "a tap device needs iproute2's ip"
    return None


def ip(*words: str) -> None:
    subprocess.run(["ip", *words], check=True, capture_output=True, text=True)


def remove_stale() -> None:
    """Delete the tap devices of qemu_run processes that no longer exist."""
    listing = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout
    for line in listing.splitlines():
        m = DEVICE.match(line)
        if m and not Path(f"/proc/{m.group(2)}").exists():
            subprocess.run(["ip", "link", "del", m.group(1)], capture_output=True)


@contextlib.contextmanager
def tap_device() -> Iterator[str]:
    """Hold the host's one tap slot and a tap device with the guest's gateway address; its name."""
    with open(LOCK_FILE, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        remove_stale()
        name = f"{DEVICE_PREFIX}{os.getpid()}"
        ip("tuntap", "add", "dev", name, "mode", "tap")
        try:
            ip("addr", "add", f"{HOST_ADDRESS}/{PREFIX}", "dev", name)
            ip("link", "set", name, "up")
            yield name
        finally:
            subprocess.run(["ip", "link", "del", name], capture_output=True)
