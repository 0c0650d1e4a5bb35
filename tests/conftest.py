"""The test harness: build a variant, boot it in QEMU, collect its `@@` records.

Builds and boots are cached for the whole session, so the many pytest cases
drawn from one in-guest test run share a single boot.  Every console log a
test used is attached to its report when the test fails.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools"))

import host_cores  # noqa: E402
import qemu_run  # noqa: E402
from records import PREFIX, parse_text, record_type  # noqa: E402

# `make test` runs in two pytest-xdist workers.  In a worker, two makes in one tree at once would
# write the same build files, so every make, the harness's and those of the tools under test,
# goes through tests/bin/make, which holds one lock for the tree while it runs; and the guests
# share the host's cores as tools/host_cores.py says.
WORKER = os.environ.get(host_cores.WORKER_ENV)
if WORKER and "REAL_MAKE" not in os.environ:
    (REPO / "build").mkdir(exist_ok=True)
    os.environ["REAL_MAKE"] = shutil.which("make") or "make"
    os.environ["MAKE_LOCK"] = str(REPO / "build" / ".make.lock")
    os.environ["PATH"] = f"{REPO / 'tests' / 'bin'}{os.pathsep}{os.environ['PATH']}"
    os.environ[host_cores.LOCK_ENV] = str(REPO / "build" / ".host-cores.lock")
    host_cores.holder_mark(Path(os.environ[host_cores.LOCK_ENV]), WORKER).unlink(missing_ok=True)


# The groups that take longest, each a few minutes of one worker: the workers start them first,
# so that the short groups fill the end of the run instead of one long group running alone.
LONGEST_GROUPS = ("test_redis_soak", "test_posix_redis", "test_boot", "icount-arm-imx6", "test_insn_profile",
                  "fuzz-arm-imx6-fine-4", "test_linux_baseline", "icount-x86_64")


def xdist_group(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    return mark.args[0] if mark else Path(item.fspath).stem


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Before pytest-xdist reads the groups (`--dist loadgroup`): a test without a group of its
    own runs in its module's group, so a module's fixtures are made once; the tests that read one
    boot of the in-guest suite name its group themselves (suite_group), so the suites spread over
    the workers.  The longest groups go first (LONGEST_GROUPS)."""
    for item in items:
        if not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(xdist_group(item)))
    rank = {group: i for i, group in enumerate(LONGEST_GROUPS)}
    items.sort(key=lambda item: rank.get(xdist_group(item), len(rank)))


# Seconds a boot may take under TCG before the harness calls it hung.  TCG on
# the two-core build machines runs 8 virtual CPUs slowly; scale with cpus.
BOOT_TIMEOUT = float(os.environ.get("BOOT_TIMEOUT", "180"))


ARCHES = ("x86_64", "arm-imx6")

needs_arm_tools = pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm is not installed (make deps)")


def on_port(arch: str, *values: object, group: str | None = None) -> object:
    """A pytest parameter set whose first value is the port, skipped (saying why) where the port's
    compiler or QEMU is missing; its id joins the values: "arm-imx6-fine-4".  `group` names the
    pytest-xdist group of its tests (pytest_collection_modifyitems)."""
    marks = [needs_arm_tools] if arch == "arm-imx6" else []
    if group:
        marks.append(pytest.mark.xdist_group(group))
    return pytest.param(arch, *values, marks=marks, id="-".join(str(v) for v in (arch, *values)))


def suite_group(arch: str, lock: str, cpus: int) -> str:
    """The pytest-xdist group of the tests that read one boot of the in-guest suite."""
    return f"suite-{arch}-{lock}-{cpus}"


class BuildError(Exception):
    pass


_builds: dict[tuple, Path] = {}


def build_host_programs(tmp_path_factory, folder: str) -> Path:
    """Build the host programs of `folder` (tests/host, bench/lockbench) into a fresh temporary
    folder and return it; their own Makefile puts them in a subfolder named after it."""
    out = tmp_path_factory.mktemp(Path(folder).name)
    subprocess.run(["make", "-s", "-j2", "-C", str(REPO / folder), f"BUILD={out}"],
                   check=True, capture_output=True, text=True)
    return out


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
         one_thread: bool = False, **opts: object) -> Boot:
    """Build and boot a variant (cached per session); never raises on guest failure.

    iso boots x86_64's GRUB image from a CD; uboot boots arm-imx6 through U-Boot; net gives
    the guest a NIC on QEMU user networking (qemu_run.py --net); one_thread runs the virtual
    CPUs in turns on one host thread (qemu_run.py --one-thread).
    """
    key = (arch, lock, cpus, app, args, accel, icount, iso, uboot, net, one_thread,
           tuple(sorted(opts.items())))
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
    if one_thread:
        argv.append("--one-thread")
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


LWIP_PRESENT = (REPO / ".deps" / "lwip" / "src" / "core" / "tcp.c").is_file()

# The real Redis on the kernel needs lwIP, Redis's and musl's sources (tools/ensure_deps.sh).
needs_real_redis = pytest.mark.skipif(
    not LWIP_PRESENT or not (REPO / ".deps" / "redis" / "src" / "server.c").is_file()
    or not (REPO / ".deps" / "musl" / "VERSION").is_file(),
    reason="lwIP, Redis or musl source is missing from .deps (tools/ensure_deps.sh says why)")

# The reasons an in-guest test may skip for, each with the fact of the boot that makes it true:
# its port, its cores, its devices, what the build has.  The guest's reason must start with one
# of these phrases (userland/tests, SKIP), and the fact must hold of the boot that printed it.
EXPECTED_SKIPS: list[tuple[str, Callable[["Boot"], bool]]] = [
    ("this port has no I/O ports", lambda run: run.boot_record["arch"] != "x86_64"),
    ("no i.MX6 ENET on this machine", lambda run: run.boot_record["arch"] != "arm-imx6"),
    ("no e1000 on this machine",
     lambda run: run.boot_record["arch"] != "x86_64" or "--net" not in run.argv),
    ("no NIC on this machine", lambda run: "--net" not in run.argv),
    ("needs 2 cores", lambda run: run.boot_record["cores"] < 2),
    ("1 core online", lambda run: run.boot_record["cores"] == 1),
    ("this build has no lwIP", lambda run: not LWIP_PRESENT),
    ("this port keeps no FPU registers per thread", lambda run: run.boot_record["arch"] != "x86_64"),
    # QEMU's TCG only sets MXCSR's flag for an unmasked SSE exception; a real CPU raises #XM.
    ("the CPU raised no SIMD exception", lambda run: run.boot_record["accel"] == "tcg"),
]


def skip_is_expected(run: "Boot", reason: str) -> bool:
    """Whether an in-guest skip's reason is one of EXPECTED_SKIPS, true of this boot."""
    return any(reason.startswith(phrase) and holds(run) for phrase, holds in EXPECTED_SKIPS)


def assert_guest_test_passed(run: Boot, name: str) -> None:
    """The in-guest test `name` printed its record, and it passed, or skipped for a reason that
    holds of this boot (EXPECTED_SKIPS): any other skip is a failure."""
    record = run.tests.get(name)
    assert record is not None, f"the guest printed no record for {name} (status {run.status})"
    reason = record.get("detail", "")
    if record["status"] == "skip":
        assert skip_is_expected(run, reason), f"in-guest test {name} skipped unexpectedly: {reason}"
        pytest.skip(f"in-guest test {name} skipped: {reason}")
    assert record["status"] == "pass", reason


def assert_booted(run: Boot, arch: str, cpus: int) -> None:
    """The boot brought every core online, ran its IPI round and ended with status 0."""
    assert run.status == 0, f"qemu_run exited {run.status}"
    boot = run.boot_record
    assert boot["arch"] == arch
    assert boot["cores"] == cpus, f"{boot['cores']} of {cpus} cores online"
    assert boot["cores_expected"] == cpus
    # One core has no other core to signal: the kernel says the round was skipped.
    assert boot["ipi_round"] == ("ok" if cpus > 1 else "skipped")
    assert run.done_status == 0


def fuzz_final_record(run: Boot) -> dict:
    """The fuzzer's one final record (userland/fuzz, docs/userland.md)."""
    found = run.of_type("fuzz")
    assert len(found) == 1, f"{len(found)} final fuzz records (status {run.status})"
    return found[0]["fuzz"]


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Seconds a host client may wait for a reply from a guest: long, because a slow host delays the
# guest; only a bound on waiting, not a rate.
CLIENT_TIMEOUT = 300.0


def redis_cli(port: int, *args: str, timeout: float = CLIENT_TIMEOUT) -> str:
    """Debian's redis-cli against 127.0.0.1:port; its output, stripped."""
    proc = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args],
                          capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"redis-cli {' '.join(args)}: exit {proc.returncode}: {proc.stderr}"
    return proc.stdout.strip()


def console_record(value: dict) -> str:
    """One `@@` console line carrying `value` (docs/console.md)."""
    return PREFIX + json.dumps(value)


def write_jsonl(path: Path, records: list[dict]) -> Path:
    """Write records as a JSONL results file, as the sweep does."""
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


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
    """The in-guest tests registered with TEST(name) in userland/tests/.  A file may register a
    name in each branch of an #if (the port's test, and the other port's skip): once per file."""
    names = []
    for path in sorted((REPO / "userland" / "tests").glob("*.c")):
        names += dict.fromkeys(re.findall(r"^TEST\((\w+)\)", path.read_text(), re.MULTILINE))
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
