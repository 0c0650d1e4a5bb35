"""tools/ycsb.py and the YCSB binding (bench/ycsb/), against Debian's redis-server on the host.

This checks the client half of the Redis/YCSB benchmark on its own: YCSB core and Jedis from
Maven Central, our binding built by Maven, workload A run to completion with every operation
answered, and the records really stored.  Only 127.0.0.1 is used.
"""
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import ycsb  # noqa: E402
from conftest import free_port, redis_cli  # noqa: E402


@pytest.fixture
def redis_server(tmp_path):
    port = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=5).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_workload_a_completes_against_redis_server(redis_server):
    result = ycsb.workload_a([redis_server], records=1000, operations=2000)
    load, run = result["load"], result["run"]
    assert load["errors"] == 0 and run["errors"] == 0, result
    assert load["operations"] == {"INSERT": 1000}
    assert set(run["operations"]) == {"READ", "UPDATE"}
    assert sum(run["operations"].values()) == 2000
    assert run["throughput"] > 0
    # 1000 records of YCSB's 10 fields, plus the binding's key index.
    assert redis_cli(redis_server, "DBSIZE") == "1001"
    assert redis_cli(redis_server, "ZCARD", "ycsb:index:usertable") == "1000"
    first = redis_cli(redis_server, "ZRANGE", "ycsb:index:usertable", "0", "0")
    assert redis_cli(redis_server, "HLEN", first) == "10"


def test_two_servers_get_a_client_each(redis_server, tmp_path):
    port2 = free_port()
    proc = subprocess.Popen(["redis-server", "--port", str(port2), "--bind", "127.0.0.1",
                             "--save", "", "--appendonly", "no", "--dir", str(tmp_path)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        result = ycsb.workload_a([redis_server, port2], records=200, operations=400)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    run = result["run"]
    assert [c["port"] for c in run["clients"]] == [redis_server, port2]
    assert all(sum(c["operations"].values()) == 400 for c in run["clients"])
    assert run["errors"] == 0 and sum(run["operations"].values()) == 800


def test_unreachable_server_fails_the_phase():
    ycsb.build()
    with pytest.raises(ycsb.YcsbError):
        ycsb.run_phase("load", [free_port()], records=10, operations=10, timeout=300)


def test_parse_output_counts_every_return_that_is_not_ok():
    text = """[OVERALL], RunTime(ms), 2000
[OVERALL], Throughput(ops/sec), 1000.0
[CLEANUP], Operations, 1
[READ], Operations, 600
[READ], MaxLatency(us), 4000
[READ], Return=OK, 590
[READ], Return=NOT_FOUND, 10
[READ-FAILED], Operations, 10
[UPDATE], Operations, 400
[UPDATE], MaxLatency(us), 6500
[UPDATE], Return=OK, 397
[UPDATE], Return=ERROR, 3
"""
    r = ycsb.parse_output(text)
    assert r["throughput"] == 1000.0 and r["runtime_ms"] == 2000.0
    assert r["operations"] == {"READ": 600, "UPDATE": 400}
    assert r["returns"]["UPDATE"] == {"OK": 397, "ERROR": 3}
    assert r["errors"] == 13
    assert r["max_latency_us"] == 6500


def test_read_timeout_becomes_the_bindings_redis_timeout():
    default = ycsb.client_argv("run", 6379, 10, 10, 1)
    assert not any(a.startswith("redis.timeout=") for a in default)
    assert "redis.timeout=300000" in ycsb.client_argv("run", 6379, 10, 10, 1, read_timeout=300)
