"""The report of a sweep (`make run`): results/<run>/report.md and the
terminal summary, one text, in this order:

  1. single-core IPC per variant in exact instructions (QEMU -icount), on
     each port measured, with the lock's cost per kernel entry, the current
     targets, ratios to `none` over every ping-pong
     configuration, and the lock's hold time per acquisition (lockstats);
  2. lockbench: the kernel's lock code on this host's real cores, in TSC
     cycles, with the machine-repairman fit and its prediction for 8 and 16
     cores (tools/lockbench.py);
  3. Redis: kernel entries and kernel, user and lock instructions per
     operation per variant, and the model's prediction.

Figures that only measure the emulator (multicore ping-pong throughput
against cores under -icount and the model fitted to it, Redis throughput
and Xput under TCG) appear only in a last section, "Emulator", when the
records hold any.  docs/results.md says which figure is measured on what.

    python3 tools/summary.py results/<run>/ [results/<other run>/ ...] [--write report.md]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass

from pathlib import Path

import lockbench
import model
import records as rec
import redis_report

BASELINE = "none"
LOCK_ORDER = ("none", "bkl", "fine", "rtm")
THROUGHPUT = "total_rtt_per_s"
# How much a run samples, not what it measures: not part of a configuration's label.
SAMPLING = ("runs", "iters", "warmup", "window")


@dataclass
class Row:
    unit: str
    bench: str
    config: str
    metric: str
    lock: str
    ratio: float
    low: float
    high: float
    runs: int


def config_label(r: dict) -> str:
    """Which configuration of its benchmark a record measured, and on which
    port when the record says (a report may hold both ports' runs)."""
    arch = r.get("env", {}).get("arch")
    words = [arch] if arch else []
    if r["bench"] == "mcpingpong":
        return " ".join(words + [f"delay={rec.field(r, 'delay')} cores={rec.field(r, 'cores')}"])
    words += [f"cpus={r.get('env', {}).get('cpus', '?')}"]
    words += [f"{k}={v}" for k, v in sorted(r.get("config", {}).items()) if k not in SAMPLING]
    return " ".join(words)


def figures(r: dict) -> dict:
    """{figure: (value, higher is better)}: each `{median: ..}` figure, and
    the throughput of mcpingpong."""
    out = {k: (float(v["median"]), False) for k, v in r.items()
           if isinstance(v, dict) and "median" in v}
    if THROUGHPUT in r:
        out[THROUGHPUT] = (float(r[THROUGHPUT]), True)
    return out


def ratio(variant: list, baseline: list, higher_is_better: bool) -> tuple:
    """(ratio of medians, lowest, highest pairwise ratio); above 1 is slower."""
    if higher_is_better:
        variant, baseline = baseline, variant
    return (statistics.median(variant) / statistics.median(baseline),
            min(variant) / max(baseline), max(variant) / min(baseline))


def overhead_rows(records, bench: str | None = None) -> list[Row]:
    """Ratios to `none` per configuration and figure, of one benchmark or all."""
    groups: dict = {}
    for r in rec.of_type(records, "bench"):
        if r.get("lockstats") is True or r.get("timing") is True:
            continue  # statistics and timing cost time: such runs are not compared
        if bench is not None and r["bench"] != bench:
            continue
        lock = r.get("env", {}).get("lock")
        key_base = (r.get("unit", "cycles"), r["bench"], config_label(r))
        for metric, (value, higher) in figures(r).items():
            group = groups.setdefault(key_base + (metric, higher), {})
            group.setdefault(lock, []).append(value)
    rows = []
    for (unit, bench, config, metric, higher), by_lock in groups.items():
        if BASELINE not in by_lock:
            continue
        for lock, values in by_lock.items():
            if lock == BASELINE:
                continue
            r, low, high = ratio(values, by_lock[BASELINE], higher)
            rows.append(Row(unit, bench, config, metric, lock, r, low, high, len(values)))
    return rows


def overhead_table(records, bench: str | None = "pingpong") -> str:
    rows = overhead_rows(records, bench)
    if not rows:
        return "no variant can be compared with 'none' (no matching records)"
    lines = [f"{'benchmark':<11} {'configuration':<41} {'figure':<16} {'lock':<5} "
             f"{'x none':>7} {'min-max':>13} {'boots':>5}"]
    for row in sorted(rows, key=lambda r: (r.unit, r.bench, r.config, r.metric, r.lock)):
        lines.append(f"{row.bench:<11} {row.config:<41} {row.metric:<16} {row.lock:<5} "
                     f"{row.ratio:>7.3f} {row.low:>6.3f}-{row.high:<6.3f} {row.runs:>5}")
    units = sorted({row.unit for row in rows})
    lines.append(f"(figures in {', '.join(units)})")
    return "\n".join(lines)


def _num(value: float) -> str:
    """One decimal, or three significant digits for small values (a fitted s can be tiny)."""
    return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"


def model_report(records, lock: str = "bkl", hz: float | None = None) -> str:
    try:
        fit, delay, unit, rows = model.fit_records(records, lock=lock, hz=hz)
    except ValueError as err:
        return f"queueing model ({lock}): no fit: {err}"
    note = " (exact: two parameters through two points, R² says nothing)" if fit.exact else ""
    if fit.undetermined:
        note += f" ({fit.undetermined})"
    lines = [f"queueing model ({lock}, fitted at delay {delay}): s = {_num(fit.s)} {unit}, "
             f"a = {_num(fit.a)} {unit}, R² = {fit.r2:.4f} over {fit.points} points{note}",
             f"  saturation point n* = (a+s)/s = {model.saturation_point(fit.s, fit.a):.3g} cores, "
             + model.knee_text(fit.s, fit.a)]
    for d, a, r2 in rows:
        if d != delay:
            lines.append(f"  delay {d}: predicted with a = {a:.1f}, R² = "
                         + ("-" if r2 is None else f"{r2:.4f}"))
    return "\n".join(lines)


@dataclass
class Hold:
    """The lockstats of the windows of one benchmark configuration, summed."""
    lock: str
    bench: str
    config: str
    unit: str
    cores: int
    windows: int = 0
    acquisitions: int = 0
    contended: int = 0
    held: int = 0
    waited: int = 0
    barriers: int = 0
    ipcs: int = 0            # pingpong: IPCs in the windows (0: not known)
    histogram: list = None   # bucket i: held < 2^(i+6)

    @property
    def held_per_acquisition(self) -> float:
        return self.held / self.acquisitions

    @property
    def waited_per_acquisition(self) -> float:
        return self.waited / self.acquisitions

    def per_ipc(self, count: int) -> float | None:
        return count / self.ipcs if self.ipcs else None

    def held_percentile(self, fraction: float) -> int | None:
        """Upper bound of the histogram bucket holding that fraction of the holds."""
        total = sum(self.histogram or [])
        seen = 0
        for i, n in enumerate(self.histogram or []):
            seen += n
            if total and seen >= fraction * total:
                return 2 ** (i + 6)
        return None


def lock_holds(records) -> list[Hold]:
    """One Hold per (lock, benchmark, configuration) from the lockstats
    windows (records.lockstats_windows)."""
    holds: dict = {}
    for bench, stats in rec.lockstats_windows(records):
        env = bench.get("env", {})
        key = (env.get("lock", "?"), bench["bench"], config_label(bench), bench.get("unit", "cycles"))
        cores = int(rec.field(bench, "cores", env.get("cpus", len(stats))) or len(stats))
        h = holds.setdefault(key, Hold(*key, cores=cores, histogram=[]))
        h.windows += 1
        h.ipcs += int(bench.get("ipcs", 0))
        for r in stats:
            s = r["lockstats"]
            h.acquisitions += s.get("acquisitions", 0)
            h.contended += s.get("contended", 0)
            h.held += s.get("cycles_held", 0)
            h.waited += s.get("cycles_waited", 0)
            h.barriers += s.get("barriers", 0)
            hist = s.get("hold_histogram", [])
            h.histogram += [0] * (len(hist) - len(h.histogram))
            for i, n in enumerate(hist):
                h.histogram[i] += n
    return [h for h in holds.values() if h.acquisitions]


def hold_report(records, bench: str | None = None) -> str:
    """Lock hold time per acquisition, of one benchmark's windows or all."""
    holds = [h for h in lock_holds(records) if bench is None or h.bench == bench]
    if not holds:
        return ("lock hold time: no lockstats windows (build with LOCKSTATS=1 and run with "
                "lockstats=1: sweep.py --lockstats, or the quick preset's bkl-stats runs)")
    units = sorted({h.unit for h in holds})
    lines = [f"kernel lock per acquisition, from lockstats windows (in {', '.join(units)}; "
             "p50/p90: histogram bucket bounds):",
             f"  {'lock':<5} {'benchmark':<11} {'configuration':<41} {'held':>8} {'p50':>6} "
             f"{'p90':>6} {'waited':>8} {'contended':>9} {'acq/IPC':>8} {'barriers/IPC':>12}"]
    for h in sorted(holds, key=lambda h: (h.lock, h.bench, h.cores, h.config)):
        acq_ipc, bar_ipc = h.per_ipc(h.acquisitions), h.per_ipc(h.barriers)
        p50, p90 = h.held_percentile(0.5), h.held_percentile(0.9)
        lines.append(
            f"  {h.lock:<5} {h.bench:<11} {h.config:<41} {h.held_per_acquisition:>8.1f} "
            f"{'<' + str(p50) if p50 else '-':>6} {'<' + str(p90) if p90 else '-':>6} "
            f"{h.waited_per_acquisition:>8.1f} {h.contended / h.acquisitions:>8.1%} "
            f"{'-' if acq_ipc is None else format(acq_ipc, '.2f'):>8} "
            f"{'-' if bar_ipc is None else format(bar_ipc, '.2f'):>12}")
    return "\n".join(lines)


def acquisitions_per_ipc(holds, lock: str) -> float | None:
    """Lock acquisitions per IPC of a variant, from its single-core ping-pong windows."""
    acquired = sum(h.acquisitions for h in holds if h.lock == lock and h.ipcs)
    ipcs = sum(h.ipcs for h in holds if h.lock == lock and h.ipcs)
    return acquired / ipcs if ipcs else None


def service_time_report(records, lock: str = "bkl", hz: float | None = None) -> str:
    """The lock time of one round trip measured by lockstats on 1, 2, ...
    cores beside the service time s the model infers from throughput."""
    holds = [h for h in lock_holds(records) if h.lock == lock]
    per_ipc = acquisitions_per_ipc(holds, lock)
    per_rtt = 2 * (per_ipc if per_ipc is not None else 1.0)
    measured = {}
    for h in holds:
        if h.bench == "mcpingpong":
            measured.setdefault(h.cores, []).append(h)
    if not measured:
        return f"measured service time ({lock}): no mcpingpong lockstats windows"
    try:
        fitted = model.fit_records(records, lock=lock, hz=hz)[0].s
    except ValueError:
        fitted = None
    source = ("acquisitions per IPC from ping-pong" if per_ipc is not None
              else "assuming one acquisition per IPC")
    lines = [f"measured service time ({lock}): lock held per round trip = held per acquisition "
             f"x {per_rtt:.2f} acquisitions ({source})"]
    for cores in sorted(measured):
        hs = measured[cores]
        held = sum(h.held for h in hs) / sum(h.acquisitions for h in hs)
        waited = sum(h.waited for h in hs) / sum(h.acquisitions for h in hs)
        lines.append(f"  {cores} core(s): held {held:.1f} per acquisition, so s = {held * per_rtt:.1f} "
                     f"per round trip; waited {waited:.1f} per acquisition "
                     f"({', '.join(h.config for h in hs)})")
    if fitted is not None:
        lines.append(f"  the model infers s = {_num(fitted)} from throughput against cores")
    return "\n".join(lines)


def shared_clock_note(records) -> str:
    if not any(r.get("shared_clock") is True for r in rec.benches(records, "mcpingpong")):
        return ""
    return ("note: these mcpingpong runs used -icount: QEMU ran the cores one after another and "
            "the counter is the sum of all cores' instructions, so throughput is taken per unit "
            "of each core's own time (total x cores). The cores never really ran at once: "
            "lock contention shows only where a core lost its turn while holding the lock, so "
            "this fit describes the emulator, not how the lock scales on hardware.")


# The targets for the IPC path (docs/results.md, "The current figures"), in instructions (-icount), single core, cross space.
IPC_ONE_WAY_TARGET = 200            # none, length 0: Call and ReplyRecv each
IPC_PER_MR_TARGET = 4               # each extra message register, one way
IPC_LOCK_PER_ENTRY_TARGET = {"bkl": 15, "fine": 40}   # rtm: no more than bkl + 5
IPC_RTM_OVER_BKL = 5


def _ipc_medians(records) -> dict:
    """{(arch, lock, length): {figure: median}} of single-core cross-space ping-pong in instructions."""
    out: dict = {}
    for r in rec.single_core_ipc(records):
        env = r.get("env", {})
        key = (env.get("arch", "?"), env.get("lock", "?"), int(rec.field(r, "length", 0)))
        for figure in ("call", "reply_recv", "round_trip"):
            out.setdefault(key, {}).setdefault(figure, []).append(float(r[figure]["median"]))
    return {k: {f: statistics.median(v) for f, v in figs.items()} for k, figs in out.items()}


def _verdict(value: float, target: float) -> str:
    return f"<= {target:g} {'ok' if value <= target else 'MISSED'}"


def ipc_target_rows(records) -> list[tuple[str, str, float, str]]:
    """(arch, what, figure, target) for the current IPC targets, from the figures at hand.

    One-way Call and ReplyRecv of `none` at length 0; the cost of each extra
    message register ((length 4 - length 0) / 4, one way); the lock's cost per
    kernel entry ((round trip - none's) / 2: a round trip is two entries) and
    its round trip as a ratio to none's."""
    med = _ipc_medians(records)
    rows = []
    for arch in sorted({k[0] for k in med}):
        base = med.get((arch, BASELINE, 0))
        if base is None:
            continue
        rows.append((arch, "none call, one way", base["call"], _verdict(base["call"], IPC_ONE_WAY_TARGET)))
        rows.append((arch, "none reply_recv, one way", base["reply_recv"],
                     _verdict(base["reply_recv"], IPC_ONE_WAY_TARGET)))
        long = med.get((arch, BASELINE, 4))
        if long is not None:
            per_mr = max((long["call"] - base["call"]) / 4, (long["reply_recv"] - base["reply_recv"]) / 4)
            rows.append((arch, "per extra message register", per_mr, _verdict(per_mr, IPC_PER_MR_TARGET)))
        per_entry = {}
        for lock in ("bkl", "rtm", "fine"):
            figs = med.get((arch, lock, 0))
            if figs is None:
                continue
            per_entry[lock] = (figs["round_trip"] - base["round_trip"]) / 2
            target = (per_entry["bkl"] + IPC_RTM_OVER_BKL if lock == "rtm" and "bkl" in per_entry
                      else IPC_LOCK_PER_ENTRY_TARGET.get(lock))
            ratio_text = f"round trip {figs['round_trip'] / base['round_trip']:.3f} x none"
            rows.append((arch, f"{lock} lock per kernel entry ({ratio_text})", per_entry[lock],
                         _verdict(per_entry[lock], target) if target is not None else ""))
    return rows


def ipc_target_table(records) -> str:
    rows = ipc_target_rows(records)
    if not rows:
        return ""
    lines = ["current targets (instructions, single core, cross space):"]
    lines += [f"{arch:<9} {what:<52} {value:>8.1f}  {target}" for arch, what, value, target in rows]
    return "\n".join(lines)


def ipc_table(records) -> str:
    """Per port and variant: one-way Call and ReplyRecv, the round trip, and
    the lock's cost per kernel entry over `none` (single core, cross space,
    no extra message registers), in exact instructions."""
    med = _ipc_medians(records)
    if not med:
        return ("no single-core cross-space ping-pong under -icount in these records "
                "(the figures of this section are exact instruction counts)")
    lines = [f"{'port':<9} {'lock':<5} {'call':>7} {'reply_recv':>10} {'round trip':>10} "
             f"{'x none':>7} {'lock/entry':>10}"]
    for arch in sorted({k[0] for k in med}):
        base = med.get((arch, BASELINE, 0))
        for lock in LOCK_ORDER:
            figs = med.get((arch, lock, 0))
            if figs is None:
                continue
            over = (f"{figs['round_trip'] / base['round_trip']:>7.3f}"
                    f"{(figs['round_trip'] - base['round_trip']) / 2:>11.1f}" if base else f"{'-':>7}{'-':>11}")
            lines.append(f"{arch:<9} {lock:<5} {figs['call']:>7.0f} {figs['reply_recv']:>10.0f} "
                         f"{figs['round_trip']:>10.0f} {over}")
    lines.append("(instructions under QEMU -icount; lock/entry = (round trip - none's) / 2: "
                 "a round trip is two kernel entries)")
    timing = redis_report.timing_cost_per_entry(records)
    if timing:
        lines.append("the kernel's timing (on in the Redis window) adds per kernel entry: " + ", ".join(
            f"{arch} {lock} {cost:.1f}" for (arch, lock), cost in
            sorted(timing.items(), key=lambda kv: (kv[0][0], LOCK_ORDER.index(kv[0][1])
                                                   if kv[0][1] in LOCK_ORDER else 99))))
    return "\n".join(lines)


def emulator_figures(records) -> bool:
    """Whether the records hold multicore ping-pong measured under TCG."""
    return any(r.get("shared_clock") is True or r.get(rec.META_KEY, {}).get("accel") == "tcg"
               or r.get("env", {}).get("accel") == "tcg"
               for r in rec.benches(records, "mcpingpong"))


def _block(text: str) -> str:
    return "```\n" + text.rstrip("\n") + "\n```"


def report(records, lockbench_records=(), hz: float | None = None, title: str = "") -> str:
    """The report's text (markdown: headings, tables in code blocks)."""
    parts = [f"# {title or 'Report'}",
             "Which figure is measured on what: docs/results.md. Instructions come from QEMU "
             "-icount (exact, the same on every host); cycles from this host's real cores; "
             "\"modelled\" marks the queueing model's output."]
    parts += ["## 1. Single-core IPC per variant (exact instructions, QEMU -icount)",
              _block(ipc_table(records))]
    targets = ipc_target_table(records)
    if targets:
        parts.append(_block(targets))
    parts += ["ratio to `none`, every ping-pong configuration (median; min-max over boots):",
              _block(overhead_table(records, "pingpong")),
              _block(hold_report(records, "pingpong"))]
    parts.append("## 2. lockbench: the kernel's lock code on this host's cores (TSC cycles)")
    parts.append(_block(lockbench.report(list(lockbench_records))) if lockbench_records else
                 "not run: python3 tools/lockbench.py (docs/benchmarks.md)")
    redis = redis_report.report(records)
    parts += ["## 3. Redis: instructions per operation",
              _block(redis) if redis else "no Redis boots with a complete window in these records"]
    emulator = []
    if rec.benches(records, "mcpingpong"):
        (emulator if emulator_figures(records) else parts).extend([
            "multicore ping-pong: throughput against cores and the model fitted to it:",
            _block("\n".join(t for t in (model_report(records, hz=hz), shared_clock_note(records),
                                         service_time_report(records, hz=hz),
                                         hold_report(records, "mcpingpong")) if t))])
    redis_rates = redis_report.emulator_report(records)
    if redis_rates:
        emulator.append(_block(redis_rates))
    if emulator:
        parts += ["## Emulator (these figures describe QEMU, not the kernel)",
                  "Under TCG the wall clock measures emulation speed, and under -icount QEMU runs "
                  "the virtual cores one at a time, so no two cores are ever in the kernel at once. "
                  "Nothing here says how the kernel scales; section 2 does."] + emulator
    return "\n\n".join(parts) + "\n"


def lockbench_of(path: Path) -> list[dict]:
    """The lockbench records kept beside a sweep's results, if any."""
    path = Path(path)
    return lockbench.load(path if path.is_dir() else path.parent)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="The report of one or more sweeps")
    parser.add_argument("results", nargs="+",
                        help="results directories (with lockbench.jsonl if lockbench ran), "
                             "results.jsonl files or console logs")
    parser.add_argument("--hz", type=float, help="time units per second for the model fit")
    parser.add_argument("--write", type=Path, help="also write the report to this file (report.md)")
    parser.add_argument("--plots", type=Path, help="also draw the figures into this folder")
    args = parser.parse_args(argv)
    try:
        records, lb = [], []
        for path in args.results:
            if not Path(path).exists():
                print(f"summary.py: {path}: no such run, left out", file=sys.stderr)
                continue
            records += rec.load(path)
            lb += lockbench_of(Path(path))
        text = report(records, lb, args.hz, f"Report of {', '.join(Path(p).name for p in args.results)}")
    except (OSError, rec.RecordError) as err:
        print(f"summary.py: {err}", file=sys.stderr)
        return 1
    print(text)
    if args.write:
        args.write.write_text(text)
        print(f"report: {args.write}")
    if args.plots:
        import plots

        written = plots.write_all(records, args.plots, lockbench_records=lb)
        print("plots: " + (", ".join(str(p) for p in written) if written else "none (not enough data)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
