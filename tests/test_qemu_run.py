"""tools/qemu_run.py's time limit: it counts the guest's run time (the CPU time the host gave
QEMU, per host core its virtual CPUs can use), so a guest on a loaded host is not cut short, and a
guest that uses no CPU at all is still stopped after WALL_LIMIT_FACTOR times its budget; and
--one-thread, which runs the virtual CPUs in turns on one host thread."""
import subprocess
import sys
import threading
import time
from pathlib import Path

import qemu_run
from conftest import REPO, build

BURN = "import time\nend = time.process_time() + {s}\nwhile time.process_time() < end: pass\n" \
       "time.sleep(60)"


def test_budget_counts_cpu_time_not_wall_time():
    """A process that burns a second of CPU and then sleeps has used about a second of budget,
    however long the wall clock runs (and however busy the host is while it burns)."""
    proc = subprocess.Popen([sys.executable, "-c", BURN.format(s=1.0)])
    try:
        budget = qemu_run.GuestBudget(proc.pid, cpus=1, one_thread=False)
        deadline = time.monotonic() + 120
        while budget.seconds() < 1.0 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert budget.seconds() >= 1.0
        time.sleep(1.0)
        assert budget.seconds() < 1.5, "the budget moved while the process slept"
    finally:
        proc.kill()
        proc.wait()


def test_budget_divides_by_the_cores_the_guest_can_use():
    assert qemu_run.GuestBudget(1, cpus=4, one_thread=True).parallel == 1
    assert qemu_run.GuestBudget(1, cpus=1, one_thread=False).parallel == 1
    assert 1 <= qemu_run.GuestBudget(1, cpus=64, one_thread=False).parallel <= 64


def test_one_thread_asks_tcg_for_a_single_thread_on_both_ports(tmp_path):
    for arch in ("x86_64", "arm-imx6"):
        turns = qemu_run.qemu_argv(arch, Path("k.elf"), 4, "tcg", False, "app=tests", [],
                                   scratch=tmp_path, one_thread=True)
        parallel = qemu_run.qemu_argv(arch, Path("k.elf"), 4, "tcg", False, "app=tests", [],
                                      scratch=tmp_path)
        assert turns[turns.index("-accel") + 1] == "tcg,thread=single", turns
        assert parallel[parallel.index("-accel") + 1] == "tcg", parallel


def test_a_guest_past_its_budget_is_stopped():
    proc = subprocess.Popen([sys.executable, "-c", BURN.format(s=30.0)])
    try:
        expired, finished = threading.Event(), threading.Event()
        began = time.monotonic()
        qemu_run.watch_budget(qemu_run.GuestBudget(proc.pid, 1, False), 0.5, expired.set, finished)
        assert expired.is_set()
        assert time.monotonic() - began < 60
    finally:
        proc.kill()
        proc.wait()


def test_an_idle_guest_is_stopped_by_the_wall_limit():
    """No CPU used, so no budget used: the wall limit ends the wait."""
    proc = subprocess.Popen(["sleep", "60"])
    try:
        expired, finished = threading.Event(), threading.Event()
        began = time.monotonic()
        qemu_run.watch_budget(qemu_run.GuestBudget(proc.pid, 1, False), 1.0, expired.set, finished)
        assert expired.is_set()
        assert time.monotonic() - began >= qemu_run.WALL_LIMIT_FACTOR * 1.0
    finally:
        proc.kill()
        proc.wait()


def test_a_finished_guest_is_not_stopped():
    expired, finished = threading.Event(), threading.Event()
    finished.set()
    qemu_run.watch_budget(qemu_run.GuestBudget(1, 1, False), 0.0, expired.set, finished)
    assert not expired.is_set()


def test_qemu_run_stops_a_guest_that_runs_past_its_budget():
    image = build("x86_64", "bkl") / "kernel.elf"
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", "x86_64",
                           "--lock", "bkl", "--image", str(image), "--cpus", "1", "--accel", "tcg",
                           "--timeout", "3", "--cmdline", "app=fuzz calls=100000000"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == qemu_run.EXIT_TIMEOUT, proc.stdout[-2000:]
    assert "did not finish within 3.0 s of its run time" in proc.stdout
