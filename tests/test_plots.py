"""tools/plots.py: every figure is written as non-empty PNG and SVG."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import model  # noqa: E402
import plots  # noqa: E402


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
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in synthetic_records()))
    assert plots.main([str(run), "--bounds", "323,613"]) == 0
    names = sorted(p.name for p in (run / "plots").iterdir())
    assert names == sorted(f"{stem}.{ext}" for stem in ("ipc_cost", "scaling_bkl", "bounds_bkl",
                                                          "variants") for ext in ("png", "svg"))
