"""The papers' one-core layout with the real Redis (`app=redis layout=processes`,
docs/network.md): three processes on core 0, the NIC driver (the root task), the lwIP stack in a
process of its own (userland/net/socket_server.c) and Redis 7.0 as a POSIX process whose sockets
the stack serves over the socket link (userland/net/socket_link.h).

Each configuration boots once (a module fixture) and is driven from the host with Debian's own
clients: INFO, SET/GET, redis-benchmark, a 1 MB value each way, connections reset in the middle
of a reply, an oversized inline request, a client that never reads while another is served, the
kernel invariant checker through the NIC driver's control port, and last a Redis that faults
(DEBUG ASSERT): the fault server stops it alone, and the driver still answers.
"""
from __future__ import annotations

import os
import socket
import struct
import subprocess
import time

import pytest

from conftest import CLIENT_TIMEOUT, needs_arm_tools, needs_real_redis, redis_cli
from records import parse_text
from redis_guest import Server, ask_control, flood, info_section, redis_program, resp_reply

pytestmark = needs_real_redis

# (arch, lock, cpus): all three processes are on core 0 whatever the number of cores.
CONFIGS = [pytest.param(("x86_64", "bkl", 1), id="x86_64-bkl-1cpu"),
           pytest.param(("arm-imx6", "bkl", 1), id="arm-imx6-bkl-1cpu", marks=needs_arm_tools),
           pytest.param(("x86_64", "fine", 4), id="x86_64-fine-4cpu")]
MB = 1 << 20


@pytest.fixture(scope="module", params=CONFIGS)
def guest(request):
    arch, lock, cpus = request.param
    s = Server(arch, lock, cpus, posix_program=redis_program(arch),
               cmdline="app=redis layout=processes redis_debug=1")
    try:
        s.read_until_serving()
        s.record = next(r["redis"] for r in s.records("redis"))
        s.control = s.control_port()
        s.port = s.ports[0]
        yield s
    finally:
        s.stop()


def command(*args: bytes | str) -> bytes:
    """One RESP request."""
    words = [a if isinstance(a, bytes) else a.encode() for a in args]
    return b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w) for w in words)


def read_bulk(f) -> bytes:
    """One bulk-string reply from the file f."""
    head = f.readline()
    assert head.startswith(b"$"), head
    n = int(head[1:])
    body = f.read(n + 2)
    assert len(body) == n + 2 and body.endswith(b"\r\n"), (n, len(body))
    return body[:-2]


def wait_for_clients(port: int, count: int) -> None:
    """Wait until Redis counts `count` connected clients (the asking one included): a client's
    close reaches Redis a moment after the client has its reply."""
    deadline = time.monotonic() + CLIENT_TIMEOUT
    while (clients := info_section(port, "clients")["connected_clients"]) != str(count):
        assert time.monotonic() < deadline, f"{clients} connected clients, not {count}"
        time.sleep(0.5)


def test_three_processes_on_core_0_serve_redis_7_0(guest):
    record = guest.record
    assert record["layout"] == "processes", record
    assert record["ports"] == [6379] and record["instances"] == [{"port": 6379, "core": 0}], record
    assert record["driver_core"] == 0
    assert "lwIP and Redis in processes of their own" in guest.log
    server_info = info_section(guest.port, "server")
    assert server_info["redis_version"].startswith("7.0."), server_info
    assert server_info["multiplexing_api"] == "epoll"
    assert redis_cli(guest.port, "SET", "three", "processes") == "OK"
    assert redis_cli(guest.port, "GET", "three") == "processes"


def test_redis_benchmark_runs_without_errors(guest):
    tests = "set,get,incr,lpush,lpop,sadd,hset,mset"
    assert redis_cli(guest.port, "CONFIG", "RESETSTAT") == "OK"
    proc = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(guest.port), "-q",
                           "-n", "2000", "-t", tests], capture_output=True, text=True,
                          timeout=CLIENT_TIMEOUT)
    out = proc.stdout.replace("\r", "\n")
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out}\n{proc.stderr}"
    assert "rror" not in out + proc.stderr, out + proc.stderr
    done = {line.split(":")[0].strip().split(" ")[0] for line in out.splitlines()
            if "requests per second" in line}
    assert done == {"SET", "GET", "INCR", "LPUSH", "LPOP", "SADD", "HSET", "MSET"}, out
    stats = info_section(guest.port, "stats")
    assert stats["rejected_connections"] == "0", stats
    assert stats["total_error_replies"] == "0", stats
    assert info_section(guest.port, "errorstats") == {}


def test_a_1mb_value_goes_both_ways_byte_for_byte(guest):
    value = os.urandom(MB)
    with socket.create_connection(("127.0.0.1", guest.port), timeout=CLIENT_TIMEOUT) as s, \
            s.makefile("rb") as f:
        s.sendall(command("SET", "big", value))
        assert f.readline() == b"+OK\r\n"
        s.sendall(command("GET", "big"))
        assert read_bulk(f) == value
    assert redis_cli(guest.port, "STRLEN", "big") == str(MB)


def test_connections_reset_mid_reply_leave_the_server_serving(guest):
    assert redis_cli(guest.port, "SETRANGE", "big", str(MB - 1), "x") == str(MB)
    for _ in range(5):
        s = socket.create_connection(("127.0.0.1", guest.port), timeout=CLIENT_TIMEOUT)
        s.sendall(command("GET", "big"))
        assert s.recv(1000)                 # the reply has begun
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        s.close()                           # a reset, with most of the reply queued
    flood(guest.port, 40)
    assert redis_cli(guest.port, "SET", "after-resets", "yes") == "OK"
    assert redis_cli(guest.port, "GET", "after-resets") == "yes"
    wait_for_clients(guest.port, 1)     # every reset connection was let go


def test_oversized_and_malformed_requests_get_redis_errors(guest):
    assert resp_reply(guest.port, b"x" * (70 * 1024)).startswith(
        b"-ERR Protocol error: too big inline request")
    assert resp_reply(guest.port, b"*2\r\n$3\r\nGET\r\n:x\r\n").startswith(b"-ERR Protocol error")
    assert redis_cli(guest.port, "PING") == "PONG"


def test_a_client_that_never_reads_does_not_stop_the_others(guest):
    value = os.urandom(MB)
    assert redis_cli(guest.port, "FLUSHALL") == "OK"
    with socket.create_connection(("127.0.0.1", guest.port), timeout=CLIENT_TIMEOUT) as s, \
            s.makefile("rb") as f:
        s.sendall(command("SET", "big", value))
        assert f.readline() == b"+OK\r\n"
    with socket.create_connection(("127.0.0.1", guest.port), timeout=CLIENT_TIMEOUT) as slow:
        slow.sendall(command("GET", "big") * 4)      # 4 MB of replies, not read for now
        for i in range(20):
            assert redis_cli(guest.port, "SET", f"while-{i}", str(i)) == "OK"
            assert redis_cli(guest.port, "GET", f"while-{i}") == str(i)
        wait_for_clients(guest.port, 2)  # the reader and the asking one
        with slow.makefile("rb") as f:
            for _ in range(4):
                assert read_bulk(f) == value
    assert redis_cli(guest.port, "DBSIZE") == "21"


def test_redis_timers_run_on_the_ticks_the_stack_forwards(guest):
    """Redis's own timers wait in epoll_wait's deadline, which only a wake-up of the process can
    end: the stack forwards the driver's timer ticks.  A blocking pop times out, and serverCron's
    active expiry removes a key nobody touches."""
    with socket.create_connection(("127.0.0.1", guest.port), timeout=CLIENT_TIMEOUT) as s, \
            s.makefile("rb") as f:
        s.sendall(command("SELECT", "9"))
        assert f.readline() == b"+OK\r\n"
        s.sendall(command("BLPOP", "never-pushed", "0.2"))
        assert f.readline() == b"*-1\r\n"
        s.sendall(command("SET", "short-lived", "v", "PX", "100"))
        assert f.readline() == b"+OK\r\n"
        deadline = time.monotonic() + CLIENT_TIMEOUT
        while True:
            s.sendall(command("DBSIZE"))    # counts keys that expired but were not yet removed
            if f.readline() == b":0\r\n":
                break
            assert time.monotonic() < deadline, "the expired key was never removed"
            time.sleep(0.2)


def test_the_kernel_invariants_hold_after_the_load(guest):
    assert guest.control is not None, guest.log[-3000:]
    assert ask_control(guest.control, b"check", guest.log) == "OK check"
    assert "posix_fault" not in guest.log and "panic" not in guest.log


def test_a_faulting_redis_stops_alone_and_the_driver_still_answers(guest):
    """Runs last: it ends the Redis process.  Redis's failed assertion ends in an instruction
    user mode may not run; the root task's fault server stops that process and nothing else."""
    with socket.create_connection(("127.0.0.1", guest.port), timeout=CLIENT_TIMEOUT) as s:
        s.sendall(command("DEBUG", "ASSERT"))
        fault = guest.read_until(lambda r: "posix_fault" in r, CLIENT_TIMEOUT, "posix_fault record")
    end = guest.read_until(lambda r: "redis_instance_end" in r, CLIENT_TIMEOUT, "instance end record")
    assert fault["posix_fault"]["type"] == "user_exception", fault
    assert fault["posix_fault"]["core"] == 0, fault
    assert end["redis_instance_end"]["port"] == 6379
    assert end["redis_instance_end"]["status"] == fault["posix_fault"]["status"] > 128
    assert end["redis_instance_end"]["invariants_hold"] is True
    assert ask_control(guest.control, b"check", guest.log) == "OK check"
    assert "panic" not in guest.log


@pytest.mark.parametrize("cmdline,said", [
    ("app=redis layout=single", "unknown layout 'single'; known: percore processes"),
    ("app=redis layout=bogus", "unknown layout 'bogus'; known: percore processes"),
])
def test_a_layout_the_app_does_not_have_is_refused(cmdline, said):
    """The app says what it does not serve and ends with status 2, serving nothing."""
    s = Server("x86_64", "bkl", 1, posix_program=redis_program("x86_64"), cmdline=cmdline)
    try:
        s.proc.wait(timeout=CLIENT_TIMEOUT * 4)
        assert s.proc.stdout is not None
        s.log += s.proc.stdout.read().decode(errors="replace")
    finally:
        s.stop()
    assert f"redis: {said}" in s.log, s.log[-3000:]
    done = [r for r in parse_text(s.log) if "done" in r]
    assert done and done[-1]["status"] == 2, s.log[-3000:]
    assert not [r for r in parse_text(s.log) if "redis" in r]
