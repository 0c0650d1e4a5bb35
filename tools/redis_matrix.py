#!/usr/bin/env python3
"""The real Redis's benchmark matrix as one check (`make redis-matrix`, docs/benchmarks.md).

For every cell (port x lock variant x CPU count x layout of the app `redis`) one boot of the
kernel with Debian's Redis on the POSIX personality and a NIC, driven from the host:

  1. redis-benchmark with the eight tests of docs/benchmarks.md's matrix on every served port at once
     (tools/redis_run.py), and the servers' own counts around it (INFO: the commands they ran,
     the error replies they sent, the connections they refused);
  2. FLUSHALL, then YCSB workload A (tools/ycsb.py): the load of RECORDS records, then the run;
  3. every record read back: DBSIZE, and a script run in the server that goes through the
     binding's key index and counts the records that are a hash of all their FIELDS fields;
  4. the kernel invariant checker through the NIC driver's control port, and no panic, fault
     or ended Redis process on the console.

A cell passes when all of that holds with 0 errors.  The table goes to OUT/matrix.md and
OUT/matrix.json, each boot's console to OUT/logs/; the exit status is 1 when a cell of the table
fails.  A run of some cells (--only) keeps the other cells an earlier run with the same settings
left there, so that one cell can be run again.
Only what the boot counted is reported: operations, errors, records, memory; never a rate,
since under TCG a rate is the emulator's speed (docs/results.md).

    python3 tools/redis_matrix.py [--out results/redis-matrix] [--only x86_64-bkl] [--list]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import records as rec
import redis_run
import redis_suite
import sweep
import ycsb

REPO = Path(__file__).resolve().parent.parent

# What every cell must show (docs/benchmarks.md, "The whole matrix").
BENCHMARK_TESTS = ("set", "get", "incr", "lpush", "lpop", "sadd", "hset", "mset")
RECORDS = 32000
FIELDS = 10
LOCKS = {"x86_64": ("none", "bkl", "fine", "rtm"), "arm-imx6": ("none", "bkl", "fine")}
LAYOUTS = ("percore", "processes")
# `none` is correct on one core only; the others on one core and on two (per-core layout: the
# driver on core 0 and one Redis on core 1; processes: all three on core 0, core 1 idle but
# taking its timer ticks through the kernel's locks).
CPUS = (1, 2)

# redis-benchmark's requests per test and port, and its connections: every test's keys are
# touched thousands of times by each connection, LPOP pops what LPUSH pushed, and the eight
# tests stay a small part of a cell beside YCSB's load.
REQUESTS = 5000
CLIENTS = 10
# YCSB's run phase: as many operations as records, as tests/test_redis_ycsb_full.py runs.
OPERATIONS = RECORDS
# Each Redis process's heap: Redis keeps a record of 10 fields of 100 bytes in its hash-table
# encoding, about 2 KB, and may use half its heap (maxmemory, userland/redis/redis_layouts.c).
HEAP_MB = 256

SERVE_TIMEOUT = 600.0   # seconds for the guest to serve: generous, a loaded host stretches it
GUEST_TIMEOUT = 7200.0  # qemu_run's limit of guest run time; the host stops the boot long before
CLIENT_TIMEOUT = 300.0  # a YCSB read, a redis-cli command, a control-port reply: see docs/network.md
PHASE_TIMEOUT = 1800.0  # redis-benchmark's eight tests, as tools/ycsb.py bounds each of its phases

# Counts the records of the binding's index (bench/ycsb) and those that are a hash of ARGV[1]
# fields, in the server, so that reading back 32,000 records is one command.
READ_BACK = ("local keys = redis.call('ZRANGE', KEYS[1], 0, -1) "
             "local whole = 0 "
             "for _, key in ipairs(keys) do "
             "if redis.call('HLEN', key) == tonumber(ARGV[1]) then whole = whole + 1 end "
             "end "
             "return {#keys, whole}")
INDEX_KEY = "ycsb:index:usertable"
# Console records that say something went wrong in the guest (docs/console.md).
@dataclass(frozen=True)
class Cell:
    arch: str
    lock: str
    cpus: int
    layout: str

    @property
    def name(self) -> str:
        return f"{self.arch}-{self.lock}-{self.cpus}cpu-{self.layout}"


def cells(cpus=CPUS) -> list[Cell]:
    """Every port x its lock variants x CPU counts (`none`: one) x layouts."""
    return [Cell(arch, lock, n, layout) for arch, locks in LOCKS.items() for lock in locks
            for n in ((1,) if lock == "none" else cpus) for layout in LAYOUTS]


def failures(result: dict, requests: int = REQUESTS, operations: int = OPERATIONS) -> list[str]:
    """Why a cell failed (empty when it passed), from what its boot measured."""
    if "serving" not in result:
        return [result.get("error", "the guest did not serve")]
    why = []
    servers = len(result["serving"]["ports"])
    b = result.get("benchmark")
    if b is None:
        why.append("redis-benchmark: " + result.get("benchmark_error", "not run"))
    else:
        why += b["client_notes"]
        if b["client_errors"]:
            why.append(f"redis-benchmark: {b['client_errors']} client(s) failed")
        if b["error_replies"] or b["rejected_connections"]:
            why.append(f"redis-benchmark: {b['error_replies']} error replies, "
                       f"{b['rejected_connections']} connections refused")
        if b["commands"] is None or b["commands"] < requests * len(BENCHMARK_TESTS) * servers:
            why.append(f"redis-benchmark: the servers ran {b['commands']} commands, fewer than asked")
    y = result.get("ycsb")
    if y is None:
        why.append("YCSB: " + result.get("ycsb_error", "not run"))
    else:
        if y["load"]["errors"] or y["run"]["errors"]:
            why.append(f"YCSB: {y['load']['errors']} load and {y['run']['errors']} run errors")
        if y["load"]["operations"] != {"INSERT": RECORDS * servers}:
            why.append(f"YCSB load: {y['load']['operations']}, not {RECORDS * servers} inserts")
        if sum(y["run"]["operations"].values()) != operations * servers:
            why.append(f"YCSB run: {sum(y['run']['operations'].values())} operations, "
                       f"not {operations * servers}")
    r = result.get("records")
    if r is None:
        why.append("records: " + result.get("records_error", "not read back"))
    else:
        for server in r:
            if (server["indexed"], server["whole"], server["dbsize"]) != (RECORDS, RECORDS, RECORDS + 1):
                why.append(f"records on port {server['port']}: {server['indexed']} indexed, "
                           f"{server['whole']} whole, DBSIZE {server['dbsize']}, not {RECORDS}")
    if result.get("check") != "OK check":
        why.append(f"invariant check: {result.get('check', 'not asked')!r}")
    faults = {kind: n for kind, n in result.get("console", {}).items() if n}
    if faults:
        why.append("console: " + ", ".join(f"{n} {kind}" for kind, n in faults.items()))
    return why


def cli(port: int, *words: str) -> list[str]:
    """redis-cli's lines for one command to 127.0.0.1:port."""
    return redis_suite.redis_cli("127.0.0.1", port, *words)


def error_replies(info: dict) -> int:
    return int(info.get("total_error_replies", 0))


def benchmark(ports: list, requests: int, deadline: float) -> dict:
    """redis-benchmark on every port at once, with the servers' counts before and after."""
    before = {p: redis_run.server_info(p, CLIENT_TIMEOUT) for p in ports}
    _, client_errors, _, notes = redis_run.run_redis_benchmark(ports, requests, CLIENTS, deadline,
                                                               BENCHMARK_TESTS)
    after = {p: redis_run.server_info(p, CLIENT_TIMEOUT) for p in ports}
    counts = {when: {p: redis_run.commands_processed(i) for p, i in infos.items()}
              for when, infos in (("before", before), ("after", after))}
    return {"requests_per_test": requests, "clients": CLIENTS, "tests": list(BENCHMARK_TESTS),
            "client_errors": client_errors, "client_notes": notes,
            "commands": redis_run.server_operations(counts["before"], counts["after"]),
            "error_replies": sum(error_replies(after[p]) - error_replies(before[p]) for p in ports),
            "rejected_connections": sum(int(after[p].get("rejected_connections", 0)) for p in ports)}


def workload_a(ports: list, operations: int) -> dict:
    """FLUSHALL, then YCSB workload A's load and run: operations and errors of each phase."""
    for p in ports:
        if cli(p, "FLUSHALL") != ["OK"]:
            raise ycsb.YcsbError(f"FLUSHALL on port {p} failed")
    result = ycsb.workload_a(ports, RECORDS, operations, read_timeout=CLIENT_TIMEOUT)
    return {phase: {"operations": result[phase]["operations"], "errors": result[phase]["errors"]}
            for phase in ("load", "run")}


def read_back(ports: list) -> list[dict]:
    """Per server: DBSIZE, the keys of the binding's index, those whole, and Redis's memory peak."""
    found = []
    for p in ports:
        counted = cli(p, "EVAL", READ_BACK, "1", INDEX_KEY, str(FIELDS))
        if len(counted) != 2 or not all(x.isdigit() for x in counted):
            raise ValueError(f"reading the records back on port {p}: {' '.join(counted)[:300]}")
        found.append({"port": p, "dbsize": int(cli(p, "DBSIZE")[0]), "indexed": int(counted[0]),
                      "whole": int(counted[1]),
                      "used_memory_peak": int(redis_run.server_info(p, CLIENT_TIMEOUT)["used_memory_peak"])})
    return found


def boot_command(cell: Cell, image: Path, log: Path) -> list:
    return sweep.boot_command(REPO, cell.arch, cell.lock, image, cell.cpus, "tcg", False, False,
                              GUEST_TIMEOUT, f"app=redis layout={cell.layout} heap_mb={HEAP_MB}",
                              log) + ["--net"]


def run_cell(cell: Cell, image: Path, log: Path, requests: int, operations: int) -> dict:
    """One boot of the cell: what it measured, each part's error in `<part>_error`."""
    result: dict = {"cell": asdict(cell)}
    with redis_run.booted(boot_command(cell, image, log)) as console:
        deadline = time.monotonic() + SERVE_TIMEOUT
        if not console.wait_for(lambda rs: rec.of_type(rs, "net") and rec.of_type(rs, "redis"), deadline):
            said = [line for line in console.lines if line.strip()]
            result["error"] = "the guest did not serve: " + (said[-1] if said else "no output")
            return result
        ports = redis_run.served_host_ports(console.records)
        result["serving"] = {"ports": ports,
                             "instances": rec.of_type(console.records, "redis")[-1]["redis"]["instances"]}
        parts = (("benchmark", lambda: benchmark(ports, requests, time.monotonic() + PHASE_TIMEOUT)),
                 ("ycsb", lambda: workload_a(ports, operations)),
                 ("records", lambda: read_back(ports)))
        for part, measure in parts:
            try:
                result[part] = measure()
            except (OSError, ValueError, KeyError, IndexError, subprocess.SubprocessError,
                    ycsb.YcsbError) as err:
                result[part + "_error"] = str(err)[-600:]
        control = redis_run.control_port(console.records)
        try:
            result["check"] = redis_run.control_request(control, "check", CLIENT_TIMEOUT) \
                if control is not None else "no control port"
        except (OSError, TimeoutError) as err:
            result["check"] = str(err)
        result["console"] = {kind: len(rec.of_type(console.records, kind))
                             for kind in redis_run.FAULT_RECORDS}
    return result


def build_images(selected: list[Cell], out) -> dict:
    """make posix per port, then each (port, lock)'s kernel embedding it: {(arch, lock): image
    or the reason it could not be built}."""
    images: dict = {}
    for arch in dict.fromkeys(c.arch for c in selected):
        status, text = sweep.subprocess_builder(sweep.posix_build_command(REPO, arch))
        if status != 0:
            for c in selected:
                if c.arch == arch:
                    images[(arch, c.lock)] = f"make posix ARCH={arch} failed: {text[-400:]}"
            continue
        for lock in dict.fromkeys(c.lock for c in selected if c.arch == arch):
            variables = {"ARCH": arch, "LOCK": lock, "POSIX_PROGRAM": sweep.posix_program(arch)}
            status, text = sweep.subprocess_builder(sweep.build_command(REPO, variables))
            images[(arch, lock)] = REPO / sweep.build_dir(text) / "kernel.elf" if status == 0 \
                else f"make kernel ARCH={arch} LOCK={lock} failed: {text[-400:]}"
            out(f"built {arch} {lock}")
    return images


def cell_row(result: dict, requests: int, operations: int) -> list[str]:
    """A cell's row of the table: what it measured and its verdict."""
    c = result["cell"]
    row = [c["arch"], f"`{c['lock']}`", str(c["cpus"]), c["layout"]]
    serving = result.get("serving")
    row.append(str(len(serving["instances"])) if serving else "-")
    b = result.get("benchmark")
    row.append(f"{b['commands']:,} / {b['error_replies'] + b['client_errors']}" if b and b["commands"] is not None
               else "-")
    y = result.get("ycsb")
    row.append(f"{sum(y['load']['operations'].values()):,} / {y['load']['errors']}" if y else "-")
    row.append(f"{sum(y['run']['operations'].values()):,} / {y['run']['errors']}" if y else "-")
    r = result.get("records")
    row.append(f"{sum(s['whole'] for s in r):,}" if r else "-")
    row.append(f"{max(s['used_memory_peak'] for s in r) / (1 << 20):.0f}" if r else "-")
    row.append("holds" if result.get("check") == "OK check" else "-")
    why = failures(result, requests, operations)
    row.append("pass" if not why else "FAIL: " + "; ".join(why).replace("|", "/"))
    return row


def markdown(results: list[dict], requests: int, operations: int) -> str:
    head = ["port", "lock", "CPUs", "layout", "Redis processes",
            "redis-benchmark: commands / errors", "YCSB load: inserts / errors",
            "YCSB run: operations / errors", "records read back whole", "Redis memory peak (MiB)",
            "invariants", "result"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell_row(r, requests, operations)) + " |" for r in results]
    passed = sum(1 for r in results if not failures(r, requests, operations))
    lines += ["", f"{passed} of {len(results)} cells passed."]
    return "\n".join(lines) + "\n"


def earlier(out_dir: Path, settings: dict) -> dict:
    """The cells an earlier run with the same settings left in OUT/matrix.json, by name: a run of
    some cells (--only) replaces those and keeps the others."""
    try:
        kept = json.loads((out_dir / "matrix.json").read_text())
    except (OSError, ValueError):
        return {}
    if kept.get("settings") != settings:
        return {}
    return {Cell(**r["cell"]).name: r for r in kept.get("cells", [])}


def write(out_dir: Path, results: dict, settings: dict) -> list[dict]:
    """Write the table of `results` ({name: result}) in the order of cells(); that list."""
    ordered = [results[c.name] for c in cells() if c.name in results]
    (out_dir / "matrix.json").write_text(json.dumps({"settings": settings, "cells": ordered}, indent=1))
    (out_dir / "matrix.md").write_text(markdown(ordered, settings["requests"], settings["operations"]))
    return ordered


def missing_tools() -> str | None:
    for tool, package in (("redis-benchmark", "redis-tools"), ("redis-cli", "redis-tools"),
                          ("java", "default-jre-headless"), ("mvn", "maven")):
        if shutil.which(tool) is None:
            return f"{tool} is missing (Debian package {package}; tools/ensure_deps.sh installs it)"
    return None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=REPO / "results" / "redis-matrix")
    p.add_argument("--only", action="append", default=[],
                   help="run only the cells whose name starts with this (e.g. x86_64-bkl-2cpu); repeatable")
    p.add_argument("--requests", type=int, default=REQUESTS,
                   help=f"redis-benchmark's requests per test and port (default {REQUESTS})")
    p.add_argument("--operations", type=int, default=OPERATIONS,
                   help=f"YCSB run phase's operations per server (default {OPERATIONS})")
    p.add_argument("--list", action="store_true", help="print the cells and stop")
    args = p.parse_args(argv)
    selected = [c for c in cells() if not args.only or any(c.name.startswith(o) for o in args.only)]
    if args.list or not selected:
        print("\n".join(c.name for c in selected) or "no cell matches --only")
        return 0 if selected else 2
    why = missing_tools()
    if why:
        print(f"redis_matrix: {why}", file=sys.stderr)
        return 2
    logs = args.out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    settings = {"requests": args.requests, "clients": CLIENTS, "tests": list(BENCHMARK_TESTS),
                "records": RECORDS, "operations": args.operations, "heap_mb": HEAP_MB}
    results = earlier(args.out, settings)
    images = build_images(selected, sweep.say)
    git = sweep.git_revision(REPO)
    for cell in selected:
        image = images[(cell.arch, cell.lock)]
        if isinstance(image, str):
            result = {"cell": asdict(cell), "error": image}
        else:
            result = run_cell(cell, image, logs / f"{cell.name}.log", args.requests, args.operations)
        results[cell.name] = {**result, "git": git}
        write(args.out, results, settings)
        why = failures(result, args.requests, args.operations)
        sweep.say(f"{cell.name}: " + ("pass" if not why else "FAIL: " + "; ".join(why)))
    ordered = write(args.out, results, settings)
    print(markdown(ordered, args.requests, args.operations), end="")
    return 0 if not any(failures(r, args.requests, args.operations) for r in ordered) else 1


if __name__ == "__main__":
    sys.exit(main())
