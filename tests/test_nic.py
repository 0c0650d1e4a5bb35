"""The NIC: qemu_run.py's --net option, and the e1000 driver's in-guest tests booted with a NIC.

The in-guest tests (userland/tests/test_nic.c) open the NIC QEMU gives the guest on user
networking (x86_64: the e1000; arm-imx6: the i.MX6 ENET), read its MAC, ARP for slirp's gateway 10.0.2.2 and ping it in bursts, interrupt-driven.
Without a NIC they skip, and the whole suite (tests/test_guest_suite.py) shows them as skipped.
"""
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, assert_guest_test_passed, build, config_id, needs_arm_tools
import qemu_run

NIC_TESTS = ["nic_open_reads_mac", "nic_arp_gateway", "nic_many_frames", "nic_rx_overflow_recovers",
             "nic_level_irq_redelivered_until_cleared", "nic_receive_on_another_core",
             "nic_irq_ack_on_another_core"]
# Each port's line tests: the x86_64 e1000's, and the i.MX6 ENET's in their place on arm-imx6.
ENET_IN_PLACE_OF = {"nic_level_irq_redelivered_until_cleared": "nic_enet_level_irq_redelivered_until_cleared",
                    "nic_irq_ack_on_another_core": "nic_enet_irq_ack_on_another_core"}
# These need a second core: booted with one, they skip and say so.
MULTICORE_NIC_TESTS = {"nic_irq_ack_on_another_core", "nic_enet_irq_ack_on_another_core"}
# The driver on one core, and with other cores running under the fine-grained and elided locks.
NIC_CONFIGS = [("bkl", 1), ("fine", 4), ("rtm", 4)]
NIC_TIMEOUT = 300


# ---- the --net command line, without QEMU

def test_net_forwards_free_host_ports_to_guest_ports_from_6379():
    hosts = qemu_run.free_host_ports(4)
    assert len(set(hosts)) == 4 and all(1024 <= h < 65536 for h in hosts)
    # Free: each can be bound on 127.0.0.1 now.
    for h in hosts:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", h))
    assert qemu_run.port_forwards(hosts) == [(h, 6379 + i) for i, h in enumerate(hosts)]


def test_net_argv_x86_64_is_an_e1000_on_user_networking():
    forwards = [(40001, 6379), (40002, 6380)]
    argv = qemu_run.qemu_argv("x86_64", Path("k.elf"), 2, "tcg", False, "app=tests", [],
                              forwards=forwards)
    netdev = argv[argv.index("-netdev") + 1]
    assert netdev == ("user,id=n0,hostfwd=tcp:127.0.0.1:40001-:6379,"
                      "hostfwd=tcp:127.0.0.1:40002-:6380")
    assert argv[argv.index("-device", argv.index("-netdev")) + 1] == "e1000,netdev=n0"
    # Without --net the guest has no NIC at all.
    plain = qemu_run.qemu_argv("x86_64", Path("k.elf"), 2, "tcg", False, "app=tests", [])
    assert "-netdev" not in plain and "-nic" not in plain and not any("e1000" in a for a in plain)


def test_net_argv_arm_is_the_boards_enet(tmp_path):
    forwards = [(40001, 6379)]
    argv = qemu_run.qemu_argv("arm-imx6", tmp_path / "k.elf", 1, "tcg", False, "app=tests", [],
                              scratch=tmp_path, forwards=forwards)
    assert argv[argv.index("-nic") + 1] == "user,hostfwd=tcp:127.0.0.1:40001-:6379"
    assert "-netdev" not in argv
    plain = qemu_run.qemu_argv("arm-imx6", tmp_path / "k.elf", 1, "tcg", False, "app=tests", [],
                               scratch=tmp_path)
    assert "-nic" not in plain


def test_net_argv_adds_udp_forwards_after_the_tcp_ones(tmp_path):
    argv = qemu_run.qemu_argv("x86_64", Path("k.elf"), 2, "tcg", False, "app=redis", [],
                              forwards=[(40001, 6379)], udp_forwards=[(40009, 7000)])
    assert argv[argv.index("-netdev") + 1] == ("user,id=n0,hostfwd=tcp:127.0.0.1:40001-:6379,"
                                               "hostfwd=udp:127.0.0.1:40009-:7000")
    argv = qemu_run.qemu_argv("arm-imx6", tmp_path / "k.elf", 1, "tcg", False, "app=redis", [],
                              scratch=tmp_path, forwards=[(40001, 6379)], udp_forwards=[(40009, 7000)])
    assert argv[argv.index("-nic") + 1] == ("user,hostfwd=tcp:127.0.0.1:40001-:6379,"
                                            "hostfwd=udp:127.0.0.1:40009-:7000")


def test_free_udp_ports_can_be_bound():
    hosts = qemu_run.free_host_ports(2, socket.SOCK_DGRAM)
    assert len(set(hosts)) == 2
    for h in hosts:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", h))


def test_net_ports_out_of_range_is_refused():
    image = build("x86_64", "bkl") / "kernel.elf"
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "qemu_run.py"), "--image", str(image),
                           "--accel", "tcg", "--net", "--net-ports", "0"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "--net-ports" in proc.stderr


# ---- booted with a NIC

def test_qemu_run_net_prints_its_forwards(guest):
    run = guest(lock="bkl", cpus=2, app="hello", net=True)
    assert run.status == 0, run.log
    records = run.of_type("net")
    assert len(records) == 1
    forwards = records[0]["net"]["forwards"]
    assert [f["guest"] for f in forwards] == [6379, 6380]     # one per CPU by default
    assert len({f["host"] for f in forwards}) == 2
    for f in forwards:
        assert f"hostfwd=tcp:127.0.0.1:{f['host']}-:{f['guest']}" in run.log
        assert f"qemu_run: net: 127.0.0.1:{f['host']} -> guest port {f['guest']}" in run.log
    # One UDP forward, to the app redis's control port (userland/net/control_port.h).
    udp = records[0]["net"]["udp"]
    assert [f["guest"] for f in udp] == [7000]
    assert f"hostfwd=udp:127.0.0.1:{udp[0]['host']}-:7000" in run.log


def assert_nic_test_passed(run, name, cpus):
    record = run.tests.get(name, {})
    if cpus == 1 and name in MULTICORE_NIC_TESTS:
        assert record.get("status") == "skip" and "needs 2 cores" in record.get("detail", ""), record
        return
    assert record.get("status") != "skip", "the NIC was not found: " + run.log[-2000:]
    assert_guest_test_passed(run, name)


@pytest.mark.parametrize("config", NIC_CONFIGS, ids=config_id)
@pytest.mark.parametrize("name", NIC_TESTS)
def test_nic_in_guest(guest, config, name):
    lock, cpus = config
    run = guest(lock=lock, cpus=cpus, app="tests", args="only=nic", net=True, timeout=NIC_TIMEOUT)
    assert_nic_test_passed(run, name, cpus)


ARM_NIC_TESTS = [ENET_IN_PLACE_OF.get(n, n) for n in NIC_TESTS]


@needs_arm_tools
@pytest.mark.parametrize("config", [("bkl", 1), ("fine", 4)], ids=config_id)
@pytest.mark.parametrize("name", ARM_NIC_TESTS)
def test_enet_in_guest(guest, config, name):
    """The same tests through the i.MX6 ENET driver on QEMU's sabrelite."""
    lock, cpus = config
    run = guest(arch="arm-imx6", lock=lock, cpus=cpus, app="tests", args="only=nic", net=True,
                timeout=NIC_TIMEOUT)
    assert_nic_test_passed(run, name, cpus)


@needs_arm_tools
def test_each_port_skips_the_other_ports_level_test(guest):
    arm = guest(arch="arm-imx6", lock="bkl", cpus=1, app="tests", args="only=nic", net=True,
                timeout=NIC_TIMEOUT)
    assert arm.tests["nic_level_irq_redelivered_until_cleared"]["status"] == "skip"
    assert arm.tests["nic_open_reads_mac"]["detail"] == "mac 52:54:00:12:34:56"
    x86 = guest(lock="bkl", cpus=1, app="tests", args="only=nic", net=True, timeout=NIC_TIMEOUT)
    assert x86.tests["nic_enet_level_irq_redelivered_until_cleared"]["status"] == "skip"


def test_nic_reads_qemus_default_mac(guest):
    run = guest(lock="bkl", cpus=1, app="tests", args="only=nic", net=True, timeout=NIC_TIMEOUT)
    assert run.tests["nic_open_reads_mac"]["detail"] == "mac 52:54:00:12:34:56"
    assert run.status == 0 and run.done_status == 0


def test_nic_tests_skip_without_a_nic(guest):
    run = guest(lock="bkl", cpus=1, app="tests", args="only=nic", timeout=NIC_TIMEOUT)
    assert {run.tests[n]["status"] for n in NIC_TESTS} == {"skip"}
    assert all("no NIC" in run.tests[n]["detail"] or "no e1000" in run.tests[n]["detail"]
               for n in NIC_TESTS)
    # Skips are not failures: the run still ends with status 0.
    assert run.status == 0 and run.done_status == 0
