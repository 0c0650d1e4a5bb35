"""The machine-repairman model of a big kernel lock.

Elphinstone et al., "An Evaluation of Coarse-Grained Locking for Multicore
Microkernels", section 4 (equations 1-5) and section 5.1.2 (the
least-squares fit, Figure 4).  See docs/model.md.

n cores each alternate between thinking for a mean time `a` (outside the
lock) and one lock service of mean time `s`; the lock serves one core at a
time.  State k (0..n) is the number of cores holding or waiting for the lock:

    p_k = p_0 * (s/a)^k * n!/(n-k)!                      (1)
    p_0 = 1 / sum_i (s/a)^i * n!/(n-i)!                  (2)
    w   = sum_i i * p_i                                  (4)
    X   = (1 - p_0) / s                                  (5)

Time is in one unit throughout: cycles, or guest instructions under -icount.
For multicore ping-pong one "job" is one round trip, so `s` is the lock time
of one round trip (its Call and its ReplyRecv) and `a` the rest of the round
trip (the exponential delay plus user-level time).

CLI:
    python3 tools/model.py fit results/<run>/results.jsonl [--delay D] [--hz HZ] [--lock L]
    python3 tools/model.py predict --s 358 --a 4000 --cores 1,2,4,8,16
    python3 tools/model.py mixed --s 300 --delays 800,1600,1600,1600 [--entries-per-op E]
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares
from scipy.special import logsumexp

import records as rec

DEFAULT_HZ = 1e9


def _log_terms(n: int, s: float, a: float) -> np.ndarray:
    """log of (s/a)^k * n!/(n-k)! for k = 0..n, by the recurrence
    t_k = t_{k-1} * (n-k+1) * s/a, summed in log space so that n = 64 or
    a << s neither overflows nor underflows."""
    if n < 1 or s <= 0 or a <= 0:
        raise ValueError(f"need n >= 1, s > 0, a > 0 (got n={n}, s={s}, a={a})")
    k = np.arange(1, n + 1)
    steps = np.log(n - k + 1) + math.log(s) - math.log(a)
    return np.concatenate(([0.0], np.cumsum(steps)))


def state_probabilities(n: int, s: float, a: float) -> np.ndarray:
    """p_k for k = 0..n (equation 3)."""
    logs = _log_terms(n, s, a)
    return np.exp(logs - logsumexp(logs))


def queue_length(n: int, s: float, a: float) -> float:
    """Expected number of cores holding or waiting for the lock (equation 4)."""
    p = state_probabilities(n, s, a)
    return float(np.dot(np.arange(n + 1), p))


def utilisation(n: int, s: float, a: float) -> float:
    """Fraction of time the lock is held: 1 - p_0."""
    logs = _log_terms(n, s, a)
    log_p0 = -logsumexp(logs)
    return float(-math.expm1(log_p0))  # exact even when p_0 is close to 1


def throughput(n: int, s: float, a: float) -> float:
    """Lock throughput X(n) = (1 - p_0)/s, jobs per time unit (equation 5)."""
    return utilisation(n, s, a) / s


def per_core_throughput(n: int, s: float, a: float) -> float:
    return throughput(n, s, a) / n


def curve(cores, s: float, a: float) -> np.ndarray:
    """X(n) for each core count."""
    return np.array([throughput(int(n), s, a) for n in cores])


def saturation_point(s: float, a: float) -> float:
    """n* = (a + s)/s, where the no-contention line n/(a+s) meets the
    lock's ceiling 1/s: the number of cores the lock can keep busy.

    This is the paper's scalability criterion (section 5.1.3): with a
    4,000-cycle delay and the ~300-cycle in-socket hold time, n* = 14.3, so
    the workload "would scale to 14 cores"; 16,000 cycles with ~600 cycles
    across sockets gives n* = 27.7, "to scale across both sockets" (28)."""
    return (a + s) / s


def knee(s: float, a: float, fraction: float = 0.05) -> int | None:
    """The smallest n such that going to n + 1 cores adds less than
    `fraction` of X(n), or None when there is none below 1/fraction cores:
    from there on even perfect scaling (gain X(n)/n) adds less than that, so
    the rule no longer tells contention from growth; use saturation_point."""
    previous = throughput(1, s, a)
    for n in range(1, math.ceil(1 / fraction)):
        current = throughput(n + 1, s, a)
        if current - previous < fraction * previous:
            return n
        previous = current
    return None


def bounds(cores, s_low: float, s_high: float, a: float) -> tuple[np.ndarray, np.ndarray]:
    """Figure 4(b): the curves for the shortest and the longest observed
    service time; measurements should lie between them."""
    return curve(cores, s_low, a), curve(cores, s_high, a)


# --- cores with different delays (the Redis benchmark) ---------------------------


@dataclass
class MixedPrediction:
    """The lock's throughput and each core's, for cores with their own think times."""
    throughput: float           # lock services (kernel entries) per time unit, all cores
    per_core: list[float]       # each core's kernel entries per time unit
    utilisation: float          # 1 - P(nobody holds or waits for the lock)


def _symmetric_sums(x: np.ndarray) -> np.ndarray:
    """e_k(x) for k = 0..len(x): the elementary symmetric polynomials."""
    e = np.zeros(len(x) + 1)
    e[0] = 1.0
    for v in x:
        e[1:] = e[1:] + v * e[:-1]
    return e


def _weighted_states(x: np.ndarray) -> float:
    """sum over sets B of cores at the lock of |B|! * prod_{i in B} x_i."""
    e = _symmetric_sums(x)
    if not np.all(np.isfinite(e)):
        return math.inf
    log_factorials = np.cumsum(np.log(np.maximum(np.arange(len(e)), 1)))
    log_total = float(logsumexp(log_factorials + np.log(e)))
    # Summed in log space: k! alone overflows a double past 170 cores.
    return math.exp(log_total) if log_total < 709 else math.inf


def mixed_throughput(s: float, delays) -> MixedPrediction:
    """The model with a think time of its own for each core.

    The Redis benchmark is not symmetric: the driver core enters the kernel
    about twice as often as the server cores ("An Evaluation of Coarse-Grained
    Locking", section 5.2.2: 800 against 1,600 cycles), where the paper could
    only compare with the curve of a middling delay.  The queueing network is
    still of product form (one FCFS server with one service rate, an
    infinite-server think station with a rate per core), so a set B of cores
    holding or waiting for the lock has probability proportional to
    |B|! * s^|B| * prod_{i not in B} a_i, that is, after dividing by the
    product of all a_i, to |B|! * prod_{i in B} x_i with x_i = s / a_i.  The
    sums over sets are sums of k! e_k(x) over the elementary symmetric
    polynomials e_k, so the exact answer costs O(n^2) per core instead of 2^n.
    With equal delays this is equation (1).  Core i asks for the lock at rate
    1/a_i while it is not in B, which gives its throughput."""
    a = np.asarray(delays, float)
    if len(a) < 1 or s <= 0 or np.any(a <= 0):
        raise ValueError(f"need one or more cores, s > 0 and every delay > 0 (got s={s}, {list(a)})")
    x = s / a
    total = _weighted_states(x)
    if not math.isfinite(total):
        raise ValueError("the lock is too saturated for the exact sums: use fewer cores or a longer delay")
    per_core = [_weighted_states(np.delete(x, i)) / total / a[i] for i in range(len(a))]
    utilisation_ = 1.0 - 1.0 / total
    return MixedPrediction(utilisation_ / s, per_core, utilisation_)


@dataclass
class Fit:
    s: float
    a: float
    r2: float
    points: int
    # Why s or a is not determined by the points ("" when both are): the fit
    # still returns the best values, but they are only bounds or guesses.
    undetermined: str = ""
    s_error: float | None = None   # relative standard error of s (None: not estimable)

    @property
    def exact(self) -> bool:
        """Two parameters through two or fewer points: R² says nothing."""
        return self.points <= 2

    @property
    def determined(self) -> bool:
        return not self.undetermined


def r_squared(measured, predicted) -> float:
    measured = np.asarray(measured, float)
    residual = np.sum((measured - np.asarray(predicted, float)) ** 2)
    total = np.sum((measured - measured.mean()) ** 2)
    return 1.0 - residual / total if total > 0 else float(residual == 0)


# The search range of s and a, as factors of the one-core cycle 1/X(1) = a + s.
# Bounding the logarithms keeps exp() finite whatever the data; a value that
# ends on a bound was not determined by the points (see fit()).
FIT_RANGE = (1e-6, 1e3)
# A relative standard error of s above this: s is not determined by the points.
FIT_MAX_S_ERROR = 0.5


def _undetermined(s: float, a: float, cycle: float, s_error: float | None, points: int,
                  r2: float) -> str:
    low, high = FIT_RANGE[0] * cycle, FIT_RANGE[1] * cycle
    if s <= low * 1.01:
        return ("s not determined: the throughput grows as if no core ever waited for the lock, "
                "so the points bound s from above only")
    if a <= low * 1.01:
        return ("a not determined: the lock is saturated from the fewest cores on, "
                "so the points bound the think time from above only")
    if s >= high / 1.01 or a >= high / 1.01:
        return "not determined: the best fit lies at the edge of the search range"
    if points > 2 and r2 < 0:
        return f"the model does not describe the points (R² = {r2:.2f}): s and a are not determined"
    if points > 2 and (s_error is None or s_error > FIT_MAX_S_ERROR):
        spread = "not estimable" if s_error is None else f"±{s_error:.0%}"
        return f"s not determined: its standard error is {spread}"
    return ""


def _relative_s_error(result, points: int) -> float | None:
    """Standard error of log s, i.e. the relative error of s, from the
    Jacobian at the optimum (residual variance with points - 2 degrees of
    freedom); None when there are no spare points or J'J is singular."""
    if points <= 2:
        return None
    jtj = result.jac.T @ result.jac
    if np.linalg.cond(jtj) > 1e12:
        return None
    variance = 2.0 * result.cost / (points - 2)
    return float(math.sqrt(max(np.linalg.inv(jtj)[0, 0] * variance, 0.0)))


def fit(cores, measured) -> Fit:
    """Least-squares fit of s and a to throughput X(n) (jobs per time unit).

    Residuals are relative (X_model/X - 1) so that low and high core counts
    weigh alike; parameters are fitted as logarithms, bounded to FIT_RANGE
    times the one-core cycle, so that both stay positive and exp() never
    overflows.  Several starting points split 1/X(1) = a + s differently and
    the best result is kept.  R² is computed on the throughputs themselves.
    Fit.undetermined says when the points do not pin s or a down: no
    contention seen, saturation from the start, a result on the range's
    edge, or (with more than two points) a relative error of s above
    FIT_MAX_S_ERROR.  Fewer than two core counts raise ValueError."""
    cores = np.asarray(cores, int)
    measured = np.asarray(measured, float)
    if len(set(cores.tolist())) < 2:
        raise ValueError("not determined: a fit of two parameters needs throughput at two or more "
                         "core counts")
    if np.any(measured <= 0) or not np.all(np.isfinite(measured)):
        raise ValueError("throughputs must be positive and finite")

    def residuals(log_params):
        s, a = np.exp(log_params)
        return curve(cores, s, a) / measured - 1.0

    lowest = cores.argmin()
    cycle = cores[lowest] / measured[lowest]  # ~ a + s when uncontended
    lower = np.log([FIT_RANGE[0] * cycle] * 2)
    upper = np.log([FIT_RANGE[1] * cycle] * 2)
    best = None
    for share in (0.01, 0.05, 0.2, 0.5):
        start = np.log([share * cycle, (1 - share) * cycle])
        result = least_squares(residuals, start, bounds=(lower, upper), method="trf",
                               xtol=1e-12, ftol=1e-12, gtol=1e-12)
        if best is None or result.cost < best.cost:
            best = result
    s, a = (float(v) for v in np.exp(best.x))
    points = len(cores)
    s_error = _relative_s_error(best, points)
    r2 = float(r_squared(measured, curve(cores, s, a)))
    return Fit(s, a, r2, points, _undetermined(s, a, cycle, s_error, points, r2), s_error)


# --- multicore ping-pong records --------------------------------------------


def record_hz(record: dict, hz: float | None) -> float:
    """Time units per second: --hz, else env "hz", else 1e9 (under
    -icount shift=0 one instruction is one nanosecond of guest time)."""
    if hz is not None:
        return hz
    return float(record.get("env", {}).get("hz", DEFAULT_HZ))


def per_core_time_factor(record: dict) -> int:
    """What turns a record's total throughput into throughput per unit of
    each core's own time.  Under -icount ("shared_clock": true) QEMU runs the
    cores one after another and the counter counts the instructions of all
    of them, so with n busy cores each core had 1/n of the counted time: the
    factor is n.  With a clock per core (real parallel cores) it is 1."""
    return int(rec.field(record, "cores")) if record.get("shared_clock") is True else 1


def mcpingpong_points(records, lock: str | None = None, hz: float | None = None):
    """{delay: (cores, jobs per time unit)} from mcpingpong records, and the
    time unit ("cycles" or "instructions").  Runs with a lockstats window are
    left out (their statistics cost time); under a shared clock throughput is
    per unit of each core's own time (per_core_time_factor)."""
    points: dict[int, tuple[list, list]] = {}
    units = set()
    for r in rec.benches(records, "mcpingpong"):
        if lock is not None and r.get("env", {}).get("lock") != lock:
            continue
        if r.get("lockstats") is True:
            continue
        units.add(r.get("unit", "cycles"))
        delay = int(rec.field(r, "delay"))
        per_unit = (float(rec.field(r, "total_rtt_per_s")) / record_hz(r, hz)
                    * per_core_time_factor(r))
        points.setdefault(delay, ([], []))
        points[delay][0].append(int(rec.field(r, "cores")))
        points[delay][1].append(per_unit)
    if len(units) > 1:
        raise ValueError(f"mcpingpong records mix units {sorted(units)}; select one run")
    return {d: (np.array(c), np.array(x)) for d, (c, x) in sorted(points.items())}, (
        units.pop() if units else "cycles")


def reference_delay(points) -> int:
    """The delay to fit when none is given: the one measured at the most
    core counts, the smallest such delay on a tie."""
    fittable = [d for d, (c, _) in points.items() if len(set(c.tolist())) >= 2]
    if not fittable:
        raise ValueError("no delay was measured at two or more core counts")
    return max(fittable, key=lambda d: (len(set(points[d][0].tolist())), -d))


def shifted_a(fitted: Fit, fitted_delay: int, delay: int) -> float:
    """The think time at another delay, as the paper predicts Figure 4(a):
    same service time, same user-level time, different delay."""
    return fitted.a + (delay - fitted_delay)


def fit_records(records, delay: int | None = None, lock: str | None = "bkl", hz: float | None = None):
    """Fit at one delay and predict every other one.

    Returns (fit, delay, unit, rows) where rows are
    (delay, a, R² of the prediction or None) per measured delay."""
    points, unit = mcpingpong_points(records, lock=lock, hz=hz)
    if not points:
        raise ValueError(f"no mcpingpong records{'' if lock is None else ' for lock ' + lock}")
    if delay is None:
        delay = reference_delay(points)
    if delay not in points:
        raise ValueError(f"no mcpingpong records with delay {delay}; have {sorted(points)}")
    result = fit(*points[delay])
    rows = []
    for d, (cores, measured) in points.items():
        a = shifted_a(result, delay, d)
        r2 = r_squared(measured, curve(cores, result.s, a)) if a > 0 and len(cores) > 1 else None
        rows.append((d, a, r2))
    return result, delay, unit, rows


# --- command line -------------------------------------------------------------


def _int_list(text: str) -> list[int]:
    return [int(v) for v in text.split(",") if v]


def knee_text(s: float, a: float, fraction: float = 0.05) -> str:
    n = knee(s, a, fraction)
    if n is None:
        return f"no knee below {math.ceil(1 / fraction)} cores ({fraction:.0%} rule)"
    return f"knee ({fraction:.0%} rule) at {n} cores"


def _cmd_fit(args) -> int:
    records = rec.load(args.results)
    lock = None if args.lock == "any" else args.lock
    result, delay, unit, rows = fit_records(records, args.delay, lock, args.hz)
    print(f"fit at delay {delay}: s = {result.s:.1f} {unit}, a = {result.a:.1f} {unit}, "
          f"R² = {result.r2:.4f} over {result.points} points"
          + (" (exact: two parameters, two points)" if result.exact else ""))
    if result.undetermined:
        print(f"  {result.undetermined}")
    print(f"saturation point n* = (a+s)/s = {saturation_point(result.s, result.a):.1f} cores; "
          + knee_text(result.s, result.a, args.fraction))
    print(f"{'delay':>8} {'a':>10} {'R² (predicted)':>15}")
    for d, a, r2 in rows:
        print(f"{d:>8} {a:>10.1f} {'-' if r2 is None else format(r2, '.4f'):>15}")
    return 0


def _cmd_predict(args) -> int:
    print(f"s = {args.s:g}, a = {args.a:g}: saturation point n* = "
          f"{saturation_point(args.s, args.a):.1f} cores; " + knee_text(args.s, args.a, args.fraction))
    print(f"{'cores':>5} {'X (per 1e6 units)':>18} {'per core':>10} {'lock util':>10} {'queue':>7}")
    for n in args.cores:
        x = throughput(n, args.s, args.a)
        print(f"{n:>5} {x * 1e6:>18.2f} {per_core_throughput(n, args.s, args.a) * 1e6:>10.2f} "
              f"{utilisation(n, args.s, args.a):>10.3f} {queue_length(n, args.s, args.a):>7.2f}")
    return 0


def _float_list(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v]


def _cmd_mixed(args) -> int:
    print(f"s = {args.s:g}; the first n of the delays {', '.join(f'{d:g}' for d in args.delays)}")
    unit = "ops" if args.entries_per_op else "entries"
    print(f"{'cores':>5} {unit + ' per 1e6 units':>22} {'lock util':>10}  per core")
    for n in range(1, len(args.delays) + 1):
        m = mixed_throughput(args.s, args.delays[:n])
        scale = 1e6 / (args.entries_per_op or 1)
        print(f"{n:>5} {m.throughput * scale:>22.2f} {m.utilisation:>10.3f}  "
              + " ".join(f"{x * scale:.2f}" for x in m.per_core))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Machine-repairman model of the big kernel lock")
    parser.add_argument("--fraction", type=float, default=0.05,
                        help="knee: adding a core adds less than this fraction of throughput")
    sub = parser.add_subparsers(dest="command", required=True)
    p_fit = sub.add_parser("fit", help="fit s and a to mcpingpong records")
    p_fit.add_argument("results", help="results.jsonl, a results directory or a console log")
    p_fit.add_argument("--delay", type=int, help="delay to fit (default: most core counts)")
    p_fit.add_argument("--hz", type=float,
                       help="time units per second (default: env 'hz' of each record, else 1e9)")
    p_fit.add_argument("--lock", default="bkl", help="lock variant to fit, or 'any' (default bkl)")
    p_fit.set_defaults(run=_cmd_fit)
    p_pred = sub.add_parser("predict", help="throughput the model predicts")
    p_pred.add_argument("--s", type=float, required=True, help="service time (lock hold)")
    p_pred.add_argument("--a", type=float, required=True, help="think time between lock requests")
    p_pred.add_argument("--cores", type=_int_list, default=[1, 2, 4, 8, 16])
    p_pred.set_defaults(run=_cmd_predict)
    p_mixed = sub.add_parser("mixed", help="throughput for cores with their own delays, 1..n cores")
    p_mixed.add_argument("--s", type=float, required=True, help="service time (lock hold per entry)")
    p_mixed.add_argument("--delays", type=_float_list, required=True,
                         help="each core's mean time between kernel entries, core 0 first")
    p_mixed.add_argument("--entries-per-op", type=float,
                         help="kernel entries per operation, to print operations instead")
    p_mixed.set_defaults(run=_cmd_mixed)
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except (ValueError, OSError) as err:
        print(f"model.py: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
