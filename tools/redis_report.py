"""The Redis benchmark's part of a sweep's summary: per variant and core
count, kernel entries and kernel, user and lock time per operation, and the
machine-repairman model's prediction; throughput and Xput apart, in the
emulator section when the boots ran under TCG.

Each boot's records (grouped by the sweep's job, or a whole console log as
one boot) give one set of figures (tools/redis_figures.py); repeated boots
of one configuration are summarised by their median.  The model takes each
core's measured delay (user time between kernel entries) and the lock's
measured service time per entry and predicts, for 1..N cores in the
papers' layout (driver on core 0, a server on every other core), the
kernel entries per time unit (tools/model.py, mixed_throughput), turned
into operations by the measured kernel entries per operation.

    python3 tools/redis_report.py results/<run>/
"""

from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass

import model
import procstat
import records as rec
import redis_figures

LOCK_ORDER = ("none", "bkl", "fine", "rtm")
MODEL_CORES = (1, 2, 4, 8, 16)
# The server column of a bench record that names no server.
UNNAMED_SERVER = "unnamed"


@dataclass
class Boot:
    lock: str
    cpus: int
    icount: bool
    figures: dict
    stats: bool = False  # a LOCKSTATS=1 build: slower, but it measures the lock's hold time
    emulated: bool = True  # under TCG: wall-clock rates are emulation speed
    arch: str = "x86_64"
    server: str = UNNAMED_SERVER  # the server the boot ran (the bench record's config)

    @property
    def variant(self) -> str:
        return self.lock + ("-stats" if self.stats else "")


def _lock_key(lock: str):
    return (LOCK_ORDER.index(lock) if lock in LOCK_ORDER else 99, lock)


def _boot_groups(records) -> list[list[dict]]:
    """The records of each boot: by the sweep's job and rep, in order; a
    console log without sweep metadata is one boot."""
    groups: dict = {}
    for r in records:
        meta = r.get(rec.META_KEY)
        key = meta.get("job") if meta else None
        groups.setdefault(key, []).append(r)
    return list(groups.values())


def boots(records) -> list[Boot]:
    """Every boot with a complete Redis window."""
    found = []
    for group in _boot_groups(records):
        if not rec.benches(group, "redis"):
            continue
        meta = group[0].get(rec.META_KEY) or {}
        boot = rec.of_type(group, "boot")
        info = boot[-1]["boot"] if boot else {}
        arch = meta.get("arch", info.get("arch", "x86_64"))
        icount = bool(meta.get("icount", False))
        per_tick = redis_figures.ICOUNT_INSTRUCTIONS_PER_TICK.get(arch, 1) if icount else 1
        try:
            fig = redis_figures.figures(group, per_tick=per_tick)
        except redis_figures.WindowError:
            continue
        found.append(Boot(lock=meta.get("lock", info.get("lock", "?")),
                          cpus=int(meta.get("cpus", info.get("cores", 1))),
                          icount=icount, figures=fig,
                          stats=bool(meta.get("stats", False)),
                          emulated=meta.get("accel", "tcg") == "tcg",
                          arch=arch,
                          server=rec.field(rec.benches(group, "redis")[-1], "server",
                                           UNNAMED_SERVER)))
    return found


def timing_cost_per_entry(records) -> dict:
    """{(arch, lock): instructions the kernel's timing adds to one kernel entry}.

    The Redis window runs with timing on (KSTATS_TIME_ON), which splits kernel from user time;
    the ping-pong's timing=1 pass measures the same entries with it on, so half the difference of
    the cross-space, length-0 round trips is its cost per entry (docs/results.md)."""
    trips: dict = {}
    for timing in (False, True):
        for r in rec.single_core_ipc(records, timing):
            if int(rec.field(r, "length", 0)) == 0:
                env = r.get("env", {})
                key = (env.get("arch", "?"), env.get("lock", "?"))
                trips.setdefault(key, {}).setdefault(timing, []).append(float(r["round_trip"]["median"]))
    return {key: (statistics.median(t[True]) - statistics.median(t[False])) / 2
            for key, t in trips.items() if t.get(True) and t.get(False)}


def _median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def _fmt(value, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def configurations(found: list[Boot]) -> dict:
    """{(variant, cpus): [Boot]} by cores, then in lock order (the Linux baseline's `linux`
    last, beside the variants on as many cores), statistics builds after."""
    out: dict = {}
    for b in sorted(found, key=lambda b: (b.cpus, _lock_key(b.lock), b.stats)):
        out.setdefault((b.variant, b.cpus), []).append(b)
    return out


def per_op_table(found: list[Boot], timing: dict | None = None) -> str:
    """Kernel entries and kernel, user and lock time per operation: exact
    instruction counts under -icount, whatever the host's speed.  With the
    cost of the kernel's timing per entry (timing_cost_per_entry()), also the
    kernel's time per operation without it."""
    timing = timing or {}
    unit = "instructions" if any(b.icount for b in found) else "cycles"
    head = (f"{'lock':<10}{'cores':>6}{'boots':>6}{'ops':>9}{'entries/op':>11}{'kernel/op':>11}"
            f"{'untimed':>9}{'user/op':>11}{'lock/op':>10}  server")
    sources = {b.figures.get("ops_source", "configured") for b in found}
    counted = ("the servers' own count of commands run in the window (INFO total_commands_processed)"
               if sources == {"server"} else
               "the clients' configured requests, not a count the servers kept" if sources == {"configured"}
               else "the servers' count where they kept one, else the clients' configured requests")
    lines = [f"(per operation, in {unit}; ops: {counted}; lock/op only from LOCKSTATS=1 builds, "
             "the -stats rows; the window runs with the kernel's timing on, and untimed is "
             "kernel/op less entries/op times what timing adds to an entry, from the release "
             "build's ping-pong timing pass, where the run has one; `linux` is the Linux "
             "baseline, docs/linux-baseline.md, which counts no kernel entries)", head]
    for (lock, cpus), group in configurations(found).items():
        figs = [b.figures for b in group]
        kernel, entries = (_median([f[k] for f in figs]) for k in ("kernel_per_op", "entries_per_op"))
        # Timing's cost was measured on the release build; a -stats build's entries cost more.
        cost = None if group[0].stats else timing.get((group[0].arch, group[0].lock))
        untimed = kernel - entries * cost if None not in (kernel, entries, cost) else None
        lines.append(
            f"{lock:<10}{cpus:>6}{len(group):>6}{_median([f['ops'] for f in figs]):>9,.0f}"
            f"{_fmt(entries, 2):>11}"
            f"{_fmt(kernel, 0):>11}{_fmt(untimed, 0):>9}"
            f"{_fmt(_median([f['user_per_op'] for f in figs]), 0):>11}"
            f"{_fmt(_median([f['lock_held_per_op'] for f in figs]), 0):>10}"
            f"  {', '.join(sorted({b.server for b in group}))}{linux_resolution(figs)}")
    return "\n".join(lines)


def linux_resolution(figs: list[dict]) -> str:
    """For the Linux baseline's rows (no kernel entries counted): what one /proc/stat tick is per
    operation, the resolution of their kernel and user figures; a short window's are whole ticks."""
    if any(f["entries_per_op"] is not None for f in figs):
        return ""
    return f" (one /proc/stat tick is {procstat.NS_PER_TICK / _median([f['ops'] for f in figs]):,.0f} per op)"


def rate_table(found: list[Boot]) -> str:
    """Throughput, utilisation and Xput: wall-clock rates, which under TCG
    measure how fast QEMU emulates, not the kernel."""
    head = f"{'lock':<10}{'cores':>6}{'boots':>6}{'ops/s':>10}{'util %':>16}{'Xput':>10}"
    lines = ["(util: per core, mean first)", head]
    for (lock, cpus), group in configurations(found).items():
        figs = [b.figures for b in group]
        util = [_median([f["utilisation"][i] for f in figs]) for i in range(len(figs[0]["utilisation"]))]
        mean_util = _median([f["mean_utilisation"] for f in figs])
        util_text = f"{mean_util * 100:.0f} (" + " ".join(f"{u * 100:.0f}" for u in util) + ")"
        lines.append(
            f"{lock:<10}{cpus:>6}{len(group):>6}"
            f"{_fmt(_median([f['throughput'] for f in figs])):>10}{util_text:>16}"
            f"{_fmt(_median([f['xput'] for f in figs])):>10}")
    return "\n".join(lines)


def prediction(found: list[Boot], cores=MODEL_CORES) -> str:
    """Predicted operations per million time units against cores, per lock,
    from the lock's boot with the most cores (its delays are the most
    representative of the servers; a timed build's when there is one), with
    the service time of the lock's statistics build when there is one."""
    lines = []
    for lock in sorted({b.lock for b in found}, key=_lock_key):
        mine = [b for b in found if b.lock == lock]
        boot = max(mine, key=lambda b: (not b.stats, b.cpus))
        fig = boot.figures
        s, source = redis_figures.service_time(fig)
        measured = [b for b in mine if b.stats and b.figures["lock_held_per_acquisition"]]
        if measured:
            s, source = redis_figures.service_time(max(measured, key=lambda b: b.cpus).figures)
        if s is None or not fig["entries_per_op"]:
            lines.append(f"  {lock}: no prediction: no service time or no kernel entries measured")
            continue
        predicted = []
        why = ""
        for n in cores:
            delays = redis_figures.model_delays(fig, n)
            if delays is None:
                break
            d, why = delays
            try:
                x = model.mixed_throughput(s, d).throughput
            except ValueError:
                predicted.append((n, None))
                continue
            predicted.append((n, x / fig["entries_per_op"] * 1e6))
        if not predicted:
            lines.append(f"  {lock}: no prediction: core 0 has no measured delay")
            continue
        points = "  ".join(f"{n}: {_fmt(v)}" for n, v in predicted)
        lines.append(f"  {lock} (from {boot.variant} on {boot.cpus} core(s); s = {s:,.0f} per entry, "
                     f"{source}; {why}):")
        lines.append(f"    ops per million time units by cores  {points}")
    return "\n".join(lines)


CLIENT_TEXT = "redis-benchmark set,get on every served port"


def report(records) -> str:
    """The per-operation table and the model's prediction; with boots on
    real cores (not TCG), their throughput and Xput too."""
    found = boots(records)
    if not found:
        return ""
    parts = [f"Redis ({CLIENT_TEXT}), per operation:", per_op_table(found, timing_cost_per_entry(records)),
             "How many requests one kernel entry serves varies from boot to boot (packets come "
             "from the host in real time): repeat boots (--reps) before comparing variants.",
             "modelled: machine-repairman prediction (tools/model.py mixed_throughput; delays = "
             "user time between kernel entries per core):", prediction(found)]
    real = [b for b in found if not b.emulated]
    if real:
        parts += ["throughput and Xput = throughput / mean utilisation (\"For a Microkernel, a Big "
                  "Lock Is Fine\", section 5.2), boots on real cores:", rate_table(real)]
    return "\n".join(parts)


def emulator_report(records) -> str:
    """Throughput and Xput of boots under TCG: emulation speed."""
    emulated = [b for b in boots(records) if b.emulated]
    if not emulated:
        return ""
    return "\n".join([f"Redis ({CLIENT_TEXT}) under TCG: throughput and Xput = throughput / mean "
                      "utilisation. These are how fast QEMU emulated the guest, not the kernel:",
                      rate_table(emulated)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="The Redis benchmark's summary")
    parser.add_argument("results", help="a results directory, results.jsonl or console log")
    args = parser.parse_args(argv)
    try:
        text = report(rec.load(args.results))
    except (OSError, rec.RecordError) as err:
        print(f"redis_report.py: {err}", file=sys.stderr)
        return 1
    emulator = emulator_report(rec.load(args.results))
    print("\n".join(t for t in (text, emulator) if t) or "no Redis windows in these records")
    return 0 if text else 1


if __name__ == "__main__":
    sys.exit(main())
