"""The summary table of a sweep: each variant's cost over `none`.

For every benchmark configuration and figure, the ratio of the variant's
median to none's median (for throughput, none's over the variant's, so that
above 1 always means slower), with the spread over repeated boots as the
smallest and largest ratio any pair of boots gives.  Beside it the targets:
bkl <= 1.03 x none and fine <= 1.20 x none on single-core ping-pong, and
the seL4 Haswell reference of 775 (Call) and 646 (ReplyRecv) cycles one way.
Then the "going further" part: the queueing model's fit of the mcpingpong
figures (tools/model.py) and the lock hold time measured by `lockstats`.

    python3 tools/summary.py results/<run>/ [--hz HZ]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass

import model
import records as rec

BASELINE = "none"
TARGETS = {"bkl": 1.03, "fine": 1.20}  # on single-core ping-pong, from the project's issue
SEL4_HASWELL = {"call": 775, "reply_recv": 646}  # cycles, one-way
THROUGHPUT = "total_rtt_per_s"


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

    @property
    def target(self) -> float | None:
        return TARGETS.get(self.lock) if self.bench == "pingpong" else None


def config_label(r: dict) -> str:
    """Which configuration of its benchmark a record measured."""
    if r["bench"] == "mcpingpong":
        return f"delay={rec.field(r, 'delay')} cores={rec.field(r, 'cores')}"
    words = [f"cpus={r.get('env', {}).get('cpus', '?')}"]
    words += [f"{k}={v}" for k, v in sorted(r.get("config", {}).items())]
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


def overhead_rows(records) -> list[Row]:
    groups: dict = {}
    for r in rec.of_type(records, "bench"):
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


def _target_text(row: Row) -> str:
    if row.target is None:
        return ""
    return f"<= {row.target:.2f} {'ok' if row.ratio <= row.target else 'MISSED'}"


def overhead_table(records) -> str:
    rows = overhead_rows(records)
    if not rows:
        return "no variant can be compared with 'none' (no matching records)"
    lines = [f"{'benchmark':<11} {'configuration':<28} {'figure':<16} {'lock':<5} "
             f"{'x none':>7} {'min-max':>13} {'boots':>5}  target"]
    for row in sorted(rows, key=lambda r: (r.unit, r.bench, r.config, r.metric, r.lock)):
        lines.append(f"{row.bench:<11} {row.config:<28} {row.metric:<16} {row.lock:<5} "
                     f"{row.ratio:>7.3f} {row.low:>6.3f}-{row.high:<6.3f} {row.runs:>5}  "
                     f"{_target_text(row)}")
    units = sorted({row.unit for row in rows})
    lines.append(f"(figures in {', '.join(units)})")
    return "\n".join(lines)


def reference_table(records) -> str:
    """Our single-core one-way Call and ReplyRecv medians beside seL4's."""
    lines = []
    for r in rec.benches(records, "pingpong"):
        if r.get("env", {}).get("cpus", 1) != 1:
            continue
        ours = "  ".join(f"{m} {r[m]['median']:.0f} (seL4 {ref})"
                         for m, ref in SEL4_HASWELL.items() if m in r)
        lines.append(f"{r.get('env', {}).get('lock', '?'):<5} {ours}")
    if not lines:
        return ""
    header = "single-core ping-pong medians beside seL4 on Haswell (775 + 646 cycles one way)"
    units = {r.get("unit", "cycles") for r in rec.benches(records, "pingpong")}
    if "instructions" in units:
        header += "\nreference only: ours is in instructions under TCG"
    return header + "\n" + "\n".join(lines)


def model_report(records, lock: str = "bkl", hz: float | None = None) -> str:
    try:
        fit, delay, unit, rows = model.fit_records(records, lock=lock, hz=hz)
    except ValueError as err:
        return f"queueing model ({lock}): no fit: {err}"
    note = " (exact: two parameters through two points, R² says nothing)" if fit.exact else ""
    lines = [f"queueing model ({lock}, fitted at delay {delay}): s = {fit.s:.1f} {unit}, "
             f"a = {fit.a:.1f} {unit}, R² = {fit.r2:.4f} over {fit.points} points{note}",
             f"  saturation point n* = (a+s)/s = {model.saturation_point(fit.s, fit.a):.1f} cores, "
             + model.knee_text(fit.s, fit.a)]
    for d, a, r2 in rows:
        if d != delay:
            lines.append(f"  delay {d}: predicted with a = {a:.1f}, R² = "
                         + ("-" if r2 is None else f"{r2:.4f}"))
    return "\n".join(lines)


def lock_hold(records) -> dict:
    """{(lock, cpus): (held per acquisition, acquisitions)} from lockstats
    records, using the run description the sweep stored with each."""
    sums: dict = {}
    for r in rec.of_type(records, "lockstats"):
        meta = r.get(rec.META_KEY, {})
        key = (meta.get("lock", "?"), meta.get("cpus", "?"))
        held, acquired = sums.get(key, (0, 0))
        sums[key] = (held + r["lockstats"]["cycles_held"], acquired + r["lockstats"]["acquisitions"])
    return {k: (held / acquired, acquired) for k, (held, acquired) in sums.items() if acquired}


def hold_report(records) -> str:
    holds = lock_hold(records)
    if not holds:
        return "lock hold time: no lockstats records (build with LOCKSTATS=1: sweep.py --lockstats)"
    lines = ["lock hold time from lockstats (one round trip takes two acquisitions; "
             "compare the model's s with twice the hold time):"]
    for (lock, cpus), (hold, acquired) in sorted(holds.items(), key=str):
        lines.append(f"  {lock} on {cpus} core(s): {hold:.1f} per acquisition "
                     f"over {acquired} acquisitions")
    return "\n".join(lines)


def report(records, hz: float | None = None) -> str:
    parts = ["== overhead over 'none' (ratio of medians; min-max over boots) ==",
             overhead_table(records)]
    reference = reference_table(records)
    if reference:
        parts.append(reference)
    parts += ["== going further ==", model_report(records, hz=hz), hold_report(records)]
    return "\n".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Summary table of a sweep")
    parser.add_argument("results", help="a results directory, results.jsonl or console log")
    parser.add_argument("--hz", type=float, help="time units per second for the model fit")
    args = parser.parse_args(argv)
    try:
        print(report(rec.load(args.results), args.hz))
    except (OSError, rec.RecordError) as err:
        print(f"summary.py: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
