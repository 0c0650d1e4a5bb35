#!/usr/bin/env python3
"""Exact instruction counts of single-core ping-pong, and the committed baseline.

Under TCG with `-icount shift=0` the guest's cycle counter counts executed
instructions, so two boots of one image give the same figures to the last
digit.  So the baseline in tests/baselines/pingpong-icount.json holds each
variant's one-way Call and ReplyRecv exactly (their means: arm-imx6's
counter steps by 10 instructions, and the ping-pong dithers its loop so that
the means are exact, bench/bench.h), and tests/test_icount.py fails on any
difference, a gain as much as a loss.  A change that moves a figure updates
the baseline in the same commit, and its message says why the figure moved:

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
LOCKS = {"x86_64": ["none", "bkl", "fine", "rtm"], "arm-imx6": ["none", "bkl", "fine"]}
# Release builds: the figures are what a user benchmarking the kernel sees.
BUILD_OPTIONS = {"DEBUG": "0"}
GUEST_ARGS = "runs=4"


def config_key(record: dict) -> str:
    c = record["config"]
    return f"{'same' if c['same_space'] else 'cross'}-space len={c['length']}"


# The one-way figures a baseline holds for each configuration.
DIRECTIONS = ("call", "reply_recv")


def pingpong_figures(records: list[dict]) -> dict[str, dict[str, float]]:
    """{configuration: {"call": mean, "reply_recv": mean}} from one pingpong boot's records."""
    out = {}
    for r in records:
        if rec.record_type(r) == "bench" and r["bench"] == "pingpong" and not r.get("timing"):
            if r.get("unit") != "instructions":
                raise ValueError("pingpong ran without -icount: its figures are not instructions")
            out[config_key(r)] = {d: r[d]["mean"] for d in DIRECTIONS}
    if not out:
        raise ValueError("the boot printed no pingpong records")
    return out


def differences(baseline: dict[str, dict[str, float]],
                measured: dict[str, dict[str, float]]) -> list[str]:
    """Every one-way figure that is not the baseline's, or is missing from either side."""
    problems = []
    for key in sorted(set(baseline) | set(measured)):
        if key not in baseline:
            problems.append(f"{key}: measured {measured[key]} but the baseline has no figure")
        elif key not in measured:
            problems.append(f"{key}: the baseline has {baseline[key]} but nothing was measured")
        else:
            for d in DIRECTIONS:
                was, now = baseline[key].get(d), measured[key].get(d)
                if was != now:
                    problems.append(f"{key} {d}: {now} instructions, the baseline {was}")
    return problems


def measure(arch: str, lock: str) -> dict[str, dict[str, float]]:
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
    p.add_argument("--update", action="store_true",
                   help="rewrite the baseline with the measured figures (commit it with the reason)")
    args = p.parse_args(argv)
    arches = args.arch or sorted(LOCKS)
    baseline = load_baseline() if BASELINE_FILE.exists() else {}
    failed = False
    for arch in arches:
        for lock in LOCKS[arch]:
            measured = measure(arch, lock)
            print(f"{arch}-{lock}: " + ", ".join(f"{k} {v['call']:g}+{v['reply_recv']:g}"
                                                 for k, v in sorted(measured.items())))
            if args.update:
                baseline.setdefault(arch, {})[lock] = measured
                continue
            for problem in differences(baseline.get(arch, {}).get(lock, {}), measured):
                print(f"  {problem}")
                failed = True
    if args.update:
        BASELINE_FILE.parent.mkdir(parents=True, exist_ok=True)
        BASELINE_FILE.write_text(json.dumps(baseline, indent=2, sort_keys=True) + "\n")
        print(f"wrote {BASELINE_FILE.relative_to(REPO)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
