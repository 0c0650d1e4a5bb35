"""Figures of a sweep, after Elphinstone et al. (Figures 3, 4 and 5).

Each function takes the loaded records and a path stem and writes
<stem>.png and <stem>.svg, returning the paths written, or [] when the
records hold nothing to draw.

    python3 tools/plots.py results/<run>/ [--out DIR] [--bounds 323,613] [--delay 4000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
import numpy as np  # noqa: E402

import lockbench  # noqa: E402
import model  # noqa: E402
import records as rec  # noqa: E402
import redis_report  # noqa: E402

IPC_FIGURES = ("call", "reply_recv", "round_trip")
LOCK_ORDER = ("none", "bkl", "fine", "rtm")
PER = 1e6  # throughput is drawn per million time units (cycles or instructions)


def _save(fig, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    for path in paths:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    return paths


def _locks(found) -> list[str]:
    return sorted(found, key=lambda lock: (LOCK_ORDER.index(lock) if lock in LOCK_ORDER else 99, lock))


def _unit(records) -> str:
    units = {r.get("unit", "cycles") for r in rec.of_type(records, "bench")}
    return "/".join(sorted(units)) or "cycles"


def _throughput_label(records, unit: str) -> str:
    """Under -icount the cores took turns on one clock (model.per_core_time_factor)."""
    if any(r.get("shared_clock") is True for r in rec.benches(records, "mcpingpong")):
        return f"round trips per million {unit}\nof each core's own time (-icount: cores take turns)"
    return f"round trips per million {unit}"


def ipc_cost(records, stem: Path) -> list[Path]:
    """Figure 3: single-core one-way IPC cost per variant; bars are the
    median over boots of each boot's median, error bars its standard
    deviation (the median of the boots' standard deviations)."""
    by_lock: dict = {}
    for r in rec.benches(records, "pingpong"):
        if r.get("env", {}).get("cpus", 1) == 1 and r.get("lockstats") is not True and r.get("timing") is not True:
            by_lock.setdefault(r.get("env", {}).get("lock", "?"), []).append(r)
    if not by_lock:
        return []
    locks = _locks(by_lock)
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(IPC_FIGURES)
    for i, name in enumerate(IPC_FIGURES):
        heights, errors = [], []
        for lock in locks:
            stats = [r[name] for r in by_lock[lock] if name in r]
            heights.append(statistics.median(s["median"] for s in stats) if stats else 0)
            errors.append(statistics.median(s.get("stddev", 0) for s in stats) if stats else 0)
        x = np.arange(len(locks)) + (i - (len(IPC_FIGURES) - 1) / 2) * width
        ax.bar(x, heights, width, yerr=errors, capsize=3, label=name)
    ax.set_xticks(np.arange(len(locks)), locks)
    ax.set_ylabel(f"{_unit(rec.benches(records, 'pingpong'))} (median)")
    ax.set_title("Single-core ping-pong: IPC cost per lock variant")
    ax.legend()
    return _save(fig, stem)


def _points(records, lock):
    try:
        return model.mcpingpong_points(records, lock=lock)
    except ValueError:
        return {}, "cycles"


def scaling(records, stem: Path, lock: str = "bkl") -> list[Path]:
    """Figure 4(a): throughput against cores for each delay, with the model
    fitted at one delay and predicted for the others."""
    points, unit = _points(records, lock)
    if not points:
        return []
    try:
        fit, fit_delay, _, _ = model.fit_records(records, lock=lock)
    except ValueError:
        fit = None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (delay, (cores, x)) in enumerate(points.items()):
        colour = f"C{i % 10}"
        ax.plot(cores, x * PER, "o", color=colour, label=f"delay {delay}")
        a = model.shifted_a(fit, fit_delay, delay) if fit else 0
        if a > 0:
            n = np.arange(1, max(cores.max(), 2) + 1)
            ax.plot(n, model.curve(n, fit.s, a) * PER, "-", color=colour)
    title = f"{lock}: throughput against cores"
    if fit:
        title += f" (model: s = {fit.s:.0f}, fitted at delay {fit_delay}, R² = {fit.r2:.3f})"
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("cores")
    ax.set_ylabel(_throughput_label(records, unit))
    ax.legend(fontsize=8)
    return _save(fig, stem)


def bounded(records, stem: Path, s_low: float, s_high: float, lock: str = "bkl") -> list[Path]:
    """Figure 4(b): measurements between the model curves for the shortest
    and longest service time observed; think times come from the fit."""
    points, unit = _points(records, lock)
    try:
        fit, fit_delay, _, _ = model.fit_records(records, lock=lock)
    except ValueError:
        return []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, (delay, (cores, x)) in enumerate(points.items()):
        a = model.shifted_a(fit, fit_delay, delay)
        if a <= 0:
            continue
        colour = f"C{i % 10}"
        n = np.arange(1, max(cores.max(), 2) + 1)
        upper, lower = model.bounds(n, s_low, s_high, a)
        ax.plot(cores, x * PER, "o", color=colour, label=f"delay {delay}")
        ax.plot(n, upper * PER, "-", color=colour)
        ax.plot(n, lower * PER, "--", color=colour)
    ax.set_title(f"{lock}: bounds for s = {s_low:g} (solid) and {s_high:g} (dashed)", fontsize=9)
    ax.set_xlabel("cores")
    ax.set_ylabel(_throughput_label(records, unit))
    ax.legend(fontsize=8)
    return _save(fig, stem)


def variants(records, stem: Path, delay: int | None = None) -> list[Path]:
    """Figure 5: throughput against cores for each variant at one delay
    (default: 4000 when measured, else the largest)."""
    by_lock = {}
    for lock in {r.get("env", {}).get("lock") for r in rec.benches(records, "mcpingpong")}:
        by_lock[lock], unit = _points(records, lock)
    delays = {d for points in by_lock.values() for d in points}
    if not delays:
        return []
    if delay is None:
        delay = 4000 if 4000 in delays else max(delays)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for lock in _locks(by_lock):
        if delay in by_lock[lock]:
            cores, x = by_lock[lock][delay]
            order = np.argsort(cores)
            ax.plot(cores[order], x[order] * PER, "o-", label=lock)
    ax.set_title(f"Throughput against cores per variant, delay {delay}")
    ax.set_xlabel("cores")
    ax.set_ylabel(_throughput_label(records, unit))
    ax.legend()
    return _save(fig, stem)


def _redis_figure(records, stem: Path, key: str, title: str, ylabel: str) -> list[Path]:
    """One line per variant against cores: the median over boots, error bars
    the standard deviation when a configuration was booted more than once."""
    configs = redis_report.configurations(redis_report.boots(records))
    by_lock: dict = {}
    for (lock, cpus), group in configs.items():
        values = [b.figures[key] for b in group if b.figures[key] is not None]
        if values:
            spread = statistics.stdev(values) if len(values) > 1 else 0.0
            by_lock.setdefault(lock, []).append((cpus, statistics.median(values), spread))
    if not by_lock:
        return []
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for lock in _locks(by_lock):
        points = sorted(by_lock[lock])
        ax.errorbar([p[0] for p in points], [p[1] for p in points], yerr=[p[2] for p in points],
                    fmt="o-", capsize=3, label=lock)
    ax.set_xticks(sorted({p[0] for points in by_lock.values() for p in points}))
    ax.set_title(title)
    ax.set_xlabel("cores")
    ax.set_ylabel(ylabel)
    ax.legend()
    return _save(fig, stem)


def redis_throughput(records, stem: Path) -> list[Path]:
    """Redis throughput against cores per variant, as Figure 3 of "For a Microkernel, a Big
    Lock Is Fine"."""
    return _redis_figure(records, stem, "throughput", "Redis throughput (redis-benchmark set,get)",
                         "operations per wall-clock second\n(under TCG: emulation speed)")


def redis_xput(records, stem: Path) -> list[Path]:
    """Redis throughput divided by mean core utilisation, as Figure 4 of "For a Microkernel, a
    Big Lock Is Fine"."""
    return _redis_figure(records, stem, "xput", "Redis Xput = throughput / mean utilisation",
                         "operations per second of full utilisation\n(under TCG: emulation speed)")


def redis_cost(records, stem: Path) -> list[Path]:
    """Instructions (or cycles) in the kernel per operation against cores: the
    figure that does not depend on the host's speed under -icount."""
    return _redis_figure(records, stem, "kernel_per_op", "Kernel time per Redis operation",
                         "kernel time per operation\n(instructions under -icount)")


def lockbench_scaling(lockbench_records, stem: Path, objects: str = "shared",
                      delay: int | None = None) -> list[Path]:
    """lockbench: kernel entries per 1,000 TSC cycles against the host's
    cores for each variant at one delay (default 2000 when measured), with
    the model fitted to each variant drawn out to 16 cores."""
    configs = [c for c in lockbench.configurations(lockbench_records) if c[1] == objects]
    delays = sorted({d for _, _, d in configs})
    if not delays:
        return []
    if delay is None:
        delay = 2000 if 2000 in delays else delays[len(delays) // 2]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    drawn = False
    for i, lock in enumerate(_locks({v for v, _, d in configs if d == delay})):
        pts = lockbench.points(lockbench_records, lock, objects, delay)
        colour = f"C{i % 10}"
        ax.plot([p.cores for p in pts], [p.throughput * 1e3 for p in pts], "o", color=colour, label=lock)
        drawn = True
        fitted, _ = lockbench.fit_points(pts)
        if fitted is not None and fitted.determined:
            n = np.arange(1, max(16, max(p.cores for p in pts)) + 1)
            ax.plot(n, model.curve(n, fitted.s, fitted.a) * 1e3, "--", color=colour, linewidth=1)
    if not drawn:
        plt.close(fig)
        return []
    ax.set_title(f"lockbench on this host's cores: {objects} objects, delay {delay} "
                 "(dashed: model, where determined)", fontsize=9)
    ax.set_xlabel("cores")
    ax.set_ylabel("kernel entries per 1,000 TSC cycles")
    ax.legend(fontsize=8)
    return _save(fig, stem)


def _emulated_mcpingpong(records) -> bool:
    return any(r.get("shared_clock") is True or r.get(rec.META_KEY, {}).get("accel") == "tcg"
               for r in rec.benches(records, "mcpingpong"))


def write_all(records, out_dir: Path, bounds: tuple | None = None,
              delay: int | None = None, lockbench_records=()) -> list[Path]:
    """Every figure the records allow, into out_dir; those that measure only
    the emulator (multicore ping-pong under -icount or TCG, Redis rates under
    TCG) into out_dir/emulator."""
    out_dir = Path(out_dir)
    written = ipc_cost(records, out_dir / "ipc_cost")
    if lockbench_records:
        written += lockbench_scaling(list(lockbench_records), out_dir / "lockbench_shared")
        written += lockbench_scaling(list(lockbench_records), out_dir / "lockbench_disjoint", "disjoint")
    mc_dir = out_dir / "emulator" if _emulated_mcpingpong(records) else out_dir
    written += scaling(records, mc_dir / "scaling_bkl")
    if bounds:
        written += bounded(records, mc_dir / "bounds_bkl", *bounds)
    written += variants(records, mc_dir / "variants")
    found = redis_report.boots(records)
    rate_dir = out_dir if found and not any(b.emulated for b in found) else out_dir / "emulator"
    written += redis_throughput(records, rate_dir / "redis_throughput")
    written += redis_xput(records, rate_dir / "redis_xput")
    written += redis_cost(records, out_dir / "redis_kernel_per_op")
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Figures of a sweep")
    parser.add_argument("results", help="a results directory, results.jsonl or console log")
    parser.add_argument("--out", type=Path, help="where to write (default <results dir>/plots)")
    parser.add_argument("--bounds", help="LOW,HIGH service times for the Figure 4(b) bounds")
    parser.add_argument("--delay", type=int, help="delay for the per-variant figure")
    args = parser.parse_args(argv)
    results = Path(args.results)
    out = args.out or (results if results.is_dir() else results.parent) / "plots"
    bounds = tuple(float(v) for v in args.bounds.split(",")) if args.bounds else None
    if bounds is not None and len(bounds) != 2:
        parser.error("--bounds takes LOW,HIGH")
    try:
        written = write_all(rec.load(results), out, bounds, args.delay,
                            lockbench.load(results if results.is_dir() else results.parent))
    except (OSError, rec.RecordError) as err:
        print(f"plots.py: {err}", file=sys.stderr)
        return 1
    print("\n".join(str(p) for p in written) if written else "nothing to plot")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
