"""The guest's NIC on a tap device (tools/net_tap.py, `qemu_run.py --tap`, `make qemu NET=tap`).

QEMU's user network does not keep the order between connections (docs/network.md, "Order between
connections"); on a tap device the host's own TCP stack reaches the guest at 10.0.2.15, and
commands written on several connections one after the other reach Redis in that order, as Redis's
own suite expects (BRPOPLPUSH with multiple blocked clients, in type/list).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

import net_tap
import qemu_run
import redis_run
from conftest import needs_real_redis
from redis_guest import HEAP_MB, Resp, Server, redis_program

needs_tap = pytest.mark.skipif(net_tap.unavailable() is not None,
                               reason=f"{net_tap.unavailable()}: no tap device on this host")
# Rounds of three connections, each a fresh chance for the order to break.
ORDER_ROUNDS = 40


def links() -> str:
    return subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True).stdout


def test_qemu_gets_the_tap_device_instead_of_the_user_network(tmp_path):
    forwards = [(6379, 6379)]
    x86 = qemu_run.qemu_argv("x86_64", Path("k.elf"), 1, "tcg", False, "app=redis", [],
                             forwards=forwards, udp_forwards=[(7000, 7000)], tap="ktap12")
    assert "tap,id=n0,ifname=ktap12,script=no,downscript=no" in x86
    assert not any(a.startswith("user") for a in x86)
    arm = qemu_run.qemu_argv("arm-imx6", Path("k.elf"), 1, "tcg", False, "app=redis", [],
                             scratch=tmp_path, forwards=forwards, tap="ktap12")
    assert arm[arm.index("-nic") + 1] == "tap,ifname=ktap12,script=no,downscript=no"


def test_the_served_address_is_the_guests_on_a_tap_device():
    user = [{"net": {"forwards": [{"host": 41000, "guest": 6379}], "udp": []}}]
    tap = [{"net": {"forwards": [{"host": 6379, "guest": 6379}], "udp": [], "address": "10.0.2.15",
                    "tap": "ktap7"}}]
    assert redis_run.served_address(user) == "127.0.0.1"
    assert redis_run.served_address(tap) == "10.0.2.15"


@needs_tap
def test_a_tap_device_has_the_gateway_address_and_goes_away():
    with net_tap.tap_device() as name:
        shown = subprocess.run(["ip", "-o", "addr", "show", "dev", name], capture_output=True,
                               text=True).stdout
        assert f"inet {net_tap.HOST_ADDRESS}/{net_tap.PREFIX}" in shown, shown
    assert f" {name}:" not in links()


@needs_tap
def test_a_device_left_by_a_dead_process_is_removed():
    dead = next(pid for pid in range(4_000_000, 3_000_000, -1) if not os.path.exists(f"/proc/{pid}"))
    stale = f"{net_tap.DEVICE_PREFIX}{dead}"
    subprocess.run(["ip", "tuntap", "add", "dev", stale, "mode", "tap"], check=True)
    try:
        with net_tap.tap_device():
            assert f" {stale}:" not in links()
    finally:
        subprocess.run(["ip", "link", "del", stale], capture_output=True)


@needs_tap
@needs_real_redis
def test_commands_on_three_connections_run_in_the_order_sent():
    """Two clients block in BLPOP, one after the other, and a third pushes one element: the
    first client gets it, every round, as on the host's loopback."""
    server = Server("x86_64", "bkl", 1, posix_program=redis_program("x86_64"),
                    cmdline=f"app=redis heap_mb={HEAP_MB}", tap=True)
    try:
        server.read_until_serving()
        assert server.address == net_tap.GUEST_ADDRESS
        port = server.ports[0]
        first, second, pusher = (Resp(port, server.address) for _ in range(3))
        for i in range(ORDER_ROUNDS):
            key = f"order{i}"
            first.send((b"BLPOP", key.encode(), b"0"))
            second.send((b"BLPOP", key.encode(), b"0"))
            pusher.send((b"RPUSH", key.encode(), b"a"))
            assert pusher.reply() == 1
            assert first.reply() == [key.encode(), b"a"], f"round {i}: the first client was not served first"
            pusher.send((b"RPUSH", key.encode(), b"b"))
            assert pusher.reply() in (0, 1)
            assert second.reply() == [key.encode(), b"b"]
    finally:
        server.stop()
