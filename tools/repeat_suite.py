#!/usr/bin/env python3
"""Run the in-guest test suite many times in a row, to find failures that come only sometimes.

    .venv/bin/python tools/repeat_suite.py                       # bkl and fine, 4 CPUs, 20 runs each
    .venv/bin/python tools/repeat_suite.py --locks fine --runs 50 --arch arm-imx6

Each run boots `APP=tests` once.  A run passes when the guest ends with status 0 and every
in-guest test printed a passing record.  The script prints one line per run (with the failing
tests' details), then `N passed, M failed` over all runs, and exits 0 only when none failed.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from records import parse_text, record_type  # noqa: E402

REPO = Path(__file__).resolve().parent.parent


def build(arch: str, lock: str) -> Path:
    out = subprocess.run(["make", "-s", "-C", str(REPO), "kernel", f"ARCH={arch}", f"LOCK={lock}",
                          "print-build-dir"], capture_output=True, text=True, check=True).stdout
    return REPO / out.strip().splitlines()[-1]


def run_suite(arch: str, lock: str, image: Path, cpus: int, timeout: int) -> tuple[bool, str]:
    """One boot of the suite: whether it passed, and what to say about it."""
    argv = [sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", arch, "--lock", lock,
            "--image", str(image), "--cpus", str(cpus), "--accel", "tcg",
            "--timeout", str(timeout), "--cmdline", "app=tests"]
    proc = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          errors="replace")
    records = parse_text(proc.stdout)
    tests = [r for r in records if record_type(r) == "test"]
    failed = [f"{r['test']}: {r.get('detail', '')}" for r in tests if r["status"] == "fail"]
    if proc.returncode != 0 and not failed:
        failed.append(f"qemu_run exited {proc.returncode}: {proc.stdout.strip()[-300:]}")
    if not tests:
        failed.append("no test records")
    return not failed, f"{len(tests)} tests" if not failed else "; ".join(failed)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--arch", default="x86_64", choices=["x86_64", "arm-imx6"])
    p.add_argument("--locks", default="bkl,fine", help="comma-separated lock variants")
    p.add_argument("--cpus", type=int, default=4)
    p.add_argument("--runs", type=int, default=20, help="runs per lock variant")
    p.add_argument("--timeout", type=int, default=900, help="seconds one run may take")
    args = p.parse_args(argv)

    passed = failed = 0
    for lock in args.locks.split(","):
        image = build(args.arch, lock) / "kernel.elf"
        for i in range(1, args.runs + 1):
            start = time.monotonic()
            ok, what = run_suite(args.arch, lock, image, args.cpus, args.timeout)
            passed += ok
            failed += not ok
            print(f"{args.arch} {lock} {args.cpus} CPUs run {i}/{args.runs}: "
                  f"{'pass' if ok else 'FAIL'} in {time.monotonic() - start:.0f} s ({what})",
                  flush=True)
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
