"""The Redis benchmark's server in the guest, driven by real clients from the host.

Each configuration boots the kernel with a NIC on QEMU user networking (tools/qemu_run.py --net)
and the app `redis`: the e1000 driver, lwIP and the Redis-protocol server
(userland/net/redis_app.c, docs/network.md).  The guest prints the ports it serves in a `redis`
record; qemu_run's `net` record maps them to host ports on 127.0.0.1.  Against every served port:
redis-cli SET/GET, redis-benchmark and YCSB workload A on all ports at once, each with 0 errors.
The per-core layout (layout=percore, three instances on 4 CPUs) gets the same tests on both
ports, and apart, on 1 and 4 CPUs, SET/GET on each instance's own port with keys kept apart; the one-core three-process layout
(layout=processes) is tested apart too.
The in-guest lwIP tests (userland/tests/test_lwip.c) run here too.

Everything skips, saying so, only when lwIP's source could not be fetched into .deps/lwip.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from conftest import CLIENT_TIMEOUT, LWIP_PRESENT, REPO, assert_guest_test_passed, config_id, redis_cli
from redis_guest import Resp, Server, flood, info, resp_command

sys.path.insert(0, str(REPO / "tools"))
import ycsb  # noqa: E402

pytestmark = pytest.mark.skipif(
    not LWIP_PRESENT,
    reason="lwIP's source could not be fetched into .deps/lwip (tools/ensure_deps.sh says why)")

# (arch, lock, cpus, layout): every lock on 1 and 4 cores, on x86_64 (rtm runs its lock fallback
# where there is no TSX) and on arm-imx6 (the board's ENET), in the default layout (one instance);
# and the papers' per-core layout on 4 cores of both ports (three instances, all driven at once).
CONFIGS = [("x86_64", "bkl", 1, "single"), ("x86_64", "bkl", 4, "single"),
           ("x86_64", "fine", 1, "single"), ("x86_64", "fine", 4, "single"),
           ("x86_64", "rtm", 1, "single"), ("x86_64", "rtm", 4, "single"),
           ("arm-imx6", "bkl", 1, "single"), ("arm-imx6", "bkl", 4, "single"),
           ("arm-imx6", "fine", 1, "single"), ("arm-imx6", "fine", 4, "single"),
           ("x86_64", "fine", 4, "percore"), ("arm-imx6", "fine", 4, "percore")]
# CLIENT_TIMEOUT (conftest) is how long a client waits for a connection or a reply, YCSB's Jedis
# included (its own default is 10 s): only a bound on waiting.  A frame QEMU's e1000 drops while
# the guest's vCPU is not running costs a slirp retransmission seconds later, and more if that
# one is dropped too (docs/network.md).
LWIP_TESTS = ["lwip_tcp_echo_backpressure", "lwip_tcp_protocol_close",
              "lwip_tcp_abrupt_disconnect", "lwip_tcp_open_waits_for_memory",
              "lwip_tcp_idle_connection_evicted", "lwip_tcp_connection_flood"]


def server_id(config: tuple[str, str, int, str]) -> str:
    """An (arch, lock, cpus, layout) configuration as a pytest id: "arm-imx6-fine-4cpu",
    "x86_64-fine-4cpu-percore"."""
    arch, lock, cpus, layout = config
    return f"{arch}-{config_id((lock, cpus))}" + ("" if layout == "single" else f"-{layout}")


@pytest.fixture(scope="module", params=CONFIGS, ids=server_id)
def server(request):
    arch, lock, cpus, layout = request.param
    s = Server(arch, lock, cpus, cmdline=f"app=redis layout={layout}")
    try:
        s.read_until_serving()
        yield s
    finally:
        s.stop()


def test_set_get_on_every_port(server):
    assert server.ports, server.log
    for i, port in enumerate(server.ports):
        assert redis_cli(port, "PING") == "PONG"
        assert redis_cli(port, "SET", "k", f"v{i}") == "OK"
        assert redis_cli(port, "GET", "k") == f"v{i}"
        assert redis_cli(port, "GET", "no-such-key") == ""


def test_info_counts_each_connection_once(server):
    """INFO's `# Stats`, the TCP glue's counters: each connection is counted once when accepted,
    and a quiet server refuses, evicts and resets none."""
    port = server.ports[0]
    before = info(port)
    for _ in range(5):
        assert redis_cli(port, "PING") == "PONG"
    after = info(port)
    received = int(after["total_connections_received"]) - int(before["total_connections_received"])
    assert received == 6, (before, after)      # the five PINGs' connections and the second INFO's
    for name in ("rejected_connections", "connections_evicted", "connections_reset_by_server"):
        assert after[name] == before[name], (name, before, after)


def test_a_value_of_the_largest_argument_size_is_stored_whole(server):
    """A SET of a 1 MiB value (limits.h's largest argument; one byte more is refused, which
    test_redis_server.py checks) is stored and read back byte for byte: the guest's allocator
    gives blocks of up to 2 MiB."""
    import random
    port = server.ports[0]
    value = random.Random(7).randbytes(1024 * 1024)
    c = Resp(port)
    try:
        assert c.call("SET", "largest", value) == b"OK"
        assert c.call("GET", "largest") == value
        assert c.call("DEL", "largest") == 1
    finally:
        c.close()


def test_redis_benchmark_on_all_instances_at_once_without_errors(server):
    procs = [subprocess.Popen(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-q",
                               "-n", "500", "-t", "set,get"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for port in server.ports]
    results = []
    for proc in procs:
        try:
            out, err = proc.communicate(timeout=CLIENT_TIMEOUT)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise
        results.append((proc.returncode, out.replace("\r", "\n"), err))
    for port, (returncode, out, err) in zip(server.ports, results):
        assert returncode == 0, f"port {port}: exit {returncode}\n{out}\n{err}"
        assert "Error" not in out + err, f"port {port}: {out}{err}"
        summary = [line for line in out.splitlines() if "requests per second" in line]
        assert any(line.lstrip().startswith("SET:") for line in summary), out
        assert any(line.lstrip().startswith("GET:") for line in summary), out
        # Without -r, redis-benchmark's SET stores its 3-byte value (-d 3) under this one key.
        assert len(redis_cli(port, "GET", "key:__rand_int__")) == 3


def test_floods_and_abrupt_disconnects_leave_the_server_serving(server):
    """More connections than the server has slots, all reset: nothing may leak.

    The guest has 128 pcbs and slots; if a reset connection were never freed, the rounds after
    the first would find none and redis-cli would never be served.
    """
    for port in server.ports:
        for round_ in range(3):
            flood(port, 120)
            assert redis_cli(port, "SET", "after-flood", str(round_)) == "OK"
            assert redis_cli(port, "GET", "after-flood") == str(round_)
    assert server.proc.poll() is None, server.log


def test_ycsb_workload_a_on_all_ports_at_once(server):
    records, operations = 200, 400
    for port in server.ports:
        assert redis_cli(port, "FLUSHALL") == "OK"
    result = ycsb.workload_a(server.ports, records=records, operations=operations,
                             read_timeout=CLIENT_TIMEOUT)
    load, run = result["load"], result["run"]
    assert load["errors"] == 0 and run["errors"] == 0, result
    assert load["operations"] == {"INSERT": records * len(server.ports)}
    assert sum(run["operations"].values()) == operations * len(server.ports)
    for port in server.ports:
        # Every record, plus the binding's key index (bench/ycsb).
        assert redis_cli(port, "DBSIZE") == str(records + 1)


def info_field(port: int, name: str) -> str:
    for line in redis_cli(port, "INFO").splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise AssertionError(f"INFO has no {name}")


def connect_from(port: int, local_port: int) -> socket.socket:
    """A connection to port from local_port, tried again while the host still holds that port's
    last connection (its close is not complete, or its TIME-WAIT refuses the reuse for now)."""
    deadline = time.monotonic() + CLIENT_TIMEOUT
    while True:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.settimeout(CLIENT_TIMEOUT)
        try:
            s.bind(("127.0.0.1", local_port))
            s.connect(("127.0.0.1", port))
            return s
        except OSError:
            s.close()
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def quit_connection(port: int) -> int:
    """A connection the server closes first (QUIT), which the guest then holds in TIME-WAIT for
    two of lwIP's maximum segment lifetimes (120 s): its host port."""
    s = connect_from(port, 0)
    local_port = s.getsockname()[1]
    s.sendall(b"QUIT\r\n")
    got = b""
    while chunk := s.recv(65536):
        got += chunk
    s.close()
    assert got == b"+OK\r\n", got
    return local_port


def wait_for_time_wait(port: int, count: int) -> None:
    """Wait until the guest holds exactly count connections in TIME-WAIT (its side of a close
    completes only after QEMU passes on the host's close; a bound on waiting only)."""
    deadline = time.monotonic() + CLIENT_TIMEOUT
    while (held := int(info_field(port, "tcp_pcbs_time_wait"))) != count:
        assert time.monotonic() < deadline, f"port {port}: {held} connections in TIME-WAIT, not {count}"
        time.sleep(0.2)


def test_a_client_port_reused_during_the_guests_time_wait_is_served(server):
    """QEMU's user network opens each guest connection from the host client's own port, and the
    host hands a closed port to a new client within seconds.  When the server closed first
    (QUIT), the guest holds that connection in TIME-WAIT; a new connection from the same port
    must be served at once (userland/net/tcp_timewait_reuse.c).  Without that, lwIP answered its
    SYN with the old connection's ACK, and the client got its first reply only after the old
    connection's TIME-WAIT had run out, minutes later: the soak's YCSB timeouts (docs/network.md).

    A second connection closed the same way just before is the witness: it entered TIME-WAIT
    first, so it leaves it first.  If it is still held once the reused port is served, the old
    connection's TIME-WAIT had not run out either: the new connection took over from it."""
    for port in server.ports:
        wait_for_time_wait(port, 0)
        quit_connection(port)
        reused = quit_connection(port)
        wait_for_time_wait(port, 2)
        with connect_from(port, reused) as again:
            again.sendall(b"PING\r\n")
            reply = b""
            while not reply.endswith(b"\r\n"):
                chunk = again.recv(65536)
                assert chunk, f"port {port}: the connection from reused port {reused} was closed " \
                              f"unanswered (got {reply!r})"
                reply += chunk
            assert reply == b"+PONG\r\n", reply
            held = int(info_field(port, "tcp_pcbs_time_wait"))
        assert held == 1, f"port {port}: {held} connections in TIME-WAIT once the reused port was " \
                          "served, not 1 (the witness): it was served only after TIME-WAIT ran out"


@pytest.mark.parametrize("cpus", [1, 4])
def test_percore_layout_one_private_instance_per_core(cpus):
    """layout=percore: one instance beside the driver on one core, one on each further core of
    four; each serves its own port and keeps its own keys (private lwIP, heap and database)."""
    s = Server("x86_64", "bkl", cpus, cmdline="app=redis layout=percore")
    try:
        s.read_until_serving()
        assert len(s.ports) == max(1, cpus - 1), s.log
        for i, port in enumerate(s.ports):
            assert redis_cli(port, "PING") == "PONG"
            assert redis_cli(port, "SET", "k", f"v{i}") == "OK"
            assert redis_cli(port, "GET", "k") == f"v{i}"
        for i, port in enumerate(s.ports):
            assert redis_cli(port, "GET", "k") == f"v{i}"
            assert redis_cli(port, "DBSIZE") == "1"
    finally:
        s.stop()


def resp_exchange(port: int, request: bytes) -> bytes:
    """Send request on a fresh connection and read until the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as s:
        s.sendall(request)
        got = b""
        while chunk := s.recv(65536):
            got += chunk
        return got


@pytest.mark.parametrize("arch", ["x86_64", "arm-imx6"])
def test_processes_layout_serves_through_the_server_process(arch):
    """layout=processes: the driver, lwIP and the server as three processes on one core; every
    request crosses from the stack to the server process by IPC.  Replies come back in order, a
    reply given with a close (QUIT, a malformed frame) reaches the client before the close, and
    redis-benchmark and YCSB run with 0 errors."""
    s = Server(arch, "bkl", 1, cmdline="app=redis layout=processes")
    try:
        s.read_until_serving()
        assert "lwIP and the server in processes of their own" in s.log, s.log
        [port] = s.ports
        assert redis_cli(port, "PING") == "PONG"
        # INFO's stack figures come from the stack process (the server runs no lwIP): the asking
        # connection is one of lwIP's pcbs.
        fields = info(port)
        assert int(fields["tcp_pcbs"]) >= 1 and int(fields["tcp_output_queued"]) == 0, fields
        # So are its connection counters: the PING's connection and this one.
        assert int(fields["total_connections_received"]) >= 2, fields
        assert redis_cli(port, "SET", "k", "v") == "OK"
        assert redis_cli(port, "GET", "k") == "v"
        big = "x" * 100_000
        assert redis_cli(port, "SET", "big", big) == "OK"
        assert redis_cli(port, "GET", "big") == big
        assert resp_exchange(port, b"PING\r\nGET k\r\nQUIT\r\nPING\r\n") == b"+PONG\r\n$1\r\nv\r\n+OK\r\n"
        assert resp_exchange(port, b"*1\r\n$x\r\n").startswith(b"-ERR")
        bench = subprocess.run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-q", "-n", "500",
                                "-t", "set,get,lpush,lpop", "-P", "4"],
                               capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
        out = bench.stdout.replace("\r", "\n") + bench.stderr
        assert bench.returncode == 0 and "Error" not in out, out
        assert sum("requests per second" in line for line in out.splitlines()) == 4, out
        assert redis_cli(port, "FLUSHALL") == "OK"
        result = ycsb.workload_a([port], records=200, operations=400, read_timeout=CLIENT_TIMEOUT)
        assert result["load"]["errors"] == 0 and result["run"]["errors"] == 0, result
        assert redis_cli(port, "DBSIZE") == "201"
    finally:
        s.stop()
    # Neither process reported an error on the console (they print only failures).
    assert "redis server process:" not in s.log and "redis instance" not in s.log, s.log


@pytest.mark.parametrize("arch", ["x86_64", "arm-imx6"])
@pytest.mark.parametrize("name", LWIP_TESTS)
def test_lwip_in_guest_over_loopback(guest, arch, name):
    run = guest(arch=arch, lock="bkl", cpus=1, app="tests", args="only=lwip_")
    assert_guest_test_passed(run, name)


# Replies larger than lwIP's 256 KiB heap, which once reset the connection of any reply past it,
# built from values of 100,000 bytes: one allocation of the guest's heap is at most 128 KiB
# (userland/lib/malloc.c), so no single value can be larger there.  (values, keys in the smaller
# reply): about 4 MB and 1.1 MB on x86_64; 2 MB and 1.1 MB on arm-imx6, slower under TCG.
VALUE_BYTES = 100_000
LARGE_REPLIES = {"x86_64": (40, 11), "arm-imx6": (20, 11)}


@pytest.mark.parametrize("arch,layout", [("x86_64", "single"), ("x86_64", "percore"), ("x86_64", "processes"),
                                         ("arm-imx6", "single"), ("arm-imx6", "processes")],
                         ids=["x86_64-single", "x86_64-percore", "x86_64-processes",
                              "arm-imx6-single", "arm-imx6-processes"])
def test_replies_larger_than_the_stack_heap_arrive_whole(arch, layout):
    """Replies of megabytes reach the client byte for byte, pipelined with small ones, in order;
    a client that asks for many of them and never reads holds no more than about one reply in the
    guest while others are served; INFO's stack figures are those of the stack (in
    layout=processes too, where the server process runs no lwIP)."""
    import random
    nkeys, nsmall = LARGE_REPLIES[arch]
    rng = random.Random(12)
    keys = [f"v{i}" for i in range(nkeys)]
    values = [rng.randbytes(VALUE_BYTES) for _ in keys]
    mget_all, mget_some = resp_command("MGET", *keys), resp_command("MGET", *keys[:nsmall])
    s = Server(arch, "bkl", 1, cmdline=f"app=redis layout={layout}")
    try:
        s.read_until_serving()
        [port] = s.ports
        before = info(port)
        assert int(before["tcp_pcbs"]) >= 1, before
        assert int(before["tcp_output_queued"]) == 0, before
        c = Resp(port)
        try:
            for key, value in zip(keys, values):
                assert c.call("SET", key, value) == b"OK"
            c.sock.sendall(mget_all)
            assert c.reply() == values
            c.sock.sendall(b"".join([mget_all, resp_command("PING"), resp_command("SET", "k", "v"),
                                     mget_some, resp_command("INCR", "n"), resp_command("GET", "k"),
                                     resp_command("GET", keys[-1])]))
            assert c.reply() == values
            assert c.reply() == b"PONG"
            assert c.reply() == b"OK"
            assert c.reply() == values[:nsmall]
            assert c.reply() == 1
            assert c.reply() == b"v"
            assert c.reply() == values[-1]
            reply_bytes = len(mget_all) + nkeys * 12  # the reply's framing is smaller than this

            # A client that pipelines four of the large MGETs and reads nothing.
            # (Its receive buffer stays the default: one smaller than the loopback's 64 KiB MSS
            # makes the host's TCP wait for its zero-window probes, tens of seconds, after each
            # read.)
            hog = Resp(port)
            hog.sock.sendall(mget_all * 4)
            # Others are served meanwhile; the guest holds the hog's input, and about one reply.
            deadline = time.monotonic() + CLIENT_TIMEOUT
            while True:
                held = info(port)
                if int(held["tcp_output_queued"]) > 0 or time.monotonic() > deadline:
                    break
                time.sleep(1)
            assert int(held["tcp_pcbs"]) >= 3, held          # this INFO's, c's and the hog's
            assert int(held["stack_heap_used"]) > 0, held    # the hog's send buffer
            bound = nkeys * VALUE_BYTES + reply_bytes + (64 << 10)
            assert 0 < int(held["tcp_output_queued"]) <= bound, held
            assert c.call("GET", "k") == b"v"
            again = info(port)
            assert int(again["tcp_output_queued"]) <= bound, again
            for _ in range(4):
                assert hog.reply() == values
            hog.close()
        finally:
            c.close()
        # Every reply is out: nothing stays queued in the glue.
        deadline = time.monotonic() + CLIENT_TIMEOUT
        while int((after := info(port))["tcp_output_queued"]) and time.monotonic() < deadline:
            time.sleep(1)
        assert int(after["tcp_output_queued"]) == 0, after
    finally:
        s.stop()
    assert "redis server process:" not in s.log and "redis instance" not in s.log, s.log
