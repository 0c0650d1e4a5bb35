"""The Linux baseline's measured window, from its `procstat` records (docs/linux-baseline.md).

At each window mark the Linux guest saves /proc/uptime and /proc/stat, and after the end mark
prints one record per core and mark (tools/linux_init.sh):

    @@ {"procstat": {"tag": 1, "core": 0, "uptime": 47.45, "user": 37, "nice": 0, "system": 131,
                     "idle": 4363, "iowait": 0, "irq": 0, "softirq": 15, "steal": 0}}

/proc/stat counts in USER_HZ ticks, which Linux fixes at 100 a second on x86_64 and ARM;
/proc/uptime is seconds with two decimals.  Both are converted to nanoseconds of guest time,
which under `-icount shift=0` are instructions (one per nanosecond).  Per core, over the window:

    elapsed = d(uptime)                        the counter's advance, as the kernel's `now`
    idle    = d(idle + iowait)
    kernel  = d(system + irq + softirq)
    user    = d(user + nice)

so that tools/redis_figures.py gives the same figures as from the kernel's `kstats`, except
kernel entries, which Linux does not count (None).
"""

from __future__ import annotations

import records as rec

USER_HZ = 100
NS_PER_TICK = 1_000_000_000 // USER_HZ
NS_PER_UPTIME_UNIT = 10_000_000  # /proc/uptime's last digit: a hundredth of a second
KERNEL_FIELDS = ("system", "irq", "softirq")
USER_FIELDS = ("user", "nice")
IDLE_FIELDS = ("idle", "iowait")


def marks(records) -> dict:
    """{tag: [procstat fields, by core]}; a tag printed twice keeps its last group."""
    found: dict = {}
    for r in records:
        if rec.record_type(r) == "procstat":
            found.setdefault(r["procstat"]["tag"], {})[r["procstat"]["core"]] = r["procstat"]
    return {tag: [group[c] for c in sorted(group)] for tag, group in found.items()}


def ticks(snapshot: dict, fields: tuple) -> int:
    return sum(int(snapshot[f]) for f in fields)


def uptime_ns(snapshot: dict) -> int:
    return round(float(snapshot["uptime"]) * 100) * NS_PER_UPTIME_UNIT


def core_deltas(first: dict, last: dict) -> dict:
    """One core's window in nanoseconds of guest time: elapsed, idle, kernel, user."""
    def delta(fields: tuple) -> int:
        return (ticks(last, fields) - ticks(first, fields)) * NS_PER_TICK

    return {"elapsed": uptime_ns(last) - uptime_ns(first), "idle": delta(IDLE_FIELDS),
            "kernel": delta(KERNEL_FIELDS), "user": delta(USER_FIELDS)}
