"""tools/redis_suite.py: Redis's own suite against a server, and the comparison with Debian's.

The kernel-hosted runs are in tests/test_posix_redis.py; these check the tool itself, on the
host, against Debian's redis-server.
"""
from __future__ import annotations

import subprocess

import pytest

import redis_suite

MISSING = redis_suite.missing_parts()
needs_suite = pytest.mark.skipif(MISSING is not None, reason=str(MISSING))


def test_harness_ports_stay_below_the_ephemeral_ports():
    """The harness's ports (each also tried 10,000 above) never reach the host's ephemeral range,
    where a client connection's port can take them: a unit then ran no test at all."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        ephemeral = int(f.read().split()[0])
    base = redis_suite.harness_base_port()
    assert 1024 < base and base + redis_suite.HARNESS_PORT_STRIDE + redis_suite.HARNESS_PORTS <= ephemeral


def test_parse_reads_every_verdict_through_colours():
    out = ("[\x1b[0;32;49mok\x1b[0m]: SET and GET an item (1 ms)\n"
           "[\x1b[0;31;49merr\x1b[0m]: EXPIRE - set timeouts multiple times in tests/unit/expire.tcl\n"
           "[\x1b[0;36;49mignore\x1b[0m]: test bool parsing: Tag: needs:debug denied\n"
           "[\x1b[0;33;49mskip\x1b[0m]: SETRANGE with huge offset\n"
           "[\x1b[0;31;49mexception\x1b[0m]: Executing test client: I/O error reading reply\n"
           "[1/1 \x1b[0;33;49mdone\x1b[0m]: unit/protocol (0 seconds)\n")
    v = redis_suite.parse(out)
    assert v == {"ok": ["SET and GET an item"], "err": ["EXPIRE - set timeouts multiple times"],
                 "skip": ["SETRANGE with huge offset"],
                 "exception": ["Executing test client: I/O error reading reply"]}


def test_compare_counts_only_what_the_baseline_passed():
    baseline = [{"unit": "expire", "ok": ["a", "b", "c", "d"]}, {"unit": "quit", "ok": ["q"]}]
    mine = [{"unit": "expire", "ok": ["a", "c", "extra"]}, {"unit": "quit", "ok": []}]
    c = redis_suite.compare(mine, baseline)
    assert (c["ok"], c["baseline_ok"]) == (2, 5)
    assert c["ratio"] == pytest.approx(0.4)
    assert c["units"][0]["missing"] == ["b", "d"]
    assert c["units"][1] == {"unit": "quit", "baseline_ok": 1, "ok": 0, "missing": ["q"], "how": {"q": "not run"}}


def test_compare_counts_every_run_of_a_repeated_name():
    baseline = [{"unit": "type/zset", "ok": ["ZADD - listpack", "same", "same", "same"]}]
    mine = [{"unit": "type/zset", "ok": ["ZADD - listpack", "same", "same"], "err": [], "skip": ["same"]}]
    c = redis_suite.compare(mine, baseline)
    assert (c["ok"], c["baseline_ok"]) == (3, 4)
    assert c["units"][0]["how"] == {"same": "skipped"}


class FakeConsole:
    def __init__(self, records):
        self.records = records


def test_kernel_health_counts_fault_records_and_fails_without_the_check():
    """A run is healthy only with the invariant checker's OK and no panic or fault record; a guest
    with no control port cannot be checked, so it is not healthy."""
    quiet = FakeConsole([{"redis": {"ports": [6379]}}, {"test": "x"}])
    health = redis_suite.kernel_health(quiet, "127.0.0.1")
    assert health == {"check": "no control port",
                      "faults": {"panic": 0, "posix_fault": 0, "redis_instance_end": 0}}
    assert not redis_suite.healthy(health)
    assert redis_suite.healthy({"check": "OK check", "faults": {"panic": 0, "posix_fault": 0}})
    assert not redis_suite.healthy({"check": "OK check", "faults": {"panic": 0, "posix_fault": 1}})
    assert not redis_suite.healthy({"check": "invariant failed", "faults": {"panic": 0}})
    faulted = FakeConsole([{"posix_fault": {"process": 0}}, {"panic": {"core": 1}}])
    assert redis_suite.kernel_health(faulted, "127.0.0.1")["faults"] == \
        {"panic": 1, "posix_fault": 1, "redis_instance_end": 0}


def test_markdown_states_the_kernel_health_of_each_configuration():
    baseline = [{"unit": "quit", "ok": ["q"]}]
    row = redis_suite.compare([{"unit": "quit", "ok": ["q"]}], baseline)
    table = {"x86_64-bkl-4": row | {"health": {"check": "OK check", "faults": {"panic": 0}}},
             "arm-imx6-bkl-4": row | {"health": {"check": "OK check", "faults": {"panic": 2}}}}
    text = redis_suite.markdown(table, baseline)
    assert "- x86_64-bkl-4: invariant check 'OK check'; panic, posix_fault or redis_instance_end records: none" in text
    assert "- arm-imx6-bkl-4: invariant check 'OK check'; panic, posix_fault or redis_instance_end records: 2 panic" in text


@needs_suite
def test_debian_server_passes_the_protocol_unit_and_a_unit_cannot_leave_settings_behind():
    port = redis_suite.free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                               "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if redis_suite.redis_cli("127.0.0.1", port, "PING") == ["PONG"]:
                break
            subprocess.run(["sleep", "0.1"])
        config = redis_suite.server_config("127.0.0.1", port)
        # type/list leaves this at 10 GB, after which unit/protocol waits for ever
        redis_suite.redis_cli("127.0.0.1", port, "CONFIG", "SET", "proto-max-bulk-len", "10000000000")
        redis_suite.redis_cli("127.0.0.1", port, "SET", "left", "behind")
        redis_suite.restore("127.0.0.1", port, config)
        assert redis_suite.server_config("127.0.0.1", port)["proto-max-bulk-len"] == \
            config["proto-max-bulk-len"]
        assert redis_suite.redis_cli("127.0.0.1", port, "DBSIZE") == ["0"]
        [r] = redis_suite.run_units(["protocol"], "127.0.0.1", port, say=lambda *a, **k: None)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert not r["err"] and not r["exception"], r["tail"]
    assert len(r["ok"]) >= 15     # 19 with Debian's 7.0.15 and the flags of docs/posix.md
