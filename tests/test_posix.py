"""The POSIX personality (docs/posix.md) on both ports: userland/programs/posix_selftest.c, a
program built with musl like any other, uses each family of Linux calls the personality
implements (memory, clocks, pipes, epoll and poll and epoll's order of ready fds, threads that
end and are joined or detached, threads with mutexes and condition variables, the thread
pool's bound) and the errors it must give (ENOSYS for a call it does not know,
ENOENT, EBADF, EAFNOSUPPORT, ...), and prints one verdict per check.  `app=posix` runs it; the
program's exit_group ends the run through the root task's fault server, after the kernel
invariant checker.  The run is read line by line, each line with the host's time at reading
it, so that the guest's real-time clock can be compared with the host's.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time

import pytest

from conftest import BOOT_TIMEOUT, REPO, Boot, build, on_port, parse_text

pytestmark = pytest.mark.skipif(
    not (REPO / ".deps" / "musl" / "VERSION").is_file() or not (REPO / ".deps" / "lwip" / "src").is_dir(),
    reason="musl's or lwIP's source is missing from .deps (tools/ensure_deps.sh says why)")

CHECKS = {"argv", "malloc", "mmap_zeroed", "mmap_file_refused", "mmap_too_big_enomem", "monotonic_moves",
          "nanosleep_20ms", "realtime_plausible", "bad_clock_einval", "epoll_empty", "epoll_readable",
          "poll_readable", "pipe_read", "pipe_empty_eagain", "writev_readv", "iovec_count_einval", "epoll_timeout", "epoll_add_twice_eexist",
          "pipe_eof", "epoll_readiness_order", "epoll_reported_goes_last", "epoll_ready_again_goes_last",
          "epoll_added_ready_goes_last",
          "thread_end_joined_memory_reused", "thread_end_off_the_joined_stack",
          "thread_end_detached", "threads_take_turns", "thread_pool_bounded", "unknown_call_enosys",
          "open_missing_enoent", "bad_fd_ebadf", "ipv6_eafnosupport", "udp_eprotonosupport",
          "no_network_enetdown", "urandom", "uname", "console_write"}

CONFIGS = [on_port("x86_64", "bkl", 4), on_port("x86_64", "none", 1), on_port("arm-imx6", "bkl", 4)]


def selftest(arch: str):
    subprocess.run(["make", "-s", "-C", str(REPO), "posix-selftest", f"ARCH={arch}", "-j2"], check=True,
                   capture_output=True, text=True)
    return REPO / "build" / "posix" / arch / "posix_selftest"


class TimedBoot:
    """One run of the selftest: the Boot, each console line with the host's time.time() at
    reading it, and the host's time just before qemu_run.py was started."""

    def __init__(self, run: Boot, lines: list[tuple[float, str]], started: float) -> None:
        self.run, self.lines, self.started = run, lines, started


_timed: dict[tuple, TimedBoot] = {}


def selftest_boot(arch: str, lock: str, cpus: int, words: str = "") -> TimedBoot:
    """Boot the selftest once per configuration and extra command-line words, reading the console
    as qemu_run.py prints it (it flushes every line), so that each line's reading time is known."""
    key = (arch, lock, cpus, words)
    if key in _timed:
        return _timed[key]
    build_dir = build(arch, lock, "kernel", posix_program=str(selftest(arch)))
    argv = [sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", arch, "--lock", lock,
            "--image", str(build_dir / "kernel.elf"), "--cpus", str(cpus), "--accel", "tcg",
            "--timeout", str(BOOT_TIMEOUT), "--cmdline", f"app=posix argv=posix_selftest core={cpus - 1} {words}".strip()]
    lines: list[tuple[float, str]] = []
    with tempfile.TemporaryFile(mode="w+") as errors:
        started = time.time()
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=errors,
                                text=True, errors="replace")
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append((time.time(), line))
        status = proc.wait()
        errors.seek(0)
        stderr = errors.read()
    stdout = "".join(line for _, line in lines)
    _timed[key] = TimedBoot(Boot(argv=argv, status=status, log=stdout + stderr, records=parse_text(stdout)),
                            lines, started)
    return _timed[key]


@pytest.mark.parametrize("arch,lock,cpus", CONFIGS)
def test_every_call_family_and_its_errors(arch, lock, cpus):
    run = selftest_boot(arch, lock, cpus).run
    records = run.of_type("posix_selftest")
    assert len(records) == 1, run.log[-3000:]
    verdicts = records[0]["posix_selftest"]["checks"]
    assert set(verdicts) == CHECKS
    assert [name for name, ok in verdicts.items() if not ok] == [], run.log[-3000:]
    assert records[0]["posix_selftest"]["failed"] == 0
    [end] = run.of_type("posix_exit")
    assert end["posix_exit"]["status"] == 0
    assert "kernel invariants hold" in run.log
    assert run.done_status == 0
    assert "posix: system call" in run.log      # the unknown call was named on the console


def clock_readings(timed: TimedBoot) -> list[tuple[float, dict]]:
    """The selftest's two posix_realtime records, each with the host's time at reading it."""
    readings = [(read_at, record["posix_realtime"]) for read_at, line in timed.lines
                for record in parse_text(line) if "posix_realtime" in record]
    assert len(readings) == 2, timed.run.log[-3000:]
    return readings


@pytest.mark.parametrize("arch,lock,cpus", CONFIGS)
def test_realtime_follows_the_host(arch, lock, cpus):
    """The guest's CLOCK_REALTIME against the host's, at the start and the end of the selftest.

    The guest prints its monotonic clock M, then its real-time clock R; the personality makes R
    from the counter and the boot's realtime_ms, which qemu_run.py takes, in milliseconds rounded
    down, after this test noted `started` and before QEMU starts.  Two bounds follow whatever the
    host's speed or load:
    - never ahead: R was read before the line was printed, so R <= the host's time at reading
      the line;
    - behind by no more than the time from `started` to the line's reading, less the guest's
      own time M: R - M (the Unix time the guest puts at its counter's 0) >= `started` rounded
      down to the millisecond.  A clock of whole seconds, as the command line had before, fails
      it whenever `started` is not in the first few milliseconds of its second.
    Both hold as long as the kernel's cycle_hz is not below the counter's true rate (a fast
    guest clock would get ahead); the lag the run shows is in the failure message.
    """
    timed = selftest_boot(arch, lock, cpus)
    readings = clock_readings(timed)
    started_ms = int(timed.started * 1000)
    for read_at, clocks in readings:
        real_s, mono_s = clocks["realtime_ns"] / 1e9, clocks["monotonic_ns"] / 1e9
        lag = f"the guest is {read_at - real_s:.3f} s behind the host {mono_s:.3f} s after its counter's 0"
        assert real_s <= read_at, f"the guest is ahead of the host: {lag}"
        assert clocks["realtime_ns"] - clocks["monotonic_ns"] >= started_ms * 1_000_000, \
            f"the guest's clock started before qemu_run.py did ({started_ms} ms): {lag}"


# 2026-01-01T00:00:00Z, the personality's real time at the counter's 0 when the boot gives none.
REALTIME_UNKNOWN_MS = 1767225600000


@pytest.mark.parametrize("arch,lock,cpus", [on_port("x86_64", "none", 1), on_port("arm-imx6", "bkl", 4)])
@pytest.mark.parametrize("given,expected_ms", [
    ("realtime_ms=4102444800123", 4102444800123),   # 2100-01-01 plus 123 ms: needs 64 bits on arm-imx6
    ("realtime_ms=17958x", REALTIME_UNKNOWN_MS),     # not a decimal number: unknown
    ("realtime_ms=", REALTIME_UNKNOWN_MS),           # empty: unknown
    ("realtime_ms=99999999999999999999999", REALTIME_UNKNOWN_MS),   # beyond 64 bits: unknown
], ids=["2100", "not-a-number", "empty", "too-big"])
def test_realtime_from_the_command_line(arch, lock, cpus, given, expected_ms):
    """A realtime_ms= on the command line (qemu_run.py then adds none) is the Unix time the guest
    puts at its counter's 0, to the millisecond; one the root task cannot read leaves it unknown
    (REALTIME_UNKNOWN_MS), never a wrong time.  R - M exceeds it only by the time between the two
    clock readings, which the bound of 1 s leaves room for on a loaded host."""
    timed = selftest_boot(arch, lock, cpus, given)
    assert timed.run.of_type("posix_selftest")[0]["posix_selftest"]["failed"] == 0, timed.run.log[-3000:]
    for _, clocks in clock_readings(timed):
        at_zero_ns = clocks["realtime_ns"] - clocks["monotonic_ns"]
        assert 0 <= at_zero_ns - expected_ms * 1_000_000 < 1_000_000_000, (given, at_zero_ns)
