"""The Redis benchmark's figures, from the records of one boot.

A measured window is two marks: the host sends `kstats <tag>` to the NIC
driver's control port at the start and at the end of the load
(tools/redis_run.py), and at each mark the kernel prints one `kstats`
record per core (docs/console.md) followed by one `lockstats` record per
core (all zero unless the build has LOCKSTATS=1; each mark resets them, so
the end mark's are the window's).  The host adds a `bench` record named
`redis` with the operations (the servers' own count of commands run in the
window where they keep one, else the clients' configured requests;
`ops_source` says which), the clients' errors and the wall seconds.

From the two marks, per core (time in the counter's units: instructions
under -icount):

    utilisation = 1 - d(idle) / d(now)
    delay       = d(user) / d(entries)         the model's think time per kernel entry

and over the window ("For a Microkernel, a Big Lock Is Fine", section 5.2):

    throughput  = operations / wall seconds    (under TCG: emulation speed)
    Xput        = throughput / mean utilisation
    per operation: kernel entries, kernel and user time, lock hold time

The per-operation figures do not depend on how fast the host is; under
-icount they are exact instruction counts and are the headline.

The Linux baseline's boots (docs/linux-baseline.md) mark the same window with `procstat` records
instead (tools/procstat.py): the same per-core time, from /proc/stat, and no kernel entry counts,
so their entry figures are None.  `total_per_op` is the window's guest time of all cores per
operation, idle included: kernel + user can be no more.
"""

from __future__ import annotations

from dataclasses import dataclass

import procstat
import records as rec

START_TAG = 1
END_TAG = 2
CAUSES = ("syscall", "interrupt", "fault")
# Instructions per step of the kernel's counter under -icount (shift 0: an instruction a
# nanosecond): x86_64's TSC counts them one by one, arm-imx6's 100 MHz global timer steps once
# per 10.  A Linux guest's windows are in nanoseconds already (tools/procstat.py).
ICOUNT_INSTRUCTIONS_PER_TICK = {"x86_64": 1, "arm-imx6": 10}


class WindowError(ValueError):
    """The records do not hold a complete measured window."""


@dataclass
class CoreWindow:
    core: int
    elapsed: int
    idle: int
    kernel: int
    user: int
    entries: dict | None  # None: the guest does not count its kernel entries (Linux)

    @property
    def utilisation(self) -> float:
        return 1.0 - self.idle / self.elapsed if self.elapsed else 0.0

    @property
    def total_entries(self) -> int | None:
        return sum(self.entries.values()) if self.entries is not None else None

    @property
    def delay(self) -> float | None:
        """User time between kernel entries; None for a core that did not enter."""
        return self.user / self.total_entries if self.total_entries and self.user else None


def marks(records) -> dict:
    """{tag: [kstats fields, by core]} of every mark in one boot's records;
    a tag printed twice keeps its last group."""
    found: dict = {}
    for r in records:
        if rec.record_type(r) != "kstats":
            continue
        k = r["kstats"]
        group = found.setdefault(k["tag"], {})
        group[k["core"]] = k
    return {tag: [group[c] for c in sorted(group)] for tag, group in found.items()}


def window(records, start: int = START_TAG, end: int = END_TAG, per_tick: int = 1) -> list[CoreWindow]:
    """Each core's differences between the start and the end mark: of the kernel's `kstats`,
    their times multiplied by per_tick, or of a Linux guest's `procstat` records when the boot
    has those."""
    if procstat.marks(records):
        return linux_window(records, start, end)
    found = marks(records)
    for tag in (start, end):
        if tag not in found:
            raise WindowError(f"no kstats records with tag {tag}")
    first, last = found[start], found[end]
    if [k["core"] for k in first] != [k["core"] for k in last]:
        raise WindowError("the two marks name different cores")
    cores = []
    for a, b in zip(first, last):
        if not b["timed"]:
            raise WindowError(f"core {b['core']}: timing was off at the end mark")
        cores.append(CoreWindow(
            core=a["core"], elapsed=(b["now"] - a["now"]) * per_tick, idle=(b["idle"] - a["idle"]) * per_tick,
            kernel=(b["kernel"] - a["kernel"]) * per_tick, user=(b["user"] - a["user"]) * per_tick,
            entries={c: b["entries"][c] - a["entries"][c] for c in CAUSES}))
        if cores[-1].elapsed <= 0:
            raise WindowError(f"core {a['core']}: the counter did not advance over the window")
    return cores


def linux_window(records, start: int = START_TAG, end: int = END_TAG) -> list[CoreWindow]:
    """Each core's differences between the marks of a Linux guest (tools/procstat.py)."""
    found = procstat.marks(records)
    for tag in (start, end):
        if tag not in found:
            raise WindowError(f"no procstat records with tag {tag}")
    first, last = found[start], found[end]
    if [p["core"] for p in first] != [p["core"] for p in last]:
        raise WindowError("the two marks name different cores")
    cores = [CoreWindow(core=a["core"], entries=None, **procstat.core_deltas(a, b))
             for a, b in zip(first, last)]
    if any(c.elapsed <= 0 for c in cores):
        raise WindowError("the guest's uptime did not advance over the window")
    return cores


def _per_op(values: list, ops: int) -> float | None:
    """The sum of values per operation; None when any is unknown."""
    return None if any(v is None for v in values) else sum(values) / ops


def lock_window(records, end: int = END_TAG) -> list[dict] | None:
    """The lockstats records printed just after the end mark's kstats
    records (one per core), or None when the boot has none."""
    group: list[dict] = []
    after_end = False
    for r in records:
        kind = rec.record_type(r)
        if kind == "kstats":
            after_end = r["kstats"]["tag"] == end
            group = []
        elif kind == "lockstats" and after_end:
            group.append(r["lockstats"])
    return group or None


def figures(records, per_tick: int = 1) -> dict:
    """The figures of one boot's window (docs/benchmarks.md), as a flat dict; the kernel's
    counts of time (kstats, lockstats) multiplied by per_tick: ICOUNT_INSTRUCTIONS_PER_TICK
    of the port turns a -icount boot's into instructions."""
    bench = rec.benches(records, "redis")
    if not bench:
        raise WindowError("no redis bench record")
    b = bench[-1]
    ops = int(b["ops"])
    if ops <= 0:
        raise WindowError("the window has no operations")
    cores = window(records, per_tick=per_tick)
    utilisation = [c.utilisation for c in cores]
    mean_util = sum(utilisation) / len(utilisation)
    throughput = ops / b["seconds"] if b.get("seconds") else None
    out = {
        "ops": ops,
        # "server": the servers' own count of commands run; "configured": the clients' requests.
        "ops_source": b.get("ops_source", "configured"),
        "errors": int(b.get("errors", 0)),
        "throughput": throughput,
        "utilisation": utilisation,
        "mean_utilisation": mean_util,
        "xput": throughput / mean_util if throughput is not None and mean_util > 0 else None,
        "entries_per_op": _per_op([c.total_entries for c in cores], ops),
        "entries_per_op_by_cause": ({cause: sum(c.entries[cause] for c in cores) / ops
                                     for cause in CAUSES}
                                    if all(c.entries is not None for c in cores) else None),
        "kernel_per_op": sum(c.kernel for c in cores) / ops,
        "user_per_op": sum(c.user for c in cores) / ops,
        "total_per_op": sum(c.elapsed for c in cores) / ops,
        "delay_per_core": [c.delay for c in cores],
        "kernel_per_entry": (sum(c.kernel for c in cores) / sum(c.total_entries for c in cores)
                             if any(c.total_entries for c in cores) else None),
        "lock_held_per_op": None,
        "lock_held_per_acquisition": None,
    }
    locks = lock_window(records)
    if locks:
        held = sum(s["cycles_held"] for s in locks) * per_tick
        acquisitions = sum(s["acquisitions"] for s in locks)
        if acquisitions:
            out["lock_held_per_op"] = held / ops
            out["lock_held_per_acquisition"] = held / acquisitions
    return out


def service_time(fig: dict) -> tuple[float | None, str]:
    """The lock's service time per kernel entry for the model, and where it
    came from: the measured hold time per acquisition when the build kept
    lock statistics, else the kernel time per entry (an upper bound: not all
    of an entry holds the lock)."""
    if fig.get("lock_held_per_acquisition"):
        return fig["lock_held_per_acquisition"], "lock hold time per acquisition (lockstats)"
    if fig.get("kernel_per_entry"):
        return fig["kernel_per_entry"], "kernel time per entry (an upper bound of the hold time)"
    return None, "no measurement"


def model_delays(fig: dict, cores: int) -> tuple[list[float], str] | None:
    """Think times for a machine of `cores` cores in the papers' layout:
    core 0 the driver, every other core a server.  The driver's is core 0's
    measured delay; a server's is the mean measured delay of the other cores
    that entered the kernel, or core 0's when none did (the one-instance
    layout, where core 0 runs driver and server both)."""
    delays = fig.get("delay_per_core") or []
    if not delays or delays[0] is None:
        return None
    others = [d for d in delays[1:] if d]
    server = sum(others) / len(others) if others else delays[0]
    why = ("servers: the mean of the measured server cores" if others
           else "servers: core 0's delay (no other core entered the kernel)")
    return [delays[0]] + [server] * (cores - 1), why
