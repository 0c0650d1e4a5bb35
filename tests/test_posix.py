"""The POSIX personality (docs/posix.md) on both ports: userland/programs/posix_selftest.c, a
program built with musl like any other, uses each family of Linux calls the personality
implements (memory, clocks, pipes, epoll and poll, threads with mutexes and condition variables,
the thread pool's bound) and the errors it must give (ENOSYS for a call it does not know,
ENOENT, EBADF, EAFNOSUPPORT, ...), and prints one verdict per check.  `app=posix` runs it; the
program's exit_group ends the run through the root task's fault server, after the kernel
invariant checker.
"""
from __future__ import annotations

import subprocess

import pytest

from conftest import REPO, boot, on_port

pytestmark = pytest.mark.skipif(
    not (REPO / ".deps" / "musl" / "VERSION").is_file() or not (REPO / ".deps" / "lwip" / "src").is_dir(),
    reason="musl's or lwIP's source is missing from .deps (tools/ensure_deps.sh says why)")

CHECKS = {"argv", "malloc", "mmap_zeroed", "mmap_file_refused", "mmap_too_big_enomem", "monotonic_moves",
          "nanosleep_20ms", "realtime_plausible", "bad_clock_einval", "epoll_empty", "epoll_readable",
          "poll_readable", "pipe_read", "pipe_empty_eagain", "epoll_timeout", "epoll_add_twice_eexist",
          "pipe_eof", "threads_take_turns", "thread_pool_bounded", "unknown_call_enosys",
          "open_missing_enoent", "bad_fd_ebadf", "ipv6_eafnosupport", "udp_eprotonosupport",
          "no_network_enetdown", "urandom", "uname", "console_write"}


def selftest(arch: str):
    subprocess.run(["make", "-s", "-C", str(REPO), "posix-selftest", f"ARCH={arch}", "-j2"], check=True,
                   capture_output=True, text=True)
    return REPO / "build" / "posix" / arch / "posix_selftest"


@pytest.mark.parametrize("arch,lock,cpus", [on_port("x86_64", "bkl", 4), on_port("x86_64", "none", 1),
                                            on_port("arm-imx6", "bkl", 4)])
def test_every_call_family_and_its_errors(arch, lock, cpus):
    run = boot(arch, lock, cpus, "posix", f"argv=posix_selftest core={cpus - 1}",
               posix_program=str(selftest(arch)))
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
