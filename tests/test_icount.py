"""Deterministic figures on both ports: single-core ping-pong in exact instructions (-icount).

The committed baseline holds every variant's one-way Call and ReplyRecv exactly, on x86_64 and
on arm-imx6 (QEMU sabrelite); any change fails until the baseline is updated in the same commit,
with the reason.  The ordering of the variants, in instructions and in memory barriers per IPC,
is a property of their lock code, so it is asserted on the real measurement.
"""
import json

import pytest

from conftest import build, on_port
import icount_baseline as ib
import insn_profile as prof

# Each port's boots are one pytest-xdist group (tests/conftest.py), read by all its tests.
VARIANTS = [on_port(arch, lock, group=f"icount-{arch}") for arch in sorted(ib.LOCKS) for lock in ib.LOCKS[arch]]
PORTS = [on_port(arch, group=f"icount-{arch}") for arch in sorted(ib.LOCKS)]
# The smallest step of each port's counter under -icount (bench/bench.h, ARCH_COUNTER_STEP).
COUNTER_STEP = {"x86_64": 1, "arm-imx6": 10}
# The variants whose barriers are compared: rtm's fallback is bkl's lock under TCG.
BARRIER_LOCKS = ["none", "bkl", "fine"]


def pingpong_run(guest, arch, lock):
    run = guest(arch=arch, lock=lock, cpus=1, app="pingpong", args=ib.GUEST_ARGS, icount=True,
                **{k.lower(): v for k, v in ib.BUILD_OPTIONS.items()})
    assert run.status == 0, f"pingpong on {arch}-{lock} exited {run.status}"
    return run


def measured(guest, arch, lock):
    return ib.pingpong_figures(pingpong_run(guest, arch, lock).records)


@pytest.mark.parametrize("arch", PORTS)
def test_pingpong_is_deterministic_under_icount(guest, arch):
    """Every iteration of a configuration takes the same number of instructions, to the
    resolution of the port's counter."""
    for r in pingpong_run(guest, arch, "bkl").of_type("bench"):
        spread = r["round_trip"]["max"] - r["round_trip"]["min"]
        assert spread < COUNTER_STEP[arch], (r["config"], r["round_trip"])


@pytest.mark.parametrize("arch", PORTS)
def test_variant_ordering(guest, arch):
    """none < bkl <= rtm (its lock fallback under TCG) <= fine, for every configuration."""
    locks = ib.LOCKS[arch]
    figures = {lock: measured(guest, arch, lock) for lock in locks}
    for key in figures["none"]:
        trips = [figures[lock][key]["call"] + figures[lock][key]["reply_recv"] for lock in locks]
        ordered = ["none", "bkl"] + (["rtm"] if "rtm" in locks else []) + ["fine"]
        by_lock = dict(zip(locks, trips))
        chain = [by_lock[lock] for lock in ordered]
        assert chain[0] < chain[1] and chain[1:] == sorted(chain[1:]), f"{key}: {by_lock}"


@pytest.mark.parametrize("arch,lock", VARIANTS)
def test_one_way_figures_match_the_baseline(guest, arch, lock):
    baseline = ib.load_baseline()[arch][lock]
    problems = ib.differences(baseline, measured(guest, arch, lock))
    assert not problems, ("one-way figures changed; if intended, run "
                          "`python3 tools/icount_baseline.py --update` and commit the baseline "
                          "with the reason:\n" + "\n".join(problems))


def barriers_per_ipc(guest, arch, lock):
    """{configuration: memory barriers per IPC} from a LOCKSTATS=1 ping-pong boot.

    The lockstats record the benchmark prints just before each bench record covers its measured
    window (one core here), and the bench record says how many IPCs that window held.
    """
    run = guest(arch=arch, lock=lock, cpus=1, app="pingpong", args="runs=4 lockstats=1",
                icount=True, lockstats="1", debug="0", timeout=300)
    assert run.status == 0, f"pingpong on {arch}-{lock} exited {run.status}"
    out, window = {}, []
    for r in run.records:
        if isinstance(r.get("lockstats"), dict):
            window.append(r["lockstats"])
        elif r.get("bench") == "pingpong":
            assert r["lockstats"] is True and r["ipcs"] > 0, r
            assert window, f"no lockstats record before {r['config']}"
            out[ib.config_key(r)] = window[-1]["barriers"] / r["ipcs"]
            window = []
    assert len(out) == 4, out
    return out


@pytest.mark.parametrize("arch", PORTS)
def test_barriers_per_ipc(guest, arch, record_property):
    """none takes no barrier; every other variant at least one on each kernel entry, its lock's
    acquire (x86_64's release is a plain store under TSO; ARMv7's takes a DMB too); none < bkl <=
    fine in every configuration."""
    figures = {lock: barriers_per_ipc(guest, arch, lock) for lock in BARRIER_LOCKS}
    for key in figures["none"]:
        none, bkl, fine = (figures[lock][key] for lock in BARRIER_LOCKS)
        record_property(f"{arch} {key}", f"barriers per IPC: none {none:.2f}, bkl {bkl:.2f}, fine {fine:.2f}")
        assert none == 0, (key, none)
        assert 1 <= bkl <= fine, f"{key}: barriers per IPC bkl {bkl}, fine {fine}"


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


@pytest.mark.parametrize("arch", [on_port("arm-imx6", group="icount-arm-imx6")])
def test_arm_figures_are_exact_despite_the_counter_step(guest, tmp_path, arch):
    """arm-imx6's counter steps by 10 instructions; the ping-pong dithers its loop (bench/bench.h)
    so that its means are exact all the same.  Held to an instruction trace: between `none` and
    `bkl` each one-way figure differs by exactly what the traced fastpath function differs by
    (every other instruction on the way is the same code in both).  Undithered, the two differed
    by up to 5 each way."""
    figures, traced = {}, {}
    for lock in ("none", "bkl"):
        run = pingpong_run(guest, arch, lock)
        figures[lock] = cross_space_len0([r for r in run.of_type("bench") if r["bench"] == "pingpong"])
        traced[lock] = arm_traced_fastpath(lock, tmp_path)
    for figure, function in (("call", "fastpath_call"), ("reply_recv", "fastpath_reply_recv")):
        moved = figures["bkl"][figure]["mean"] - figures["none"][figure]["mean"]
        exact = traced["bkl"][function] - traced["none"][function]
        assert abs(moved - exact) < 0.5, f"{figure}: the ping-pong says +{moved}, the trace +{exact}"


def test_baseline_check_catches_any_change():
    """The comparison itself: a gain fails as a loss does, and missing figures are reported."""
    base = {"same-space len=0": {"call": 180, "reply_recv": 170}}
    assert ib.differences(base, {"same-space len=0": {"call": 180, "reply_recv": 170}}) == []
    assert len(ib.differences(base, {"same-space len=0": {"call": 181, "reply_recv": 170}})) == 1
    assert len(ib.differences(base, {"same-space len=0": {"call": 180, "reply_recv": 169}})) == 1
    assert len(ib.differences(base, {})) == 1
    assert len(ib.differences({}, base)) == 1


def test_baseline_holds_every_variant():
    baseline = ib.load_baseline()
    for arch, locks in ib.LOCKS.items():
        for lock in locks:
            for key, figure in baseline[arch][lock].items():
                assert set(figure) == set(ib.DIRECTIONS), (arch, lock, key, figure)
