"""Deterministic figures: single-core ping-pong in exact instructions (-icount).

The ordering of the variants is a property of their lock code, so it is asserted on the real
measurement; the committed baseline catches a regression of more than 2 % in any variant, on
x86_64 and on arm-imx6 (QEMU sabrelite).
"""
import json
import shutil

import pytest

from conftest import REPO, build
import icount_baseline as ib
import insn_profile as prof

ARCH = "x86_64"
VARIANTS = [(arch, lock) for arch in sorted(ib.LOCKS) for lock in ib.LOCKS[arch]]


def measured(guest, lock, arch=ARCH):
    run = guest(arch=arch, lock=lock, cpus=1, app="pingpong", args=ib.GUEST_ARGS, icount=True,
                **{k.lower(): v for k, v in ib.BUILD_OPTIONS.items()})
    assert run.status == 0, f"pingpong on {arch}-{lock} exited {run.status}"
    return ib.pingpong_figures(run.records)


def test_pingpong_is_deterministic_under_icount(guest):
    """Every run of a configuration takes the same number of instructions."""
    run = guest(arch=ARCH, lock="bkl", cpus=1, app="pingpong", args=ib.GUEST_ARGS, icount=True,
                debug="0")
    for r in run.of_type("bench"):
        assert r["round_trip"]["min"] == r["round_trip"]["max"], r["config"]


def test_variant_ordering(guest):
    """none < bkl <= rtm (its lock fallback under TCG) <= fine, for every configuration."""
    figures = {lock: measured(guest, lock) for lock in ib.LOCKS[ARCH]}
    for key in figures["none"]:
        none, bkl, rtm, fine = (figures[lock][key] for lock in ("none", "bkl", "rtm", "fine"))
        assert none < bkl <= rtm <= fine, f"{key}: none {none}, bkl {bkl}, rtm {rtm}, fine {fine}"


@pytest.mark.parametrize("arch,lock", VARIANTS, ids=[f"{a}-{lk}" for a, lk in VARIANTS])
def test_no_regression_against_baseline(guest, arch, lock):
    baseline = ib.load_baseline()[arch][lock]
    problems = ib.regressions(baseline, measured(guest, lock, arch))
    assert not problems, ("instruction counts grew; if intended, run "
                          "`python3 tools/icount_baseline.py --update` and commit the baseline:\n"
                          + "\n".join(problems))


def cross_space_len0(items):
    return next(i for i in items if i["config"]["same_space"] is False and i["config"]["length"] == 0)


def arm_traced_fastpath(lock, tmp_path) -> dict[str, float]:
    """Instructions per round trip of each function, from a trace of the cross-space ping-pong."""
    build_dir = build("arm-imx6", lock, debug="0")
    out = tmp_path / f"profile-{lock}.json"
    status = prof.main(["--arch", "arm-imx6", "--lock", lock, "--image", str(build_dir / "kernel.elf"),
                        "--cmdline", "app=pingpong runs=1 iters=20", "--json", str(out)])
    assert out.exists(), f"insn_profile.py exited {status} without writing its JSON"
    window = cross_space_len0(json.loads(out.read_text())["windows"])
    return {f["function"]: f["instructions"] / window["operations"] for f in window["functions"]}


def test_arm_figures_are_exact_despite_the_counter_step(guest, tmp_path):
    """arm-imx6's counter steps by 10 instructions; the ping-pong dithers its loop (bench/bench.h)
    so that its means are exact all the same.  Held to an instruction trace: between `none` and
    `bkl` each one-way figure differs by exactly what the traced fastpath function differs by
    (every other instruction on the way is the same code in both).  Undithered, the two differed
    by up to 5 each way."""
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc or qemu-system-arm is not installed (make deps)")
    figures, traced = {}, {}
    for lock in ("none", "bkl"):
        run = guest(arch="arm-imx6", lock=lock, cpus=1, app="pingpong", args=ib.GUEST_ARGS, icount=True,
                    **{k.lower(): v for k, v in ib.BUILD_OPTIONS.items()})
        assert run.status == 0, f"pingpong on arm-imx6-{lock} exited {run.status}"
        figures[lock] = cross_space_len0([r for r in run.of_type("bench") if r["bench"] == "pingpong"])
        traced[lock] = arm_traced_fastpath(lock, tmp_path)
    for figure, function in (("call", "fastpath_call"), ("reply_recv", "fastpath_reply_recv")):
        measured = figures["bkl"][figure]["median"] - figures["none"][figure]["median"]
        exact = traced["bkl"][function] - traced["none"][function]
        assert abs(measured - exact) < 0.5, f"{figure}: the ping-pong says +{measured}, the trace +{exact}"


def test_regression_check_catches_growth():
    """The comparison itself: 2 % is allowed, more is not, and missing figures are reported."""
    base = {"same-space len=0": 1000}
    assert ib.regressions(base, {"same-space len=0": 1020}) == []
    assert ib.regressions(base, {"same-space len=0": 900}) == []
    assert len(ib.regressions(base, {"same-space len=0": 1021})) == 1
    assert len(ib.regressions(base, {})) == 1
    assert len(ib.regressions({}, base)) == 1


def test_baseline_is_committed():
    assert (REPO / "tests" / "baselines" / "pingpong-icount.json").exists()
