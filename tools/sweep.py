"""Sweep lock variant x CPUs x delay x benchmark, boot by boot.

Each lock variant is built once (`make kernel`), then every configuration
boots through tools/qemu_run.py.  Every record of a successful boot is kept,
with the run described under the key `sweep`, in results/<run>/results.jsonl;
the benchmark records are also flattened into results/<run>/results.csv.
results/<run>/state.json holds the sweep's plan and the configurations
finished so far, so that `--resume <run>` carries on where a sweep stopped.
See docs/results.md.

    python3 tools/sweep.py --quick
    python3 tools/sweep.py --locks bkl,fine --cpus 1,2 --delays 0,2000,4000
    python3 tools/sweep.py --resume 20240101-120000
    python3 tools/sweep.py --locks bkl,fine --benchmarks redis --redis-cpus 1,2,4
    python3 tools/sweep.py --locks bkl,fine --benchmarks redis --redis-cpus 1 --redis-layout processes

The Redis benchmark (`redis`) boots the app `redis` with a NIC and drives it
from the host through tools/redis_run.py (redis-benchmark on every served
port at once, one client per instance, between two marks on the NIC driver's
control port); its figures come from tools/redis_figures.py.  The server is
the real Redis (Debian's redis-server 7.0.15 built by `make posix` once per
sweep and embedded in a variant of each lock's kernel), by default in the
papers' per-core layout on every core count: on one core the driver and one
Redis process share core 0; `--redis-layout processes` gives the papers'
one-core layout, the driver, the lwIP stack and Redis as three processes on
core 0.  A stored sweep that measured another server cannot be resumed.
A boot whose guest has no
Redis server (no lwIP in the build) is reported as skipped with the guest's
reason, not as failed.

The Linux baseline (`linux-redis`, docs/linux-baseline.md) boots Debian's Linux with one
redis-server per core (tools/linux_image.py) on the same machine, CPU counts (`--redis-cpus`),
-icount, NIC and forwards, and measures the same window with the same client settings; it is
built once per sweep and its rows carry the lock `linux`.

    python3 tools/sweep.py --locks bkl --benchmarks redis,linux-redis --redis-cpus 1,2,4
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import records as rec

REPO = Path(__file__).resolve().parent.parent
LOCKS = ("none", "bkl", "fine", "rtm")
DELAYED = ("mcpingpong",)  # benchmarks that take a delay= argument
NETWORKED = ("redis", "linux-redis")  # driven from the host over the NIC (tools/redis_run.py)
LINUX = "linux-redis"  # the Linux baseline: not a kernel variant, built and booted once per sweep
LINUX_LOCK = "linux"  # what its jobs carry as their lock
LINUX_SMP_ICOUNT = ("Linux on this port livelocks on more than one CPU under -icount in this QEMU "
                    "(docs/linux-baseline.md): only 1 CPU, or --no-icount")
# tools/redis_run.py's exit status when there is nothing to measure (its SKIPPED).
SKIPPED_EXIT = 77
MAKE_NCPUS_DEFAULT = 8  # the Makefile's NCPUS default

# runner(command, timeout) -> (exit status or None on timeout, console text)
Runner = Callable[[list, float], tuple]
# builder(command) -> (exit status, output)
Builder = Callable[[list], tuple]
# chooser(requested accel, image, arch) -> (accel, why): qemu_run.py's ACCEL=auto
Chooser = Callable[[str, Path, str], tuple]


@dataclass
class Plan:
    """What a sweep runs; stored in state.json so that a resume runs the same."""
    arch: str = "x86_64"
    locks: list = field(default_factory=lambda: ["none", "bkl", "fine"])
    benchmarks: list = field(default_factory=lambda: ["pingpong", "mcpingpong"])
    cpus: list = field(default_factory=lambda: [1, 2])
    pingpong_cpus: list = field(default_factory=lambda: [1])
    delays: list = field(default_factory=lambda: [0, 4000])
    reps: int = 1
    accel: str = "auto"
    icount: bool | None = None  # None: on exactly when the accelerator is TCG
    args: str = ""
    timeout: float = 300
    debug: bool = False
    lockstats: bool = False
    # Extra runs of these variants built with LOCKSTATS=1 and run with
    # lockstats=1 (pingpong on pingpong_cpus, mcpingpong on stats_cpus): the
    # lock hold time and barriers per IPC, kept apart from the timed runs
    # because the statistics cost time.
    stats_locks: list = field(default_factory=list)
    stats_cpus: list = field(default_factory=lambda: [1, 2])
    # The Redis benchmark: CPU counts, the client (redis-benchmark, or ycsb
    # for workload A), and per served port: redis-benchmark's requests of
    # each test (set, get) and connections, or YCSB's operations (requests)
    # and records (the papers: 32,000).
    redis_cpus: list = field(default_factory=lambda: [1, 2, 4])
    redis_client: str = "redis-benchmark"
    redis_requests: int = 2000
    redis_clients: int = 10
    redis_tests: str = "set,get"  # redis-benchmark's tests in the window: set,get, set or get
    redis_records: int = 32000
    # The layout of the real Redis (make posix's redis-server, embedded in the
    # kernel image; docs/network.md): "percore", the papers' layout, one Redis
    # process per further core (on one core, beside the driver on core 0), all
    # driven at once, one client per instance; "processes", the papers'
    # one-core layout, the driver, the lwIP stack and Redis as three processes
    # on core 0.
    redis_layout: str = "percore"
    # The single-core ping-pong also runs with the kernel's timing on (timing=1), which the Redis
    # window runs with: what it adds to a kernel entry (tools/redis_report.py).
    pingpong_timing: bool = False


@dataclass(frozen=True)
class Job:
    lock: str
    bench: str
    cpus: int
    delay: int | None
    rep: int
    stats: bool = False  # a LOCKSTATS=1 build, run with lockstats=1

    @property
    def posix(self) -> bool:
        """The image embeds the real Redis (POSIX_PROGRAM), which the Redis benchmark serves."""
        return self.bench == "redis"

    @property
    def variant(self) -> str:
        """What is built once: the lock, with "-stats" for LOCKSTATS=1 and "-posix" for an
        image with the real Redis in it (kept apart, so that the other benchmarks' images
        are the plain kernel's)."""
        return self.lock + ("-stats" if self.stats else "") + ("-posix" if self.posix else "")

    @property
    def id(self) -> str:
        delay = "-" if self.delay is None else self.delay
        return f"{self.variant}/{self.bench}/cpus={self.cpus}/delay={delay}/rep={self.rep}"

    @property
    def label(self) -> str:
        delay = "" if self.delay is None else f" delay={self.delay}"
        rep = f" rep={self.rep}" if self.rep else ""
        return f"{self.variant} cpus={self.cpus}{delay} {self.bench}{rep}"

    def cmdline(self, extra: str) -> str:
        words = [f"app={self.bench}"]
        if self.delay is not None:
            words.append(f"delay={self.delay}")
        if self.stats:
            words.append("lockstats=1")
        if extra:
            words.append(extra)
        return " ".join(words)


def quick_plan(arch: str) -> Plan:
    """`make run`: every variant on single-core ping-pong (exact instructions
    under -icount), with the bkl lock statistics beside it (the hold time per
    acquisition that tools/lockbench.py replays) and with the kernel's timing
    on (what it adds to each entry of the Redis window), and a short Redis
    comparison of every variant on 1 and 2 cores (200 requests of each test
    per port, 5 connections; the real Redis, one process per core but the
    driver's on 2) with the Linux baseline's rows beside them.  No multicore
    ping-pong: under -icount QEMU runs the cores one at a time, so its
    throughput against cores describes the emulator (tools/lockbench.py
    measures the lock on real cores instead)."""
    locks = ["none", "bkl", "fine"] + (["rtm"] if arch == "x86_64" else [])
    return Plan(arch=arch, locks=locks, benchmarks=["pingpong", "redis", LINUX],
                cpus=[1, 2], pingpong_cpus=[1], delays=[0, 4000], reps=1, timeout=180,
                stats_locks=["bkl"], stats_cpus=[1, 2], redis_cpus=[1, 2], redis_requests=200,
                redis_clients=5, pingpong_timing=True)


def expand(plan: Plan) -> list[Job]:
    """Every configuration of the plan, grouped by variant (one build each):
    the timed runs of every lock, then the lock-statistics runs, then the Linux baseline."""
    jobs = []
    for stats, locks in ((False, plan.locks), (True, plan.stats_locks)):
        for lock in locks:
            for bench in [b for b in plan.benchmarks if b != LINUX]:
                if bench == "pingpong":
                    cpus_list = plan.pingpong_cpus
                elif bench in NETWORKED:
                    cpus_list = plan.stats_cpus if stats else plan.redis_cpus
                else:
                    cpus_list = plan.stats_cpus if stats else plan.cpus
                delays = plan.delays if bench in DELAYED else [None]
                for cpus in cpus_list:
                    for delay in delays:
                        for rep in range(1 if stats else plan.reps):
                            jobs.append(Job(lock, bench, cpus, delay, rep, stats))
    if LINUX in plan.benchmarks:
        for cpus in plan.redis_cpus:
            for rep in range(plan.reps):
                jobs.append(Job(LINUX_LOCK, LINUX, cpus, None, rep))
    return jobs


# --- building -------------------------------------------------------------------


def posix_program(arch: str) -> str:
    """The real Redis `make posix` builds, as the Makefile names it (relative to the tree)."""
    return f"build/posix/{arch}/redis-server"


def make_vars(plan: Plan, lock: str, stats: bool = False, posix: bool = False) -> dict:
    """The make variables of one variant.  `none` on several cores needs
    UNSAFE=1 (the paper's unsafe baseline); a posix variant embeds the real Redis."""
    jobs = [j for j in expand(plan) if j.lock == lock and j.stats == stats and j.posix == posix]
    most = max(j.cpus for j in jobs)
    variables = {"ARCH": plan.arch, "LOCK": lock,
                 "DEBUG": "1" if plan.debug else "0",
                 "LOCKSTATS": "1" if plan.lockstats or stats else "0",
                 "UNSAFE": "1" if lock == "none" and most > 1 else "0"}
    if most > MAKE_NCPUS_DEFAULT:
        variables["NCPUS"] = str(most)
    if posix:
        variables["POSIX_PROGRAM"] = posix_program(plan.arch)
    return variables


def posix_build_command(repo: Path, arch: str) -> list:
    """make posix: the real Redis for the port (docs/posix-build.md), before any posix variant."""
    return ["make", "-s", f"-j{os.cpu_count() or 1}", "-C", str(repo), "posix", f"ARCH={arch}"]


def build_command(repo: Path, variables: dict) -> list:
    """make the kernel (in parallel), then print the variant's build folder (last line)."""
    return (["make", "-s", f"-j{os.cpu_count() or 1}", "-C", str(repo), "kernel"]
            + [f"{k}={v}" for k, v in variables.items()] + ["print-build-dir"])


# --- booting --------------------------------------------------------------------


def build_dir(output: str) -> str:
    """The folder print-build-dir printed: the last line that is one word.
    Under make -j it need not be the last line of all."""
    words = [line.strip() for line in output.splitlines() if line.strip() and " " not in line.strip()]
    if not words:
        raise ValueError("make printed no build folder")
    return words[-1]


def git_revision(repo: Path) -> str:
    """The tree's revision, "+dirty" when it has local changes, or "unknown".
    Records also carry the GIT_REV compiled into the image (env.git), but an
    object file is not rebuilt when only the revision changes, so the sweep
    notes what it built from itself."""
    try:
        rev = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain",
                                "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return rev + ("+dirty" if dirty else "")


def boot_command(repo: Path, arch: str, lock: str, image: Path, cpus: int, accel: str,
                 icount: bool, unsafe: bool, timeout: float, cmdline: str, log: Path) -> list:
    """The one place that knows tools/qemu_run.py's command line."""
    cmd = [sys.executable, str(repo / "tools" / "qemu_run.py"), "--arch", arch, "--lock", lock,
           "--image", str(image), "--cpus", str(cpus), "--accel", accel,
           "--timeout", f"{timeout:g}", "--cmdline", cmdline, "--log", str(log)]
    if icount:
        cmd.append("--icount")
    if unsafe:
        cmd.append("--unsafe")
    return cmd


def redis_command(repo: Path, boot: list, plan: Plan, timeout: float, net: bool = True) -> list:
    """A networked boot: tools/redis_run.py around the qemu_run.py command, with a NIC
    and one forwarded port per CPU (net=False: the boot command asks for its own)."""
    return [sys.executable, str(repo / "tools" / "redis_run.py"), "--timeout", f"{timeout:g}",
            "--client", plan.redis_client, "--requests", str(plan.redis_requests),
            "--clients", str(plan.redis_clients), "--records", str(plan.redis_records),
            "--tests", plan.redis_tests, "--", *boot] + (["--net"] if net else [])


def subprocess_runner(cmd: list, timeout: float) -> tuple:
    """Run a boot, keeping its console output; (None, text) on a timeout."""
    try:
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace", timeout=timeout)
    except subprocess.TimeoutExpired as err:
        out = err.stdout or b""
        return None, out.decode(errors="replace") if isinstance(out, bytes) else out
    return done.returncode, done.stdout


def subprocess_builder(cmd: list) -> tuple:
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace")
    return done.returncode, done.stdout


def qemu_run_chooser(requested: str, image: Path, arch: str) -> tuple:
    """ACCEL=auto exactly as tools/qemu_run.py decides it (a cached KVM probe boot)."""
    import qemu_run

    return qemu_run.choose_accel(requested, image, arch)


def say(text: str) -> None:
    """Print at once, so progress shows while output goes to a pipe."""
    print(text, flush=True)


# The key of `built` (sweep()) that says whether make posix succeeded.
POSIX_BUILT = "make posix"

# Exit codes of tools/qemu_run.py besides the guest's own status.
QEMU_RUN_EXITS = {3: "no done record", 4: "kernel panic", 124: "timeout", 125: "QEMU could not start"}


def check_networked_boot(status: int | None, records: list) -> str | None:
    """Why a Redis boot failed, or None: it has no done record (the server
    runs until stopped) but a complete window with no client errors."""
    import redis_figures

    if status is None:
        return "timeout"
    if status != 0:
        return f"exit {status}"
    try:
        fig = redis_figures.figures(records)
    except redis_figures.WindowError as err:
        return str(err)
    if fig["errors"]:
        return f"{fig['errors']} client(s) reported errors"
    return None


def check_boot(status: int | None, records: list, bench: str | None) -> str | None:
    """Why a boot failed, or None when it succeeded."""
    if bench in NETWORKED:
        return check_networked_boot(status, records)
    if status is None:
        return "timeout"
    if status != 0:
        return f"exit {status}" + (f" ({QEMU_RUN_EXITS[status]})" if status in QEMU_RUN_EXITS else "")
    done = rec.done_status(records)
    if done is None:
        return "no done record"
    if done != 0:
        return f"done status {done}"
    if bench is not None and not rec.benches(records, bench):
        return f"no {bench} record"
    for r in rec.benches(records, bench) if bench is not None else []:
        idle = [core for core, n in enumerate(r.get("per_core_round_trips", [])) if n == 0]
        if idle:
            # Totals with a starved core are not throughput of that many cores.
            return f"core(s) {idle} made no round trips in the window"
    return None


# --- state and results --------------------------------------------------------


class State:
    """results/<run>/state.json: the plan, the accelerator chosen, and the
    configurations whose records are in results.jsonl."""

    def __init__(self, path: Path, plan: Plan, accel: str | None = None,
                 icount: bool | None = None, completed=(), git: str | None = None):
        self.path, self.plan, self.accel, self.icount = path, plan, accel, icount
        self.completed = list(completed)
        self.git = git  # the source revision the sweep built, "+dirty" with local changes

    @classmethod
    def load(cls, path: Path) -> "State":
        data = json.loads(path.read_text())
        plan = data["plan"]
        # A plan stored with an older tree may name the server it measured: the real Redis
        # ("posix", whose "auto" layout was the per-core one) or the project's own
        # Redis-protocol server, which the tree no longer has.
        if plan.pop("redis_impl", "posix") != "posix" or plan.get("redis_layout") == "single":
            raise ValueError(f"{path}: this sweep measured the project's own Redis-protocol server, "
                             "which the tree no longer has: start a new sweep")
        if plan.get("redis_layout") == "auto":
            plan["redis_layout"] = "percore"
        return cls(path, Plan(**data["plan"]), data.get("accel"), data.get("icount"),
                   data.get("completed", []), data.get("git"))

    def save(self) -> None:
        data = {"plan": asdict(self.plan), "accel": self.accel, "icount": self.icount,
                "completed": self.completed, "git": self.git}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, self.path)  # atomic: a crash leaves the old or the new state

    def mark(self, job: Job) -> None:
        self.completed.append(job.id)
        self.save()


def drop_unfinished(jsonl: Path, completed) -> None:
    """Remove records of configurations not in the state file: they come from
    a boot that was interrupted between writing records and the state."""
    if not jsonl.exists():
        return
    keep = set(completed)
    kept = [r for r in rec.load_jsonl(jsonl) if r.get(rec.META_KEY, {}).get("job") in keep]
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in kept))


def append_records(jsonl: Path, records: list, meta: dict) -> None:
    with open(jsonl, "a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps({**r, rec.META_KEY: meta}) + "\n")


def _flatten(prefix: str, value, row: dict) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else k, v, row)
    elif isinstance(value, list):
        row[prefix] = json.dumps(value)
    else:
        row[prefix] = value


def write_csv(jsonl: Path, csv_path: Path) -> int:
    """Flatten the bench records into one CSV row each (nested keys joined
    with dots, lists as JSON); returns the number of rows."""
    rows = []
    for r in rec.of_type(rec.load_jsonl(jsonl) if jsonl.exists() else [], "bench"):
        row: dict = {}
        _flatten(rec.META_KEY, r.get(rec.META_KEY, {}), row)
        _flatten("", {k: v for k, v in r.items() if k != rec.META_KEY}, row)
        rows.append(row)
    columns: dict = {}
    for row in rows:
        columns.update(dict.fromkeys(row))
    with open(csv_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(columns))
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


# --- the sweep ------------------------------------------------------------------


def resolve_accel(state: State, image: Path, chooser: Chooser, out) -> None:
    """Fix the accelerator for the whole sweep, with qemu_run.py's rules for
    `auto`.  TCG runs use -icount unless the plan says otherwise."""
    plan = state.plan
    accel, why = chooser(plan.accel, image, plan.arch)
    out(f"accelerator {accel} ({why})")
    icount = plan.icount if plan.icount is not None else accel == "tcg"
    if icount and accel != "tcg":
        raise RuntimeError(f"-icount needs TCG, but the accelerator is {accel}")
    state.accel, state.icount = accel, icount
    state.save()


def unit_notice(accel: str, icount: bool) -> str:
    if icount:
        return (f"accelerator {accel} with -icount: every figure is in guest INSTRUCTIONS, "
                "not cycles")
    if accel == "tcg":
        return "accelerator tcg without -icount: cycle figures are emulation time and mean nothing"
    return f"accelerator {accel}: figures are in cycles"


def sweep(state: State, run_dir: Path, repo: Path, runner: Runner = subprocess_runner,
          builder: Builder = subprocess_builder, chooser: Chooser = qemu_run_chooser,
          out=say) -> list:
    """Run every configuration not yet completed; returns the failed ones
    as (job, reason)."""
    plan = state.plan
    jobs = expand(plan)
    logs = run_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    jsonl = run_dir / "results.jsonl"
    drop_unfinished(jsonl, state.completed)
    done = set(state.completed)
    failed = []
    built: dict = {}  # variant -> image, or None when the build failed; POSIX_BUILT -> make posix ok
    for index, job in enumerate(jobs, 1):
        head = f"[{index}/{len(jobs)}] {job.label} ..."
        if job.id in done:
            out(f"{head} done earlier, skipped")
            continue
        if job.bench == LINUX:
            run_linux_job(job, state, run_dir, repo, head, built, runner, builder, out, failed)
            continue
        variables = make_vars(plan, job.lock, job.stats, job.posix)
        if job.posix and POSIX_BUILT not in built:
            cmd = posix_build_command(repo, plan.arch)
            out(f"building the real Redis: {' '.join(cmd[cmd.index('posix'):])} ...")
            status, output = builder(cmd)
            built[POSIX_BUILT] = status == 0
            if status != 0:
                out("\n".join(output.rstrip().splitlines()[-20:]))
                out(f"make posix FAILED (exit {status}): no boot of the real Redis can run")
        if job.posix and not built[POSIX_BUILT]:
            out(f"{head} FAIL the real Redis could not be built (make posix)")
            failed.append((job, "make posix failed"))
            continue
        if job.variant not in built:
            cmd = build_command(repo, variables)
            out(f"building {' '.join(cmd[cmd.index('kernel'):-1])} ...")
            status, output = builder(cmd)
            built[job.variant] = None
            if status == 0:
                built[job.variant] = repo / build_dir(output) / "kernel.elf"
            else:
                out("\n".join(output.rstrip().splitlines()[-20:]))  # the error is at the end
                out(f"build of {job.variant} FAILED (make exit {status})")
        image = built[job.variant]
        if image is None:
            out(f"{head} FAIL build failed")
            failed.append((job, "build failed"))
            continue
        if state.accel is None:
            resolve_accel(state, image, chooser, out)
            out(unit_notice(state.accel, state.icount))
        log = logs / (job.id.replace("/", "_").replace("=", "") + ".log")
        unsafe = variables["UNSAFE"] == "1"
        extra = plan.args
        if job.bench == "pingpong" and plan.pingpong_timing and not job.stats:
            extra = " ".join(w for w in (plan.args, "timing=1") if w)
        if job.bench == "redis":
            extra = " ".join(w for w in (plan.args, f"layout={plan.redis_layout}") if w)
        cmd = boot_command(repo, plan.arch, job.lock, image, job.cpus, state.accel, state.icount,
                           unsafe, plan.timeout, job.cmdline(extra), log)
        if job.bench in NETWORKED:
            cmd = redis_command(repo, cmd, plan, plan.timeout)
        meta = {"unsafe": unsafe, "make": variables}
        boot_and_keep(job, cmd, state, run_dir, log, meta, head, runner, out, failed)
    return failed


def boot_and_keep(job: Job, cmd: list, state: State, run_dir: Path, log: Path, meta: dict,
                  head: str, runner: Runner, out, failed: list) -> None:
    """Run one boot; keep its records with the job's metadata plus meta when it succeeded,
    else add (job, reason) to failed."""
    plan = state.plan
    start = time.monotonic()
    status, text = runner(cmd, plan.timeout + 30)
    seconds = time.monotonic() - start
    if job.bench in NETWORKED and status == SKIPPED_EXIT:
        why = text.rstrip().splitlines()[-1] if text.strip() else "no reason given"
        out(f"{head} SKIP {why}")
        return
    try:
        records = rec.parse_text(text, str(log))
        reason = check_boot(status, records, job.bench)
    except rec.RecordError as err:
        records, reason = [], str(err)
    if reason is not None:
        out(f"{head} FAIL {reason} {seconds:.1f}s (log {log})")
        failed.append((job, reason))
        return
    meta = {**asdict(job), "job": job.id, "arch": plan.arch, "accel": state.accel,
            "git": state.git, "icount": state.icount, **meta, "args": plan.args,
            "log": str(log), "seconds": round(seconds, 2)}
    jsonl = run_dir / "results.jsonl"
    append_records(jsonl, records, meta)
    state.mark(job)
    write_csv(jsonl, run_dir / "results.csv")
    out(f"{head} ok {seconds:.1f}s")


def linux_image_command(repo: Path, arch: str) -> list:
    """Make the Linux baseline's guest; the last line printed is its folder."""
    return [sys.executable, str(repo / "tools" / "linux_image.py"), "--arch", arch]


def run_linux_job(job: Job, state: State, run_dir: Path, repo: Path, head: str, built: dict,
                  runner: Runner, builder: Builder, out, failed: list) -> None:
    """One boot of the Linux baseline: its guest made once (tools/linux_image.py), booted on
    the accelerator and -icount the sweep's kernel boots use (TCG with -icount when none ran)."""
    import linux_image

    plan = state.plan
    if state.accel is None:
        state.accel, state.icount = "tcg", plan.icount is not False
        state.save()
        out(unit_notice(state.accel, state.icount))
    if state.icount and job.cpus > 1 and not linux_image.PORTS[plan.arch].smp_under_icount:
        out(f"{head} SKIP {LINUX_SMP_ICOUNT}")
        return
    if LINUX not in built:
        out(f"making the Linux guest for {plan.arch} ...")
        status, output = builder(linux_image_command(repo, plan.arch))
        built[LINUX] = repo / build_dir(output) if status == 0 else None
        if status != 0:
            out("\n".join(output.rstrip().splitlines()[-5:]))
    if built[LINUX] is None:
        out(f"{head} FAIL the Linux guest could not be made")
        failed.append((job, "the Linux guest could not be made"))
        return
    log = run_dir / "logs" / (job.id.replace("/", "_").replace("=", "") + ".log")
    boot = linux_image.boot_command(plan.arch, built[LINUX], job.cpus, state.icount,
                                    plan.timeout, log)
    boot_and_keep(job, redis_command(repo, boot, plan, plan.timeout, net=False), state, run_dir,
                  log, {"server": "linux"}, head, runner, out, failed)


def report(run_dir: Path, out=say, notice: str | None = None) -> None:
    """The report of a finished sweep (tools/summary.py), printed and written
    to run_dir/report.md, and its figures."""
    import plots
    import summary

    records = rec.load(run_dir / "results.jsonl")
    lockbench_records = summary.lockbench_of(run_dir)
    if notice:
        out(notice)
    text = summary.report(records, lockbench_records, title=f"Report of {run_dir.name}")
    out(text)
    (run_dir / "report.md").write_text(text)
    written = plots.write_all(records, run_dir / "plots", lockbench_records=lockbench_records)
    out(f"report: {run_dir / 'report.md'}")
    out("plots: " + (", ".join(str(p) for p in written) if written else "none (not enough data)"))


# --- command line -------------------------------------------------------------


def _list(text: str) -> list:
    return [v for v in text.split(",") if v]


def _ints(text: str) -> list:
    return [int(v) for v in _list(text)]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Sweep lock variants, CPUs, delays and benchmarks "
                                "under QEMU (docs/results.md)")
    p.add_argument("--quick", action="store_true",
                   help="the `make run` preset: none,bkl,fine(,rtm on x86_64); pingpong on 1 CPU "
                        "and bkl's lock statistics; redis on 1 and 2 CPUs")
    p.add_argument("--resume", metavar="RUN", help="carry on with results/RUN, using its stored plan")
    p.add_argument("--run", metavar="NAME", help="name of the results folder (default: a time stamp)")
    p.add_argument("--results", type=Path, default=REPO / "results", help="where runs are kept")
    p.add_argument("--repo", type=Path, default=REPO, help="the source tree to build")
    p.add_argument("--arch", default="x86_64", choices=["x86_64", "arm-imx6"])
    p.add_argument("--locks", type=_list, help="comma-separated (default none,bkl,fine)")
    p.add_argument("--benchmarks", type=_list, help="comma-separated (default pingpong,mcpingpong)")
    p.add_argument("--cpus", type=_ints, help="CPU counts for every benchmark but pingpong (default 1,2)")
    p.add_argument("--pingpong-cpus", type=_ints, help="CPU counts for pingpong (default 1)")
    p.add_argument("--delays", type=_ints, help="mcpingpong mean delays (default 0,4000)")
    p.add_argument("--redis-cpus", type=_ints, help="CPU counts for redis (default 1,2,4)")
    p.add_argument("--redis-requests", type=int,
                   help="redis: requests of each redis-benchmark test per port, or YCSB operations "
                        "per client (default 2000)")
    p.add_argument("--redis-clients", type=int, help="redis: connections per port (default 10)")
    p.add_argument("--redis-tests", choices=["set,get", "set", "get"],
                   help="redis with redis-benchmark: the tests of the window (default set,get; get "
                        "alone is preceded by the same SETs outside the window)")
    p.add_argument("--redis-client", choices=["redis-benchmark", "ycsb"],
                   help="redis: the client (default redis-benchmark; ycsb runs workload A)")
    p.add_argument("--redis-records", type=int,
                   help="redis with ycsb: records per server (default 32000, as in the papers)")
    p.add_argument("--redis-layout", choices=["percore", "processes"],
                   help="redis: one Redis process per further core (one beside the driver on one "
                        "core), each with its own client, started together (percore, the "
                        "default), or the driver, lwIP and Redis as three processes on core 0 "
                        "(processes)")
    p.add_argument("--reps", type=int, help="boots per configuration (default 1)")
    p.add_argument("--accel", choices=["auto", "kvm", "tcg"], help="default auto (qemu_run.py decides)")
    p.add_argument("--icount", action=argparse.BooleanOptionalAction,
                   help="QEMU -icount (default: on exactly when the accelerator is TCG)")
    p.add_argument("--args", help="more words for every boot command line, e.g. 'runs=16'")
    p.add_argument("--timeout", type=float, help="seconds per boot (default 300; quick 180)")
    p.add_argument("--debug", action="store_true", help="build with DEBUG=1 (default DEBUG=0)")
    p.add_argument("--lockstats", action="store_true", help="build with LOCKSTATS=1")
    p.add_argument("--no-report", action="store_true", help="skip the summary and the plots")
    args = p.parse_args(argv)
    if args.resume and (args.quick or args.run):
        p.error("--resume takes the plan stored with the run; drop --quick/--run")
    return args


def plan_from_args(args: argparse.Namespace) -> Plan:
    plan = quick_plan(args.arch) if args.quick else Plan(arch=args.arch)
    for name in ("locks", "benchmarks", "cpus", "pingpong_cpus", "delays", "reps", "accel",
                 "icount", "args", "timeout", "redis_cpus", "redis_requests", "redis_clients", "redis_tests",
                 "redis_client", "redis_records", "redis_layout"):
        value = getattr(args, name)
        if value is not None:
            setattr(plan, name, value)
    plan.debug, plan.lockstats = args.debug, args.lockstats
    unknown = [lock for lock in plan.locks if lock not in LOCKS]
    if unknown:
        raise ValueError(f"unknown lock(s) {unknown}: valid are {list(LOCKS)}")
    if "rtm" in plan.locks and plan.arch != "x86_64":
        raise ValueError("rtm exists only on x86_64")
    if plan.reps < 1 or not expand(plan):
        raise ValueError("the plan has no configurations")
    return plan


def main(argv=None, runner: Runner = subprocess_runner, builder: Builder = subprocess_builder,
         chooser: Chooser = qemu_run_chooser, out=say) -> int:
    args = parse_args(argv)
    if args.resume:
        run_dir = args.results / args.resume
        state_path = run_dir / "state.json"
        if not state_path.exists():
            out(f"sweep.py: no {state_path} to resume")
            return 2
        try:
            state = State.load(state_path)
        except ValueError as err:
            out(f"sweep.py: {err}")
            return 2
    else:
        try:
            plan = plan_from_args(args)
        except ValueError as err:
            out(f"sweep.py: {err}")
            return 2
        run_dir = args.results / (args.run or time.strftime("%Y%m%d-%H%M%S"))
        if (run_dir / "state.json").exists():
            out(f"sweep.py: {run_dir} already holds a sweep; use --resume {run_dir.name}")
            return 2
        run_dir.mkdir(parents=True, exist_ok=True)
        state = State(run_dir / "state.json", plan, git=git_revision(args.repo))
        state.save()
    started = time.monotonic()
    out(f"sweep {run_dir.name}: {len(expand(state.plan))} configurations, "
        f"{len(state.completed)} done earlier; source {state.git}; results in {run_dir}")
    if state.accel is not None:
        out(unit_notice(state.accel, state.icount))
    try:
        failed = sweep(state, run_dir, args.repo, runner, builder, chooser, out)
    except KeyboardInterrupt:
        out(f"\ninterrupted; carry on with: python3 tools/sweep.py --resume {run_dir.name}")
        return 130
    except RuntimeError as err:
        out(f"sweep.py: {err}")
        return 1
    if not args.no_report and state.completed:
        report(run_dir, out, unit_notice(state.accel, state.icount) if state.accel else None)
    out(f"sweep {run_dir.name} took {time.monotonic() - started:.0f} s")
    if failed:
        out(f"{len(failed)} configuration(s) failed: " + ", ".join(j.label for j, _ in failed))
        out(f"rerun them with: python3 tools/sweep.py --resume {run_dir.name}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
