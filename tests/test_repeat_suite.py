"""tools/repeat_suite.py: the in-guest suite run several times in a row, counted."""
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_repeat_suite_counts_runs():
    """Two runs of the suite's cnode tests (the whole suite runs in tests/test_guest_suite.py)."""
    r = subprocess.run([sys.executable, str(REPO / "tools" / "repeat_suite.py"), "--locks", "bkl",
                        "--cpus", "1", "--runs", "2", "--timeout", "600", "--only", "cnode_"],
                       capture_output=True, text=True, timeout=1500)
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "2 passed, 0 failed", r.stdout + r.stderr
    assert sum(" run " in line and ": pass in " in line for line in lines) == 2
    assert r.returncode == 0


def test_repeat_suite_reports_a_failing_run():
    """A run whose guest never starts the suite fails, and the exit status says so."""
    r = subprocess.run([sys.executable, str(REPO / "tools" / "repeat_suite.py"), "--locks", "bkl",
                        "--cpus", "1", "--runs", "1", "--timeout", "1"],
                       capture_output=True, text=True, timeout=600)
    assert r.stdout.strip().splitlines()[-1] == "0 passed, 1 failed", r.stdout + r.stderr
    assert "FAIL" in r.stdout and r.returncode == 1


def test_repeat_suite_filters_tests():
    """--only runs the in-guest tests with that prefix, --args passes words to the guest."""
    r = subprocess.run([sys.executable, str(REPO / "tools" / "repeat_suite.py"), "--locks", "bkl",
                        "--cpus", "2", "--runs", "1", "--timeout", "600",
                        "--only", "race_cancel_call", "--args", "race_rounds=3"],
                       capture_output=True, text=True, timeout=900)
    lines = r.stdout.strip().splitlines()
    assert lines[-1] == "1 passed, 0 failed", r.stdout + r.stderr
    assert "(1 tests)" in lines[0], lines[0]
