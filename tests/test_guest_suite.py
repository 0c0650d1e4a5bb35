"""The in-guest test suite (APP=tests) on both ports, and the fuzzer (APP=fuzz), over lock
variants and CPU counts.

Each in-guest test prints one `@@ {"test": ...}` record; every one becomes its own pytest case
here, drawn from a single boot per configuration.
"""
import re

import pytest

from conftest import (Boot, assert_booted, assert_guest_test_passed, console_record, fuzz_final_record,
                      guest_test_names, kvm_skip_reason, on_port, skip_is_expected, suite_group)
import qemu_run
from records import parse_text

def suite_config(arch: str, lock: str, cpus: int) -> object:
    return on_port(arch, lock, cpus, group=suite_group(arch, lock, cpus))


# (arch, lock, cpus): x86_64 runs every variant on 1, 2 and 4 CPUs; arm-imx6 runs its variants
# as on the board's four cores and on one, and bkl also on two.  `none` has no lock, so it runs
# on one core only.
CONFIGS = [suite_config("x86_64", "none", 1)] + \
          [suite_config("x86_64", lock, cpus) for lock in ("bkl", "fine", "rtm") for cpus in (1, 2, 4)] + \
          [suite_config("arm-imx6", "none", 1)] + \
          [suite_config("arm-imx6", "bkl", cpus) for cpus in (1, 2, 4)] + \
          [suite_config("arm-imx6", "fine", cpus) for cpus in (1, 4)]
NAMES = guest_test_names()

# Suites whose virtual CPUs take turns on one host thread (qemu_run.py --one-thread).  Four
# virtual CPUs under the CLH lock, each on a host thread of its own, convoy on a two-core host:
# the lock passes in FIFO order, and a waiter whose host thread is descheduled holds up everyone
# queued behind it until the host runs it again.  On arm-imx6 it is so even on a quiet host:
# QEMU's multi-threaded TCG makes ARM's YIELD and WFE no-ops, so a spinning waiter never hands
# its host core over, and a race test's round waits for the host's scheduler at every hand-over.
# On x86_64 (PAUSE leaves QEMU's CPU loop) it is so beside another busy guest, where a suite
# then runs many times longer.  In turns, a YIELD or PAUSE hands the turn on at once.  The
# two-CPU suites keep the CLH code of both ports truly parallel; rtm has no TSX under TCG and
# runs bkl's lock.
ONE_THREAD_SUITES = {("arm-imx6", "bkl", 4), ("x86_64", "bkl", 4), ("x86_64", "rtm", 4)}


# The limit only has to catch a hung guest.  It counts the guest's run time (qemu_run.py's
# GuestBudget), not the wall clock, so a loaded host does not use it up; a whole suite on four
# virtual CPUs runs in one to three minutes of it under TCG.  Beside another busy guest it can
# take ten times that: the host then deschedules a `bkl` guest's lock holder while its other
# virtual CPUs spin for the lock, and that spinning is run time too.
SUITE_TIMEOUT = 1800


def boots_through_uboot(arch: str, lock: str, cpus: int) -> bool:
    """arm-imx6's fine suite on four cores boots through U-Boot, as the board does, when U-Boot is
    unpacked: one boot then serves both this file and tests/test_arm.py's suite after U-Boot."""
    return (arch, lock, cpus) == ("arm-imx6", "fine", 4) and qemu_run.UBOOT_IMX.is_file()


def suite(guest, arch, lock, cpus, accel="tcg"):
    return guest(arch=arch, lock=lock, cpus=cpus, app="tests", accel=accel, timeout=SUITE_TIMEOUT,
                 uboot=boots_through_uboot(arch, lock, cpus),
                 one_thread=(arch, lock, cpus) in ONE_THREAD_SUITES)


def test_suite_is_large_enough():
    assert len(NAMES) >= 80, f"only {len(NAMES)} in-guest tests are registered"
    assert len(NAMES) == len(set(NAMES)), "in-guest test names repeat"


def fake_boot(arch: str, cores: int, net: bool = False) -> Boot:
    text = console_record({"boot": {"arch": arch, "cores": cores}})
    return Boot(argv=["qemu_run.py"] + (["--net"] if net else []), status=0, log=text,
                records=parse_text(text))


def test_only_expected_skips_pass_as_skips():
    """An in-guest skip is a pytest skip only when its reason holds of the boot that printed it."""
    one, four = fake_boot("x86_64", 1), fake_boot("x86_64", 4)
    assert skip_is_expected(one, "needs 2 cores: the Ack must come from another core")
    assert not skip_is_expected(four, "needs 2 cores: the Ack must come from another core")
    assert skip_is_expected(four, "no e1000 on this machine (x86_64: boot with --net)")
    assert not skip_is_expected(fake_boot("x86_64", 4, net=True), "no e1000 on this machine")
    assert skip_is_expected(four, "no i.MX6 ENET on this machine (it is arm-imx6's)")
    assert not skip_is_expected(fake_boot("arm-imx6", 4), "no i.MX6 ENET on this machine")
    assert not skip_is_expected(four, "some reason nobody expects")
    with pytest.raises(AssertionError, match="skipped unexpectedly"):
        text = console_record({"test": "t", "status": "skip", "detail": "needs 2 cores"})
        run = fake_boot("x86_64", 4)
        run.records += parse_text(text)
        assert_guest_test_passed(run, "t")


@pytest.mark.parametrize("arch,lock,cpus", CONFIGS)
@pytest.mark.parametrize("name", NAMES)
def test_guest(guest, arch, lock, cpus, name):
    run = suite(guest, arch, lock, cpus)
    assert_guest_test_passed(run, name)


CONSOLE_WHOLE = re.compile(r"console-whole c=(\d+) n=(\d+) ([a-z]+) end")


def broken_console_lines(log: str, cores: int) -> list[str]:
    """What the suite's console tests (userland/tests/test_debug.c) find wrong with the lines
    they printed: every core's long lines each whole, and a partial line never shared."""
    lines = log.replace("\r", "").split("\n")
    wrong = []
    seen = set()
    for line in lines:
        if "console-whole" in line:
            m = CONSOLE_WHOLE.fullmatch(line)
            if not m or m.group(3) != chr(ord("a") + int(m.group(1))) * 1200:
                wrong.append(line[:120] + ("..." if len(line) > 120 else ""))
            else:
                seen.add((int(m.group(1)), int(m.group(2))))
    missing = {(c, n) for c in range(cores) for n in range(8)} - seen
    if missing:
        wrong.append(f"lines never seen whole: {sorted(missing)}")
    for expected in ("console-writer A-begin", "console-writer B", " A-end"):
        if expected not in lines:
            wrong.append(f"no line {expected!r} alone")
    return wrong


def test_broken_console_lines_are_found():
    """The check itself: a cut line, a foreign prefix and a missing line are each reported."""
    whole = ["console-whole c=%d n=%d %s end" % (c, n, chr(97 + c) * 1200) for c in range(2) for n in range(8)]
    writer = ["console-writer A-begin", "console-writer B", " A-end"]
    assert broken_console_lines("\r\n".join(whole + writer) + "\r\n", 2) == []
    cut = list(whole)
    cut[3] = cut[3][:256] + "@@ {}" + cut[3][256:]
    assert len(broken_console_lines("\n".join(cut + writer), 2)) == 2
    assert broken_console_lines("\n".join(whole[1:] + writer), 2) == ["lines never seen whole: [(0, 0)]"]
    shared = ["console-writer A-beginconsole-writer B", " A-end"]
    assert len(broken_console_lines("\n".join(whole + shared), 2)) == 2


@pytest.mark.parametrize("arch,lock,cpus", CONFIGS)
def test_console_lines_stay_whole(guest, arch, lock, cpus):
    """Lines that every core prints at once, each longer than one SYS_DEBUG_PUTS call, reach the
    console whole, and one thread's partial line never gets another's text (docs/console.md)."""
    run = suite(guest, arch, lock, cpus)
    for name in ("debug_puts_long_lines_from_every_core", "debug_puts_partial_line_stays_its_writers"):
        assert_guest_test_passed(run, name)
    assert broken_console_lines(run.log, run.boot_record["cores"]) == []


@pytest.mark.parametrize("arch,lock,cpus", CONFIGS)
def test_suite_run_completes(guest, arch, lock, cpus):
    """The run ends by itself with status 0, on every core it was given, and ran every test."""
    run = suite(guest, arch, lock, cpus)
    assert_booted(run, arch, cpus)
    assert run.boot_record["lock"] == lock
    assert set(run.tests) == set(NAMES), set(NAMES) ^ set(run.tests)
    assert not run.of_type("panic"), run.of_type("panic")


@pytest.mark.parametrize("arch,lock", [on_port(arch, lock, group=suite_group(arch, lock, 4))
                                       for arch in ("x86_64", "arm-imx6") for lock in ("bkl", "fine")])
def test_multicore_tests_used_every_core(guest, arch, lock):
    """With four cores online the multicore tests really spread over them."""
    run = suite(guest, arch, lock, 4)
    mc = {n: r for n, r in run.tests.items() if n.startswith("mc_")}
    assert mc, "no multicore tests ran"
    assert any("4 cores" in r.get("detail", "") for r in mc.values()), mc


@pytest.mark.parametrize("arch", [on_port(arch, group=suite_group(arch, "bkl", 1)) for arch in ("x86_64", "arm-imx6")])
def test_user_timer_irq_ticks(guest, arch):
    """The port's timer tick reaches a user-level handler at about 100 Hz (QEMU's virtual time)."""
    record = suite(guest, arch, "bkl", 1).tests["irq_timer_delivery"]
    assert record["status"] == "pass", record
    m = re.search(r"2 ticks in (\d+) us", record["detail"])
    assert m, record
    assert 10_000 <= int(m.group(1)) <= 40_000, record["detail"]


@pytest.mark.parametrize("cpus", [2])
def test_suite_under_kvm(guest, cpus):
    reason = kvm_skip_reason()
    if reason:
        pytest.skip(reason)
    run = suite(guest, "x86_64", "bkl", cpus, accel="kvm")
    failed = [n for n, r in run.tests.items() if r["status"] == "fail"]
    assert not failed and run.done_status == 0


# Each variant's fuzz run is sized and run the way it finishes in CI's time on a two-core host,
# and bounded twice: by calls and by guest seconds (`seconds=`), whichever ends it first, so a
# loaded host shortens a run instead of timing it out.  Under `-icount` QEMU runs the virtual
# CPUs in turns on one host thread and switches at every PAUSE, so a core spinning for the big
# lock hands over at once: bkl and rtm on four cores run 100,000 calls, checked every 1,000, in
# 10-20 s (about 1.3 guest seconds), and a core can still be stopped anywhere in the kernel
# while it holds the lock.  Without -icount each virtual CPU is a host thread and the cores
# really run at once, which is what exposes memory-ordering bugs; there, with four virtual CPUs
# on two host cores, every wait for another core lasts until the host schedules that core's
# thread, which makes bkl crawl (20,000 calls took more than 8 minutes), so the truly parallel
# runs of bkl use two CPUs.  fine is the other way round: in turns its ticket-lock waits hand the
# turn round many times per call (10,000 calls took from 20 s to more than 6 minutes), while on
# four truly parallel cores it runs a million calls in about a minute on a quiet host.  Runs like
# that found a use-after-free (docs/locking.md, "Known problems"), so fine runs on four parallel
# cores.  none, which has no lock, runs on one core.  Longer runs are `make fuzz`
# (docs/userland.md).
# (arch, lock, cpus, calls, guest seconds, in turns under -icount); arm-imx6 as on the board's
# four cores, and `none` on one.  Each run is a boot of its own, and a pytest-xdist group of its
# own.
def fuzz_run(arch: str, lock: str, cpus: int, calls: int, seconds: int, turns: bool) -> object:
    return on_port(arch, lock, cpus, calls, seconds, turns, group=f"fuzz-{arch}-{lock}-{cpus}")


FUZZ_RUNS = [
    fuzz_run("x86_64", "none", 1, 300_000, 60, False),
    fuzz_run("x86_64", "bkl", 4, 300_000, 4, True),
    fuzz_run("x86_64", "rtm", 4, 300_000, 4, True),
    fuzz_run("x86_64", "fine", 4, 200_000, 90, False),
    fuzz_run("x86_64", "bkl", 2, 5_000, 60, False),
    fuzz_run("x86_64", "fine", 2, 5_000, 60, False),
    fuzz_run("arm-imx6", "none", 1, 300_000, 60, False),
    fuzz_run("arm-imx6", "bkl", 4, 300_000, 4, True),
    fuzz_run("arm-imx6", "fine", 4, 100_000, 90, False),
]


@pytest.mark.parametrize("arch,lock,cpus,calls,seconds,turns", FUZZ_RUNS)
def test_fuzz(guest, arch, lock, cpus, calls, seconds, turns):
    """Random invocations from threads on every core, checked every 1,000 calls of each fuzzer;
    the kernel survives and its checker never failed (its own count)."""
    run = guest(arch=arch, lock=lock, cpus=cpus, app="fuzz",
                args=f"calls={calls} seconds={seconds} check=1000 seed=1", icount=turns,
                timeout=1200)
    assert not run.of_type("panic"), run.of_type("panic")
    assert not run.of_type("invariant"), run.of_type("invariant")
    assert run.boot_record["cores"] == cpus
    record = run.tests.get("fuzz")
    assert record is not None and record["status"] == "pass", record
    final = fuzz_final_record(run)
    assert final["verdict"] == "pass" and final["failures"] == 0, final
    assert final["stopped_by"] in ("calls", "seconds") and final["calls"] > 0, final
    assert run.done_status == 0
