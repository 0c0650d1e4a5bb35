"""tools/records.py: reading `@@ ` records from console text and results files."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import records as rec  # noqa: E402

CONSOLE = """\
SeaBIOS (version 1.16)
booting kernel, 2 cores
@@ {"boot": {"arch": "x86_64", "lock": "bkl", "cores": 2, "accel": "tcg"}}
some text @@ not a record because it does not start the line
@@ {"test": "ipc_call_basic", "status": "pass", "detail": ""}
@@ {"bench": "pingpong", "unit": "instructions", "env": {"lock": "bkl", "cpus": 1}, "config": {"length": 0}, "call": {"median": 210}}
@@ {"lockstats": {"core": 0, "acquisitions": 10, "cycles_held": 1000}}\r
@@ {"done": true, "status": 0}
bye
"""


def test_parse_keeps_only_record_lines_in_order():
    records = rec.parse_text(CONSOLE)
    assert [rec.record_type(r) for r in records] == ["boot", "test", "bench", "lockstats", "done"]
    assert records[0]["boot"]["cores"] == 2
    assert records[3]["lockstats"]["cycles_held"] == 1000  # the \r of a serial line is dropped


def test_helpers_pick_records_by_type():
    records = rec.parse_text(CONSOLE)
    assert len(rec.of_type(records, "boot")) == 1
    assert rec.benches(records, "pingpong")[0]["call"]["median"] == 210
    assert rec.benches(records, "mcpingpong") == []
    assert rec.done_status(records) == 0
    assert rec.done_status(records[:-1]) is None


@pytest.mark.parametrize("bad, message", [
    ('@@ {"boot": {"arch": "x86_64"}', "malformed record"),
    ("@@ [1, 2]", "must be a JSON object"),
    ('@@{"done": true, "status": 0}', "followed by one space"),
    ('@@ {"a": 1, "b": 2}', "no single type key"),
])
def test_malformed_record_names_its_line(bad, message):
    text = "hello\n" + '@@ {"done": true, "status": 0}\n' + bad + "\n"
    with pytest.raises(rec.RecordError) as err:
        rec.parse_text(text, "run.log")
    assert "run.log:3" in str(err.value)
    assert message in str(err.value)


def test_field_reads_top_level_then_config():
    r = {"bench": "mcpingpong", "cores": 2, "config": {"delay": 4000, "cores": 9}}
    assert rec.field(r, "cores") == 2
    assert rec.field(r, "delay") == 4000
    assert rec.field(r, "missing", "x") == "x"


def test_sweep_metadata_is_not_a_type_key():
    assert rec.record_type({"lockstats": {}, rec.META_KEY: {"lock": "bkl"}}) == "lockstats"


def test_load_reads_console_logs_jsonl_files_and_run_directories(tmp_path):
    log = tmp_path / "boot.log"
    log.write_text(CONSOLE)
    assert len(rec.load(log)) == 5
    run = tmp_path / "run"
    run.mkdir()
    lines = [{"done": True, "status": 0, rec.META_KEY: {"job": "x"}}, {"boot": {"cores": 1}}]
    (run / "results.jsonl").write_text("\n".join(json.dumps(r) for r in lines) + "\n\n")
    assert rec.load(run) == lines
    (run / "results.jsonl").write_text('{"boot": {}}\n{"boot": \n')
    with pytest.raises(rec.RecordError, match="results.jsonl:2"):
        rec.load(run / "results.jsonl")


def test_lockstats_windows_take_the_last_group_before_their_bench_record():
    def stats(core, held):
        return {"lockstats": {"core": core, "cycles_held": held}}
    records = [{"boot": {}}, stats(0, 1), stats(1, 2),        # the reset's print
               stats(0, 10), stats(1, 20),                     # the window
               {"bench": "mcpingpong", "lockstats": True},
               {"boot": {}}, stats(0, 5),                      # a boot whose bench has no window
               {"bench": "pingpong", "lockstats": False},
               {"bench": "pingpong", "lockstats": True}]       # no group since the last bench
    windows = rec.lockstats_windows(records)
    assert len(windows) == 1
    bench, group = windows[0]
    assert bench["bench"] == "mcpingpong"
    assert [r["lockstats"]["cycles_held"] for r in group] == [10, 20]
