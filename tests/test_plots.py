"""tools/plots.py: every figure is written as non-empty PNG and SVG."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import model  # noqa: E402
import plots  # noqa: E402
from conftest import write_jsonl


def synthetic_records():
    records = []
    for lock, cost in (("none", 400), ("bkl", 412), ("fine", 480)):
        records.append({"bench": "pingpong", "env": {"lock": lock, "cpus": 1}, "unit": "cycles",
                        **{m: {"median": cost, "stddev": 3, "min": cost - 4, "max": cost + 8}
                           for m in plots.IPC_FIGURES}})
        for delay in (500, 4000):
            for n in (1, 2, 4, 8):
                s = 358 if lock == "bkl" else 1e-3  # only the big lock serialises
                rate = model.throughput(n, s, delay + 2 * cost) * 1e9
                records.append({"bench": "mcpingpong", "env": {"lock": lock}, "unit": "cycles",
                                "delay": delay, "cores": n, "total_rtt_per_s": rate})
    return records


@pytest.mark.parametrize("draw", [
    plots.ipc_cost,
    plots.scaling,
    lambda records, stem: plots.bounded(records, stem, 323, 613),
    plots.variants,
], ids=["ipc_cost", "scaling", "bounded", "variants"])
def test_figure_written_as_png_and_svg(tmp_path, draw):
    paths = draw(synthetic_records(), tmp_path / "figure")
    assert sorted(p.suffix for p in paths) == [".png", ".svg"]
    for path in paths:
        assert path.stat().st_size > 1000
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in paths[1].read_bytes()[:1000]


def test_nothing_to_draw_writes_nothing(tmp_path):
    assert plots.write_all([{"boot": {"cores": 1}}], tmp_path) == []
    assert list(tmp_path.iterdir()) == []


def test_cli_writes_every_figure(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    write_jsonl(run / "results.jsonl", synthetic_records())
    assert plots.main([str(run), "--bounds", "323,613"]) == 0
    names = sorted(p.name for p in (run / "plots").iterdir())
    assert names == sorted(f"{stem}.{ext}" for stem in ("ipc_cost", "scaling_bkl", "bounds_bkl",
                                                          "variants") for ext in ("png", "svg"))


def lockbench_records():
    out = []
    for variant, s in (("none", 1.0), ("bkl", 300.0)):
        for n in (1, 2, 3, 4):
            x = model.throughput(n, s, 4000)
            out.append({"lockbench": {"variant": variant, "objects": "shared", "delay": 2000, "cores": n,
                                      "entries": round(x * 1e9), "elapsed_cycles": 1e9,
                                      "entry_cycles": 400.0, "section_cycles": 40.0},
                        "sweep": {"stats_build": False}})
    return out


def test_lockbench_figure_and_where_emulator_figures_go(tmp_path):
    paths = plots.lockbench_scaling(lockbench_records(), tmp_path / "lb")
    assert sorted(p.suffix for p in paths) == [".png", ".svg"] and paths[0].stat().st_size > 1000
    assert plots.lockbench_scaling(lockbench_records(), tmp_path / "lb2", "disjoint") == []
    shared_clock = [dict(r, shared_clock=True) if r["bench"] == "mcpingpong" else r
                    for r in synthetic_records()]
    written = plots.write_all(shared_clock, tmp_path / "out", lockbench_records=lockbench_records())
    names = {str(p.relative_to(tmp_path / "out")) for p in written}
    assert {"lockbench_shared.png", "ipc_cost.png", "emulator/scaling_bkl.png",
            "emulator/variants.png"} <= names
    assert "scaling_bkl.png" not in names
