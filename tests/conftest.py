"""The test harness: build a variant, boot it in QEMU, collect its `@@` records.

Builds and boots are cached for the whole session, so the many pytest cases
drawn from one in-guest test run share a single boot.  Every console log a
test used is attached to its report when the test fails.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

import qemu_run  # noqa: E402
from records import parse_text, record_type  # noqa: E402

# Seconds a boot may take under TCG before the harness calls it hung.  TCG on
# the two-core build machines runs 8 virtual CPUs slowly; scale with cpus.
BOOT_TIMEOUT = float(os.environ.get("BOOT_TIMEOUT", "180"))


class BuildError(Exception):
    pass


_builds: dict[tuple, Path] = {}


def make_vars(arch: str, lock: str, **opts: object) -> list[str]:
    return [f"ARCH={arch}", f"LOCK={lock}"] + [f"{k.upper()}={v}" for k, v in sorted(opts.items())]


def build(arch: str, lock: str, target: str = "kernel", **opts: object) -> Path:
    """Build one variant (once a session) and return its build folder."""
    key = (arch, lock, target, tuple(sorted(opts.items())))
    if key not in _builds:
        argv = ["make", "-s", "-C", str(REPO), target] + make_vars(arch, lock, **opts)
        argv.append("print-build-dir")
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BuildError(f"{' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}")
        _builds[key] = REPO / proc.stdout.strip().splitlines()[-1]
    return _builds[key]


@dataclass
class Boot:
    """One QEMU run: its console, records and exit status."""
    argv: list[str]
    status: int
    log: str
    records: list[dict] = field(default_factory=list)

    def of_type(self, kind: str) -> list[dict]:
        return [r for r in self.records if record_type(r) == kind]

    @property
    def boot_record(self) -> dict:
        found = self.of_type("boot")
        assert found, "the kernel printed no boot record"
        return found[0]["boot"]

    @property
    def done_status(self) -> int | None:
        done = self.of_type("done")
        return done[-1]["status"] if done else None

    @property
    def tests(self) -> dict[str, dict]:
        return {r["test"]: r for r in self.of_type("test")}


_boots: dict[tuple, Boot] = {}


def boot(arch: str = "x86_64", lock: str = "bkl", cpus: int = 4, app: str = "hello",
         args: str = "", accel: str = "tcg", icount: bool = False, iso: bool = False,
         uboot: bool = False, timeout: float | None = None, net: bool = False,
         **opts: object) -> Boot:
    """Build and boot a variant (cached per session); never raises on guest failure.

    iso boots x86_64's GRUB image from a CD; uboot boots arm-imx6 through U-Boot; net gives
    the guest a NIC on QEMU user networking (qemu_run.py --net).
    """
    key = (arch, lock, cpus, app, args, accel, icount, iso, uboot, net, tuple(sorted(opts.items())))
    if key in _boots:
        return _boots[key]
    build_dir = build(arch, lock, "iso" if iso else "uimage" if uboot else "kernel", **opts)
    argv = [sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", arch, "--lock", lock,
            "--image", str(build_dir / "kernel.elf"), "--cpus", str(cpus), "--accel", accel,
            "--timeout", str(timeout or BOOT_TIMEOUT), "--cmdline", f"app={app} {args}".strip()]
    if iso:
        argv += ["--iso", str(build_dir / "kernel.iso")]
    if uboot:
        argv += ["--uboot", str(qemu_run.UBOOT_IMX)]
    if icount:
        argv.append("--icount")
    if net:
        argv.append("--net")
    if str(opts.get("unsafe", 0)) == "1":
        argv.append("--unsafe")
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          errors="replace")
    log = proc.stdout + proc.stderr
    result = Boot(argv=argv, status=proc.returncode, log=log, records=parse_text(proc.stdout))
    _boots[key] = result
    return result


def config_id(config: tuple[str, int]) -> str:
    """A (lock, cpus) configuration as a pytest id: "fine-4cpu"."""
    lock, cpus = config
    return f"{lock}-{cpus}cpu"


def assert_guest_test_passed(run: Boot, name: str) -> None:
    """The in-guest test `name` printed its record, and it passed (or skipped, with its reason)."""
    record = run.tests.get(name)
    assert record is not None, f"the guest printed no record for {name} (status {run.status})"
    if record["status"] == "skip":
        pytest.skip(f"in-guest test {name} skipped: {record.get('detail', '')}")
    assert record["status"] == "pass", record.get("detail", "")


def assert_panic_path(run, elf: Path, addr2line: str, fault_function: str) -> None:
    """A kernel_fault=1 boot went down the panic path: record, backtrace, QEMU stopped (exit 4).

    The faulting address and every backtrace address must be code of the kernel image:
    addr2line names a function for each (return addresses are looked up one byte back,
    inside the call).
    """
    assert run.status == qemu_run.EXIT_PANIC, f"qemu_run exited {run.status}"
    assert run.done_status is None
    panics = run.of_type("panic")
    assert len(panics) == 1 and panics[0]["panic"]["core"] == 0, panics
    at = re.search(r"at (?:rip|pc) (0x[0-9a-f]+)", panics[0]["panic"]["reason"])
    trace = re.search(r"backtrace:((?: (?:0x)?[0-9a-f]+)+)", run.log)
    assert at and trace, run.log
    returns = [hex(int(a, 16) - 1) for a in trace.group(1).split()]

    def functions(addrs: list[str]) -> list[str]:
        out = subprocess.run([addr2line, "-f", "-e", str(elf)] + addrs, capture_output=True,
                             text=True, check=True).stdout.splitlines()
        return out[0::2]

    assert functions([at.group(1)]) == [fault_function]
    names = functions(returns)
    assert names and "??" not in names, list(zip(returns, names))


def kvm_skip_reason(arch: str = "x86_64") -> str | None:
    """None when KVM runs this kernel with user mode here, else why not."""
    image = build(arch, "bkl") / "kernel.elf"
    usable, reason = qemu_run.kvm_usable(image, arch)
    return None if usable else f"KVM is not usable for this kernel here: {reason}"


def guest_test_names() -> list[str]:
    """The in-guest tests registered with TEST(name) in userland/tests/."""
    names = []
    for path in sorted((REPO / "userland" / "tests").glob("*.c")):
        names += re.findall(r"^TEST\((\w+)\)", path.read_text(), re.MULTILINE)
    return names


@pytest.fixture
def guest(request):
    """Boot a variant; the console logs of every boot are attached if the test fails."""
    used: list[Boot] = []
    request.node.guest_boots = used

    def run(**kwargs) -> Boot:
        result = boot(**kwargs)
        used.append(result)
        return result

    return run


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.failed:
        for b in getattr(item, "guest_boots", []):
            rep.sections.append((f"console of {' '.join(b.argv[2:])}", b.log))
