"""tools/model.py: the machine-repairman model, its fit and its CLI."""

import sys
from fractions import Fraction
from math import factorial
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import model  # noqa: E402
from conftest import write_jsonl


def exact_probabilities(n, s, a):
    """Equations 1-2 evaluated exactly with fractions, as on paper."""
    terms = [Fraction(s) ** k * factorial(n) / (Fraction(a) ** k * factorial(n - k))
             for k in range(n + 1)]
    total = sum(terms)
    return [t / total for t in terms]


def test_one_core_throughput_is_one_over_a_plus_s():
    for s, a in [(358, 4000), (1, 1), (100, 7)]:
        assert model.throughput(1, s, a) == pytest.approx(1 / (a + s), rel=1e-12)
        assert model.per_core_throughput(1, s, a) == pytest.approx(1 / (a + s), rel=1e-12)


def test_two_cores_worked_by_hand():
    # s = 1, a = 2: terms 1, 2*s/a = 1, 2*s^2/a^2 = 1/2; sum 5/2.
    p = model.state_probabilities(2, 1, 2)
    assert p == pytest.approx([0.4, 0.4, 0.2])
    assert model.utilisation(2, 1, 2) == pytest.approx(0.6)
    assert model.throughput(2, 1, 2) == pytest.approx(0.6)  # (1 - p0)/s
    assert model.per_core_throughput(2, 1, 2) == pytest.approx(0.3)
    assert model.queue_length(2, 1, 2) == pytest.approx(0.4 * 1 + 0.2 * 2)


@pytest.mark.parametrize("n, s, a", [(1, 3, 5), (4, 358, 2000), (14, 358, 1999), (20, 613, 500)])
def test_probabilities_sum_to_one_and_match_the_equations(n, s, a):
    p = model.state_probabilities(n, s, a)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    assert p == pytest.approx([float(x) for x in exact_probabilities(n, s, a)], rel=1e-9)


def test_vanishing_think_time_saturates_at_one_over_s():
    for n in (1, 4, 64):
        assert model.throughput(n, 358, 1e-9) == pytest.approx(1 / 358, rel=1e-6)


def test_stable_at_64_cores():
    # Saturated: p_0 underflows in a naive sum of n!/(n-k)! (s/a)^k terms.
    p = model.state_probabilities(64, 358, 10)
    assert np.all(np.isfinite(p)) and p.sum() == pytest.approx(1.0)
    assert model.queue_length(64, 358, 10) == pytest.approx(64 - 10 / 358, rel=1e-3)
    # Idle: 1 - p_0 is tiny and must not be lost to rounding.
    assert model.throughput(64, 358, 1e12) == pytest.approx(64 / (1e12 + 358), rel=1e-6)


def test_throughput_rises_but_never_passes_either_bound():
    s, a = 358, 4000
    x = model.curve(range(1, 65), s, a)
    assert np.all(np.diff(x[:20]) > 0) and np.all(np.diff(x) >= 0)  # flat once saturated
    assert np.all(x <= np.arange(1, 65) / (a + s) + 1e-15)
    assert np.all(x <= 1 / s)


def test_paper_scaling_claims():
    # Section 5.1.3: "a workload ... with an average delay between system calls on each core of
    # 4000 cycles would scale to 14 cores"; the hold time is "approximately 300 cycles within a
    # socket, to 600 cycles distributed across sockets"; "16000 cycles is needed ... to scale
    # across both sockets" (28 hardware threads).  The criterion is the saturation point
    # n* = (a + s)/s, where n/(a+s) meets the lock's ceiling 1/s.
    assert int(model.saturation_point(300, 4000)) == 14
    assert round(model.saturation_point(600, 16000)) == 28
    # Section 5.1.4: 4,000 cycles is "just above the scalability limit ... across a whole
    # socket": 14 cores need a >= 13 s = 3,900 cycles.
    assert model.saturation_point(300, 3900) == pytest.approx(14)
    # The 5% knee rule agrees at the in-socket hold time ...
    assert model.knee(300, 4000) == 14
    # ... and with the fitted s = 358 the knee comes two cores earlier, at the saturation point.
    assert model.knee(358, 4000) == int(model.saturation_point(358, 4000)) == 12


def test_knee_is_where_the_gain_drops_below_the_fraction():
    s, a = 358, 4000
    k = model.knee(s, a, 0.05)
    x = model.curve(range(1, k + 3), s, a)
    assert x[k] - x[k - 1] < 0.05 * x[k - 1]          # n = k -> k+1 adds < 5%
    assert x[k - 1] - x[k - 2] >= 0.05 * x[k - 2]     # n = k-1 -> k still adds >= 5%
    assert model.knee(s, a, 0.10) < k


def test_knee_rule_gives_up_where_linear_growth_would_meet_it():
    # Past 1/fraction = 20 cores even perfect scaling adds less than 5% a core, so the rule
    # cannot see a knee there, and a lock that is almost never contended has none below.
    assert model.knee(0.1, 920) is None
    assert model.knee_text(0.1, 920) == "no knee below 20 cores (5% rule)"


def test_bounds_bracket_the_model_between_two_service_times():
    cores = range(1, 29)
    upper, lower = model.bounds(cores, 323, 613, 4000)
    middle = model.curve(cores, 358, 4000)
    assert np.all(lower < middle) and np.all(middle < upper)


def test_fit_recovers_known_parameters_from_noisy_data():
    rng = np.random.default_rng(7)
    cores = np.arange(1, 15)
    measured = model.curve(cores, 358, 1999) * (1 + rng.normal(0, 0.005, cores.size))
    fit = model.fit(cores, measured)
    assert fit.s == pytest.approx(358, rel=0.03)
    assert fit.a == pytest.approx(1999, rel=0.03)
    assert fit.r2 > 0.99
    assert not fit.exact


def test_fit_rejects_a_single_core_count():
    with pytest.raises(ValueError, match="not determined.*two or more core counts"):
        model.fit([2, 2], [1e-3, 1e-3])


@pytest.mark.parametrize("s, a", [(300, 4000), (164, 500), (613, 32000), (40, 8000)])
def test_fit_recovers_known_s_and_a_on_1_to_16_cores(s, a):
    cores = [1, 2, 3, 4, 6, 8, 12, 16]
    fit = model.fit(cores, model.curve(cores, s, a))
    assert fit.s == pytest.approx(s, rel=1e-4) and fit.a == pytest.approx(a, rel=1e-4)
    assert fit.determined and fit.r2 == pytest.approx(1.0) and fit.s_error < 1e-3


@pytest.mark.parametrize("measured", [
    [1.0, 2.1, 3.0],          # faster than linear from 1 to 2 cores
    [1.0, 1.2, 0.9],          # throughput falls with cores
    [1.0, 1e-9, 1e9],         # wild
    [1.0, 2.0, 4.0],          # exactly linear
    [1.0, 1.0, 1.0],          # flat
])
def test_fit_never_warns_or_overflows(measured):
    """Levenberg-Marquardt on unbounded logs once stepped to exp(1000)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit = model.fit([1, 2, 4], np.array(measured) * 1e-3)
    assert np.isfinite(fit.s) and np.isfinite(fit.a) and fit.s > 0 and fit.a > 0


def test_fit_says_s_is_not_determined_without_contention():
    fit = model.fit([1, 2, 4, 8], [1e-3, 2e-3, 4e-3, 8e-3])
    assert not fit.determined and "s not determined" in fit.undetermined


def test_fit_says_a_is_not_determined_when_saturated_from_one_core():
    fit = model.fit([1, 2, 4], [1e-3, 1e-3, 1e-3])
    assert not fit.determined and "a not determined" in fit.undetermined


def test_fit_says_when_the_model_does_not_describe_the_points():
    fit = model.fit([1, 2, 4], [1e-3, 1.2e-3, 0.9e-3])
    assert not fit.determined and "does not describe" in fit.undetermined


def test_fit_through_two_points_is_exact_not_tested():
    fit = model.fit([1, 2], [1 / 4300, model.throughput(2, 300, 4000)])
    assert fit.exact and fit.s_error is None
    assert fit.s == pytest.approx(300, rel=1e-6) and fit.a == pytest.approx(4000, rel=1e-6)


def test_fit_rejects_non_finite_throughput():
    with pytest.raises(ValueError, match="positive and finite"):
        model.fit([1, 2], [1e-3, float("inf")])


def mcpingpong(delay, cores, per_cycle, hz, unit="cycles", lock="bkl"):
    return {"bench": "mcpingpong", "unit": unit, "env": {"lock": lock, "hz": hz},
            "delay": delay, "cores": cores, "total_rtt_per_s": per_cycle * hz,
            "per_core_rtt_per_s": [per_cycle * hz / cores] * cores}


def synthetic_run(s=358, user=150, hz=2e9, unit="cycles"):
    records = []
    for delay in (500, 2000, 4000):
        for n in range(1, 15):
            records.append(mcpingpong(delay, n, model.throughput(n, s, delay + user), hz, unit))
    records.append(mcpingpong(2000, 4, 1.0, hz, lock="none"))  # other variants are ignored
    return records


def test_fit_records_converts_rates_and_predicts_other_delays():
    fit, delay, unit, rows = model.fit_records(synthetic_run(), delay=2000)
    assert (delay, unit) == (2000, "cycles")
    assert fit.s == pytest.approx(358, rel=1e-4)
    assert fit.a == pytest.approx(2150, rel=1e-4)
    assert [d for d, _, _ in rows] == [500, 2000, 4000]
    for d, a, r2 in rows:
        assert a == pytest.approx(d + 150, rel=1e-3)
        assert r2 == pytest.approx(1.0, abs=1e-6)


def test_fit_records_hz_and_units():
    records = synthetic_run(hz=1e9, unit="instructions")
    for r in records:
        del r["env"]["hz"]  # default: 1e9 units per second
    fit, _, unit, _ = model.fit_records(records, delay=4000)
    assert unit == "instructions" and fit.s == pytest.approx(358, rel=1e-4)
    fit, _, _, _ = model.fit_records(records, delay=4000, hz=2e9)  # --hz overrides
    assert fit.s == pytest.approx(2 * 358, rel=1e-4)
    mixed = records + [mcpingpong(4000, 1, 1e-4, 1e9, unit="cycles")]
    with pytest.raises(ValueError, match="mix units"):
        model.fit_records(mixed)


def test_reference_delay_prefers_most_core_counts_then_smallest():
    points = {0: (np.array([1, 2]), None), 500: (np.array([1, 2, 4]), None),
              4000: (np.array([1, 2, 4]), None), 8000: (np.array([1, 1]), None)}
    assert model.reference_delay(points) == 500


def test_cli_predict_and_fit(tmp_path, capsys):
    assert model.main(["predict", "--s", "358", "--a", "4000", "--cores", "1,2,14"]) == 0
    out = capsys.readouterr().out
    assert "n* = 12.2" in out and "knee (5% rule) at 12 cores" in out
    assert f"{1e6 / 4358:.2f}" in out  # one core: 1/(a+s) per 1e6 cycles
    path = tmp_path / "results.jsonl"
    write_jsonl(path, synthetic_run())
    assert model.main(["fit", str(path), "--delay", "2000"]) == 0
    out = capsys.readouterr().out
    assert "s = 358.0 cycles, a = 2150.0 cycles, R² = 1.0000 over 14 points" in out
    assert model.main(["fit", str(path), "--delay", "123"]) == 1
    assert "no mcpingpong records with delay 123" in capsys.readouterr().err


def test_shared_clock_throughput_is_per_unit_of_each_cores_time():
    # Under -icount the cores take turns on one counter: 2 cores that each did
    # as much per own instruction as 1 core show the same total; x cores undoes it.
    def record(cores, total, **extra):
        return {"bench": "mcpingpong", "env": {"lock": "bkl"}, "unit": "instructions",
                "delay": 0, "cores": cores, "total_rtt_per_s": total, **extra}
    shared = [record(n, 500000.0, shared_clock=True) for n in (1, 2, 4)]
    points, unit = model.mcpingpong_points(shared)
    cores, x = points[0]
    assert unit == "instructions" and list(cores) == [1, 2, 4]
    assert list(x) == pytest.approx([5e-4, 1e-3, 2e-3])
    # Runs with a lockstats window are left out of the fit.
    points, _ = model.mcpingpong_points([record(1, 1e5), record(2, 1e5, lockstats=True)])
    assert list(points[0][0]) == [1]


# --- cores with different delays --------------------------------------------------


@pytest.mark.parametrize("n,s,a", [(1, 300, 4000), (4, 300, 1000), (16, 358, 4000), (8, 500, 100)])
def test_mixed_with_equal_delays_is_the_homogeneous_model(n, s, a):
    m = model.mixed_throughput(s, [a] * n)
    assert m.throughput == pytest.approx(model.throughput(n, s, a), rel=1e-9)
    assert m.utilisation == pytest.approx(model.utilisation(n, s, a), rel=1e-9)
    assert sum(m.per_core) == pytest.approx(m.throughput, rel=1e-9)
    assert all(x == pytest.approx(m.throughput / n, rel=1e-9) for x in m.per_core)


def brute_force_mixed(s, delays):
    """The product form summed over every set of cores at the lock (2^n terms)."""
    import itertools
    n = len(delays)
    weight = {}
    for k in range(n + 1):
        for held in itertools.combinations(range(n), k):
            w = factorial(k) * s ** k
            for i in range(n):
                if i not in held:
                    w *= delays[i]
            weight[held] = w
    z = sum(weight.values())
    idle = weight[()] / z
    per_core = [sum(w for b, w in weight.items() if i not in b) / z / delays[i] for i in range(n)]
    return (1 - idle) / s, per_core


def test_mixed_matches_the_sum_over_every_state():
    delays = [800.0, 1600.0, 1500.0, 2000.0, 1200.0]
    m = model.mixed_throughput(300.0, delays)
    x, per_core = brute_force_mixed(300.0, delays)
    assert m.throughput == pytest.approx(x, rel=1e-9)
    assert m.per_core == pytest.approx(per_core, rel=1e-9)
    # The core with the shortest delay enters most often, and the lock's rate is every core's.
    assert max(m.per_core) == m.per_core[0]
    assert sum(m.per_core) == pytest.approx(m.throughput, rel=1e-9)


def test_mixed_lies_between_the_curves_of_its_extreme_delays():
    delays = [800.0] + [1600.0] * 7
    m = model.mixed_throughput(300.0, delays)
    assert model.throughput(8, 300.0, 1600.0) < m.throughput < model.throughput(8, 300.0, 800.0)
    assert m.throughput < 1 / 300.0


def test_mixed_rejects_bad_input():
    for s, delays in [(0, [100]), (300, []), (300, [100, 0])]:
        with pytest.raises(ValueError):
            model.mixed_throughput(s, delays)


def test_cli_mixed(capsys):
    assert model.main(["mixed", "--s", "300", "--delays", "800,1600,1600", "--entries-per-op", "4"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("s = 300")
    rows = [line.split() for line in lines[2:]]
    assert [int(r[0]) for r in rows] == [1, 2, 3]
    one_core = float(rows[0][1])
    assert one_core == pytest.approx(1e6 / (800 + 300) / 4, rel=1e-3)
