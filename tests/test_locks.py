"""Host-side tests of the lock layer (lock/), one case per property.

Builds tests/host/ with the host gcc into a temporary directory and runs the
programs there: lock torture for mutual exclusion, FIFO and big-reader
sharing properties, RTM elision and its fallback paths, a deliberately
broken lock the harness must catch, ThreadSanitizer, the DEBUG lock-order
check of the `fine` glue, LOCKSTATS barrier counts, and warning-clean
freestanding builds for the kernel (x86_64, ARMv7).
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import build_host_programs

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "lock"
SKIP_EXIT = 77   # tests/host/env.h HOST_SKIP_EXIT
PANIC_EXIT = 3   # tests/host/env.h HOST_PANIC_EXIT

# Acquisitions per run, shared among the threads: enough for threads to
# overlap many times, small enough for 2 host cores (waiters yield).
TOTAL_SECTIONS = 120_000


@pytest.fixture(scope="session")
def host_bin(tmp_path_factory):
    return build_host_programs(tmp_path_factory, "tests/host") / "host"


@pytest.fixture(scope="session")
def rtm_reason(host_bin):
    """None when RTM works here, else why not."""
    r = subprocess.run([str(host_bin / "rtmprobe")], capture_output=True, text=True, timeout=30)
    if r.returncode == 0:
        return None
    assert r.returncode == SKIP_EXIT, r.stdout + r.stderr
    return r.stdout.strip()


@pytest.fixture
def need_rtm(rtm_reason):
    if rtm_reason is not None:
        pytest.skip(f"RTM not usable on this machine ({rtm_reason}); elision tests need real TSX")


def torture(host_bin, program, op, threads, iterations, inject=None, env=None):
    args = [str(host_bin / program), op, str(threads), str(iterations)]
    if inject is not None:
        args += [inject[0], str(inject[1])]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120,
                       env=None if env is None else {**os.environ, **env})
    assert r.returncode in (0, 1), f"{args}: rc={r.returncode}\n{r.stdout}{r.stderr}"
    return r.returncode, json.loads(r.stdout)


def overlapped(res):
    """Evidence that threads competed: someone waited, or a transaction conflicted."""
    a = res["stats"]["rtm_aborts"]
    return res["wait_hook_calls"] + a["conflict"] + a["lock_held"] > 0


def torture_overlapping(host_bin, program, op, threads, inject=None, env=None):
    """Run until the threads demonstrably overlapped (the host may be busy)."""
    iterations = TOTAL_SECTIONS // threads
    for _ in range(4):
        rc, res = torture(host_bin, program, op, threads, iterations, inject, env)
        if rc != 0 or overlapped(res):
            return rc, res
        iterations *= 2
    pytest.fail(f"{op} on {threads} threads: threads never overlapped, nothing was tested: {res}")


def assert_exclusive(rc, res):
    assert res["violations"] == 0, f"overlapping critical sections: {res}"
    assert res["counter"] == res["expected"], f"lost updates: {res}"
    assert rc == 0 and res["ok"], res


# --- mutual exclusion -------------------------------------------------------

EXCLUSION_CASES = [
    ("torture-bkl", "clh"),
    ("torture-bkl", "ticket"),
    ("torture-bkl", "brlock_write"),
    ("torture-bkl", "brlock_mixed"),
    ("torture-rtm", "rtm"),
    ("torture-bkl", "glue"),
    ("torture-fine", "glue"),
    ("torture-fine", "glue1"),
    ("torture-rtm", "glue"),
]


@pytest.mark.parametrize("threads", [2, 4, 8])
@pytest.mark.parametrize("program,op", EXCLUSION_CASES,
                         ids=[f"{p.split('-')[1]}-{o}" for p, o in EXCLUSION_CASES])
def test_mutual_exclusion(host_bin, rtm_reason, program, op, threads):
    if op == "rtm" and rtm_reason is not None:
        pytest.skip(f"RTM not usable on this machine ({rtm_reason})")
    rc, res = torture_overlapping(host_bin, program, op, threads)
    assert_exclusive(rc, res)
    if op == "brlock_mixed":
        assert res["shared_sections"] > 0
    if op == "glue":
        # Every kernel entry counted (fine: an upgrade counts read and write side).
        assert res["stats"]["acquisitions"] >= res["expected"]


# --- FIFO and big-reader sharing -------------------------------------------

@pytest.mark.parametrize("lock", ["clh", "ticket"])
def test_fifo_grant_order(host_bin, lock):
    r = subprocess.run([str(host_bin / "lockprops"), "fifo", lock, "6"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "grant order 1 2 3 4 5 6 (FIFO)" in r.stdout


def test_brlock_readers_run_in_parallel(host_bin):
    r = subprocess.run([str(host_bin / "lockprops"), "readers_parallel"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_brlock_writer_excludes_readers(host_bin):
    r = subprocess.run([str(host_bin / "lockprops"), "writer_excludes"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


# --- RTM elision ------------------------------------------------------------

@pytest.mark.parametrize("op", ["rtm", "glue"])
def test_rtm_elision_commits(host_bin, need_rtm, op):
    rc, res = torture(host_bin, "torture-rtm", op, 2, 20_000)
    assert_exclusive(rc, res)
    assert res["stats"]["rtm_commits"] > 0, res
    if op == "glue":
        assert res["rtm_active"] is True


@pytest.mark.parametrize("inject,cause", [
    ("explicit", "explicit"),
    ("capacity", "capacity"),
    ("needs_lock", "explicit"),
])
def test_rtm_forced_aborts_fall_back(host_bin, need_rtm, inject, cause):
    iterations, every = 4_000, 10
    # One thread: no conflicts, so the baseline hardly ever falls back...
    _, base = torture(host_bin, "torture-rtm", "glue", 1, iterations)
    # ...and with every tenth section forced to abort, it must.
    rc, res = torture(host_bin, "torture-rtm", "glue", 1, iterations, (inject, every))
    assert_exclusive(rc, res)
    forced = iterations // every
    assert res["stats"]["rtm_aborts"][cause] >= forced * 0.8, res
    assert res["stats"]["rtm_fallbacks"] >= forced * 0.8, res
    assert res["stats"]["rtm_fallbacks"] > base["stats"]["rtm_fallbacks"] + forced // 2, (base, res)
    # Under contention, with the fallback lock really held at times: still exclusive.
    rc, res = torture_overlapping(host_bin, "torture-rtm", "glue", 4, (inject, every))
    assert_exclusive(rc, res)
    assert res["stats"]["rtm_fallbacks"] > 0


def test_rtm_glue_without_rtm_is_bkl(host_bin):
    rc, res = torture_overlapping(host_bin, "torture-rtm", "glue", 4, env={"HOST_RTM": "0"})
    assert_exclusive(rc, res)
    assert res["rtm_active"] is False
    assert res["stats"]["rtm_commits"] == 0
    assert res["stats"]["rtm_fallbacks"] == 0


# --- the harness must catch broken locks ---------------------------------------

# Sections per thread a broken lock may take to be caught.  The broken lock
# widens its race window on purpose and the harness stops at the first
# violation, so this bound is far beyond what catching takes on any host; it
# only ends a run whose harness has stopped seeing overlaps.
BROKEN_LOCK_BOUND = 5_000_000


@pytest.mark.parametrize("program,op", [("torture-bkl", "broken_tas"), ("torture-none", "glue")],
                         ids=["broken_tas", "variant_none"])
def test_harness_reports_broken_lock(host_bin, program, op):
    rc, res = torture(host_bin, program, op, 2, BROKEN_LOCK_BOUND)
    assert rc == 1 and res["ok"] is False, f"harness missed a broken lock: {res}"
    assert res["violations"] > 0
    assert res["sections_run"] < 2 * BROKEN_LOCK_BOUND, "the run did not stop at the violation"
    print(f"{program} {op}: caught after {res['sections_run']} sections")


# --- ThreadSanitizer --------------------------------------------------------------

TSAN_CASES = [("tsan-torture-bkl", op) for op in ("clh", "ticket", "brlock_write", "brlock_mixed", "glue")]
TSAN_CASES.append(("tsan-torture-fine", "glue"))
TSAN_CASES.append(("tsan-torture-fine", "glue1"))


def tsan_run(host_bin, program, op, threads, iterations):
    return subprocess.run([str(host_bin / program), op, str(threads), str(iterations)],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "TSAN_OPTIONS": "halt_on_error=0 exitcode=66"})


def test_tsan_reports_no_races(host_bin):
    for program, op in TSAN_CASES:
        r = tsan_run(host_bin, program, op, 4, 4_000)
        assert "ThreadSanitizer" not in r.stderr, f"{program} {op}:\n{r.stderr[:4000]}"
        assert r.returncode == 0, f"{program} {op}: rc={r.returncode}\n{r.stdout}{r.stderr[:2000]}"


def test_tsan_sees_the_broken_lock(host_bin):
    """Control: the TSan build does detect races here, so silence above means something."""
    for iterations in (20_000, 80_000, 320_000):
        r = tsan_run(host_bin, "tsan-torture-bkl", "broken_tas", 4, iterations)
        if "WARNING: ThreadSanitizer: data race" in r.stderr:
            return
    pytest.fail("ThreadSanitizer never reported the broken lock's races")


# --- DEBUG lock order (fine glue) -------------------------------------------------

def test_debug_object_locks_sorted_and_deduplicated(host_bin):
    r = subprocess.run([str(host_bin / "lockorder"), "sorted"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr


def test_debug_one_object_lock(host_bin):
    r = subprocess.run([str(host_bin / "lockorder"), "one"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "held=1 freed=1" in r.stdout, r.stdout


@pytest.mark.parametrize("scenario,message", [
    ("descending", "object lock order"),
    ("one_below", "object lock order"),
    ("same_twice", "object lock order"),
    ("release_unheld", "not held"),
    ("exit_holding", "object locks still held"),
    ("too_many", "OBJECT_LOCKS_MAX"),
])
def test_debug_lock_order_violation_panics(host_bin, scenario, message):
    r = subprocess.run([str(host_bin / "lockorder"), scenario], capture_output=True, text=True, timeout=30)
    assert r.returncode == PANIC_EXIT, f"no lock_panic for {scenario}: {r.stdout}{r.stderr}"
    assert "lock_panic:" in r.stderr and message in r.stderr, r.stderr


# --- LOCKSTATS barrier counts (x86_64, docs/locking.md) ---------------------------

@pytest.mark.parametrize("program,barriers", [
    # bkl: XCHG per acquire, nothing per release; 16 entries.
    ("torture-bkl", 16),
    # fine, 16 iterations of the glue op: 2 ENTRY_GENERAL (ticket XADD + fence),
    # 1 upgrade (read fence, then writer XADD + fence), 13 ENTRY_IPC with two
    # distinct object locks (read fence + 2 XADD).
    ("torture-fine", 2 * 2 + (1 + 2) + 13 * 3),
])
def test_lockstats_barrier_counts(host_bin, program, barriers):
    rc, res = torture(host_bin, program, "glue", 1, 16)
    assert rc == 0
    assert res["stats"]["barriers"] == barriers, res


# --- freestanding kernel builds ------------------------------------------------

VARIANT_SOURCES = ["clh.c", "brlock.c", "lockstats.c"]
ENV_SYMBOLS = {"kernel_lock_wait_hook", "lock_env_core_id", "lock_env_cycles", "lock_panic",
               "lock_rtm_probe", "memcpy", "memset"}


def build_freestanding(cc, arch, variant, flags, outdir, macros):
    sysinc = subprocess.run([cc, "-print-file-name=include"], capture_output=True, text=True,
                            check=True).stdout.strip()
    objs = []
    for src in [f"{variant}.c"] + VARIANT_SOURCES:
        obj = outdir / f"{arch}-{variant}-{'-'.join(macros)}-{src}.o"
        cmd = [cc, "-std=c11", "-O2", "-Wall", "-Wextra", "-Werror", "-ffreestanding",
               "-nostdinc", "-isystem", sysinc, *flags,
               f"-I{LOCK}", f"-I{LOCK / 'variant' / variant}", f"-I{LOCK / arch}",
               *[f"-D{m}" for m in macros], "-c", str(LOCK / src), "-o", str(obj)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, " ".join(cmd) + "\n" + r.stderr
        objs.append(obj)
    return objs


def undefined_symbols(nm, objs):
    out = subprocess.run([nm, "-u", *map(str, objs)], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip() and ":" not in line}


@pytest.mark.parametrize("target", ["x86_64-kernel", "armv7"])
def test_freestanding_builds_are_clean(tmp_path, target):
    if target == "x86_64-kernel":
        cc, nm, arch, variants = "gcc", "nm", "x86_64", ["none", "bkl", "rtm", "fine"]
        flags = ["-mno-red-zone", "-mcmodel=kernel", "-fno-pic"]
    else:
        cc, nm, arch, variants = "arm-none-eabi-gcc", "arm-none-eabi-nm", "armv7", ["none", "bkl", "fine"]
        flags = ["-mcpu=cortex-a9", "-marm"]
        if shutil.which(cc) is None:
            pytest.skip("arm-none-eabi-gcc not installed")
    for variant in variants:
        for macros in (["LOCKSTATS=0", "DEBUG=0"], ["LOCKSTATS=1", "DEBUG=1"]):
            objs = build_freestanding(cc, arch, variant, flags, tmp_path, macros)
            defined = subprocess.run([nm, "--defined-only", *map(str, objs)], capture_output=True,
                                     text=True, check=True).stdout
            own = {line.split()[-1] for line in defined.splitlines() if line.strip() and ":" not in line}
            missing = undefined_symbols(nm, objs) - own - ENV_SYMBOLS
            assert not missing, f"{arch} {variant} {macros}: needs {missing} (no libc in lock/)"
            if macros[0] == "LOCKSTATS=0":
                # Statistics compile to nothing: no cycle counter reads at all.
                assert "lock_env_cycles" not in undefined_symbols(nm, objs[:1]), f"{arch} {variant}"
