"""The real Redis (Debian's 7.0.15 source, built against musl and the POSIX personality,
docs/posix.md) served by the kernel: `app=redis`, the papers' per-core layout, one
Redis process per core but the NIC driver's.

Each configuration boots once (a module fixture) and is driven from the host with Debian's own
clients: INFO, redis-benchmark, Redis's own test suite (tools/redis_suite.py) against the
verdicts of Debian's redis-server on this host, malformed and oversized requests, floods of
abrupt disconnects, a client port reused while the guest holds the old connection's TIME-WAIT,
memory filled to Redis's own -OOM and given back, and a process that faults
(DEBUG ASSERT) while the others serve.  `make redis-suite` runs the whole suite table (docs/posix.md).
"""
from __future__ import annotations

import socket
import subprocess
import time

import pytest

import redis_suite
from conftest import CLIENT_TIMEOUT, needs_arm_tools, needs_real_redis, redis_cli
from redis_guest import HEAP_MB, Server, flood, info_section, redis_program, resp_command, resp_reply

pytestmark = needs_real_redis

# (arch, lock, cpus): both ports on 4 CPUs, three Redis processes each.
CONFIGS = [pytest.param(("x86_64", "bkl", 4), id="x86_64-bkl-4cpu"),
           pytest.param(("arm-imx6", "bkl", 4), id="arm-imx6-bkl-4cpu", marks=needs_arm_tools)]
# The units make test runs; `make redis-suite` runs all of tools/redis_suite.UNITS.
SUITE_UNITS = ("type/string", "expire", "protocol")
PASS_SHARE = 0.95   # of the tests Debian's redis-server passes with the same flags
# lwIP keeps a connection it closed first in TIME-WAIT for 2 MSL (TCP_MSL, 60 s, lwIP's
# tcp_priv.h).  A reply on a reused port within one MSL cannot be that TIME-WAIT's end, even on a
# guest clock running at twice the host's; within it, a guest that serves at all answers a PING.
LWIP_MSL = 60.0

@pytest.fixture(scope="module", params=CONFIGS)
def server(request):
    arch, lock, cpus = request.param
    s = Server(arch, lock, cpus, posix_program=redis_program(arch),
               cmdline=f"app=redis heap_mb={HEAP_MB} redis_debug=1")
    s.arch = arch
    try:
        s.read_until_serving()
        yield s
    finally:
        s.stop()


@pytest.fixture(scope="module")
def baseline():
    why = redis_suite.missing_parts()
    if why:
        pytest.skip(why)
    return redis_suite.baseline_run(SUITE_UNITS, say=lambda *a, **k: None)


def test_every_instance_is_redis_7_0(server):
    assert len(server.ports) == 3
    for port in server.ports:
        server_info = info_section(port, "server")
        assert server_info["redis_version"].startswith("7.0."), server_info
        assert server_info["multiplexing_api"] == "epoll"
        assert redis_cli(port, "CONFIG", "GET", "save") == "save"     # no save points: ""

        assert redis_cli(port, "CONFIG", "GET", "appendonly").splitlines() == ["appendonly", "no"]


def test_redis_benchmark_on_every_instance_at_once_without_errors(server):
    tests = "set,get,incr,lpush,lpop,sadd,hset,mset"
    procs = [subprocess.Popen(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-q",
                               "-n", "300", "-c", "4", "-t", tests],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for port in server.ports]
    for port, proc in zip(server.ports, procs):
        out, err = proc.communicate(timeout=CLIENT_TIMEOUT)
        out = out.replace("\r", "\n")
        assert proc.returncode == 0, f"port {port}: exit {proc.returncode}\n{out}\n{err}"
        assert "rror" not in out + err, f"port {port}: {out}{err}"
        done = {line.split(":")[0].strip().split(" ")[0] for line in out.splitlines()
                if "requests per second" in line}
        assert done == {"SET", "GET", "INCR", "LPUSH", "LPOP", "SADD", "HSET", "MSET"}, out


def test_redis_own_suite_passes_what_debian_redis_passes(server, baseline):
    results = redis_suite.run_units(SUITE_UNITS, "127.0.0.1", server.ports[0], say=lambda *a, **k: None)
    stopped = {r["unit"]: (r["status"], r["exception"], r["tail"]) for r in results if r["exception"]}
    assert not stopped, f"units that stopped on an exception (status, exceptions, output's end): {stopped}"
    c = redis_suite.compare(results, baseline)
    assert c["baseline_ok"] > 100, c
    missing = {u["unit"]: u["missing"] for u in c["units"] if u["missing"]}
    tails = {r["unit"]: r["tail"] for r in results if missing.get(r["unit"])}
    assert c["ratio"] >= PASS_SHARE, (f"{c['ok']} of {c['baseline_ok']} passed; missing: {missing}; "
                                      f"the units' output ended: {tails}")


def test_malformed_and_oversized_requests_get_redis_errors(server):
    port = server.ports[1]
    assert resp_reply(port, b"*2\r\n$3\r\nGET\r\n:x\r\n").startswith(b"-ERR Protocol error")
    assert resp_reply(port, b"*1\r\n$-7\r\n").startswith(b"-ERR Protocol error")
    assert resp_reply(port, b"x" * (70 * 1024)).startswith(b"-ERR Protocol error: too big inline request")
    assert redis_cli(port, "PING") == "PONG"


def test_floods_of_abrupt_disconnects_leave_every_instance_serving(server):
    for port in server.ports:
        flood(port, 40)
    for port in server.ports:
        assert redis_cli(port, "SET", "after-flood", "yes") == "OK"
        assert redis_cli(port, "GET", "after-flood") == "yes"


def connect_from(local_port: int, port: int) -> socket.socket:
    """A connection to 127.0.0.1:port from 127.0.0.1:local_port (0: a port the kernel picks)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.settimeout(CLIENT_TIMEOUT)
    s.bind(("127.0.0.1", local_port))
    s.connect(("127.0.0.1", port))
    return s


def peer_port_redis_sees(s: socket.socket, f) -> int:
    """The client port Redis gives for this connection (CLIENT INFO's addr)."""
    s.sendall(resp_command("CLIENT", "INFO"))
    header = f.readline()
    assert header.startswith(b"$"), header
    fields = dict(word.split("=", 1) for word in f.read(int(header[1:]) + 2).decode().split()
                  if "=" in word)
    return int(fields["addr"].rsplit(":", 1)[1])


def test_a_reused_client_port_is_served_while_the_guest_holds_its_time_wait(server):
    """QEMU's user network opens each guest connection from the host client's own port, so a
    client that reuses the port of a connection Redis closed first (QUIT) reaches a guest that
    holds that connection in TIME-WAIT.  lwIP alone answers its SYN with the old connection's
    ACK until the TIME-WAIT ends, 2 MSL later; the guest's IPv4 input hook
    (userland/net/tcp_timewait_reuse.c, docs/network.md "TIME-WAIT and reused ports") frees the
    TIME-WAIT connection for a SYN beyond it, and the new connection is served at once."""
    port = server.ports[1]
    with connect_from(0, port) as first, first.makefile("rb") as f:
        local = first.getsockname()[1]
        assert peer_port_redis_sees(first, f) == local, \
            "the guest does not see the host client's port, so no guest connection is reused"
        first.sendall(resp_command("QUIT"))
        assert f.readline() == b"+OK\r\n"
        assert f.read() == b"", "Redis did not close the connection after QUIT"
    # A round trip on another connection, after the close, lets the guest take the close in:
    # the old connection is in TIME-WAIT before the port comes back.
    assert redis_cli(port, "PING") == "PONG"

    started = time.monotonic()
    with connect_from(local, port) as second, second.makefile("rb") as f:
        second.settimeout(LWIP_MSL)
        second.sendall(resp_command("PING"))
        try:
            reply = f.readline()
        except OSError as e:    # a timeout
            reply = e
        waited = time.monotonic() - started
        assert reply == b"+PONG\r\n", (f"port {local} reused: {reply!r} after {waited:.1f} s; "
                                        f"+PONG expected within one MSL ({LWIP_MSL:.0f} s)")
        second.settimeout(CLIENT_TIMEOUT)
        assert peer_port_redis_sees(second, f) == local
    print(f"port {local} reused while the guest held its TIME-WAIT: PONG after {waited:.2f} s")


def fill_until_oom(port: int, size: int) -> int:
    """SET values of `size` bytes under fresh keys until Redis answers -OOM; how many it took."""
    value = b"v" * size
    stored = 0
    with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as s:
        f = s.makefile("rb")
        while True:
            batch = 50
            for i in range(batch):
                key = b"k%d" % (stored + i)
                s.sendall(b"*3\r\n$3\r\nSET\r\n$%d\r\n%s\r\n$%d\r\n%s\r\n" % (len(key), key, size, value))
            replies = [f.readline() for _ in range(batch)]
            for r in replies:
                if r.startswith(b"-OOM"):
                    return stored
                assert r == b"+OK\r\n", r
                stored += 1


def test_memory_freed_by_large_values_serves_small_ones_and_oom_is_redis_own(server):
    port = server.ports[2]
    assert redis_cli(port, "FLUSHALL") == "OK"
    small_before = fill_until_oom(port, 1000)
    assert small_before > 1000
    assert redis_cli(port, "FLUSHALL") == "OK"
    large = fill_until_oom(port, 1 << 20)
    assert large >= 4
    assert redis_cli(port, "FLUSHALL") == "OK"
    small_after = fill_until_oom(port, 1000)
    assert small_after >= small_before * 0.98, (small_before, large, small_after)
    assert redis_cli(port, "FLUSHALL") == "OK"
    assert redis_cli(port, "PING") == "PONG"


def test_a_faulting_instance_stops_alone_and_the_kernel_stays_whole(server):
    """DEBUG ASSERT makes Redis fail an assertion and abort(); musl's abort ends in an instruction
    user mode may not run (x86_64 hlt, arm-imx6 an undefined one), since no signal is delivered.
    The fault goes to the root task's fault server, which stops that process alone."""
    victim, *others = server.ports
    with socket.create_connection(("127.0.0.1", victim), timeout=CLIENT_TIMEOUT) as s:
        s.sendall(b"*2\r\n$5\r\nDEBUG\r\n$6\r\nASSERT\r\n")
        fault = server.read_until(lambda r: "posix_fault" in r, CLIENT_TIMEOUT, "posix_fault record")
    end = server.read_until(lambda r: "redis_instance_end" in r, CLIENT_TIMEOUT, "instance end record")
    assert fault["posix_fault"]["type"] == "user_exception", fault
    assert end["redis_instance_end"]["port"] == 6379
    assert end["redis_instance_end"]["status"] == fault["posix_fault"]["status"] > 128
    assert end["redis_instance_end"]["invariants_hold"] is True
    for port in others:
        assert redis_cli(port, "SET", "still", "serving") == "OK"
        assert redis_cli(port, "GET", "still") == "serving"
