"""The POSIX build (docs/posix-build.md): musl with its system calls routed to the personality,
the personality library and Debian's Redis 7.0.15, built by `make posix` for both ports.

On both ports: nothing in musl's libc.a executes the system-call instruction, and redis-server
links as a static image of the port (ARM: soft-float, int-sized enums) that keeps out of the
root task's window and executes that instruction only in the personality's own functions.
The hook itself, on the x86_64 host and for arm-imx6 under qemu-arm: the trap keeps every
register its contract says it keeps, and a program and Redis linked with a personality that
passes each call on to Linux (tests/host/posix_hostcalls.c) run correctly, with calls arriving
both as C calls and through the trap.  Until userland/posix has a personality, libposix.a is built
with tests/host/posix_enosys.c, which only lets the images link.

`make posix` builds each port once (about a minute and a half per port on 2 cores); later
runs find it up to date.
"""

import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import free_port, needs_arm_tools, redis_cli

ROOT = Path(__file__).resolve().parent.parent
BUILD_TIMEOUT = 3600          # a bound on a hung build only; builds take minutes
SERVER_START_TIMEOUT = 120    # a bound on waiting for the server, not a rate
START_WINDOW = (0x10000000, 0x10100000)   # userland/include/posix_start.h: the root task's

SOURCES = {
    "musl": ROOT / ".deps/musl/src/internal/syscall.h",
    "redis": ROOT / ".deps/redis/src/server.c",
    "lwip": ROOT / ".deps/lwip/src/core/tcp.c",
}

TOOLS = {
    "x86_64": {"objdump": "objdump", "readelf": "readelf", "nm": "nm",
               "insn": re.compile(r"\t(syscall|sysenter|int\s+\$0x80)\b")},
    "arm-imx6": {"objdump": "arm-none-eabi-objdump", "readelf": "arm-none-eabi-readelf",
                 "nm": "arm-none-eabi-nm", "insn": re.compile(r"\t(svc|swi)\s")},
}

# Linux system-call numbers the hook's test expects to see, per port: the futex of the
# condvar (a C call); from the trap, clone (musl's __clone), the signal handler's return (the
# restorer: rt_sigreturn on x86_64, sigreturn on arm without SA_SIGINFO) and, on x86_64, the
# thread pointer (__set_thread_area's arch_prctl; arm's set_tls is a C call).
SYSCALLS = {
    "x86_64": {"futex": 202, "clone": 56, "sigreturn": 15, "arch_prctl": 158},
    "arm-imx6": {"futex": 240, "clone": 120, "sigreturn": 119},
}
# How a port's Linux programs run here: natively, or under qemu-arm.
RUNNER = {"x86_64": [], "arm-imx6": ["qemu-arm"]}


def personality_vars() -> list[str]:
    if list((ROOT / "userland/posix").glob("*.c")):
        return []
    return ["POSIX_PERSONALITY_SRC=tests/host/posix_enosys.c"]


def make(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(["make", "--no-print-directory", "-j2", *args, *personality_vars()], cwd=ROOT,
                          capture_output=True, text=True, timeout=BUILD_TIMEOUT)
    assert proc.returncode == 0, f"make {' '.join(args)} failed:\n{proc.stdout[-4000:]}{proc.stderr[-4000:]}"
    return proc


_built: set[str] = set()


def built(arch: str) -> Path:
    """`make posix ARCH=arch`, once a session; the port's build/posix folder."""
    for name, path in SOURCES.items():
        if not path.is_file():
            pytest.skip(f"Debian's {name} source is not in .deps/{name} "
                        f"(tools/ensure_deps.sh could not fetch it: apt-get source {name})")
    if arch not in _built:
        make("posix", f"ARCH={arch}")
        _built.add(arch)
    return ROOT / "build/posix" / arch


PORTS = [pytest.param("x86_64", id="x86_64"),
         pytest.param("arm-imx6", id="arm-imx6", marks=needs_arm_tools)]


def disassembly(arch: str, path: Path) -> str:
    return subprocess.run([TOOLS[arch]["objdump"], "-d", str(path)], capture_output=True,
                          text=True, check=True).stdout


def functions_executing_syscall(arch: str, path: Path) -> set[str]:
    """The functions of `path` that contain the port's system-call instruction."""
    found, function = set(), None
    for line in disassembly(arch, path).splitlines():
        heading = re.match(r"^[0-9a-f]+ <(.+)>:$", line)
        if heading:
            function = heading.group(1)
        elif TOOLS[arch]["insn"].search(line):
            found.add(function)
    return found


@pytest.mark.parametrize("arch", PORTS)
def test_libc_executes_no_system_call(arch):
    out = built(arch)
    libc = out / "sysroot/lib/libc.a"
    for part in [libc, *sorted((out / "sysroot/lib").glob("*.o"))]:
        assert functions_executing_syscall(arch, part) == set(), part.name
    relocs = subprocess.run([TOOLS[arch]["objdump"], "-dr", str(libc)], capture_output=True,
                            text=True, check=True).stdout
    # clone (twice), vfork, syscall_cp, the restorer(s), x86_64's __set_thread_area.
    assert len(re.findall(r"R_\w+\s+__posix_syscall_trap\b", relocs)) >= 5
    assert re.search(r"R_\w+\s+__posix_syscall\b", relocs)
    # The patch went to the copy, never to the fetched source.
    original = (ROOT / ".deps/musl/arch" / ("x86_64" if arch == "x86_64" else "arm") / "syscall_arch.h").read_text()
    assert "__posix_syscall" not in original


@pytest.mark.parametrize("arch", PORTS)
def test_redis_image(arch):
    out = built(arch)
    image = out / "redis-server"
    readelf = TOOLS[arch]["readelf"]
    header = subprocess.run([readelf, "-hlW", str(image)], capture_output=True, text=True, check=True).stdout
    assert "EXEC (Executable file)" in header
    assert "INTERP" not in header and "DYNAMIC" not in header
    for load in re.findall(r"^\s+LOAD\s+\S+\s+(0x[0-9a-f]+)\s+\S+\s+\S+\s+(0x[0-9a-f]+)", header, re.M):
        start, size = int(load[0], 16), int(load[1], 16)
        assert start + size <= START_WINDOW[0] or start >= START_WINDOW[1], f"segment {load} in the start window"
    if arch == "x86_64":
        assert "Advanced Micro Devices X86-64" in header
    else:
        assert re.search(r"Machine:\s+ARM", header)
        assert "soft-float ABI" in header
        attributes = subprocess.run([readelf, "-A", str(image)], capture_output=True, text=True,
                                    check=True).stdout
        assert "Tag_ABI_enum_size: int" in attributes
        assert "Tag_ABI_VFP_args" not in attributes
        assert 'Tag_CPU_arch: v7' in attributes
    # The instruction appears only in the personality's own functions (its calls to the kernel).
    personality = subprocess.run([TOOLS[arch]["nm"], "--defined-only", str(out / "libposix.a")],
                                 capture_output=True, text=True, check=True).stdout
    personality_functions = set(re.findall(r"^[0-9a-f]+ [Tt] (\S+)$", personality, re.M))
    outside = functions_executing_syscall(arch, image) - personality_functions
    assert outside == set(), f"system-call instructions outside the personality: {sorted(outside)}"


def host_counts(stderr: str) -> tuple[dict[int, int], dict[int, int]]:
    """The host personality's exit line: counts of calls by number, as C calls and via the trap."""
    line = re.search(r"^posix-hostcalls: call(.*) trap(.*)$", stderr, re.M)
    assert line, f"no counts from the host personality:\n{stderr}"

    def parse(text):
        return {int(n): int(c) for n, c in re.findall(r"(\d+):(\d+)", text)}
    return parse(line.group(1)), parse(line.group(2))


HOOK_PORTS = [pytest.param("x86_64", id="x86_64"),
              pytest.param("arm-imx6", id="arm-imx6", marks=[
                  needs_arm_tools,
                  pytest.mark.skipif(shutil.which("qemu-arm") is None,
                                     reason="qemu-arm is not installed (make deps installs qemu-user)")])]


@pytest.fixture(scope="module", params=HOOK_PORTS)
def hosttest(request):
    """(port, folder of the hook's test programs), built once per port."""
    arch = request.param
    built(arch)
    make("posix-hosttest", f"ARCH={arch}")
    return arch, ROOT / "build/posix" / arch / "hosttest"


def test_trap_keeps_registers(hosttest):
    """__posix_syscall_trap, called with every register set (and the stack pointer aligned or
    not) into a personality that overwrites every register C lets it, hands the personality the
    number and arguments and returns with only the result (and x86_64's rcx, r11) changed."""
    arch, folder = hosttest
    proc = subprocess.run([*RUNNER[arch], str(folder / "trap-regs")], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == ["misalign 0: kept", "misalign 1: kept"]


def test_hook_program(hosttest):
    arch, folder = hosttest
    proc = subprocess.run([*RUNNER[arch], str(folder / "hook-program")], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.splitlines() == [
        "malloc ok 1048576",
        "threads total 406000 joined 406 main tag 1",   # 4 threads x 1000 rounds x tags 100..103
        "signal 10",
        "clock monotonic ok wall ok",
    ]
    calls, traps = host_counts(proc.stderr)
    number = SYSCALLS[arch]
    assert sum(calls.values()) > 0 and sum(traps.values()) > 0
    assert calls.get(number["futex"], 0) > 0
    assert traps.get(number["clone"]) == 4               # one per pthread_create
    assert traps.get(number["sigreturn"]) == 1
    if "arch_prctl" in number:
        assert traps.get(number["arch_prctl"]) == 1


@pytest.mark.skipif(shutil.which("redis-cli") is None, reason="redis-cli is not installed (make deps)")
def test_redis_through_hook(hosttest):
    arch, folder = hosttest
    port = free_port()
    server = subprocess.Popen([*RUNNER[arch], str(folder / "redis-server"), "--port", str(port),
                               "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + SERVER_START_TIMEOUT
        while True:
            probe = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), "PING"],
                                   capture_output=True, text=True, timeout=60)
            if probe.stdout.strip() == "PONG":
                break
            assert server.poll() is None, f"redis-server exited: {server.communicate()}"
            assert time.monotonic() < deadline, "redis-server did not answer PING"
            time.sleep(0.1)
        assert redis_cli(port, "SET", "posix-key", "through the hook") == "OK"
        assert redis_cli(port, "GET", "posix-key") == "through the hook"
        info = redis_cli(port, "INFO", "server")
        assert "redis_version:7.0.15" in info
        assert "multiplexing_api:epoll" in info     # built as for Linux on both ports
        subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), "SHUTDOWN", "NOSAVE"],
                       capture_output=True, timeout=60)
        stdout, stderr = server.communicate(timeout=SERVER_START_TIMEOUT)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate()
    assert server.returncode == 0, stdout + stderr
    calls, traps = host_counts(stderr)
    assert sum(calls.values()) > 0 and sum(traps.values()) > 0
    assert traps.get(SYSCALLS[arch]["clone"], 0) > 0    # Redis's background threads


def test_new_personality_only_relinks():
    """A changed personality source rebuilds libposix.a and relinks redis-server, and nothing of
    musl or Redis's objects; an unchanged tree is up to date."""
    out = built("x86_64")
    assert make("posix", "ARCH=x86_64").stdout.strip() == ""
    sources = list((ROOT / "userland/posix").glob("*.c")) or [ROOT / "tests/host/posix_enosys.c"]
    sources[0].touch()
    proc = make("posix", "ARCH=x86_64")
    assert "./configure" not in proc.stdout and "cp -r .deps/redis" not in proc.stdout
    assert re.search(rf"-c {re.escape(str(sources[0].relative_to(ROOT)))} ", proc.stdout)
    log = (out / "redis-build.log").read_text()
    assert "LINK" in log and not re.search(r"\bCC\b", log), log
