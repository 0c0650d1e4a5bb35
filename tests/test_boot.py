"""Boot on both ports: every core online, the boot IPI round complete, a clean exit, exit
statuses and kernel exceptions reaching the host, and x86_64's GRUB image.  (arm-imx6's U-Boot
images and boot path are in tests/test_arm.py.)"""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, assert_booted, assert_panic_path, build, kvm_skip_reason, on_port

# The Sabre Lite's i.MX6 Quad has four cores; x86_64 boots up to the build's NCPUS (8).
BOOTS = [on_port("x86_64", cpus) for cpus in (1, 2, 4, 8)] + \
        [on_port("arm-imx6", cpus) for cpus in (1, 4)]
# `none` has no kernel lock and runs on one core; rtm is x86_64's only.
OTHER_LOCKS = [on_port("x86_64", "none", 1), on_port("x86_64", "fine", 4), on_port("x86_64", "rtm", 4),
               on_port("arm-imx6", "none", 1), on_port("arm-imx6", "fine", 4)]
# What each port's panic record and register dump say for a kernel-mode undefined instruction.
PANICS = {"x86_64": ("#UD invalid opcode", ("rip=", "rsp=", "cr3="), "addr2line"),
          "arm-imx6": ("undefined instruction", ("sp_svc", "r12"), "arm-none-eabi-addr2line")}


@pytest.mark.parametrize("arch,cpus", BOOTS)
def test_boot_tcg(guest, arch, cpus):
    run = guest(arch=arch, cpus=cpus, accel="tcg")
    assert_booted(run, arch, cpus)
    assert run.boot_record["accel"] == "tcg"
    # TCG emulates no TSX.
    assert run.boot_record["rtm"] is False
    assert f"hello from the root task: {cpus} core" in run.log, "the root task reports the cores online"


@pytest.mark.parametrize("arch,cpus", [on_port(arch, cpus) for arch in ("x86_64", "arm-imx6") for cpus in (2, 4)])
def test_every_core_signals_every_other_under_icount(guest, arch, cpus):
    """Under -icount QEMU runs the cores in turns and ends a turn only at a halt or a yield, so a
    core that polls for another's interrupt without a yield keeps the turn for ever: the boot's
    IPI round must relax while it polls (docs/linux-baseline.md, "More than one CPU under
    -icount")."""
    run = guest(arch=arch, cpus=cpus, icount=True)
    assert_booted(run, arch, cpus)


@pytest.mark.parametrize("arch,lock,cpus", OTHER_LOCKS)
def test_boot_other_locks(guest, arch, lock, cpus):
    run = guest(arch=arch, lock=lock, cpus=cpus)
    assert_booted(run, arch, cpus)
    assert run.boot_record["lock"] == lock


@pytest.mark.parametrize("cpus", [1, 2])
def test_boot_kvm(guest, cpus):
    reason = kvm_skip_reason()
    if reason:
        pytest.skip(reason)
    run = guest(cpus=cpus, accel="kvm")
    assert_booted(run, "x86_64", cpus)
    assert run.boot_record["accel"] == "kvm"


def test_iso_boots(guest):
    """The GRUB image a user writes to a USB stick boots to the same state."""
    run = guest(cpus=4, iso=True)
    assert_booted(run, "x86_64", 4)


def test_lock_and_build_options_reach_the_boot_record(guest):
    run = guest(cpus=2, lock="bkl")
    assert run.boot_record["lock"] == "bkl"
    assert run.boot_record["debug"] is True


@pytest.mark.parametrize("arch", [on_port("x86_64"), on_port("arm-imx6")])
def test_exit_status_reaches_qemu(guest, arch):
    """An unknown app makes the root task halt with status 2, and QEMU's exit carries it."""
    run = guest(arch=arch, cpus=1, app="no-such-app")
    assert run.done_status == 2
    assert run.status == 2


@pytest.mark.parametrize("arch", [on_port("x86_64"), on_port("arm-imx6")])
def test_kernel_exception_takes_the_panic_path(guest, arch):
    """A kernel-mode undefined instruction: register dump, backtrace, `panic` record, run stopped."""
    reason, registers, addr2line = PANICS[arch]
    run = guest(arch=arch, cpus=2 if arch == "x86_64" else 4, args="kernel_fault=1")
    panics = run.of_type("panic")
    assert panics and reason in panics[0]["panic"]["reason"], run.log
    for reg in registers:
        assert reg in run.log, run.log
    assert_panic_path(run, build(arch, "bkl") / "kernel.elf", addr2line, "arch_undefined_instruction")


def test_kernel_fault_option_needs_debug(guest):
    """Without DEBUG the boot option does nothing: the run ends normally."""
    run = guest(cpus=1, args="kernel_fault=1", debug="0")
    assert_booted(run, "x86_64", 1)


def test_stopping_qemu_run_stops_qemu():
    """QEMU runs in a session of its own: a SIGTERM to qemu_run.py (as tools/redis_run.py and
    the sweep send when a boot's measurement is over) must end QEMU too, not leave it running."""
    image = build("x86_64", "bkl") / "kernel.elf"
    proc = subprocess.Popen([sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", "x86_64",
                             "--lock", "bkl", "--image", str(image), "--cpus", "1", "--accel", "tcg",
                             "--timeout", "300", "--cmdline", "app=fuzz calls=100000000"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    deadline = time.monotonic() + 60
    qemu = []
    while not qemu and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
        qemu = children.read_text().split()
    assert qemu, "qemu_run.py started no QEMU"
    os.killpg(proc.pid, signal.SIGTERM)
    assert proc.wait(timeout=60) != 0
    time.sleep(0.5)
    assert not Path(f"/proc/{qemu[0]}").exists() or \
        Path(f"/proc/{qemu[0]}/stat").read_text().split()[2] == "Z", "QEMU outlived qemu_run.py"
