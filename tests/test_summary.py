"""tools/summary.py: overhead ratios over `none` from hand-made records."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import model  # noqa: E402
import summary  # noqa: E402


def pingpong(lock, call, reply_recv, unit="cycles"):
    def stats(median):
        return {"mean": median, "stddev": 1, "median": median, "min": median - 1, "max": median + 1}
    return {"bench": "pingpong", "env": {"lock": lock, "cpus": 1}, "config": {"length": 0},
            "unit": unit, "call": stats(call), "reply_recv": stats(reply_recv),
            "round_trip": stats(call + reply_recv)}


def mcpingpong(lock, delay, cores, rate):
    return {"bench": "mcpingpong", "env": {"lock": lock, "cpus": cores}, "unit": "cycles",
            "delay": delay, "cores": cores, "total_rtt_per_s": rate,
            "per_core_rtt_per_s": [rate / cores] * cores}


def rows_by(records):
    return {(r.bench, r.metric, r.lock): r for r in summary.overhead_rows(records)}


def test_ratio_of_medians_with_spread_over_boots():
    records = [pingpong("none", 100, 80), pingpong("none", 110, 80), pingpong("none", 90, 80),
               pingpong("bkl", 103, 82), pingpong("bkl", 99, 82),
               pingpong("fine", 130, 100)]
    rows = rows_by(records)
    bkl = rows[("pingpong", "call", "bkl")]
    assert bkl.ratio == pytest.approx(101 / 100)            # median(103, 99) / median(100, 110, 90)
    assert (bkl.low, bkl.high) == pytest.approx((99 / 110, 103 / 90))
    assert bkl.runs == 2 and bkl.target == 1.03
    fine = rows[("pingpong", "round_trip", "fine")]
    assert fine.ratio == pytest.approx(230 / 180) and fine.runs == 1
    assert ("pingpong", "call", "none") not in rows


def test_throughput_ratio_is_inverted_so_above_one_is_slower():
    records = [mcpingpong("none", 4000, 2, 1000.0), mcpingpong("bkl", 4000, 2, 800.0),
               mcpingpong("bkl", 0, 2, 500.0)]  # no `none` at delay 0: nothing to compare
    rows = summary.overhead_rows(records)
    assert len(rows) == 1
    assert rows[0].ratio == pytest.approx(1.25) and rows[0].config == "delay=4000 cores=2"
    assert rows[0].target is None


def test_table_marks_targets_and_reference_unit():
    table = summary.report([pingpong("none", 200, 200, "instructions"),
                            pingpong("bkl", 210, 200, "instructions"),
                            pingpong("fine", 230, 230, "instructions")])
    call_lines = [line for line in table.splitlines() if " call " in line and "pingpong" in line]
    assert "1.050" in call_lines[0] and "<= 1.03 MISSED" in call_lines[0]   # bkl
    assert "1.150" in call_lines[1] and "<= 1.20 ok" in call_lines[1]       # fine
    assert "reference only: ours is in instructions under TCG" in table
    assert "bkl   call 210 (seL4 775)  reply_recv 200 (seL4 646)" in table
    assert "queueing model (bkl): no fit: no mcpingpong records for lock bkl" in table
    assert "no lockstats windows" in table
    cycles = summary.report([pingpong("none", 200, 200), pingpong("bkl", 201, 200)])
    assert "reference only" not in cycles and "seL4 775" in cycles


def lockstats(core, acquisitions, held, waited=0, barriers=None, histogram=(0, 0, 0)):
    return {"lockstats": {"core": core, "acquisitions": acquisitions, "contended": 0,
                          "cycles_held": held, "cycles_waited": waited,
                          "barriers": acquisitions if barriers is None else barriers,
                          "hold_histogram": list(histogram)}}


def test_going_further_fits_the_model_and_reads_lock_hold_times():
    records = [mcpingpong("bkl", 2000, n, model.throughput(n, 358, 2100) * 1e9)
               for n in range(1, 9)]
    window = dict(mcpingpong("bkl", 2000, 1, 1.0), lockstats=True)
    window2 = dict(mcpingpong("bkl", 2000, 2, 1.0), lockstats=True)
    records += [
        {"boot": {}},
        lockstats(0, 5, 99999),                       # printed by the reset: before the window
        lockstats(0, 100, 16400, waited=500, histogram=(0, 0, 90, 10)),
        window,
        {"boot": {}},
        lockstats(0, 7, 99999), lockstats(1, 7, 99999),
        lockstats(0, 100, 30000, waited=2000), lockstats(1, 100, 34000, waited=4000),
        window2]
    text = summary.report(records)
    assert "s = 358.0 cycles, a = 2100.0 cycles, R² = 1.0000 over 8 points" in text
    holds = {h.cores: h for h in summary.lock_holds(records)}
    assert holds[1].held_per_acquisition == 164.0 and holds[1].acquisitions == 100
    assert holds[2].held_per_acquisition == 320.0 and holds[2].acquisitions == 200
    assert holds[2].waited_per_acquisition == 30.0
    assert holds[1].held_percentile(0.5) == 256 and holds[1].held_percentile(0.95) == 512
    # No ping-pong window: one acquisition per IPC is assumed, two per round trip.
    assert "1 core(s): held 164.0 per acquisition, so s = 328.0 per round trip" in text
    assert "2 core(s): held 320.0 per acquisition, so s = 640.0 per round trip" in text
    assert "the model infers s = 358.0 from throughput against cores" in text
    # The lockstats runs are not compared with none and not fitted.
    assert all(r.cores in (1, 2) and r.bench == "mcpingpong" for r in summary.lock_holds(records))


def test_barriers_per_ipc_from_a_pingpong_window():
    bench = dict(pingpong("bkl", 900, 850, "instructions"), lockstats=True, ipcs=600)
    records = [lockstats(0, 3, 1), lockstats(0, 602, 487504, barriers=1806), bench]
    (hold,) = summary.lock_holds(records)
    assert hold.per_ipc(hold.barriers) == pytest.approx(3.01)
    assert hold.per_ipc(hold.acquisitions) == pytest.approx(602 / 600)
    text = summary.hold_report(records)
    assert "809.8" in text and "1.00" in text and "3.01" in text
    # A timed run of the same variant is compared; the statistics run is not.
    assert summary.overhead_rows(records + [pingpong("none", 800, 800, "instructions")]) == []


def test_shared_clock_note_and_per_core_time():
    shared = [dict(mcpingpong("bkl", 0, n, 500000.0), shared_clock=True) for n in (1, 2, 4)]
    text = summary.report(shared)
    assert "QEMU ran the cores one after another" in text
    assert "no fit" not in text
    assert "QEMU ran the cores" not in summary.report([mcpingpong("bkl", 0, 1, 5.0)])


def cross(lock, length, call, reply_recv, arch="x86_64"):
    r = pingpong(lock, call, reply_recv, unit="instructions")
    r["env"]["arch"] = arch
    r["config"] = {"same_space": False, "length": length}
    return r


def test_ipc_targets_from_icount_figures():
    records = [cross("none", 0, 190, 180), cross("none", 4, 206, 196),
               cross("bkl", 0, 200, 190), cross("rtm", 0, 205, 195), cross("fine", 0, 250, 240),
               pingpong("none", 10, 10),            # cycles, same_space unknown: left out
               cross("none", 0, 400, 400, arch="arm-imx6")]
    rows = {(arch, what.split(" (")[0]): (value, target) for arch, what, value, target in
            summary.ipc_target_rows(records)}
    assert rows[("x86_64", "none call, one way")] == (190, "<= 200 ok")
    assert rows[("x86_64", "per extra message register")] == (4, "<= 4 ok")
    assert rows[("x86_64", "bkl lock per kernel entry")] == (10, "<= 15 ok")
    assert rows[("x86_64", "rtm lock per kernel entry")] == (15, "<= 15 ok")      # bkl + 5
    assert rows[("x86_64", "fine lock per kernel entry")] == (60, "<= 40 MISSED")
    assert rows[("arm-imx6", "none reply_recv, one way")] == (400, "<= 200 MISSED")
    assert "fine lock per kernel entry (round trip 1.324 x none)" in summary.ipc_target_table(records)
