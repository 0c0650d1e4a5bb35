"""Read the `@@ ` records of the console protocol (docs/console.md).

A console log mixes text for people with records for tools: a record is a
line that starts with `@@ ` followed by one JSON object.  Every tool reads
records through this module, from a console log or from the results.jsonl
file a sweep writes (tools/sweep.py), where each line is one record and the
sweep has added its run description under the key `sweep`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable

PREFIX = "@@ "

# Key the sweep adds to every record it stores; not a record type.
META_KEY = "sweep"

# Types whose records carry their fields beside the type key
# (`{"done": true, "status": 0}` is one of them).
FLAT_TYPES = ("bench", "test", "done")


class RecordError(ValueError):
    """A line that claims to be a record but is not a valid one."""


def record_type(record: dict) -> str:
    """The type of a record: `bench`, `test`, or its one top-level key."""
    for flat in FLAT_TYPES:
        if flat in record:
            return flat
    keys = [k for k in record if k != META_KEY]
    if len(keys) != 1:
        raise RecordError(f"record has no single type key: {sorted(keys)}")
    return keys[0]


def _decode(text: str, where: str) -> dict:
    try:
        record = json.loads(text)
    except json.JSONDecodeError as err:
        raise RecordError(f"{where}: malformed record: {err.msg} at column {err.colno}") from None
    if not isinstance(record, dict):
        raise RecordError(f"{where}: a record must be a JSON object, got {type(record).__name__}")
    try:
        record_type(record)
    except RecordError as err:
        raise RecordError(f"{where}: {err}") from None
    return record


def parse_lines(lines: Iterable[str], source: str = "<console>") -> list[dict]:
    """Records from console lines; lines not starting with `@@` are ignored.

    A line starting with `@@` that is not `@@ ` plus one JSON object raises
    RecordError naming the source and the 1-based line number.
    """
    records = []
    for lineno, line in enumerate(lines, 1):
        line = line.rstrip("\r\n")
        if not line.startswith("@@"):
            continue
        where = f"{source}:{lineno}"
        if not line.startswith(PREFIX):
            raise RecordError(f"{where}: malformed record: '@@' must be followed by one space")
        records.append(_decode(line[len(PREFIX):], where))
    return records


def parse_text(text: str, source: str = "<console>") -> list[dict]:
    """Records from the whole text of a console log."""
    return parse_lines(text.splitlines(), source)


def load_jsonl(path: str | Path) -> list[dict]:
    """Records from a results.jsonl file: one JSON object a line."""
    records = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.strip():
                records.append(_decode(line, f"{path}:{lineno}"))
    return records


def load(path: str | Path) -> list[dict]:
    """Records from a results directory, a results.jsonl file or a console log."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.jsonl"
    if path.suffix == ".jsonl":
        return load_jsonl(path)
    return parse_text(path.read_text(encoding="utf-8", errors="replace"), str(path))


def of_type(records: Iterable[dict], kind: str) -> list[dict]:
    """The records of one type (`boot`, `bench`, `lockstats`, ...)."""
    return [r for r in records if record_type(r) == kind]


def benches(records: Iterable[dict], name: str) -> list[dict]:
    """The `bench` records of one benchmark (`pingpong`, `mcpingpong`, ...)."""
    return [r for r in records if r.get("bench") == name]


def single_core_ipc(records: Iterable[dict], timing: bool = False) -> list[dict]:
    """The single-core, cross-space ping-pong records in instructions (-icount) of builds without
    lock statistics, run with the kernel's timing on (timing=1) or, by default, off."""
    return [r for r in benches(records, "pingpong")
            if r.get("unit") == "instructions" and r.get("env", {}).get("cpus", 1) == 1
            and r.get("lockstats") is not True and not (r.get(META_KEY) or {}).get("stats")
            and field(r, "same_space") is False and bool(r.get("timing")) == timing]


def field(record: dict, name: str, default=None):
    """A benchmark figure: top-level first, then inside `config`."""
    if name in record:
        return record[name]
    return record.get("config", {}).get(name, default)


def done_status(records: Iterable[dict]) -> int | None:
    """The status of the run's `done` record, or None when there is none."""
    for r in records:
        if record_type(r) == "done":
            return int(r.get("status", 0))
    return None


def lockstats_windows(records: Iterable[dict]) -> list[tuple[dict, list[dict]]]:
    """[(bench record, its lockstats records)] for every bench record that
    says `"lockstats": true`.

    A benchmark run with lockstats=1 prints one lockstats record per core
    (core 0 first) just after its measured window and then its bench record;
    the reset at the start of the window prints a group too.  So the records
    of a window are the last group, numbered from core 0 up, before the bench
    record.  A boot or bench record ends a group, so groups never cross boots
    in a results.jsonl file.
    """
    windows = []
    group: list[dict] = []
    for r in records:
        kind = record_type(r)
        if kind == "lockstats":
            if r["lockstats"].get("core", 0) == 0:
                group = []
            group.append(r)
        elif kind in ("bench", "boot"):
            if kind == "bench" and r.get("lockstats") is True and group:
                windows.append((r, group))
            group = []
    return windows
