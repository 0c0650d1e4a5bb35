"""Deterministic figures: single-core ping-pong in exact instructions (-icount).

The ordering of the variants is a property of their lock code, so it is asserted on the real
measurement; the committed baseline catches a regression of more than 2 % in any variant, on
x86_64 and on arm-imx6 (QEMU sabrelite).
"""
import pytest

from conftest import REPO
import icount_baseline as ib

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
