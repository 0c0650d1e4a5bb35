"""tools/sweep.py without QEMU: a fake runner stands in for tools/qemu_run.py."""

import csv
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import records as rec  # noqa: E402
import sweep  # noqa: E402
from redis_console import console as redis_console, linux_console  # noqa: E402
from conftest import console_record


def option(cmd, name):
    return cmd[cmd.index(name) + 1]


class FakeQemu:
    """Answers a boot command with the records a guest would print."""

    def __init__(self, fail=(), interrupt_after=None, starve=(), redis_skip=False):
        self.calls, self.fail, self.interrupt_after = [], set(fail), interrupt_after
        self.starve = set(starve)  # (lock, cpus) whose last core makes no round trips
        self.redis_skip = redis_skip  # the guest has no Redis server (a build without lwIP)

    def __call__(self, cmd, timeout):
        if self.interrupt_after is not None and len(self.calls) == self.interrupt_after:
            raise KeyboardInterrupt
        self.calls.append(cmd)
        lock, cpus = option(cmd, "--lock"), int(option(cmd, "--cpus"))
        if lock == "linux":  # tools/redis_run.py around the Linux baseline's qemu_run.py command
            assert cmd[1].endswith("redis_run.py") and option(cmd, "--net-ports") == str(cpus + 1)
            return 0, linux_console(cpus)
        words = dict(w.split("=", 1) for w in option(cmd, "--cmdline").split())
        unit = "instructions" if "--icount" in cmd else "cycles"
        env = {"arch": option(cmd, "--arch"), "lock": lock, "cpus": cpus,
               "accel": option(cmd, "--accel"), "icount": "--icount" in cmd}
        lines = ["SeaBIOS", console_record({"boot": {"lock": lock, "cores": cpus,
                                                          "accel": option(cmd, "--accel")}})]
        cost = {"none": 400, "bkl": 410, "fine": 480, "rtm": 470}[lock]
        stats = words.get("lockstats") == "1"
        if words["app"] == "redis":  # tools/redis_run.py around qemu_run.py --net
            assert cmd[1].endswith("redis_run.py") and cmd[-1] == "--net"
            if self.redis_skip:
                return sweep.SKIPPED_EXIT, "redis_run: skipped: the guest ended without serving: why\n"
            return 0, redis_console(lock, cpus, stats=stats)
        if stats:  # the reset at the window's start prints a group too; the window's is last
            for held in (9999, 150):
                lines += [console_record({"lockstats": {
                    "core": c, "acquisitions": 100, "contended": 0, "cycles_held": held * 100,
                    "cycles_waited": 10 * 100, "barriers": 100, "hold_histogram": [0, 0, 100]}})
                    for c in range(cpus)]
        if words["app"] == "pingpong":
            lines.append(console_record({
                "bench": "pingpong", "env": env, "config": {"same_space": True}, "unit": unit,
                **{m: {"mean": cost, "stddev": 2, "median": cost, "min": cost - 5, "max": cost + 9}
                   for m in ("call", "reply_recv", "round_trip")},
                "lockstats": stats, "ipcs": 100}))
        elif words["app"] == "mcpingpong":
            rate = 1e9 / (2 * cost + int(words["delay"]) + 100)
            trips = [1000] * cpus
            if (lock, cpus) in self.starve:
                trips[-1] = 0
            lines.append(console_record({
                "bench": "mcpingpong", "env": env, "config": {}, "unit": unit,
                "delay": int(words["delay"]), "cores": cpus, "total_rtt_per_s": rate * cpus,
                "per_core_rtt_per_s": [rate] * cpus, "per_core_round_trips": trips,
                "lockstats": stats}))
        status = 1 if (lock, words["app"], cpus) in self.fail else 0
        lines.append(console_record({"done": True, "status": status}))
        return status, "\n".join(lines) + "\n"


class FakeMake:
    """Answers `make ... kernel print-build-dir` with a build folder name, and `make posix`."""

    def __init__(self, fail_lock=None, fail_posix=False):
        self.calls, self.fail_lock, self.fail_posix = [], fail_lock, fail_posix

    def __call__(self, cmd):
        self.calls.append(cmd)
        if cmd[1].endswith("linux_image.py"):
            return 0, f"/repo/build/linux-guest/{option(cmd, '--arch')}\n"
        variables = dict(w.split("=", 1) for w in cmd if "=" in w)
        if "posix" in cmd:
            return (2, "redis: error: broken\n") if self.fail_posix else (0, "")
        if variables["LOCK"] == self.fail_lock:
            return 2, "lock/fine.c:1: error: broken\n"
        unsafe = "-unsafe" if variables["UNSAFE"] == "1" else ""
        stats = "-stats" if variables["LOCKSTATS"] == "1" else ""
        posix = "/posix-redis-server-1" if "POSIX_PROGRAM" in variables else ""
        # Under make -j the folder's line need not come last.
        return 0, (f"build/{variables['ARCH']}-{variables['LOCK']}{stats}{unsafe}{posix}\n"
                   f"built build/x/kernel.elf\n")


class FakeChooser:
    def __init__(self, accel="tcg"):
        self.calls, self.accel = [], accel

    def __call__(self, requested, image, arch):
        self.calls.append((requested, image, arch))
        return (self.accel if requested == "auto" else requested), "fake"


def run_main(tmp_path, argv, qemu, make=None, chooser=None):
    lines = []
    status = sweep.main(["--results", str(tmp_path), "--repo", str(tmp_path / "repo")] + argv,
                        runner=qemu, builder=make or FakeMake(), chooser=chooser or FakeChooser(),
                        out=lines.append)
    return status, lines


def test_quick_plan_expansion():
    everything = sweep.expand(sweep.quick_plan("x86_64"))
    # The Linux baseline last, on the Redis benchmark's core counts.
    linux = [j for j in everything if j.bench == "linux-redis"]
    assert [(j.lock, j.cpus, j.id) for j in linux] == [
        ("linux", 1, "linux/linux-redis/cpus=1/delay=-/rep=0"),
        ("linux", 2, "linux/linux-redis/cpus=2/delay=-/rep=0")]
    assert everything[-2:] == linux
    jobs = everything[:-2]
    timed = [j for j in jobs if not j.stats]
    # locks x (pingpong@1 + redis@{1,2}); no multicore ping-pong: under -icount it measures QEMU
    assert len(timed) == 4 * (1 + 2)
    assert {j.lock for j in timed} == {"none", "bkl", "fine", "rtm"}
    assert {(j.bench, j.cpus, j.delay) for j in timed if j.lock == "bkl"} == {
        ("pingpong", 1, None), ("redis", 1, None), ("redis", 2, None)}
    assert "mcpingpong" not in {j.bench for j in jobs}
    # The real Redis: its own variant of each lock.
    redis = [j for j in jobs if j.bench == "redis"]
    assert all(j.posix and j.variant.endswith("-posix") for j in redis)
    assert redis[0].cmdline("") == "app=redis"
    assert not any(j.posix for j in jobs if j.bench != "redis")
    # The lock statistics: bkl built with LOCKSTATS=1, after the timed runs.
    stats = jobs[len(timed):]
    assert all(j.stats and j.lock == "bkl" and j.variant == ("bkl-stats-posix" if j.posix else "bkl-stats")
               for j in stats)
    assert {(j.bench, j.cpus, j.delay) for j in stats} == {
        ("pingpong", 1, None), ("redis", 1, None), ("redis", 2, None)}
    assert stats[0].cmdline("") == "app=pingpong lockstats=1"
    assert stats[0].id == "bkl-stats/pingpong/cpus=1/delay=-/rep=0"
    assert "rtm" not in {j.lock for j in sweep.expand(sweep.quick_plan("arm-imx6"))}
    assert len({j.id for j in jobs}) == len(jobs)


def test_job_command_line():
    assert sweep.Job("bkl", "mcpingpong", 2, 4000, 0).cmdline("runs=4") == \
        "app=mcpingpong delay=4000 runs=4"
    assert sweep.Job("bkl", "pingpong", 1, None, 0).cmdline("") == "app=pingpong"


def test_make_variables():
    plan = sweep.quick_plan("x86_64")
    # none's plain variant runs the one-core ping-pong; its Redis variant runs on two cores.
    none = sweep.make_vars(plan, "none", posix=True)
    assert none == {"ARCH": "x86_64", "LOCK": "none", "DEBUG": "0", "LOCKSTATS": "0",
                    "UNSAFE": "1", "POSIX_PROGRAM": "build/posix/x86_64/redis-server"}
    assert sweep.make_vars(plan, "none")["UNSAFE"] == "0"
    assert sweep.make_vars(plan, "bkl")["UNSAFE"] == "0"
    assert sweep.make_vars(plan, "bkl")["LOCKSTATS"] == "0"
    assert sweep.make_vars(plan, "bkl", stats=True)["LOCKSTATS"] == "1"
    single = sweep.Plan(locks=["none"], benchmarks=["pingpong"], pingpong_cpus=[1], debug=True,
                        lockstats=True)
    assert sweep.make_vars(single, "none") == {"ARCH": "x86_64", "LOCK": "none", "DEBUG": "1",
                                               "LOCKSTATS": "1", "UNSAFE": "0"}
    wide = sweep.Plan(locks=["bkl"], benchmarks=["mcpingpong"], cpus=[1, 16])
    assert sweep.make_vars(wide, "bkl")["NCPUS"] == "16"
    # The real Redis's variant embeds make posix's program; the plain one does not.
    assert sweep.make_vars(plan, "bkl", posix=True)["POSIX_PROGRAM"] == "build/posix/x86_64/redis-server"
    assert "POSIX_PROGRAM" not in sweep.make_vars(plan, "bkl")
    assert sweep.posix_build_command(Path("/r"), "arm-imx6")[3:] == ["-C", "/r", "posix", "ARCH=arm-imx6"]
    cmd = sweep.build_command(Path("/r"), {"ARCH": "x86_64", "LOCK": "bkl"})
    assert cmd[0:2] == ["make", "-s"] and cmd[2].startswith("-j")
    assert cmd[3:] == ["-C", "/r", "kernel", "ARCH=x86_64", "LOCK=bkl", "print-build-dir"]
    assert sweep.build_dir("make: x\nbuild/x86_64-bkl\nbuilt build/x86_64-bkl/kernel.elf\n") == \
        "build/x86_64-bkl"


def test_cli_parsing():
    args = sweep.parse_args(["--locks", "bkl,fine", "--cpus", "1,2,4", "--delays", "500",
                             "--no-icount", "--accel", "tcg", "--args", "runs=4", "--reps", "3"])
    plan = sweep.plan_from_args(args)
    assert (plan.locks, plan.cpus, plan.delays, plan.icount, plan.accel, plan.args, plan.reps) == \
        (["bkl", "fine"], [1, 2, 4], [500], False, "tcg", "runs=4", 3)
    quick = sweep.plan_from_args(sweep.parse_args(["--quick", "--timeout", "60"]))
    assert quick.locks == ["none", "bkl", "fine", "rtm"] and quick.timeout == 60
    with pytest.raises(ValueError, match="rtm exists only on x86_64"):
        sweep.plan_from_args(sweep.parse_args(["--arch", "arm-imx6", "--locks", "rtm"]))
    with pytest.raises(ValueError, match="unknown lock"):
        sweep.plan_from_args(sweep.parse_args(["--locks", "mutex"]))
    assert quick.redis_layout == "percore"
    processes = sweep.plan_from_args(sweep.parse_args(["--quick", "--redis-layout", "processes"]))
    assert processes.redis_layout == "processes"
    for gone in (["--redis-impl", "builtin"], ["--redis-layout", "single"]):
        with pytest.raises(SystemExit):
            sweep.parse_args(["--quick", *gone])
    with pytest.raises(SystemExit):
        sweep.parse_args(["--resume", "x", "--quick"])


def test_sweep_builds_once_chooses_accel_and_writes_results(tmp_path):
    qemu, make, chooser = FakeQemu(), FakeMake(), FakeChooser("tcg")
    status, lines = run_main(tmp_path, ["--quick", "--run", "r1"], qemu, make, chooser)
    assert status == 0
    # Each lock's plain variant, then (once make posix has built the real Redis) its posix one.
    kernels = [c for c in make.calls[:-1] if "kernel" in c]
    assert [c[6:8] for c in kernels] == [["ARCH=x86_64", "LOCK=none"], ["ARCH=x86_64", "LOCK=none"],
                                         ["ARCH=x86_64", "LOCK=bkl"], ["ARCH=x86_64", "LOCK=bkl"],
                                         ["ARCH=x86_64", "LOCK=fine"], ["ARCH=x86_64", "LOCK=fine"],
                                         ["ARCH=x86_64", "LOCK=rtm"], ["ARCH=x86_64", "LOCK=rtm"],
                                         ["ARCH=x86_64", "LOCK=bkl"], ["ARCH=x86_64", "LOCK=bkl"]]
    assert [("POSIX_PROGRAM=build/posix/x86_64/redis-server" in c) for c in kernels] == [False, True] * 5
    posix = [c for c in make.calls if "posix" in c]
    assert len(posix) == 1 and make.calls.index(posix[0]) == 1     # before the first posix variant
    # The Linux baseline's guest is made once; on x86_64 it boots 1 and 2 CPUs under -icount.
    assert make.calls[-1][1:] == [str(tmp_path / "repo/tools/linux_image.py"), "--arch", "x86_64"]
    linux = [c for c in qemu.calls if option(c, "--lock") == "linux"]
    assert [option(c, "--cpus") for c in linux] == ["1", "2"] and all("--icount" in c for c in linux)
    assert option(linux[0], "--image") == "/repo/build/linux-guest/x86_64/vmlinuz"
    # none's plain variant runs one core, its Redis variant two.
    assert "UNSAFE=0" in kernels[0] and "UNSAFE=1" in kernels[1] and "UNSAFE=0" in kernels[2]
    assert "LOCKSTATS=0" in kernels[2] and "LOCKSTATS=1" in kernels[8]
    image = tmp_path / "repo/build/x86_64-none/kernel.elf"
    assert chooser.calls == [("auto", image, "x86_64")]
    boots = [c for c in qemu.calls if option(c, "--lock") != "linux"]
    assert len(boots) == 15
    assert all(option(c, "--accel") == "tcg" and "--icount" in c for c in boots)
    # UNSAFE=1 only for none's Redis variant, which runs on two cores.
    assert all(("--unsafe" in c) == (option(c, "--lock") == "none" and "app=redis" in option(c, "--cmdline"))
               for c in boots)
    assert option(boots[0], "--image") == str(image)
    assert option(boots[9], "--image") == str(tmp_path / "repo/build/x86_64-rtm/kernel.elf")
    assert option(boots[-1], "--image") == str(tmp_path / "repo/build/x86_64-bkl-stats/posix-redis-server-1/kernel.elf")
    assert option(boots[-3], "--image") == str(tmp_path / "repo/build/x86_64-bkl-stats/kernel.elf")
    assert option(boots[-3], "--cmdline") == "app=pingpong lockstats=1"
    # The timed ping-pong also runs with the kernel's timing on (the Redis window's cost); the
    # statistics build's does not.
    assert option(boots[0], "--cmdline") == "app=pingpong timing=1"
    assert option(boots[-2], "--cmdline") == "app=redis lockstats=1 layout=percore"
    assert option(boots[-1], "--cmdline") == "app=redis lockstats=1 layout=percore"
    assert boots[-1][-1] == "--net" and option(boots[-1], "--requests") == "200"
    assert any("guest INSTRUCTIONS, not cycles" in line for line in lines)
    text = "\n".join(lines)
    assert "[1/17] none cpus=1 pingpong ... ok" in text
    assert "[13/17] bkl-stats cpus=1 pingpong ... ok" in text
    assert "[15/17] bkl-stats-posix cpus=2 redis ... ok" in text
    assert "[16/17] linux cpus=1 linux-redis ... ok" in text
    assert "[17/17] linux cpus=2 linux-redis ... ok" in text

    run = tmp_path / "r1"
    records = rec.load(run)
    # A Redis boot has no done record: the server runs until the host stops it.
    assert len(rec.of_type(records, "bench")) == 17 and len(rec.of_type(records, "done")) == 5
    meta = rec.benches(records, "pingpong")[-1][rec.META_KEY]
    assert meta["job"] == "bkl-stats/pingpong/cpus=1/delay=-/rep=0"
    assert (meta["accel"], meta["icount"], meta["unsafe"], meta["make"]["LOCKSTATS"], meta["stats"]) \
        == ("tcg", True, False, "1", True)
    assert meta["git"]  # the source revision the sweep built from
    with open(run / "results.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 17
    assert rows[0]["sweep.lock"] == "none" and rows[0]["call.median"] == "400"
    report = text
    heads = [line for line in report.splitlines() if line.startswith("## ")]
    assert heads[:3] == ["## 1. Single-core IPC per variant (exact instructions, QEMU -icount)",
                         "## 2. lockbench: the kernel's lock code on this host's cores (TSC cycles)",
                         "## 3. Redis: instructions per operation"]
    assert heads[3].startswith("## Emulator")   # the Redis boots ran under TCG
    # The statistics runs are not compared with none: one row per figure and variant only.
    assert len([line for line in report.splitlines()
                if line.startswith("pingpong ") and " call " in line]) == 3
    assert report.index("guest INSTRUCTIONS") < report.index("## 1.")
    assert (run / "report.md").read_text().startswith("# Report of r1")
    assert (run / "plots" / "ipc_cost.png").stat().st_size > 0
    assert (run / "plots" / "redis_kernel_per_op.png").stat().st_size > 0
    # Rates under TCG are emulation speed: their plots go apart.
    assert not (run / "plots" / "redis_xput.png").exists()
    assert (run / "plots" / "emulator" / "redis_xput.png").stat().st_size > 0
    # The statistics build's Redis runs give the lock's hold time per operation.
    assert "lock hold time per acquisition" in report


def test_linux_on_arm_skips_more_than_one_cpu_under_icount_only(tmp_path):
    args = ["--arch", "arm-imx6", "--locks", "bkl", "--benchmarks", "linux-redis",
            "--redis-cpus", "1,2", "--run", "a1", "--no-report"]
    qemu = FakeQemu()
    status, lines = run_main(tmp_path, args, qemu)
    assert status == 0
    assert [option(c, "--cpus") for c in qemu.calls] == ["1"] and "--icount" in qemu.calls[0]
    assert any("linux cpus=2 linux-redis ... SKIP Linux on this port livelocks" in line for line in lines)
    qemu = FakeQemu()
    status, lines = run_main(tmp_path, args[:-3] + ["--run", "a2", "--no-icount", "--no-report"], qemu)
    assert status == 0
    assert [option(c, "--cpus") for c in qemu.calls] == ["1", "2"]
    assert not any("--icount" in c for c in qemu.calls)


def test_a_core_without_round_trips_fails_the_boot(tmp_path):
    args = ["--locks", "bkl", "--benchmarks", "mcpingpong", "--cpus", "2", "--delays", "0",
            "--accel", "tcg", "--run", "s1", "--no-report"]
    status, lines = run_main(tmp_path, args, FakeQemu(starve={("bkl", 2)}))
    assert status == 1
    assert any("FAIL core(s) [1] made no round trips in the window" in line for line in lines)


def test_interrupted_sweep_resumes_without_repeating(tmp_path):
    args = ["--locks", "bkl,fine", "--benchmarks", "mcpingpong", "--cpus", "1,2",
            "--delays", "0", "--accel", "tcg", "--run", "r2", "--no-report"]
    status, lines = run_main(tmp_path, args, FakeQemu(interrupt_after=3))
    assert status == 130 and "--resume r2" in lines[-1]
    state = json.loads((tmp_path / "r2" / "state.json").read_text())
    assert len(state["completed"]) == 3 and state["accel"] == "tcg" and state["icount"] is True
    # A boot whose records were written but not yet marked complete:
    sweep.append_records(tmp_path / "r2" / "results.jsonl", [{"boot": {}}],
                         {"job": "fine/mcpingpong/cpus=2/delay=0/rep=0"})

    qemu, chooser = FakeQemu(), FakeChooser()
    status, lines = run_main(tmp_path, ["--resume", "r2", "--no-report"], qemu, chooser=chooser)
    assert status == 0
    assert len(qemu.calls) == 1
    assert chooser.calls == []  # the accelerator is in the state file
    assert sum("done earlier, skipped" in line for line in lines) == 3
    records = rec.load(tmp_path / "r2")
    jobs = [r[rec.META_KEY]["job"] for r in rec.of_type(records, "bench")]
    assert len(jobs) == len(set(jobs)) == 4
    assert len(rec.of_type(records, "boot")) == 4  # the stray record was dropped

    status, lines = run_main(tmp_path, ["--run", "r2"], FakeQemu())
    assert status == 2 and "--resume r2" in lines[-1]


def test_failed_boots_are_reported_and_retried_on_resume(tmp_path):
    args = ["--locks", "bkl", "--benchmarks", "pingpong,mcpingpong", "--cpus", "2",
            "--delays", "0", "--accel", "tcg", "--run", "r3", "--no-report"]
    status, lines = run_main(tmp_path, args, FakeQemu(fail={("bkl", "mcpingpong", 2)}))
    assert status == 1
    assert any("bkl cpus=2 delay=0 mcpingpong ... FAIL exit 1" in line for line in lines)
    assert len(rec.of_type(rec.load(tmp_path / "r3"), "bench")) == 1
    qemu = FakeQemu()
    assert run_main(tmp_path, ["--resume", "r3", "--no-report"], qemu)[0] == 0
    assert len(qemu.calls) == 1


def test_build_failure_skips_that_variant_only(tmp_path):
    args = ["--locks", "fine,bkl", "--benchmarks", "pingpong", "--accel", "tcg", "--run", "r4",
            "--no-report"]
    qemu = FakeQemu()
    status, lines = run_main(tmp_path, args, qemu, FakeMake(fail_lock="fine"))
    assert status == 1 and "build of fine FAILED (make exit 2)" in lines
    assert "lock/fine.c:1: error: broken" in lines
    assert [option(c, "--lock") for c in qemu.calls] == ["bkl"]


def test_kvm_runs_without_icount_and_icount_on_kvm_is_refused(tmp_path):
    args = ["--locks", "bkl", "--benchmarks", "pingpong", "--no-report"]
    qemu = FakeQemu()
    status, lines = run_main(tmp_path, args + ["--run", "k1"], qemu, chooser=FakeChooser("kvm"))
    assert status == 0 and "--icount" not in qemu.calls[0]
    assert "accelerator kvm: figures are in cycles" in lines
    status, lines = run_main(tmp_path, args + ["--run", "k2", "--icount"], FakeQemu(),
                             chooser=FakeChooser("kvm"))
    assert status == 1 and "-icount needs TCG" in lines[-1]


def test_check_boot():
    ok = [{"bench": "pingpong"}, {"done": True, "status": 0}]
    assert sweep.check_boot(0, ok, "pingpong") is None
    assert sweep.check_boot(None, ok, "pingpong") == "timeout"
    assert sweep.check_boot(3, ok, "pingpong") == "exit 3 (no done record)"
    assert sweep.check_boot(7, ok, "pingpong") == "exit 7"
    assert sweep.check_boot(0, ok[:1], "pingpong") == "no done record"
    assert sweep.check_boot(0, [{"done": True, "status": 4}], None) == "done status 4"
    assert sweep.check_boot(0, ok, "mcpingpong") == "no mcpingpong record"
    starved = [{"bench": "mcpingpong", "per_core_round_trips": [160700, 0]}, ok[1]]
    assert sweep.check_boot(0, starved, "mcpingpong") == "core(s) [1] made no round trips in the window"


def test_subprocess_runner_keeps_console_and_status():
    script = "print('text'); print('@@ {\"done\": true, \"status\": 0}'); raise SystemExit(3)"
    status, text = sweep.subprocess_runner([sys.executable, "-c", script], 30)
    assert status == 3 and rec.done_status(rec.parse_text(text)) == 0
    status, _ = sweep.subprocess_runner([sys.executable, "-c", "import time; time.sleep(5)"], 0.5)
    assert status is None


def test_redis_boots_without_a_server_are_skipped_not_failed(tmp_path):
    args = ["--locks", "bkl", "--benchmarks", "redis", "--redis-cpus", "1", "--accel", "tcg",
            "--run", "r1", "--no-report"]
    status, lines = run_main(tmp_path, args, FakeQemu(redis_skip=True))
    assert status == 0
    assert any("bkl-posix cpus=1 redis ... SKIP redis_run: skipped: the guest ended without serving: why" in line
               for line in lines)
    assert sweep.State.load(tmp_path / "r1" / "state.json").completed == []


def test_check_networked_boot():
    import redis_console

    ok = rec.parse_text(redis_console.console())
    assert sweep.check_boot(0, ok, "redis") is None
    assert sweep.check_boot(None, ok, "redis") == "timeout"
    assert sweep.check_boot(1, ok, "redis") == "exit 1"
    assert sweep.check_boot(0, rec.parse_text(redis_console.console(end_mark=False)), "redis") == \
        "no kstats records with tag 2"
    assert sweep.check_boot(0, rec.parse_text(redis_console.console(errors=1)), "redis") == \
        "1 client(s) reported errors"


def test_redis_command_wraps_the_boot():
    plan = sweep.Plan(redis_requests=300, redis_clients=7)
    cmd = sweep.redis_command(Path("/r"), ["python", "qemu_run.py", "--cpus", "2"], plan, 90)
    assert cmd[1] == "/r/tools/redis_run.py"
    assert cmd[2:15] == ["--timeout", "90", "--client", "redis-benchmark", "--requests", "300",
                         "--clients", "7", "--records", "32000", "--tests", "set,get", "--"]
    assert cmd[15:] == ["python", "qemu_run.py", "--cpus", "2", "--net"]
    args = sweep.parse_args(["--benchmarks", "redis", "--redis-client", "ycsb", "--redis-records", "500"])
    plan = sweep.plan_from_args(args)
    assert (plan.redis_client, plan.redis_records) == ("ycsb", 500)


def test_a_failed_make_posix_fails_the_real_redis_boots_only(tmp_path):
    args = ["--locks", "bkl", "--benchmarks", "pingpong,redis", "--redis-cpus", "1,2", "--accel", "tcg",
            "--run", "r1", "--no-report"]
    make, qemu = FakeMake(fail_posix=True), FakeQemu()
    status, lines = run_main(tmp_path, args, qemu, make)
    assert status == 1
    assert [option(c, "--cmdline") for c in qemu.calls] == ["app=pingpong"]
    assert len([c for c in make.calls if "posix" in c]) == 1     # tried once, not per boot
    assert any("make posix FAILED" in line for line in lines)
    assert any("bkl-posix cpus=2 redis ... FAIL the real Redis could not be built" in line for line in lines)


def test_the_real_redis_runs_in_the_three_process_layout_when_asked(tmp_path):
    args = ["--locks", "bkl", "--benchmarks", "redis", "--redis-cpus", "1", "--accel", "tcg",
            "--redis-layout", "processes", "--run", "r1", "--no-report"]
    make, qemu = FakeMake(), FakeQemu()
    status, _ = run_main(tmp_path, args, qemu, make)
    assert status == 0
    assert [option(c, "--cmdline") for c in qemu.calls] == ["app=redis layout=processes"]


def test_a_stored_plan_of_the_real_redis_resumes_and_one_of_the_builtin_server_is_refused(tmp_path):
    state = tmp_path / "state.json"
    stored = dict(sweep.asdict(sweep.Plan()), redis_impl="posix", redis_layout="auto")
    state.write_text(json.dumps({"plan": stored, "completed": []}))
    assert sweep.State.load(state).plan.redis_layout == "percore"
    for builtin in ({"redis_impl": "builtin"}, {"redis_layout": "single"}):
        state.write_text(json.dumps({"plan": dict(stored, **builtin), "completed": []}))
        with pytest.raises(ValueError, match="own Redis-protocol server"):
            sweep.State.load(state)
    (tmp_path / "r1").mkdir()
    (tmp_path / "r1" / "state.json").write_text(state.read_text())
    status, lines = run_main(tmp_path, ["--resume", "r1"], FakeQemu())
    assert status == 2 and any("start a new sweep" in line for line in lines)


