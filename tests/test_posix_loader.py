"""The root task's POSIX loader (docs/posix-loader.md), with the test program
userland/programs/posix_check.c embedded (make programs; POSIX_PROGRAM=...).

The program reports what it finds in one `posix_start_check` record; each field is checked here
against what the loader promises and against the ELF as built (its entry point and program
headers, read on the host).  A write to its read-only data must give a `posix_fault` record
while the kernel stays up; a program for the other port, a truncated one and none at all must be
refused with a message and status 2.  The app `redis` must give the program the
real Redis's argv and its channel.
"""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from conftest import LWIP_PRESENT, REPO, boot, build, needs_arm_tools, on_port

POSIX_START_MAGIC = 0x706F7378
POSIX_START_VADDR_HEAP = 0x40000000
STACK_TOP = 0x0FF00000
STACK_SIZE = 1 << 20
IPCBUF_VADDR = 0x10010000
CLOCK_VADDR = 0x10003000
MAX_THREADS = 8
E_WOULD_BLOCK = 11
AT = {"phdr": 3, "phent": 4, "phnum": 5, "pagesz": 6, "entry": 9, "uid": 11, "euid": 12,
      "gid": 13, "egid": 14, "hwcap": 16, "secure": 23, "random": 25, "hwcap2": 26}
ARM_HWCAP_TLS = 1 << 15
ARM_HWCAP = 0x8097          # SWP HALF THUMB FAST_MULT EDSP TLS (arch/arm-imx6/user/posix_arch.h)
PORT = {
    "x86_64": {"sp_align": 16, "phent": 56, "machine": 62},
    "arm-imx6": {"sp_align": 8, "phent": 32, "machine": 40},
}
OTHER = {"x86_64": "arm-imx6", "arm-imx6": "x86_64"}
STATUS_SIGSEGV = 128 + 11

_programs: dict[str, Path] = {}


def program(arch: str) -> Path:
    """The test program for `arch`, built once a session (make programs)."""
    if arch not in _programs:
        subprocess.run(["make", "-s", "-C", str(REPO), "programs", f"ARCH={arch}"], check=True,
                       capture_output=True, text=True)
        _programs[arch] = REPO / "build" / "programs" / arch / "posix_check.elf"
    return _programs[arch]


def elf_header(path: Path) -> dict:
    """e_entry and e_phnum of a little-endian ELF, either class."""
    data = path.read_bytes()
    word = "Q" if data[4] == 2 else "I"
    entry, phoff = struct.unpack_from("<" + word * 2, data, 24)
    wsize = struct.calcsize(word)
    phnum = struct.unpack_from("<H", data, 24 + 3 * wsize + 4 + 4)[0]
    return {"entry": entry, "phoff": phoff, "phnum": phnum}


def posix_run(arch: str, cpus: int, args: str, embedded: Path | None = None, app: str = "posix",
              **opts):
    elf = embedded if embedded is not None else program(arch)
    return boot(arch, "bkl", cpus, app, args, posix_program=str(elf), **opts)


def only_record(run, kind: str) -> dict:
    found = run.of_type(kind)
    assert len(found) == 1, f"{len(found)} {kind} records (status {run.status}):\n{run.log[-3000:]}"
    return found[0][kind]


@pytest.mark.parametrize("arch,cpus", [on_port("x86_64", 1), on_port("x86_64", 4),
                                       on_port("arm-imx6", 4)])
def test_start_check(arch, cpus):
    core = cpus - 1
    args = f"argv=posix_check,exit=7,a,,b env=HOME=/,TERM=dumb core={core} heap_mb=3"
    run = posix_run(arch, cpus, args)
    check = only_record(run, "posix_start_check")
    port = PORT[arch]

    # The run ends with the program's own status, through exit_group and the fault server.
    assert only_record(run, "posix_exit") == {"process": 0, "thread": 0, "status": 7}
    assert run.status == 7 and run.done_status == 7
    assert "kernel invariants hold" in run.log

    # The start stack: argc, argv with an empty word, envp, sp aligned and on the stack.
    assert check["argc"] == 5
    assert check["argv"] == ["posix_check", "exit=7", "a", "", "b"]
    assert check["envp"] == ["HOME=/", "TERM=dumb"]
    sp = check["sp"]
    assert sp % port["sp_align"] == 0, f"sp {sp:#x} not {port['sp_align']}-byte aligned"
    assert STACK_TOP - STACK_SIZE < sp < STACK_TOP

    # The auxiliary vector, against the ELF as built and the program's own view of itself.
    auxv = dict(check["auxv"])
    header = elf_header(program(arch))
    assert auxv[AT["entry"]] == header["entry"] == check["self"]["entry"]
    assert auxv[AT["phdr"]] == check["self"]["phdr"] == 0x400000 + header["phoff"]
    assert auxv[AT["phnum"]] == header["phnum"] == check["self"]["phnum"]
    assert auxv[AT["phent"]] == port["phent"]
    assert auxv[AT["pagesz"]] == 4096
    for key in ("uid", "euid", "gid", "egid", "secure", "hwcap2"):
        assert auxv[AT[key]] == 0, key
    if arch == "arm-imx6":
        assert auxv[AT["hwcap"]] == ARM_HWCAP and auxv[AT["hwcap"]] & ARM_HWCAP_TLS
    else:
        assert auxv[AT["hwcap"]] & 1, "CPUID.1:EDX says FPU on every x86-64"
    assert sp < auxv[AT["random"]] < STACK_TOP - 16
    assert len(check["random"]) == 16 and any(check["random"])

    # The start page and the thread pool.
    start = check["start"]
    assert start["magic"] == POSIX_START_MAGIC
    assert start["core"] == core and check["core"] == core
    assert start["cycle_hz"] > 0
    assert start["clock_vaddr"] == (CLOCK_VADDR if arch == "arm-imx6" else 0)
    assert start["heap_vaddr"] == POSIX_START_VADDR_HEAP and start["heap_size"] == 3 << 20
    assert start["channel"] == 0 and check["channel_port"] is None
    assert start["nthreads"] == MAX_THREADS
    threads = start["threads"]
    assert [t["ipcbuf_vaddr"] for t in threads] == [IPCBUF_VADDR + k * 4096 for k in range(MAX_THREADS)]
    caps = [t["tcb"] for t in threads] + [t["wait"] for t in threads]
    assert all(caps) and len(set(caps)) == len(caps), caps
    assert all(t["wait_poll"] == E_WOULD_BLOCK for t in threads), "each wait is a notification"

    assert check["bootinfo"] == {"ncores": cpus, "arch": arch}

    # Memory: heap, .bss, .data, the IPC buffer, the clock.
    assert check["heap"] == {"zero": True, "writable": True}
    assert check["bss_zero"] and check["data_initialised"] and check["ipc_buffer"]
    assert check["clock_advances"] is (True if arch == "arm-imx6" else None)


@pytest.mark.parametrize("arch,cpus", [on_port("x86_64", 4), on_port("arm-imx6", 4)])
def test_write_to_read_only_data_faults(arch, cpus):
    run = posix_run(arch, cpus, f"argv=posix_check,fault core={cpus - 1}")
    target = only_record(run, "posix_start_check")["self"]["rodata_word"]
    fault = only_record(run, "posix_fault")
    assert fault["type"] == "vm" and fault["address"] == target and fault["fetch"] is False
    assert fault["process"] == 0 and fault["thread"] == 0 and fault["core"] == cpus - 1
    assert fault["status"] == STATUS_SIGSEGV
    assert not run.of_type("posix_check_fault_missed")
    # The kernel and the root task stayed up: the app checked the invariants and ended the run.
    assert "posix: the process ended (fault, status 139); kernel invariants hold" in run.log
    assert run.status == STATUS_SIGSEGV and run.done_status == STATUS_SIGSEGV


@pytest.mark.parametrize("arch,cpus", [on_port("x86_64", 1), on_port("arm-imx6", 4)])
def test_executing_data_faults(arch, cpus):
    """Segments without PF_X are mapped execute-never (x86_64: where the CPU has NX)."""
    run = posix_run(arch, cpus, "argv=posix_check,exec")
    if arch == "x86_64" and "NX yes" not in run.log:
        pytest.skip("this x86_64 CPU has no NX: execute-never cannot hold")
    target = only_record(run, "posix_start_check")["self"]["data_block"]
    fault = only_record(run, "posix_fault")
    assert fault["type"] == "vm" and fault["fetch"] is True
    assert fault["ip"] == target and fault["address"] == target
    assert not run.of_type("posix_check_fault_missed")
    assert run.status == STATUS_SIGSEGV and "kernel invariants hold" in run.log


def load_end(path: Path) -> int:
    """The end of the highest PT_LOAD segment of a little-endian ELF64."""
    data = path.read_bytes()
    phoff, = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    ends = []
    for i in range(phnum):
        p_type, _, _, vaddr, _, _, memsz, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1:
            ends.append(vaddr + memsz)
    return max(ends)


@pytest.mark.parametrize("where", ["root task's IPC buffer", "root task's image"])
def test_nothing_of_the_root_task_is_mapped(where):
    """At the root task's IPC buffer address, and in the root task's image past the program's
    own segments (both are linked at 0x400000), the process finds nothing."""
    if where == "root task's IPC buffer":
        address = 0x10001000
    else:
        root_elf = build("x86_64", "bkl", posix_program=str(program("x86_64"))) / "root.elf"
        address = (load_end(root_elf) - 1) & ~4095
        assert address >= load_end(program("x86_64")) + 4096, "the root task's image is no larger"
    run = posix_run("x86_64", 1, f"argv=posix_check,read={address:#x}")
    fault = only_record(run, "posix_fault")
    assert fault["type"] == "vm" and fault["address"] == address and fault["fetch"] is False
    assert not run.of_type("posix_check_fault_missed")
    assert run.status == STATUS_SIGSEGV


def refused(run) -> str:
    lines = [l for l in run.log.splitlines() if "the embedded program is refused" in l]
    assert run.status == 2 and run.done_status == 2, run.log[-2000:]
    assert not run.of_type("posix_start_check")
    assert len(lines) == 1, run.log[-2000:]
    return lines[0]


@needs_arm_tools
@pytest.mark.parametrize("arch", ["x86_64", "arm-imx6"])
def test_program_of_the_other_port_is_refused(arch):
    other = OTHER[arch]
    line = refused(posix_run(arch, 1, "", embedded=program(other)))
    assert f"ELF machine {PORT[other]['machine']}, this port runs machine {PORT[arch]['machine']}" in line


@pytest.mark.parametrize("size,why", [(3000, "beyond the file's end"),
                                      (40, "shorter than an ELF header")])
def test_truncated_program_is_refused(size, why):
    cut = REPO / "build" / "programs" / "x86_64" / f"posix_check_first_{size}_bytes.elf"
    cut.write_bytes(program("x86_64").read_bytes()[:size])
    line = refused(posix_run("x86_64", 1, "", embedded=cut))
    assert why in line and "truncated?" in line


def test_no_program():
    run = boot("x86_64", "bkl", 1, "posix")
    assert "this image embeds no program" in run.log
    assert run.status == 2 and run.done_status == 2


@pytest.mark.skipif(not LWIP_PRESENT, reason="this build has no lwIP: the app redis is absent")
def test_app_redis_gives_the_program_redis_argv_and_its_channel():
    """With the test program as the embedded 'redis-server': one instance (2 CPUs) on core 1,
    with Redis's argv and its channel; it exits before serving, which ends the run with 2."""
    heap_mb = 8
    run = posix_run("x86_64", 2, f"heap_mb={heap_mb}", app="redis", net=True)
    check = only_record(run, "posix_start_check")
    assert check["argv"] == ["redis-server", "--port", "6379", "--bind", "0.0.0.0", "--save", "",
                             "--appendonly", "no", "--protected-mode", "no", "--maxmemory",
                             f"{(heap_mb << 20) // 2}b", "--maxmemory-policy", "noeviction",
                             "--daemonize", "no"]
    assert check["start"]["core"] == 1 and check["core"] == 1
    assert check["start"]["heap_size"] == heap_mb << 20
    assert check["start"]["channel"] != 0 and check["channel_port"] == 6379
    assert "redis: POSIX instance 0 (port 6379) ended with status 0 before serving" in run.log
    assert run.status == 2 and run.done_status == 2


def test_core_not_online_is_refused():
    run = posix_run("x86_64", 4, "argv=posix_check core=9")
    assert "posix: core 9 is not online (4 cores)" in run.log
    assert not run.of_type("posix_start_check")
    assert run.status == 2 and run.done_status == 2


@pytest.mark.skipif(not LWIP_PRESENT, reason="this build has no lwIP: the app redis is absent")
def test_app_redis_makes_one_process_per_instance():
    """4 CPUs: three processes, on cores 1..3, each with its own port and channel.  The driver's
    loop starts only once all three are made; the first to exit ends the run, so the others may
    not have printed yet: every record printed must fit its instance."""
    run = posix_run("x86_64", 4, "heap_mb=4", app="redis", net=True)
    assert "could not be made" not in run.log
    assert "ended with status 0 before serving" in run.log
    checks = [r["posix_start_check"] for r in run.of_type("posix_start_check")]
    assert checks, run.log[-3000:]
    for check in checks:
        k = check["core"] - 1
        assert 0 <= k < 3 and check["start"]["core"] == k + 1
        assert check["argv"][:3] == ["redis-server", "--port", str(6379 + k)]
        assert check["channel_port"] == 6379 + k
    assert len({c["start"]["channel"] for c in checks}) == len(checks)
    assert run.status == 2 and run.done_status == 2
