"""The ARM port (arm-imx6, QEMU sabrelite): boot, SMP, the exit path, the build rules.

The boot tests need the generic kernel to reach its boot and done records;
they boot with one and four cores (the Sabre Lite's i.MX6 Quad has four).
"""
import re
import shutil
import subprocess

import pytest

from conftest import REPO, build

ARCH = "arm-imx6"

needs_arm_tools = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm is not installed (make deps)")


def assert_booted(run, cpus):
    assert run.status == 0, f"qemu_run exited {run.status}"
    boot = run.boot_record
    assert boot["arch"] == ARCH
    assert boot["cores"] == cpus, f"{boot['cores']} of {cpus} cores online"
    assert boot["cores_expected"] == cpus
    assert boot["ipi_round"] == "ok"
    assert boot["rtm"] is False
    assert run.done_status == 0


@needs_arm_tools
@pytest.mark.parametrize("cpus", [1, 4])
def test_boot_hello(guest, cpus):
    run = guest(arch=ARCH, lock="bkl", cpus=cpus, app="hello")
    assert_booted(run, cpus)
    assert f"{cpus} core" in run.log, "the root task reports the cores online"


@needs_arm_tools
@pytest.mark.parametrize("lock", ["none", "fine"])
def test_boot_other_locks(guest, lock):
    cpus = 1 if lock == "none" else 4
    run = guest(arch=ARCH, lock=lock, cpus=cpus, app="hello")
    assert_booted(run, cpus)
    assert run.boot_record["lock"] == lock


@needs_arm_tools
def test_exit_status_reaches_qemu(guest):
    """An unknown app makes the root task halt with status 2; semihosting carries it to QEMU."""
    run = guest(arch=ARCH, lock="bkl", cpus=1, app="no-such-app")
    assert run.done_status == 2
    assert run.status == 2


def test_rtm_refused():
    proc = subprocess.run(["make", "-C", str(REPO), "kernel", f"ARCH={ARCH}", "LOCK=rtm"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "LOCK=rtm" in proc.stderr and "TSX" in proc.stderr
    assert "none bkl fine" in proc.stderr


def readelf(args, path):
    return subprocess.run(["arm-none-eabi-readelf", *args, str(path)], capture_output=True,
                          text=True, check=True).stdout


def mkimage_field(listing, name):
    m = re.search(rf"^{name}:\s*([0-9a-fA-F]+)\s*$", listing, re.MULTILINE)
    assert m, f"mkimage -l shows no {name}:\n{listing}"
    return int(m.group(1), 16)


@needs_arm_tools
@pytest.mark.skipif(shutil.which("mkimage") is None, reason="mkimage is not installed (u-boot-tools)")
def test_uimage_matches_elf():
    """The uImage's load and entry addresses are the ELF's first physical load address and entry."""
    build_dir = build(ARCH, "bkl", "uimage")
    elf = build_dir / "kernel.elf"
    entry = int(re.search(r"Entry point address:\s*(0x[0-9a-f]+)", readelf(["-hW"], elf)).group(1), 16)
    loads = [line.split() for line in readelf(["-lW"], elf).splitlines()
             if line.strip().startswith("LOAD")]
    first_paddr = int(loads[0][3], 16)

    listing = subprocess.run(["mkimage", "-l", str(build_dir / "uImage")], capture_output=True,
                             text=True, check=True).stdout
    assert "ARM" in listing
    assert mkimage_field(listing, "Load Address") == first_paddr == 0x10000000
    assert mkimage_field(listing, "Entry Point") == entry == 0x10000000
    # Every segment is loaded where the raw binary puts it: physical = load + file offset.
    binary = (build_dir / "kernel.bin").stat().st_size
    last = loads[-1]
    assert int(last[3], 16) + int(last[4], 16) == first_paddr + binary

    script = subprocess.run(["mkimage", "-l", str(build_dir / "boot.scr")], capture_output=True,
                            text=True, check=True).stdout
    assert "Script" in script
    cmd = (REPO / "arch" / ARCH / "boot.cmd").read_text()
    assert "fatload mmc 0:1 ${cmdline_addr} cmdline.txt" in cmd
    assert "setenv cmdline_addr 0x1ff00000" in cmd
