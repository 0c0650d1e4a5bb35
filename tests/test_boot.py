"""Boot on x86_64: every core online, the boot IPI round complete, a clean exit."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, assert_panic_path, build, kvm_skip_reason


def assert_booted(run, cpus):
    assert run.status == 0, f"qemu_run exited {run.status}"
    boot = run.boot_record
    assert boot["arch"] == "x86_64"
    assert boot["cores"] == cpus, f"{boot['cores']} of {cpus} cores online"
    # One core has no other core to signal: the kernel says the round was skipped.
    assert boot["ipi_round"] == ("ok" if cpus > 1 else "skipped")
    assert run.done_status == 0


@pytest.mark.parametrize("cpus", [1, 2, 4, 8])
def test_boot_tcg(guest, cpus):
    run = guest(cpus=cpus, accel="tcg")
    assert_booted(run, cpus)
    assert run.boot_record["accel"] == "tcg"


@pytest.mark.parametrize("cpus", [1, 2])
def test_boot_kvm(guest, cpus):
    reason = kvm_skip_reason()
    if reason:
        pytest.skip(reason)
    run = guest(cpus=cpus, accel="kvm")
    assert_booted(run, cpus)
    assert run.boot_record["accel"] == "kvm"


def test_iso_boots(guest):
    """The GRUB image a user writes to a USB stick boots to the same state."""
    run = guest(cpus=4, iso=True)
    assert_booted(run, 4)


def test_lock_and_build_options_reach_the_boot_record(guest):
    run = guest(cpus=2, lock="bkl")
    assert run.boot_record["lock"] == "bkl"
    assert run.boot_record["debug"] is True


def test_kernel_exception_takes_the_panic_path(guest):
    """A kernel-mode exception: register dump, backtrace, `panic` record, the run stopped."""
    run = guest(cpus=2, args="kernel_fault=1")
    assert "#UD invalid opcode" in run.of_type("panic")[0]["panic"]["reason"], run.log
    for reg in ("rip=", "rsp=", "cr3="):
        assert reg in run.log, run.log
    assert_panic_path(run, build("x86_64", "bkl") / "kernel.elf", "addr2line",
                      "arch_undefined_instruction")


def test_kernel_fault_option_needs_debug(guest):
    """Without DEBUG the boot option does nothing: the run ends normally."""
    run = guest(cpus=1, args="kernel_fault=1", debug="0")
    assert_booted(run, 1)


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
