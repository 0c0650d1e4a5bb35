#!/usr/bin/env python3
"""A fuzz campaign: the fuzzer (APP=fuzz) over configurations x seeds, one QEMU guest at a time.

This is what `make fuzz` runs (docs/userland.md, "Fuzz campaigns").  Each run is bounded by
calls, by guest seconds (`--seconds`), or both, and checks the kernel's invariants every
`--check` calls of each fuzzer and at the end.  Its verdict is the guest's final `fuzz` record,
which comes from the kernel's own count of failed checks.

The campaign is resumable: every finished run is appended to `runs.jsonl` in the results
folder, and a campaign started again with the same folder skips the runs it finds there (same
configuration, seed, calls, seconds and check).  While a run goes, its `fuzz_progress` records
are shown on the terminal; at the end `summary.md` holds the table of every run of the
campaign: calls, restarts, statuses, digest, failures and verdict.  The console log of each run
is kept in `logs/`.

Exit status: 0 when every run passed, 1 when one failed, 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from records import record_type  # noqa: E402
from qemu_run import record_of  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

# Which way each lock variant runs fastest under TCG on a two-core host (tests/test_guest_suite.py
# explains it): in turns under -icount for none, bkl and rtm; truly in parallel for fine.
IN_TURNS = {"none": True, "bkl": True, "rtm": True, "fine": False}

# The default campaign: every variant on four cores of each port, and none on one: (arch, lock, cpus).
DEFAULT_CONFIGS = ["x86_64-none-1", "x86_64-bkl-4", "x86_64-fine-4", "x86_64-rtm-4",
                   "arm-imx6-bkl-4", "arm-imx6-fine-4"]


@dataclass(frozen=True)
class Run:
    arch: str
    lock: str
    cpus: int
    seed: int
    calls: int          # 0: no limit (seconds must bound the run)
    seconds: int        # 0: no limit
    check: int          # SYS_DEBUG_CHECK every `check` calls of each fuzzer (0: never)

    @property
    def name(self) -> str:
        return f"{self.arch}-{self.lock}-{self.cpus}cpu-seed{self.seed}"

    @property
    def guest_args(self) -> str:
        words = [f"seed={self.seed}", f"check={self.check}"]
        if self.calls:
            words.append(f"calls={self.calls}")
        if self.seconds:
            words.append(f"seconds={self.seconds}")
        return " ".join(words)


def parse_config(text: str) -> tuple[str, str, int]:
    """`arch-lock-cpus` (arch may contain a dash: arm-imx6-bkl-4)."""
    arch, sep, rest = text.rpartition("-")
    arch, sep2, lock = arch.rpartition("-")
    if not sep or not sep2 or not rest.isdigit() or lock not in IN_TURNS:
        raise ValueError(f"bad configuration {text!r}: want ARCH-LOCK-CPUS, e.g. x86_64-bkl-4")
    return arch, lock, int(rest)


def plan(configs: list[str], seeds: list[int], calls: int, seconds: int, check: int) -> list[Run]:
    runs = []
    for config in configs:
        arch, lock, cpus = parse_config(config)
        runs += [Run(arch, lock, cpus, seed, calls, seconds, check) for seed in seeds]
    return runs


def load_done(path: Path) -> dict[Run, dict]:
    """The runs a campaign in this folder already finished, with their results."""
    done = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                done[Run(**entry["run"])] = entry
    return done


def build(arch: str, lock: str) -> Path:
    argv = ["make", "-s", "-C", str(REPO), "kernel", f"ARCH={arch}", f"LOCK={lock}", "print-build-dir"]
    proc = subprocess.run(argv, capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"fuzz_campaign: {' '.join(argv)} failed:\n{proc.stdout}\n{proc.stderr}")
    return REPO / proc.stdout.strip().splitlines()[-1]


def progress_line(prefix: str, records: list[dict], run: Run, elapsed: float) -> str:
    """One terminal line from the latest progress record of every core."""
    calls = sum(r["calls"] for r in records)
    restarts = sum(r["restarts"] for r in records)
    guest = max(r["seconds"] for r in records)
    target = f"{calls:,} of {run.calls:,} calls" if run.calls else f"{calls:,} calls"
    limit = f" of {run.seconds}" if run.seconds else ""
    return (f"{prefix} {target}, {restarts} restarts, guest {guest:.0f}{limit} s, "
            f"host {elapsed:.0f} s")


def execute(run: Run, logs: Path, timeout: float, prefix: str) -> dict:
    """Boot one run, show its progress, and return its entry for runs.jsonl."""
    image = build(run.arch, run.lock) / "kernel.elf"
    argv = [sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", run.arch, "--lock",
            run.lock, "--image", str(image), "--cpus", str(run.cpus), "--accel", "tcg",
            "--timeout", str(timeout), "--cmdline", f"app=fuzz {run.guest_args}"]
    if IN_TURNS[run.lock]:
        argv.append("--icount")
    logs.mkdir(parents=True, exist_ok=True)
    log_path = logs / f"{run.name}-{run.calls}-{run.seconds}-{run.check}.log"
    started = time.monotonic()
    final = invariant = None
    latest: dict[int, dict] = {}
    with open(log_path, "w") as log, subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, errors="replace") as proc:
        for line in proc.stdout:
            log.write(line)
            record = record_of(line)
            if record is None:
                continue
            kind = record_type(record)
            if kind == "fuzz_progress":
                latest[record[kind]["core"]] = record[kind]
                print(progress_line(prefix, list(latest.values()), run, time.monotonic() - started),
                      flush=True)
            elif kind == "fuzz":
                final = record[kind]
            elif kind == "invariant" and invariant is None:
                invariant = record[kind]
        status = proc.wait()
    entry = {"run": asdict(run), "host_seconds": round(time.monotonic() - started, 1),
             "exit": status, "log": str(log_path)}
    if final is None:
        entry.update(verdict="fail", why=f"no final fuzz record (qemu_run exit {status})")
    else:
        entry.update(final)
        if final["verdict"] != "pass" or status != 0:
            entry["verdict"] = "fail"
    if invariant is not None:
        entry["invariant"] = invariant
    return entry


def statuses_cell(statuses: dict, shown: int = 3) -> str:
    """E_OK and the most frequent errors: `OK 1,206; FAILED_LOOKUP 638, ... +9 more` (runs.jsonl
    keeps them all)."""
    errors = sorted(((n, name) for name, n in statuses.items() if name != "E_OK"), reverse=True)
    cell = f"OK {statuses.get('E_OK', 0):,}"
    if errors:
        cell += "; " + ", ".join(f"{name.removeprefix('E_')} {n:,}" for n, name in errors[:shown])
    if len(errors) > shown:
        cell += f", +{len(errors) - shown} more"
    return cell


def summary_table(entries: list[dict]) -> str:
    rows = ["| arch | lock | CPUs | seed | calls | restarts | statuses | digest | failures | "
            "guest s | host s | verdict |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for e in entries:
        r = e["run"]
        rows.append(
            f"| {r['arch']} | {r['lock']} | {r['cpus']} | {r['seed']} | {e.get('calls', 0):,} | "
            f"{e.get('restarts', '-')} | {statuses_cell(e.get('statuses', {}))} | "
            f"{e.get('digest', '-')} | {e.get('failures', '-')} | {e.get('seconds', '-')} | "
            f"{e['host_seconds']:,} | {e['verdict']}{' (' + e['why'] + ')' if 'why' in e else ''} |")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--configs", nargs="+", default=DEFAULT_CONFIGS, metavar="ARCH-LOCK-CPUS")
    ap.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    ap.add_argument("--calls", type=int, default=100_000, help="calls per run (0: no limit)")
    ap.add_argument("--seconds", type=int, default=0, help="guest seconds per run (0: no limit)")
    ap.add_argument("--check", type=int, default=1000, help="check every N calls of each fuzzer")
    ap.add_argument("--timeout", type=float, default=7200, help="host seconds a run may take")
    ap.add_argument("--results", type=Path, default=REPO / "results" / "fuzz")
    args = ap.parse_args(argv)
    if not args.calls and not args.seconds:
        ap.error("a run needs a bound: --calls or --seconds")
    try:
        runs = plan(args.configs, args.seeds, args.calls, args.seconds, args.check)
    except ValueError as err:
        ap.error(str(err))

    args.results.mkdir(parents=True, exist_ok=True)
    runs_file = args.results / "runs.jsonl"
    done = load_done(runs_file)
    started = time.monotonic()
    for i, run in enumerate(runs, 1):
        prefix = f"[{i}/{len(runs)}] {run.name}:"
        if run in done:
            print(f"{prefix} done before: {done[run]['verdict']}", flush=True)
            continue
        print(f"{prefix} {run.guest_args}", flush=True)
        entry = execute(run, args.results / "logs", args.timeout, prefix)
        done[run] = entry
        with open(runs_file, "a") as f:
            f.write(json.dumps(entry) + "\n")
        print(f"{prefix} {entry['verdict']} after {entry['host_seconds']:,} s", flush=True)

    entries = [done[r] for r in runs]
    table = summary_table(entries)
    passed = sum(e["verdict"] == "pass" for e in entries)
    footer = (f"\n{passed} of {len(entries)} runs passed; this invocation "
              f"{time.monotonic() - started:,.0f} s, all runs {sum(e['host_seconds'] for e in entries):,.0f} s "
              "of host time.\n")
    (args.results / "summary.md").write_text(table + footer)
    print(table + footer, end="")
    return 0 if passed == len(entries) else 1


if __name__ == "__main__":
    sys.exit(main())
