#!/usr/bin/env python3
"""Per-function instruction profile of a benchmark's marked windows (make profile).

Boots a kernel under TCG with `-icount shift=0`, one instruction per
translation block (`-singlestep`) and QEMU's execution log (`-d exec,nochain`),
which then prints one line, with the guest PC, per executed instruction, and
the trace event `exec_tb_exit` after it (an exit code of 2 or more says the
instruction did not run yet: QEMU logs it again when it does; a block left
with no exit and logged again at once was a device access that QEMU stopped
to translate again, under icount, and it is counted once).  The
log goes through a FIFO, so the (tens of millions of lines long) trace of the
boot is never stored: only the instructions inside a window are counted.

A window is what a benchmark brackets with bench_window_begin() and
bench_window_end() (bench/window.c): from the first instruction of the one to
the first instruction of the other.  The guest prints a `window` record for
each, with `counter`, the difference of the counter read at the two entries,
which under -icount is the window's instruction count measured independently
of the trace.  The tool checks that its count equals it (on arm-imx6 the
counter's resolution is 10 instructions).

Every PC is mapped to the function that contains it, from the symbol tables
of the kernel ELF and the root task ELF (nm).  The result is printed as a
table and written as JSON:

    python3 tools/insn_profile.py --arch x86_64 --lock none --image build/x86_64-none-nodebug/kernel.elf \\
        --cmdline "app=pingpong runs=1 iters=20" --json profile.json
"""
from __future__ import annotations

import argparse
import bisect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import records as rec

REPO = Path(__file__).resolve().parent.parent
BEGIN_SYMBOL = "bench_window_begin"
END_SYMBOL = "bench_window_end"
# Counter resolution under -icount (instructions per counter step x the scale
# the user library applies): exact on x86_64, 10 on arm-imx6 (arch/arm-imx6/user/cycles.c).
COUNTER_RESOLUTION = {"x86_64": 1, "arm-imx6": 10}
NM = {"x86_64": ["nm"], "arm-imx6": ["arm-none-eabi-nm", "nm"]}
# "Trace 0: 0x7f... [cs_base/pc/flags/cflags] symbol" before a block runs (the second
# bracketed field is the PC), and the trace event "exec_tb_exit tb:0x7f... flags=0x2" after it.
TRACE_LINE = re.compile(rb"Trace \d+: \S+ \[[0-9a-f]+/([0-9a-f]+)/|exec_tb_exit tb:\S+ flags=0x([0-9a-f]+)")
# tb_exit values above TB_EXIT_IDX1 (1): the block stopped at its start, before its one
# instruction ran (icount budget spent, exit requested), and runs again with a second Trace line.
TB_EXIT_NOT_RUN = 2


@dataclass(frozen=True)
class Symbol:
    address: int
    name: str
    image: str      # "kernel" or "user"


class SymbolTable:
    """Functions of one or more ELF images, to map a PC to the one that contains it."""

    def __init__(self, symbols: list[Symbol]):
        self.symbols = sorted(symbols, key=lambda s: s.address)
        self.addresses = [s.address for s in self.symbols]

    @classmethod
    def from_elves(cls, arch: str, elves: dict[str, Path]) -> "SymbolTable":
        nm = next((tool for tool in NM[arch] if shutil.which(tool)), None)
        if nm is None:
            raise RuntimeError(f"no nm for {arch}: install {' or '.join(NM[arch])}")
        symbols = []
        for image, elf in elves.items():
            out = subprocess.run([nm, "--defined-only", str(elf)], check=True,
                                 capture_output=True, text=True).stdout
            symbols += parse_nm(out, image)
        return cls(symbols)

    def lookup(self, pc: int) -> Symbol | None:
        i = bisect.bisect_right(self.addresses, pc) - 1
        return self.symbols[i] if i >= 0 else None

    def address_of(self, name: str) -> int:
        for s in self.symbols:
            if s.name == name:
                return s.address
        raise KeyError(f"no symbol {name}: was the image built with bench/window.c?")


def parse_nm(text: str, image: str) -> list[Symbol]:
    """Text symbols (functions and assembly entry points) of `nm --defined-only` output."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 3 or parts[1] not in "TtWw":
            continue
        name = parts[2]
        if name.startswith("$"):    # ARM mapping symbols ($a, $d, $t): not functions
            continue
        out.append(Symbol(int(parts[0], 16), name, image))
    return out


class WindowCounter:
    """Feeds on the execution log; keeps one Counter of PCs per window."""

    def __init__(self, begin_pc: int, end_pc: int):
        self.begin = begin_pc
        self.end = end_pc
        self.windows: list[Counter] = []
        self.inside = False
        self.last = 0
        self.exited = True      # whether the last block logged has logged its exit
        self.partial = b""

    def feed(self, chunk: bytes) -> None:
        data = self.partial + chunk
        cut = data.rfind(b"\n") + 1
        self.partial = data[cut:]
        lines = data[:cut]
        if not self.inside and (b"%x/" % self.begin) not in lines:
            return      # the common case while the boot runs: nothing to count
        for m in TRACE_LINE.finditer(lines):
            if m.group(1) is None:
                self.exited = True
                if self.inside and int(m.group(2), 16) >= TB_EXIT_NOT_RUN:
                    self.undo_last()
                continue
            pc = int(m.group(1), 16)
            if self.inside and not self.exited and pc == self.last:
                # Left without an exit and logged again at once: a device access that QEMU
                # stopped to translate again as the block's last I/O instruction (icount).
                self.undo_last()
            self.exited = False
            if self.inside:
                if pc == self.end:
                    self.inside = False
                else:
                    self.windows[-1][pc] += 1
                    self.last = pc
            elif pc == self.begin:
                self.inside = True
                self.windows.append(Counter({pc: 1}))
                self.last = pc

    def undo_last(self) -> None:
        """The last instruction logged did not run: it is logged again when it does."""
        window = self.windows[-1]
        window[self.last] -= 1
        if not window[self.last]:
            del window[self.last]
        if not window:     # the window's first instruction: it has not begun yet
            self.windows.pop()
            self.inside = False


def profile_window(pcs: Counter, symbols: SymbolTable) -> list[dict]:
    """Rows {function, image, instructions, entries}, dearest first."""
    rows: dict[tuple[str, str], dict] = {}
    for pc, n in pcs.items():
        s = symbols.lookup(pc)
        key = (s.name, s.image) if s else ("?", "?")
        row = rows.setdefault(key, {"function": key[0], "image": key[1], "instructions": 0, "entries": 0})
        row["instructions"] += n
        if s is not None and s.address == pc:
            row["entries"] += n
    return sorted(rows.values(), key=lambda r: (-r["instructions"], r["function"]))


def window_report(pcs: Counter, record: dict, symbols: SymbolTable, resolution: int) -> dict:
    """One window's profile, checked against the guest's own count of it."""
    rows = profile_window(pcs, symbols)
    traced = sum(pcs.values())
    ops = max(int(record.get("operations", 1)), 1)
    for r in rows:
        r["per_operation"] = round(r["instructions"] / ops, 2)
    counter = int(record["counter"])
    return {
        "bench": record.get("bench"),
        "config": record.get("config"),
        "operations": ops,
        "traced_instructions": traced,
        "counter": counter,
        "counter_unit": record.get("unit"),
        "matches_counter": record.get("unit") == "instructions" and abs(traced - counter) < resolution,
        "per_operation": round(traced / ops, 2),
        "functions": rows,
    }


def format_report(report: dict, top: int) -> str:
    head = (f"window {report['bench']} {json.dumps(report['config'])}: {report['traced_instructions']} "
            f"instructions traced, counter {report['counter']} "
            f"({'matches' if report['matches_counter'] else 'DOES NOT MATCH'}), "
            f"{report['operations']} operations, {report['per_operation']} per operation")
    lines = [head, f"  {'function':<32} {'image':<6} {'instrs':>9} {'per op':>8} {'entries':>8} {'share':>6}"]
    total = max(report["traced_instructions"], 1)
    for r in report["functions"][:top]:
        lines.append(f"  {r['function'][:32]:<32} {r['image']:<6} {r['instructions']:>9} "
                     f"{r['per_operation']:>8.2f} {r['entries']:>8} {100 * r['instructions'] / total:>5.1f}%")
    rest = report["functions"][top:]
    if rest:
        lines.append(f"  ({len(rest)} more functions, {sum(r['instructions'] for r in rest)} instructions)")
    return "\n".join(lines)


def run_traced(args: argparse.Namespace, begin_pc: int, end_pc: int) -> tuple[list[Counter], list[dict], int]:
    """Boot under the execution log; the windows' PC counts, the records, qemu_run's status."""
    counter = WindowCounter(begin_pc, end_pc)
    with tempfile.TemporaryDirectory(prefix="profile-") as scratch:
        fifo = Path(scratch) / "exec.log"
        os.mkfifo(fifo)

        def read_log() -> None:
            with open(fifo, "rb") as log:
                for chunk in iter(lambda: log.read(1 << 20), b""):
                    counter.feed(chunk)

        reader = threading.Thread(target=read_log, daemon=True)
        reader.start()
        argv = [sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", args.arch, "--lock", args.lock,
                "--image", str(args.image), "--cpus", str(args.cpus), "--accel", "tcg", "--icount",
                "--timeout", str(args.timeout), "--cmdline", args.cmdline]
        if args.unsafe:
            argv.append("--unsafe")
        argv += ["--", "-d", "exec,nochain,trace:exec_tb_exit", "-singlestep", "-D", str(fifo)]
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
        reader.join(timeout=60)
        if reader.is_alive():
            # QEMU ended without opening the log: open the writing end once to unblock the reader.
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            reader.join()
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout)
    windows = [r["window"] for r in rec.parse_text(proc.stdout) if rec.record_type(r) == "window"]
    return counter.windows, windows, proc.returncode


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", default="x86_64", choices=sorted(COUNTER_RESOLUTION))
    p.add_argument("--lock", default="none")
    p.add_argument("--image", required=True, type=Path, help="the kernel ELF")
    p.add_argument("--root", type=Path, help="the root task ELF (default: root.elf beside the kernel)")
    p.add_argument("--cpus", type=int, default=1)
    p.add_argument("--unsafe", action="store_true")
    p.add_argument("--cmdline", default="app=pingpong runs=1 iters=20",
                   help="the guest's command line; window=1 is added")
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--json", type=Path, help="write the profile here")
    p.add_argument("--top", type=int, default=25, help="functions per table")
    args = p.parse_args(argv)
    root = args.root or args.image.parent / "root.elf"
    if "window=" not in args.cmdline:
        args.cmdline += " window=1"
    symbols = SymbolTable.from_elves(args.arch, {"kernel": args.image, "user": root})
    windows, records, status = run_traced(args, symbols.address_of(BEGIN_SYMBOL), symbols.address_of(END_SYMBOL))
    if status != 0:
        print(f"profile: the guest failed (status {status})", file=sys.stderr)
        return 1
    if len(windows) != len(records):
        print(f"profile: {len(windows)} windows traced but {len(records)} window records printed",
              file=sys.stderr)
        return 1
    if not records:
        print("profile: the benchmark marked no window (does it take window=1?)", file=sys.stderr)
        return 1
    reports = [window_report(w, r, symbols, COUNTER_RESOLUTION[args.arch]) for w, r in zip(windows, records)]
    for report in reports:
        print(format_report(report, args.top))
    if args.json:
        args.json.write_text(json.dumps({"arch": args.arch, "lock": args.lock, "image": str(args.image),
                                         "cmdline": args.cmdline, "windows": reports}, indent=1) + "\n")
        print(f"profile: wrote {args.json}")
    return 0 if all(r["matches_counter"] for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
