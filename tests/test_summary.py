"""tools/summary.py: the report's sections, their order, and what stays out
of the default report, from hand-made records."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import model  # noqa: E402
import summary  # noqa: E402
from conftest import write_jsonl


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
    assert bkl.runs == 2
    fine = rows[("pingpong", "round_trip", "fine")]
    assert fine.ratio == pytest.approx(230 / 180) and fine.runs == 1
    assert ("pingpong", "call", "none") not in rows


def test_throughput_ratio_is_inverted_so_above_one_is_slower():
    records = [mcpingpong("none", 4000, 2, 1000.0), mcpingpong("bkl", 4000, 2, 800.0),
               mcpingpong("bkl", 0, 2, 500.0)]  # no `none` at delay 0: nothing to compare
    rows = summary.overhead_rows(records)
    assert len(rows) == 1
    assert rows[0].ratio == pytest.approx(1.25) and rows[0].config == "delay=4000 cores=2"
    assert summary.overhead_rows(records, "pingpong") == []


def test_report_has_no_stale_targets_or_cycle_references():
    text = summary.report([pingpong("none", 200, 200, "instructions"),
                           pingpong("bkl", 210, 200, "instructions"),
                           pingpong("fine", 230, 230, "instructions")])
    call_lines = [line for line in text.splitlines() if " call " in line and "pingpong" in line]
    assert "1.050" in call_lines[0] and "1.150" in call_lines[1]
    assert "1.03" not in text and "1.20" not in text and "MISSED" not in text
    assert "seL4" not in text and "775" not in text
    assert "no lockstats windows" in text
    assert "lockbench" in text and "not run: python3 tools/lockbench.py" in text


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
    assert text.index("## Emulator") < text.index("QEMU ran the cores one after another")
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


def icount_pingpongs(arch="x86_64"):
    return [cross("none", 0, 190, 180, arch), cross("bkl", 0, 200, 190, arch),
            cross("fine", 0, 230, 220, arch)] + ([cross("rtm", 0, 205, 195, arch)] if arch == "x86_64" else [])


def lockbench_records():
    out = []
    for variant in ("none", "bkl"):
        for n in (1, 2):
            x = model.throughput(n, 300 if variant == "bkl" else 1, 4000)
            out.append({"lockbench": {"variant": variant, "objects": "shared", "delay": 2000, "cores": n,
                                      "instructions": 131, "lines": 4, "entries": round(x * 1e9),
                                      "elapsed_cycles": 1e9, "tsc_hz": 2.5e9, "entry_cycles": 400.0,
                                      "section_cycles": 40.0,
                                      "rtm": {"usable": False, "why": "no TSX", "commits": 0,
                                              "aborts": {}, "fallbacks": 0}},
                        "sweep": {"rep": 0, "stats_build": False, "host": {"cpu": "test", "cpus": 2}}})
    return out


def tcg_redis(lock, cpus):
    from redis_console import console
    import records as rec
    meta = {"job": f"{lock}/redis/cpus={cpus}/delay=-/rep=0", "lock": lock, "cpus": cpus,
            "icount": True, "accel": "tcg"}
    return [{**r, rec.META_KEY: meta} for r in rec.parse_text(console(lock, cpus))]


def test_report_sections_in_the_issues_order():
    records = icount_pingpongs() + icount_pingpongs("arm-imx6") + tcg_redis("bkl", 1) + tcg_redis("bkl", 2)
    text = summary.report(records, lockbench_records(), title="Report of test")
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads == ["## 1. Single-core IPC per variant (exact instructions, QEMU -icount)",
                     "## 2. lockbench: the kernel's lock code on this host's cores (TSC cycles)",
                     "## 3. Redis: instructions per operation",
                     "## Emulator (these figures describe QEMU, not the kernel)"]
    first = text[text.index("## 1."):text.index("## 2.")]
    assert "x86_64    bkl       200        190        390   1.054       10.0" in first
    assert "arm-imx6  fine      230        220        450   1.216       40.0" in first
    assert "current targets" in first and "<= 200 ok" in first
    second = text[text.index("## 2."):text.index("## 3.")]
    assert "TSC 2.500 GHz" in second and "X(8)" in second and "X(16)" in second
    third = text[text.index("## 3."):text.index("## Emulator")]
    assert "kernel/op" in third and "user/op" in third and "lock/op" in third


def test_emulator_only_figures_stay_out_of_the_default_report():
    """Throughput against cores under -icount, and Redis throughput and Xput
    under TCG, only in the emulator section."""
    shared = [dict(mcpingpong("bkl", 0, n, 500000.0), shared_clock=True) for n in (1, 2, 4)]
    records = icount_pingpongs() + tcg_redis("bkl", 2) + shared
    text = summary.report(records, lockbench_records())
    default, emulator = text.split("## Emulator")
    for emulator_only in ("Xput", "ops/s", "queueing model (bkl", "total_rtt_per_s", "emulation"):
        assert emulator_only not in default, emulator_only
    assert "Xput" in emulator and "ops/s" in emulator and "queueing model (bkl" in emulator
    # Without such records there is no emulator section at all.
    assert "## Emulator" not in summary.report(icount_pingpongs(), lockbench_records())


def test_cli_writes_the_report(tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(run / "results.jsonl", icount_pingpongs())
    write_jsonl(run / "lockbench.jsonl", lockbench_records())
    assert summary.main([str(run), "--write", str(run / "report.md")]) == 0
    written = (run / "report.md").read_text()
    assert written.startswith("# Report of run") and "TSC 2.500 GHz" in written
    assert written in capsys.readouterr().out


def test_ports_are_kept_apart_in_ratios_and_hold_times():
    records = icount_pingpongs() + icount_pingpongs("arm-imx6")
    x86 = dict(cross("bkl", 0, 200, 190), lockstats=True, ipcs=100)
    arm = dict(cross("bkl", 0, 200, 190, "arm-imx6"), lockstats=True, ipcs=100)
    records += [lockstats(0, 100, 13000), x86, lockstats(0, 100, 1500), arm]
    holds = {h.config.split()[0]: h.held_per_acquisition for h in summary.lock_holds(records)}
    assert holds == {"x86_64": 130.0, "arm-imx6": 15.0}
    configs = {r.config for r in summary.overhead_rows(records, "pingpong")}
    assert configs == {"x86_64 cpus=1 length=0 same_space=False", "arm-imx6 cpus=1 length=0 same_space=False"}
