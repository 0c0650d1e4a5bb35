"""The in-guest test suite (APP=tests) and the fuzzer (APP=fuzz), over lock variants and CPU counts.

Each in-guest test prints one `@@ {"test": ...}` record; every one becomes its own pytest case
here, drawn from a single boot per configuration.
"""
import pytest

from conftest import assert_guest_test_passed, config_id, guest_test_names, kvm_skip_reason

# (lock, cpus): every variant on 1, 2 and 4 CPUs; `none` has no lock, so it runs on one core only.
CONFIGS = [("none", 1)] + [(lock, cpus) for lock in ("bkl", "fine", "rtm") for cpus in (1, 2, 4)]
NAMES = guest_test_names()


# A whole suite on 4 virtual CPUs takes under a minute under TCG on a quiet two-core host (x86_64
# bkl: 26 s on 2026-11-25).  A loaded host stretches the lock variants far more than that: a
# virtual CPU holding the big lock is descheduled while the others spin, and the same bkl suite
# ran past 600 s beside one other 4-CPU guest.  The limit only has to catch a hung guest.
SUITE_TIMEOUT = 1200


def suite(guest, lock, cpus, accel="tcg"):
    return guest(lock=lock, cpus=cpus, app="tests", accel=accel, timeout=SUITE_TIMEOUT)


def test_suite_is_large_enough():
    assert len(NAMES) >= 80, f"only {len(NAMES)} in-guest tests are registered"
    assert len(NAMES) == len(set(NAMES)), "in-guest test names repeat"


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
@pytest.mark.parametrize("name", NAMES)
def test_guest(guest, config, name):
    run = suite(guest, *config)
    assert_guest_test_passed(run, name)


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_suite_run_completes(guest, config):
    """The run ends by itself with status 0, on every core it was given, and no unknown tests."""
    run = suite(guest, *config)
    assert run.boot_record["cores"] == config[1]
    assert run.boot_record["lock"] == config[0]
    assert set(run.tests) == set(NAMES)
    assert run.status == 0 and run.done_status == 0


@pytest.mark.parametrize("cpus", [2])
def test_suite_under_kvm(guest, cpus):
    reason = kvm_skip_reason()
    if reason:
        pytest.skip(reason)
    run = suite(guest, "bkl", cpus, accel="kvm")
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
# name: (lock, cpus, calls, guest seconds, in turns under -icount)
FUZZ_RUNS = {
    "none-1cpu": ("none", 1, 300_000, 60, False),
    "bkl-4cpu-turns": ("bkl", 4, 300_000, 4, True),
    "rtm-4cpu-turns": ("rtm", 4, 300_000, 4, True),
    "fine-4cpu-parallel": ("fine", 4, 200_000, 90, False),
    "bkl-2cpu-parallel": ("bkl", 2, 5_000, 60, False),
    "fine-2cpu-parallel": ("fine", 2, 5_000, 60, False),
}


@pytest.mark.parametrize("config", sorted(FUZZ_RUNS))
def test_fuzz(guest, config):
    """Random invocations from threads on every core, checked every 1,000 calls of each fuzzer;
    the kernel survives and its checker never failed (its own count)."""
    lock, cpus, calls, seconds, turns = FUZZ_RUNS[config]
    run = guest(lock=lock, cpus=cpus, app="fuzz",
                args=f"calls={calls} seconds={seconds} check=1000 seed=1", icount=turns,
                timeout=1200)
    assert not run.of_type("panic"), run.of_type("panic")
    assert not run.of_type("invariant"), run.of_type("invariant")
    record = run.tests.get("fuzz")
    assert record is not None and record["status"] == "pass", record
    final = run.of_type("fuzz")[-1]["fuzz"]
    assert final["verdict"] == "pass" and final["failures"] == 0, final
    assert final["stopped_by"] in ("calls", "seconds") and final["calls"] > 0, final
    assert run.done_status == 0
