"""The ARM port's own parts (arm-imx6, QEMU sabrelite): LOCK=rtm refused, the U-Boot images,
and booting them through the board's own U-Boot.

What both ports share is tested for both in one place each: booting in tests/test_boot.py, the
in-guest suite and the fuzzer in tests/test_guest_suite.py, the -icount ping-pong in
tests/test_icount.py.
"""
import re
import shutil
import subprocess

import pytest

import qemu_run
from conftest import REPO, assert_booted, build, guest_test_names, needs_arm_tools, suite_group

ARCH = "arm-imx6"
NAMES = guest_test_names()
SUITE_TIMEOUT = 1800    # as tests/test_guest_suite.py's, and for the same reason


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
    assert f"setenv cmdline_addr {qemu_run.ARM_CMDLINE_ADDR:#x}" in cmd


# ---- the board's boot path: Debian's U-Boot for the Sabre Lite, in QEMU

needs_uboot = pytest.mark.skipif(
    not qemu_run.UBOOT_IMX.is_file(),
    reason=f"U-Boot for the Sabre Lite is not unpacked at {qemu_run.UBOOT_IMX} (make deps, as root)")


@needs_arm_tools
@needs_uboot
def test_uboot_boots_the_uimage(guest):
    """U-Boot runs boot.scr, which fetches cmdline.txt and the uImage; bootm starts the kernel.

    The kernel then starts the other three cores itself, and the command line it read from
    cmdline.txt chose the app.
    """
    run = guest(arch=ARCH, lock="bkl", cpus=4, app="hello", uboot=True)
    assert "U-Boot 20" in run.log and "## Executing script" in run.log, run.log
    assert "Starting kernel ..." in run.log, run.log
    assert_booted(run, ARCH, 4)
    assert "hello from the root task: 4 cores online" in run.log


@needs_arm_tools
@needs_uboot
@pytest.mark.xdist_group(suite_group(ARCH, "fine", 4))
def test_suite_passes_after_uboot(guest):
    """The whole in-guest suite, on four cores, on a kernel U-Boot started.

    U-Boot leaves the machine as the board does, not as QEMU's loader does: caches used and
    cleaned, its own clocks, timer, GIC and UART settings.
    """
    run = guest(arch=ARCH, lock="fine", cpus=4, app="tests", uboot=True, timeout=SUITE_TIMEOUT)
    assert run.status == 0 and run.done_status == 0, f"qemu_run exited {run.status}"
    assert set(run.tests) == set(NAMES), set(NAMES) ^ set(run.tests)
    failed = {name: r.get("detail", "") for name, r in run.tests.items() if r["status"] == "fail"}
    assert not failed, failed
