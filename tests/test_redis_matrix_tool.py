"""tools/redis_matrix.py (`make redis-matrix`): its cells and its verdicts, without QEMU.

The matrix itself boots the real Redis in every cell and takes most of an hour, so `make test`
does not run it; these check that it asks for what docs/benchmarks.md's matrix describes and that every kind
of shortfall a boot can measure fails its cell.
"""
from __future__ import annotations

import copy

import pytest

import redis_matrix as matrix
import redis_run

REQUESTS, OPERATIONS = 100, 50


def passing_cell() -> dict:
    """What a cell of one Redis process measures when everything holds."""
    return {
        "cell": {"arch": "x86_64", "lock": "fine", "cpus": 2, "layout": "percore"},
        "serving": {"ports": [40000], "instances": [{"port": 6379, "core": 1}]},
        "benchmark": {"requests_per_test": REQUESTS, "clients": 10, "tests": list(matrix.BENCHMARK_TESTS),
                      "client_errors": 0, "client_notes": [], "commands": REQUESTS * 8 + 16,
                      "error_replies": 0, "rejected_connections": 0},
        "ycsb": {"load": {"operations": {"INSERT": matrix.RECORDS}, "errors": 0},
                 "run": {"operations": {"READ": OPERATIONS // 2, "UPDATE": OPERATIONS // 2}, "errors": 0}},
        "records": [{"port": 40000, "dbsize": matrix.RECORDS + 1, "indexed": matrix.RECORDS,
                     "whole": matrix.RECORDS, "used_memory_peak": 80 << 20}],
        "check": "OK check",
        "console": {"panic": 0, "posix_fault": 0, "redis_instance_end": 0},
    }


def verdict(result: dict) -> list[str]:
    return matrix.failures(result, REQUESTS, OPERATIONS)


def test_the_cells_are_every_port_lock_and_layout():
    names = [c.name for c in matrix.cells()]
    assert len(names) == len(set(names))
    got = {(c.arch, c.lock, c.layout) for c in matrix.cells()}
    want = {(arch, lock, layout) for arch, locks in (("x86_64", "none bkl fine rtm"), ("arm-imx6", "none bkl fine"))
            for lock in locks.split() for layout in ("percore", "processes")}
    assert got == want
    # `none` is correct only on one core; every other variant runs on one core and on two.
    assert {c.cpus for c in matrix.cells() if c.lock == "none"} == {1}
    for arch, lock in (("x86_64", "bkl"), ("x86_64", "rtm"), ("arm-imx6", "fine")):
        assert {(c.cpus, c.layout) for c in matrix.cells() if (c.arch, c.lock) == (arch, lock)} == \
            {(n, layout) for n in (1, 2) for layout in ("percore", "processes")}
    assert len(names) == 24


def test_the_benchmark_and_ycsb_size():
    assert set(matrix.BENCHMARK_TESTS) == {"set", "get", "incr", "lpush", "lpop", "sadd", "hset", "mset"}
    assert matrix.RECORDS == 32000
    assert "layout=processes" in " ".join(matrix.boot_command(matrix.Cell("arm-imx6", "bkl", 1, "processes"),
                                                               matrix.REPO / "k.elf", matrix.REPO / "l.log"))


def test_a_cell_that_measured_everything_whole_passes():
    result = passing_cell()
    assert verdict(result) == []
    row = matrix.cell_row(result, REQUESTS, OPERATIONS)
    assert row[-1] == "pass" and row[-3] == "80" and row[-4] == "32,000"


def broken(change) -> dict:
    result = copy.deepcopy(passing_cell())
    change(result)
    return result


@pytest.mark.parametrize("change,said", [
    (lambda r: r["benchmark"].update(error_replies=3), "3 error replies"),
    (lambda r: r["benchmark"].update(client_errors=1, client_notes=["no result for lpop"]), "no result for lpop"),
    (lambda r: r["benchmark"].update(rejected_connections=2), "2 connections refused"),
    (lambda r: r["benchmark"].update(commands=REQUESTS * 8 - 1), "fewer than asked"),
    (lambda r: r["ycsb"]["load"].update(errors=1), "1 load and 0 run errors"),
    (lambda r: r["ycsb"]["run"].update(errors=2), "0 load and 2 run errors"),
    (lambda r: r["ycsb"]["load"].update(operations={"INSERT": matrix.RECORDS - 1}), "not 32000 inserts"),
    (lambda r: r["ycsb"]["run"]["operations"].update(READ=0), "not 50"),
    (lambda r: r["records"][0].update(whole=matrix.RECORDS - 1), "31999 whole"),
    (lambda r: r["records"][0].update(indexed=matrix.RECORDS - 1), "31999 indexed"),
    (lambda r: r["records"][0].update(dbsize=matrix.RECORDS), "DBSIZE 32000"),
    (lambda r: r.update(check="FAILED check: 1"), "invariant check"),
    (lambda r: r.pop("check"), "not asked"),
    (lambda r: r["console"].update(posix_fault=1), "1 posix_fault"),
    (lambda r: r["console"].update(panic=1), "1 panic"),
    (lambda r: r.pop("ycsb") and r.update(ycsb_error="YCSB load on port 40000 failed"), "YCSB load on port"),
    (lambda r: r.pop("records") and r.update(records_error="ERR unknown command"), "ERR unknown command"),
    (lambda r: r.pop("benchmark"), "redis-benchmark: not run"),
])
def test_any_shortfall_fails_the_cell_and_says_why(change, said):
    result = broken(change)
    why = verdict(result)
    assert why and said in "; ".join(why), why
    assert matrix.cell_row(result, REQUESTS, OPERATIONS)[-1].startswith("FAIL")


def test_a_guest_that_never_served_fails_with_its_last_word():
    result = {"cell": passing_cell()["cell"], "error": "the guest did not serve: redis: no NIC"}
    assert verdict(result) == ["the guest did not serve: redis: no NIC"]
    assert matrix.cell_row(result, REQUESTS, OPERATIONS)[4:10] == ["-"] * 6


def test_the_table_counts_the_cells_that_passed():
    text = matrix.markdown([passing_cell(), broken(lambda r: r["records"][0].update(whole=0))], REQUESTS, OPERATIONS)
    assert "1 of 2 cells passed." in text
    assert text.count("\n| x86_64 |") == 2


def test_redis_benchmark_s_results_are_told_from_its_progress_lines():
    out = ("SET: rps=1200.0 (overall: 1100.0) avg_msec=3.1\r"
           "SET: 1234.57 requests per second, p50=3.111 msec\n"
           "GET: 1500.00 requests per second, p50=2.000 msec\n"
           "MSET (10 keys): rps=800.0 (overall: 700.0)\r"
           "MSET (10 keys): 900.00 requests per second, p50=4.000 msec\n"
           "LPOP: rps=10.0 (overall: 10.0)\r")
    assert redis_run.finished_tests(out) == {"set", "get", "mset"}


def test_a_run_of_some_cells_keeps_the_others_of_the_same_settings(tmp_path):
    settings = {"requests": REQUESTS, "operations": OPERATIONS}
    first = passing_cell()
    second = {**passing_cell(), "cell": {"arch": "arm-imx6", "lock": "none", "cpus": 1, "layout": "processes"}}
    matrix.write(tmp_path, {"x86_64-fine-2cpu-percore": first}, settings)
    kept = matrix.earlier(tmp_path, settings)
    assert kept == {"x86_64-fine-2cpu-percore": first}
    ordered = matrix.write(tmp_path, {**kept, "arm-imx6-none-1cpu-processes": second}, settings)
    assert ordered == [first, second]
    assert "2 of 2 cells passed." in (tmp_path / "matrix.md").read_text()
    assert matrix.earlier(tmp_path, {**settings, "requests": REQUESTS + 1}) == {}
    assert matrix.earlier(tmp_path / "none", settings) == {}
