"""lockbench: the kernel's lock code on the host's real cores, and the
machine-repairman model fitted to it.

Builds bench/lockbench (the lock/ sources compiled for the host, as
tests/host does) and runs every variant with one pinned thread per core,
1 to N cores, at the papers' mean delays between kernel entries.  Each run
is one JSON record (bench/lockbench/main.c); the runs go to
results/<run>/lockbench.jsonl, and the report takes the median of the
repetitions, fits s and a per variant (tools/model.py) and predicts 8 and
16 cores.  See docs/benchmarks.md.

    python3 tools/lockbench.py                      # 1 to all cores, every variant
    python3 tools/lockbench.py --cores 1,2,4,8,16   # these core counts
    python3 tools/lockbench.py --hold-from results/<sweep run>
    python3 tools/lockbench.py --report results/<run>

The critical section runs the kernel's hold time per lock acquisition in
instructions: from the `lockstats` windows of a LOCKSTATS=1 -icount run of
single-core cross-space ping-pong under `bkl` (--hold-from), else from
bench/lockbench/hold.json, which records such a run and its command.  The
host runs those instructions in however many cycles it takes: that is the
calibration, measured in every run as `section_cycles`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import model
import records as rec

REPO = Path(__file__).resolve().parent.parent
VARIANTS = ("none", "bkl", "fine", "rtm")
PAPER_DELAYS = (0, 500, 2000, 8000, 32000)   # mean cycles between kernel entries
OBJECTS = ("disjoint", "shared")
PREDICT_CORES = (8, 16)
HOLD_FILE = REPO / "bench" / "lockbench" / "hold.json"
# Cache lines the IPC fastpath writes besides the lock: the endpoint, the
# caller's and the receiver's TCBs and the reply slot (kernel/fastpath.c).
DEFAULT_LINES = 4
JSONL = "lockbench.jsonl"


class LockbenchError(Exception):
    pass


# --- the hold time per acquisition ------------------------------------------------


@dataclass
class Hold:
    instructions: int
    source: str


def hold_from_records(records) -> Hold | None:
    """The kernel lock's hold per acquisition, in instructions, from the
    lockstats windows of single-core cross-space ping-pong with no extra
    message registers under `bkl` (-icount records only), or None."""
    held = acquisitions = 0
    for bench, stats in rec.lockstats_windows(records):
        env = bench.get("env", {})
        if (bench.get("bench") != "pingpong" or bench.get("unit") != "instructions"
                or env.get("lock") != "bkl" or env.get("cpus", 1) != 1
                or rec.field(bench, "same_space") is not False or rec.field(bench, "length", 0) != 0):
            continue
        held += sum(s["lockstats"].get("cycles_held", 0) for s in stats)
        acquisitions += sum(s["lockstats"].get("acquisitions", 0) for s in stats)
    if not acquisitions:
        return None
    return Hold(round(held / acquisitions), "lockstats windows of this run (bkl, -icount)")


def hold_from_file(path: Path = HOLD_FILE) -> Hold:
    data = json.loads(path.read_text())
    return Hold(int(round(data["held_per_acquisition"])),
                f"{path.relative_to(REPO) if path.is_relative_to(REPO) else path} "
                f"({data['command']})")


def choose_hold(hold_from: Path | None) -> Hold:
    if hold_from is not None:
        found = hold_from_records(rec.load(hold_from))
        if found is not None:
            return found
    return hold_from_file()


# --- running ----------------------------------------------------------------------


def default_cores(available: int) -> list[int]:
    """1 to `available`: every count up to 8, then about two steps per doubling, and the last."""
    counts, n = [], 1
    while n <= available:
        counts.append(n)
        n = n + 1 if n < 8 else n + max(1, n // 2)
    if counts[-1] != available:
        counts.append(available)
    return counts


def available_cpus() -> int:
    return len(os.sched_getaffinity(0))


def build(repo: Path, build_dir: Path) -> Path:
    done = subprocess.run(["make", "-s", "-C", str(repo / "bench" / "lockbench"), f"BUILD={build_dir}"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise LockbenchError("building bench/lockbench failed:\n" + done.stdout + done.stderr)
    return build_dir / "lockbench"


def program(bin_dir: Path, variant: str, stats: bool = False) -> Path:
    return bin_dir / f"lockbench-{variant}{'-stats' if stats else ''}"


def run_once(binary: Path, cores: int, delay: int, instructions: int, lines: int, objects: str,
             ms: int, abort_every: int = 0, seed: int = 1) -> dict:
    """One run; returns its record.  Exit 1 (a lost section) still returns the
    record, whose `exclusive` says so; anything else raises."""
    cmd = [str(binary), "--cores", str(cores), "--delay", str(delay), "--instructions",
           str(instructions), "--lines", str(lines), "--objects", objects, "--ms", str(ms),
           "--abort-every", str(abort_every), "--seed", str(seed)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60 + ms / 1000 * 4)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise LockbenchError(f"{' '.join(cmd)}: exit {done.returncode}: {done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])["lockbench"]


def host_description() -> dict:
    model_name = platform.processor() or "?"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model_name = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        load = Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        load = "?"
    # The load when the sweep began: other processes on these cores take time from the threads.
    return {"cpu": model_name, "cpus": available_cpus(), "machine": platform.machine(),
            "load_average": load}


def sweep(bin_dir: Path, out: Path, cores: list, variants, delays, objects, reps: int, ms: int,
          hold: Hold, lines: int = DEFAULT_LINES, say=print) -> list[dict]:
    """Run every configuration `reps` times (rtm also once with its -stats
    build, for the transaction counts), appending records to `out`."""
    host = host_description()
    records = []
    total = len(variants) * len(objects) * len(delays) * len(cores)
    done = 0
    with open(out, "a", encoding="utf-8") as f:
        for variant in variants:
            for obj in objects:
                for delay in delays:
                    for n in cores:
                        runs = [(False, rep) for rep in range(reps)]
                        if variant == "rtm":
                            runs.append((True, 0))
                        for stats, rep in runs:
                            r = run_once(program(bin_dir, variant, stats), n, delay, hold.instructions,
                                         lines, obj, ms, seed=rep + 1)
                            record = {"lockbench": r, rec.META_KEY: {"rep": rep, "stats_build": stats,
                                                                     "host": host, "hold_source": hold.source}}
                            f.write(json.dumps(record) + "\n")
                            records.append(record)
                        done += 1
                    say(f"  lockbench {variant:<4} {obj:<8} delay {delay:>5}: cores "
                        f"{','.join(map(str, cores))} done ({done}/{total})")
    return records


# --- analysis ---------------------------------------------------------------------


def load(path: Path) -> list[dict]:
    """The lockbench records of a run folder or a lockbench.jsonl file."""
    path = Path(path)
    if path.is_dir():
        path = path / JSONL
    if not path.exists():
        return []
    return [r for r in rec.load_jsonl(path) if "lockbench" in r]


@dataclass
class Point:
    cores: int
    throughput: float      # entries per TSC cycle, all cores
    entry_cycles: float    # acquire + section + release, per entry
    section_cycles: float  # the section alone, uncontended
    runs: int
    preemptions: float = 0  # involuntary context switches of the threads in a run (median)


def meta(record: dict) -> dict:
    """How a run was made: rep, stats_build, host, hold_source."""
    return record.get(rec.META_KEY, {})


def timed(records) -> list[dict]:
    return [r["lockbench"] for r in records if not meta(r).get("stats_build")]


def points(records, variant: str, objects: str, delay: int) -> list[Point]:
    """Median over repetitions at each core count."""
    by_cores: dict = {}
    for r in timed(records):
        if r["variant"] == variant and r["objects"] == objects and int(r["delay"]) == delay:
            by_cores.setdefault(int(r["cores"]), []).append(r)
    out = []
    for n, rs in sorted(by_cores.items()):
        out.append(Point(n, statistics.median(r["entries"] / r["elapsed_cycles"] for r in rs),
                         statistics.median(r["entry_cycles"] for r in rs),
                         statistics.median(r["section_cycles"] for r in rs), len(rs),
                         statistics.median(r.get("preemptions", 0) for r in rs)))
    return out


def configurations(records) -> list[tuple]:
    keys = {(r["variant"], r["objects"], int(r["delay"])) for r in timed(records)}
    order = {v: i for i, v in enumerate(VARIANTS)}
    return sorted(keys, key=lambda k: (order.get(k[0], 9), k[1], k[2]))


def fit_points(pts: list[Point]) -> tuple[model.Fit | None, str]:
    """The model fitted to throughput against cores, or (None, why not)."""
    try:
        return model.fit([p.cores for p in pts], [p.throughput for p in pts]), ""
    except ValueError as err:
        return None, str(err)


def tsc_hz(records) -> float | None:
    rates = [r["tsc_hz"] for r in timed(records) if r.get("tsc_hz")]
    return statistics.median(rates) if rates else None


def rtm_counts(records) -> dict | None:
    """The transaction counts of the rtm -stats runs, summed, or None."""
    runs = [r["lockbench"]["rtm"] for r in records
            if meta(r).get("stats_build") and r["lockbench"]["variant"] == "rtm"]
    if not runs:
        return None
    total = {"usable": runs[0]["usable"], "why": runs[0]["why"], "commits": 0, "fallbacks": 0,
             "aborts": {}}
    for r in runs:
        total["commits"] += r["commits"]
        total["fallbacks"] += r["fallbacks"]
        for cause, n in r["aborts"].items():
            total["aborts"][cause] = total["aborts"].get(cause, 0) + n
    return total


def _num(value: float) -> str:
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"


def report(records) -> str:
    """The lockbench section of the report: per configuration, throughput at
    each core count, the fit and its prediction for 8 and 16 cores."""
    if not records:
        return "lockbench: no records"
    hz = tsc_hz(records)
    host = meta(records[0]).get("host", {})
    first = timed(records)[0]
    cores = sorted({int(r["cores"]) for r in timed(records)})
    lines = [f"host: {host.get('cpu', '?')}, {host.get('cpus', '?')} CPUs, load average "
             f"{host.get('load_average', '?')} at the start; "
             f"TSC {hz / 1e9:.3f} GHz; every figure in TSC cycles" if hz else "TSC rate unknown",
             f"critical section: {first['instructions']} instructions, the kernel's hold per "
             f"acquisition (from {meta(records[0]).get('hold_source', '?')}), and {first['lines']} "
             "footprint lines; one-core medians below"]
    lines.append(f"  {'lock':<5} {'objects':<8} {'delay':>6} {'section':>8} {'entry':>8} {'lock cost':>9}  "
                 "(cycles per entry on 1 core, at the smallest delay; lock cost = entry - none's "
                 "entry on the same objects, as the ping-pong's lock cost is over none's)")

    def one_core(variant, objects, delay):
        return next((p for p in points(records, variant, objects, delay) if p.cores == 1), None)

    for variant, objects, delay in configurations(records):
        if delay != min(d for v, o, d in configurations(records) if v == variant and o == objects):
            continue
        p, none = one_core(variant, objects, delay), one_core("none", objects, delay)
        if p:
            cost = f"{p.entry_cycles - none.entry_cycles:>9.1f}" if none else f"{'-':>9}"
            lines.append(f"  {variant:<5} {objects:<8} {delay:>6} {p.section_cycles:>8.1f} "
                         f"{p.entry_cycles:>8.1f} {cost}")
    lines.append("")
    lines.append("throughput, kernel entries per 1,000 cycles (all cores; median of repetitions), "
                 "and the machine-repairman fit (s, a in cycles per entry; docs/model.md):")
    head = "".join(f"{'n=' + str(n):>8}" for n in cores)
    lines.append(f"  {'lock':<5} {'objects':<8} {'delay':>6}{head} {'preempt':>8}  {'s':>7} {'a':>8} "
                 f"{'R²':>6} {'n*':>6} {'knee':>5} {'X(8)':>7} {'X(16)':>7}  note")
    for variant, objects, delay in configurations(records):
        pts = points(records, variant, objects, delay)
        by = {p.cores: p for p in pts}
        row = "".join(f"{by[n].throughput * 1e3:>8.3f}" if n in by else f"{'-':>8}" for n in cores)
        row += f"{sum(p.preemptions for p in pts):>9.0f}"
        fitted, why = fit_points(pts)
        if fitted is None:
            lines.append(f"  {variant:<5} {objects:<8} {delay:>6}{row}  no fit: {why}")
            continue
        knee = model.knee(fitted.s, fitted.a)
        predictions = "".join(f"{model.throughput(n, fitted.s, fitted.a) * 1e3:>8.3f}" for n in PREDICT_CORES)
        note = fitted.undetermined or ("exact: 2 parameters through 2 points, R² says nothing"
                                       if fitted.exact else "")
        lines.append(f"  {variant:<5} {objects:<8} {delay:>6}{row}  {_num(fitted.s):>7} {_num(fitted.a):>8} "
                     f"{fitted.r2:>6.3f} {model.saturation_point(fitted.s, fitted.a):>6.1f} "
                     f"{'-' if knee is None else knee:>5}{predictions}  {note}")
    preempted = sum(1 for r in timed(records) if r.get("preemptions", 0) > 0)
    if preempted:
        lines.append(f"  preempt: the threads' involuntary context switches (medians, summed over core "
                     f"counts). {preempted} of {len(timed(records))} runs lost their CPU to another "
                     "process at least once; their figures include waiting for the host's scheduler, "
                     "and a fit through them describes this host's load as much as the lock")
    sections = [p.section_cycles for v, o, d in configurations(records)
                for p in points(records, v, o, d) if p.cores == 1]
    if sections:
        lines.append(f"  the -icount figures predict s = {statistics.median(sections):.1f} cycles: the "
                     f"kernel's {first['instructions']} instructions held per acquisition, as this host "
                     "runs them (the section's one-core median), before any lock hand-over cost")
    counts = rtm_counts(records)
    if counts is not None:
        if counts["usable"]:
            aborts = ", ".join(f"{k} {v}" for k, v in counts["aborts"].items())
            lines.append(f"rtm: real transactions (XBEGIN/XEND): {counts['commits']} commits; aborts: "
                         f"{aborts}; {counts['fallbacks']} fallbacks to the CLH lock (the -stats runs)")
        else:
            lines.append(f"rtm: no transactions on this host ({counts['why']}): the rtm rows are its "
                         "fallback, the CLH lock behind one flag test")
    return "\n".join(lines)


# --- command line -----------------------------------------------------------------


def _ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v]


def _words(text: str) -> list[str]:
    return [v for v in text.split(",") if v]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="The kernel's lock code on the host's real cores "
                                "(docs/benchmarks.md)")
    p.add_argument("--cores", type=_ints,
                   help="core counts, e.g. 1,2,4,8,16 (default: 1 to all this process may use)")
    p.add_argument("--variants", type=_words, default=list(VARIANTS))
    p.add_argument("--delays", type=_ints, default=list(PAPER_DELAYS),
                   help="mean cycles between kernel entries (default the papers' 0,500,2000,8000,32000)")
    p.add_argument("--objects", type=_words, default=list(OBJECTS),
                   help="disjoint (one object per core), shared (one for all), or both")
    p.add_argument("--reps", type=int, default=3, help="runs per configuration; the median is reported")
    p.add_argument("--ms", type=int, default=200, help="milliseconds per run")
    p.add_argument("--lines", type=int, default=DEFAULT_LINES, help="footprint lines per section")
    p.add_argument("--hold-from", type=Path,
                   help="a sweep's results (folder, results.jsonl or console log) with bkl lockstats "
                        "windows of -icount ping-pong; default bench/lockbench/hold.json")
    p.add_argument("--out", type=Path, help="the run folder (default results/lockbench-<time>)")
    p.add_argument("--build", type=Path, default=REPO / "build")
    p.add_argument("--report", type=Path, metavar="RUN", help="only print the report of a run folder")
    p.add_argument("--no-report", action="store_true",
                   help="only run and write the records (make run prints them in its report)")
    args = p.parse_args(argv)
    unknown = [v for v in args.variants if v not in VARIANTS]
    if unknown:
        p.error(f"unknown variant(s) {unknown}: valid are {list(VARIANTS)}")
    if [o for o in args.objects if o not in OBJECTS]:
        p.error("--objects takes disjoint, shared or both")
    if args.reps < 1 or args.ms < 1:
        p.error("--reps and --ms must be at least 1")
    return args


def main(argv=None, say=print) -> int:
    args = parse_args(argv)
    if args.report:
        say(report(load(args.report)))
        return 0
    cpus = available_cpus()
    cores = args.cores or default_cores(cpus)
    if max(cores) > cpus or min(cores) < 1:
        say(f"lockbench.py: --cores {','.join(map(str, cores))}: this process may use {cpus} CPUs, "
            "and every core must be a real one")
        return 2
    out_dir = args.out or REPO / "results" / time.strftime("lockbench-%Y%m%d-%H%M%S")
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        hold = choose_hold(args.hold_from)
        bin_dir = build(REPO, args.build)
        say(f"lockbench: {len(args.variants)} variants x {len(args.objects)} object layouts x "
            f"{len(args.delays)} delays on cores {','.join(map(str, cores))}, {args.reps} x {args.ms} ms "
            f"each; hold {hold.instructions} instructions; records in {out_dir / JSONL}")
        records = sweep(bin_dir, out_dir / JSONL, cores, args.variants, args.delays, args.objects,
                        args.reps, args.ms, hold, args.lines, say)
    except (LockbenchError, OSError, KeyError, ValueError, subprocess.TimeoutExpired) as err:
        say(f"lockbench.py: {err}")
        return 1
    if not args.no_report:
        say(report(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
