#!/usr/bin/env python3
"""Exact instruction counts of single-core ping-pong, and the committed baseline.

Under TCG with `-icount shift=0` the guest's cycle counter counts executed
instructions, so two boots of one image give the same figures to the last
digit.  That makes them usable as a regression check: tests/test_icount.py
fails when a variant's median round trip grows more than TOLERANCE over the
figure committed in tests/baselines/pingpong-icount.json.  A change that
makes IPC dearer on purpose updates the baseline in the same commit:

    python3 tools/icount_baseline.py --update          # measure and rewrite the file
    python3 tools/icount_baseline.py                   # measure and compare only
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import records as rec

REPO = Path(__file__).resolve().parent.parent
BASELINE_FILE = REPO / "tests" / "baselines" / "pingpong-icount.json"
TOLERANCE = 0.02
LOCKS = {"x86_64": ["none", "bkl", "fine", "rtm"], "arm-imx6": ["none", "bkl", "fine"]}
# Release builds: the figures are what a user benchmarking the kernel sees.
BUILD_OPTIONS = {"DEBUG": "0"}
GUEST_ARGS = "runs=4"


def config_key(record: dict) -> str:
    c = record["config"]
    return f"{'same' if c['same_space'] else 'cross'}-space len={c['length']}"


def pingpong_figures(records: list[dict]) -> dict[str, int]:
    """{configuration: median round trip} from one pingpong boot's records."""
    out = {}
    for r in records:
        if rec.record_type(r) == "bench" and r["bench"] == "pingpong":
            if r.get("unit") != "instructions":
                raise ValueError("pingpong ran without -icount: its figures are not instructions")
            out[config_key(r)] = int(r["round_trip"]["median"])
    if not out:
        raise ValueError("the boot printed no pingpong records")
    return out


def regressions(baseline: dict[str, int], measured: dict[str, int],
                tolerance: float = TOLERANCE) -> list[str]:
    """What grew by more than the tolerance, or is missing from either side."""
    problems = []
    for key in sorted(set(baseline) | set(measured)):
        if key not in baseline:
            problems.append(f"{key}: measured {measured[key]} but the baseline has no figure")
        elif key not in measured:
            problems.append(f"{key}: the baseline has {baseline[key]} but nothing was measured")
        elif measured[key] > baseline[key] * (1 + tolerance):
            growth = measured[key] / baseline[key] - 1
            problems.append(f"{key}: {measured[key]} instructions, {growth:+.1%} over the "
                            f"baseline {baseline[key]} (more than {tolerance:.0%})")
    return problems


def measure(arch: str, lock: str) -> dict[str, int]:
    """Build a release variant and boot pingpong on one CPU under -icount."""
    words = [f"ARCH={arch}", f"LOCK={lock}"] + [f"{k}={v}" for k, v in BUILD_OPTIONS.items()]
    subprocess.run(["make", "-s", "-C", str(REPO), "kernel", *words], check=True)
    build_dir = subprocess.run(["make", "-s", "-C", str(REPO), "print-build-dir", *words],
                               check=True, capture_output=True, text=True).stdout.strip()
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", arch,
                           "--lock", lock, "--image", str(REPO / build_dir / "kernel.elf"),
                           "--cpus", "1", "--accel", "tcg", "--icount", "--timeout", "300",
                           "--cmdline", f"app=pingpong {GUEST_ARGS}"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace")
    if proc.returncode != 0:
        raise RuntimeError(f"pingpong on {arch}-{lock} failed ({proc.returncode}):\n{proc.stdout}")
    return pingpong_figures(rec.parse_text(proc.stdout))


def load_baseline() -> dict:
    return json.loads(BASELINE_FILE.read_text())


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--arch", action="append", choices=sorted(LOCKS),
                   help="port(s) to measure (default: every port)")
    p.add_argument("--update", action="store_true", help="rewrite the baseline with the measured figures")
    args = p.parse_args(argv)
    arches = args.arch or sorted(LOCKS)
    baseline = load_baseline() if BASELINE_FILE.exists() else {}
    failed = False
    for arch in arches:
        for lock in LOCKS[arch]:
            measured = measure(arch, lock)
            print(f"{arch}-{lock}: " + ", ".join(f"{k} {v}" for k, v in sorted(measured.items())))
            if args.update:
                baseline.setdefault(arch, {})[lock] = measured
                continue
            for problem in regressions(baseline.get(arch, {}).get(lock, {}), measured):
                print(f"  {problem}")
                failed = True
    if args.update:
        BASELINE_FILE.parent.mkdir(parents=True, exist_ok=True)
        BASELINE_FILE.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n")
        print(f"wrote {BASELINE_FILE.relative_to(REPO)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
