"""lockbench (bench/lockbench, tools/lockbench.py): the kernel's lock code on
the host's real cores.

Builds bench/lockbench with the host gcc into a temporary directory and runs
it: mutual exclusion under every variant (the shared count of sections must
equal the entries), RTM transactions and aborts by cause where the CPU has
TSX (a skip with the probe's reason elsewhere), the rtm variant's fallback
where RTM is off, argument checks, and the driver's core counts, hold time,
records and report.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import lockbench  # noqa: E402
import model  # noqa: E402
from conftest import build_host_programs  # noqa: E402

CPUS = len(os.sched_getaffinity(0))
# As many cores as may overlap here, at most 4: enough for sections to collide.
CORES = min(CPUS, 4)


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory):
    return build_host_programs(tmp_path_factory, "bench/lockbench") / "lockbench"


def run(bin_dir, variant, *args, stats=False, env=None):
    """(exit status, record or None, stderr) of one lockbench run."""
    cmd = [str(lockbench.program(bin_dir, variant, stats)), *map(str, args)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    record = json.loads(done.stdout)["lockbench"] if done.stdout.strip() else None
    return done.returncode, record, done.stderr


@pytest.fixture(scope="module")
def rtm_reason(bin_dir):
    """None when RTM transactions commit here, else the probe's reason."""
    _, record, _ = run(bin_dir, "rtm", "--cores", 1, "--ms", 1, stats=True)
    return record["rtm"]["why"] if not record["rtm"]["usable"] else None


@pytest.mark.parametrize("variant", ["bkl", "fine", "rtm", "none"])
@pytest.mark.parametrize("objects", ["shared", "disjoint"])
def test_mutual_exclusion_with_a_shared_count(bin_dir, variant, objects):
    """Every section reads the object's count at its start and writes it
    back one higher at its end; overlapping sections would lose counts.
    `none` has no lock, so only its disjoint layout (one object per core)
    and its single-core run are exclusive by construction."""
    cores = 1 if variant == "none" and objects == "shared" else CORES
    status, r, err = run(bin_dir, variant, "--cores", cores, "--ms", 150, "--instructions", 200,
                         "--lines", 4, "--objects", objects)
    assert status == 0, err
    assert r["variant"] == variant and r["cores"] == cores and r["pinned"]
    assert r["entries"] > 0 and r["sections"] == r["entries"] and r["exclusive"]
    assert sum(r["per_core_entries"]) == r["entries"] and len(r["per_core_entries"]) == cores


def test_the_count_catches_overlap_without_a_lock(bin_dir):
    """The check can fail: `none` on one shared object with every core, its
    sections long enough to overlap.  Whether they overlap depends on the
    host scheduling both threads at once, so a run without overlap is a
    skip, not a pass."""
    if CPUS < 2:
        pytest.skip("one CPU: no two sections can overlap")
    status, r, _ = run(bin_dir, "none", "--cores", CORES, "--ms", 200, "--instructions", 5000,
                       "--objects", "shared")
    if r["exclusive"]:
        pytest.skip("the host never ran two sections at once in 200 ms (busy machine?)")
    assert status == 1 and r["sections"] < r["entries"]


def test_rtm_transactions_commit(bin_dir, rtm_reason):
    if rtm_reason:
        pytest.skip(f"RTM not usable on this CPU ({rtm_reason}); real transactions need TSX")
    status, r, err = run(bin_dir, "rtm", "--cores", CORES, "--ms", 150, "--instructions", 100,
                         "--objects", "disjoint", stats=True)
    assert status == 0, err
    assert r["rtm"]["active"] and r["rtm"]["counted"] and r["exclusive"]
    assert r["rtm"]["commits"] > 0
    assert r["rtm"]["commits"] + r["rtm"]["fallbacks"] == r["rtm"]["acquisitions"] == r["entries"]


def test_rtm_forced_aborts_are_counted_and_fall_back(bin_dir, rtm_reason):
    """Every 10th entry calls kernel_lock_require_exclusive() inside its
    section: an explicit abort, after which the entry takes the CLH lock."""
    if rtm_reason:
        pytest.skip(f"RTM not usable on this CPU ({rtm_reason}); forced aborts need TSX")
    status, r, err = run(bin_dir, "rtm", "--cores", 1, "--ms", 100, "--instructions", 100,
                         "--abort-every", 10, stats=True)
    assert status == 0, err
    forced = r["entries"] // 10
    explicit = r["rtm"]["aborts"]["explicit"]
    assert forced > 0 and 0 < explicit <= forced
    assert r["rtm"]["fallbacks"] >= explicit
    assert r["rtm"]["commits"] > 0 and r["exclusive"]


def test_rtm_without_transactions_runs_its_fallback(bin_dir):
    """LOCKBENCH_RTM=0 makes the probe fail as on a CPU without TSX: the
    variant then takes the CLH lock on every entry and says why."""
    status, r, err = run(bin_dir, "rtm", "--cores", CORES, "--ms", 100, "--objects", "shared",
                         "--abort-every", 5, stats=True, env={"LOCKBENCH_RTM": "0"})
    assert status == 0, err
    assert not r["rtm"]["usable"] and not r["rtm"]["active"] and "LOCKBENCH_RTM=0" in r["rtm"]["why"]
    assert r["rtm"]["commits"] == 0 and sum(r["rtm"]["aborts"].values()) == 0
    assert r["exclusive"] and r["entries"] > 0


def test_timed_build_counts_nothing(bin_dir):
    """The timed build runs the kernel's LOCKSTATS=0 lock path: no counters."""
    status, r, _ = run(bin_dir, "rtm", "--cores", 1, "--ms", 20)
    assert status == 0 and r["rtm"]["counted"] is False and r["rtm"]["acquisitions"] == 0


@pytest.mark.parametrize("args, message", [
    (["--cores", "0"], "--cores"),
    (["--cores", str(CPUS + 1)], "real one"),
    (["--objects", "some"], "--objects"),
    (["--lines", "17"], "--lines"),
    (["--delay", "-5"], "--delay"),
    (["--ms", "0"], "--ms"),
    (["stray"], "unexpected"),
])
def test_bad_arguments_are_refused(bin_dir, args, message):
    status, r, err = run(bin_dir, "bkl", *args)
    assert status == 2 and r is None and message in err


def test_tsc_rate_and_cycles_are_reported(bin_dir):
    status, r, _ = run(bin_dir, "bkl", "--cores", 1, "--ms", 50, "--delay", 500, "--instructions", 100)
    assert status == 0
    assert 1e8 < r["tsc_hz"] < 1e11
    assert r["elapsed_cycles"] > 0 and r["section_cycles"] > 0
    assert r["entry_cycles"] > 0 and r["delay"] == 500 and r["instructions"] == 100


# --- the driver ---------------------------------------------------------------------


def test_default_core_counts_reach_every_core():
    assert lockbench.default_cores(1) == [1]
    assert lockbench.default_cores(2) == [1, 2]
    assert lockbench.default_cores(16) == [1, 2, 3, 4, 5, 6, 7, 8, 12, 16]
    assert lockbench.default_cores(64) == [1, 2, 3, 4, 5, 6, 7, 8, 12, 18, 27, 40, 60, 64]


def lockstats_window(held, acquisitions, lock="bkl", same_space=False, length=0, cpus=1):
    return [{"lockstats": {"core": 0, "acquisitions": acquisitions, "cycles_held": held}},
            {"bench": "pingpong", "unit": "instructions", "lockstats": True,
             "env": {"lock": lock, "cpus": cpus}, "config": {"same_space": same_space, "length": length}}]


def test_hold_comes_from_the_bkl_cross_space_window():
    records = (lockstats_window(1300, 10) + lockstats_window(9999, 10, lock="fine")
               + lockstats_window(9999, 10, same_space=True) + lockstats_window(9999, 10, length=4))
    hold = lockbench.hold_from_records(records)
    assert hold.instructions == 130 and "lockstats" in hold.source
    assert lockbench.hold_from_records(lockstats_window(1, 1, cpus=2)) is None


def test_committed_hold_file_is_read():
    hold = lockbench.hold_from_file()
    assert hold.instructions > 0 and "make qemu" in hold.source and "LOCKSTATS=1" in hold.source


def synthetic_records(s, a, cores, rtm=None):
    """Records whose throughput follows the model exactly (entries per cycle)."""
    out = []
    for n in cores:
        x = model.throughput(n, s, a)
        r = {"variant": "bkl", "objects": "shared", "delay": 2000, "cores": n, "instructions": 131,
             "lines": 4, "entries": round(x * 1e9), "elapsed_cycles": 1e9, "tsc_hz": 2.5e9,
             "entry_cycles": s + 50, "section_cycles": 40.0,
             "rtm": {"usable": False, "why": "no TSX", "commits": 0, "aborts": {}, "fallbacks": 0}}
        out.append({"lockbench": r, "sweep": {"rep": 0, "stats_build": False, "hold_source": "test",
                                              "host": {"cpu": "test", "cpus": 16}}})
    if rtm is not None:
        out.append({"lockbench": {**out[0]["lockbench"], "variant": "rtm", "rtm": rtm},
                    "sweep": {"rep": 0, "stats_build": True}})
    return out


def test_report_fits_the_model_and_predicts_8_and_16_cores():
    records = synthetic_records(300, 4000, [1, 2, 3, 4, 6, 8])
    pts = lockbench.points(records, "bkl", "shared", 2000)
    fitted, why = lockbench.fit_points(pts)
    assert why == "" and fitted.s == pytest.approx(300, rel=1e-3) and fitted.a == pytest.approx(4000, rel=1e-3)
    text = lockbench.report(records)
    assert "TSC 2.500 GHz" in text and "X(8)" in text and "X(16)" in text
    assert f"{model.throughput(16, 300, 4000) * 1e3:.3f}" in text
    assert "predict s = 40.0 cycles" in text


def test_report_says_when_the_fit_is_not_determined():
    text = lockbench.report(synthetic_records(300, 4000, [1]))
    assert "no fit: not determined" in text
    text = lockbench.report(synthetic_records(300, 4000, [1, 2]))
    assert "exact: 2 parameters through 2 points" in text


def test_report_shows_rtm_counts_or_why_there_are_none():
    counts = {"usable": True, "why": None, "commits": 12, "fallbacks": 3,
              "aborts": {"conflict": 2, "explicit": 1}}
    text = lockbench.report(synthetic_records(300, 4000, [1, 2], rtm=counts))
    assert "12 commits" in text and "conflict 2" in text and "3 fallbacks" in text
    text = lockbench.report(synthetic_records(300, 4000, [1, 2], rtm={**counts, "usable": False,
                                                                       "why": "no TSX here"}))
    assert "no transactions on this host (no TSX here)" in text


def test_driver_runs_and_writes_records(tmp_path):
    lines = []
    status = lockbench.main(["--cores", "1", "--variants", "bkl,rtm", "--delays", "0",
                             "--objects", "shared", "--reps", "2", "--ms", "20", "--out", str(tmp_path),
                             "--build", str(tmp_path / "build")], say=lines.append)
    assert status == 0, lines
    records = lockbench.load(tmp_path)
    assert len(records) == 2 + 3  # bkl twice; rtm twice and once with its -stats build
    assert all(r["lockbench"]["exclusive"] for r in records)
    assert "rtm:" in lines[-1] and "bkl" in lines[-1]


def test_driver_refuses_more_cores_than_the_host_has(tmp_path):
    lines = []
    assert lockbench.main(["--cores", str(CPUS + 1), "--out", str(tmp_path)], say=lines.append) == 2
    assert "real one" in lines[-1]
