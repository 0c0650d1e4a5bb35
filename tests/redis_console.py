"""The console of one Redis benchmark boot as tools/redis_run.py returns it,
for host-side tests of the sweep, summary, model and plots (no QEMU).

The records follow docs/console.md: qemu_run's `net` record, the kernel's
`boot` record, the app's `redis` record, at each control port mark one
`kstats` record per core then one `lockstats` record per core, and the
host's `bench` record.  The numbers are chosen so that every figure is a
round number a test can state:

    core 0 (driver and server): 10,000,000 units, 2,000,000 idle (80 % busy),
        3,000,000 kernel, 5,000,000 user, 8,000 system calls, 2,000 interrupts
    every other core: 10,000,000 units, 9,000,000 idle (10 % busy),
        400,000 kernel, 600,000 user, 1,000 system calls, 200 interrupts
    lock (LOCKSTATS=1 only): 150 held per acquisition, one acquisition per entry
    the clients: `ops` operations in `seconds` seconds, no errors
"""

from __future__ import annotations

from conftest import console_record

CORE0 = {"elapsed": 10_000_000, "idle": 2_000_000, "kernel": 3_000_000, "user": 5_000_000,
         "syscall": 8_000, "interrupt": 2_000}
OTHER = {"elapsed": 10_000_000, "idle": 9_000_000, "kernel": 400_000, "user": 600_000,
         "syscall": 1_000, "interrupt": 200}
HELD_PER_ACQUISITION = 150


def _kstats(tag: int, core: int, scale: int) -> str:
    c = CORE0 if core == 0 else OTHER
    start = 5_000_000 + 1_000 * core  # what each core had counted before the window
    return console_record({"kstats": {
        "tag": tag, "core": core, "now": start + scale * c["elapsed"], "idle": 7 + scale * c["idle"],
        "kernel": 11 + scale * c["kernel"], "user": 13 + scale * c["user"], "timed": True,
        "entries": {"syscall": 17 + scale * c["syscall"], "interrupt": 19 + scale * c["interrupt"],
                    "fault": 3}}})


def _lockstats(core: int, stats: bool, before_window: bool) -> str:
    c = CORE0 if core == 0 else OTHER
    acquisitions = 0 if not stats else (999 if before_window else c["syscall"] + c["interrupt"])
    held = (5 if before_window else HELD_PER_ACQUISITION) * acquisitions
    return console_record({"lockstats": {
        "core": core, "acquisitions": acquisitions, "contended": 0, "cycles_held": held,
        "cycles_waited": 0, "rtm_commits": 0, "rtm_aborts": {"conflict": 0, "capacity": 0,
                                                              "explicit": 0, "lock_held": 0,
                                                              "other": 0},
        "rtm_fallbacks": 0, "barriers": 0, "hold_histogram": [0] * 4}})


def console(lock: str = "bkl", cpus: int = 2, ops: int = 2000, seconds: float = 4.0,
            stats: bool = False, errors: int = 0, end_mark: bool = True) -> str:
    ports = list(range(6379, 6379 + cpus))
    lines = ["qemu_run: accelerator tcg (asked for)",
             console_record({"net": {"forwards": [{"host": 40000 + i, "guest": p} for i, p in enumerate(ports)],
                                      "udp": [{"host": 40100, "guest": 7000}]}}),
             console_record({"boot": {"arch": "x86_64", "lock": lock, "cores": cpus, "cores_expected": cpus,
                               "accel": "tcg", "rtm": False, "rtm_path": "lock", "debug": False}}),
             "redis: serving on 10.0.2.15 port 6379",
             console_record({"redis": {"ports": ports[:1], "instances": [{"port": 6379, "core": 0}],
                                       "control": 7000}})]
    lines += [_kstats(1, core, 0) for core in range(cpus)]
    lines += [_lockstats(core, stats, True) for core in range(cpus)]
    if end_mark:
        lines += [_kstats(2, core, 1) for core in range(cpus)]
        lines += [_lockstats(core, stats, False) for core in range(cpus)]
    lines.append(console_record({"bench": "redis", "config": {"client": "redis-benchmark", "ports": 1,
                                                        "requests": ops // 2, "clients": 5,
                                                        "tests": ["set", "get"], "server": "redis 7.0.15"},
                          "ops": ops, "errors": errors, "seconds": seconds}))
    return "\n".join(lines) + "\n"


# The Linux baseline's guest (docs/linux-baseline.md), in /proc/stat's 10 ms ticks: per core over
# the window, 50 ticks of uptime, of which 10 system, 4 softirq, 5 user, 1 nice, 30 idle.
LINUX_TICKS = {"system": 10, "softirq": 4, "user": 5, "nice": 1, "idle": 30}
LINUX_UPTIME = (47.45, 47.95)


def _procstat(tag: int, core: int, scale: int) -> str:
    fields = {f: 100 * (core + 1) + scale * LINUX_TICKS.get(f, 0)
              for f in ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")}
    return console_record({"procstat": {"tag": tag, "core": core, "uptime": LINUX_UPTIME[scale],
                                        **fields}})


def linux_console(cpus: int = 2, ops: int = 2000, seconds: float = 4.0) -> str:
    """The console of one Linux baseline boot as tools/redis_run.py returns it."""
    ports = list(range(6379, 6379 + cpus))
    lines = ["qemu_run: accelerator tcg (asked for)",
             console_record({"net": {"forwards": [{"host": 40000 + i, "guest": p}
                                                  for i, p in enumerate(ports + [6379 + cpus])]}}),
             console_record({"linux": {"release": "6.1.0-0-amd64", "cores": cpus, "marks": 6379 + cpus}}),
             console_record({"redis": {"ports": ports, "server": "Debian's redis-server 7.0.15"}})]
    lines += [_procstat(tag, core, tag - 1) for tag in (1, 2) for core in range(cpus)]
    lines.append(console_record({"bench": "redis", "config": {
        "client": "redis-benchmark", "ports": cpus, "requests": ops // (2 * cpus), "clients": 5,
        "tests": ["set", "get"], "server": "Debian's redis-server 7.0.15"},
        "ops": ops, "ops_source": "server", "errors": 0, "seconds": seconds}))
    return "\n".join(lines) + "\n"
