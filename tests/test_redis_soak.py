"""The soak test: the real Redis, hosted by the kernel, under a mixed load.

One boot of the real Redis (Debian's 7.0.15 on the POSIX personality, `app=redis`,
docs/posix.md) on x86_64 with LOCK=fine and 4 CPUs, the configuration most likely to expose races:
the NIC driver on core 0 and three Redis processes, one per further core.  It serves for
REDIS_SOAK_SECONDS while the host drives all three instances from four threads at once, every one
of them bounded.  `make test` runs a short soak (90 s, so that the whole suite stays within its
time); `make soak` runs the long one (600 s; SOAK_SECONDS sets another length), and
REDIS_SOAK_SECONDS=0 skips the test.  The loads, each spread over the three instances:

- redis-benchmark rounds, one after another, cycling through command mixes, pipelining depths,
  client counts and value sizes (BENCH_ROUNDS), each over a keyspace bounded by `-r`, each round
  on the next instance;
- a verification client that writes strings, hash fields and a counter over its own bounded
  keyspace (`soak:*`) on an instance it picks per connection, pipelined in batches, and ends each
  connection with QUIT, a close, or a reset with a batch still unanswered; every acknowledged
  write is recorded on the host per instance, and a write whose reply never came may or may not
  have happened (both outcomes are allowed);
- connection churn: floods of connections reset at once (half in the middle of a command),
  connections that send a command and close without reading, and short-lived PINGs;
- YCSB workload A (tools/ycsb.py), a small load and run phase on the next instance, repeated
  while time remains.

A monitor reads every instance's INFO every few seconds for its memory figures.

At the end, with every client stopped, the test asserts that:
- the guest never panicked and still runs, and no Redis process ended (no `posix_fault`,
  `posix_exit` or `redis_instance_end` record);
- every client finished its rounds with no error (redis-benchmark, YCSB, the verification
  client's replies), and every connection came back: `connected_clients` 1 (the one asking) on
  each instance; and Redis answered nothing with an error but what YCSB's client provokes by
  design (YCSB_ERRORS_PER_WORKLOAD; INFO commandstats and errorstats);
- every acknowledged write reads back intact (GET, HGET; the counter between its acknowledged
  increments and those plus the unanswered ones);
- the kernel's invariant checker passes (`check` on the NIC driver's control port);
- memory is bounded, by Redis's own accounting: `maxmemory` is half the instance's heap, and
  neither `used_memory` in any sample nor Redis's `used_memory_peak` ever went above it; and
  after FLUSHALL `used_memory` is back within FLUSH_TOLERANCE of its value before the load.

Not checked, since Redis's INFO cannot report them: lwIP's TCP pcbs and lwIP's heap (Redis knows
nothing of the stack under its sockets), the heap to the byte (Redis counts its own allocations in
`used_memory`, not the personality's heap, and keeps some of what a load leaves behind:
FLUSH_TOLERANCE says what), and connections lost by cause (evicted, reset, aborted by lwIP).
Redis's INFO has connections received and rejected, commands and error replies, which the test
prints instead.

Nothing asserts a rate: a slow host does fewer operations, and the figures printed at the end
(operations and errors of each client) say how many.  The test skips, saying why, without lwIP's,
Redis's or musl's source, redis-benchmark, or Java and Maven.
"""
from __future__ import annotations

import itertools
import os
import random
import select
import shutil
import socket
import subprocess
import threading
import time

import pytest

import redis_run
import ycsb
from conftest import CLIENT_TIMEOUT, needs_real_redis
from records import PREFIX
from redis_guest import HEAP_MB, Resp, RespError, Server, flood, info, redis_program

# The short soak of `make test`; `make soak` sets 600 s, 0 skips.
SOAK_SECONDS = float(os.environ.get("REDIS_SOAK_SECONDS", "90"))
ARCH, LOCK, CPUS = "x86_64", "fine", 4
# Redis processes of the per-core layout on 4 CPUs: one per core but the NIC driver's.
INSTANCES = CPUS - 1
# Seconds between the monitor's INFO samples.
MONITOR_PERIOD = 10.0
# Seconds for connections to drain once the clients have stopped: QEMU's user network closes
# the guest's side of a connection the host reset only later (docs/network.md).  Only a bound on
# waiting, not a rate.
DRAIN_TIMEOUT = 300.0
# Redis's maxmemory: half of each instance's heap (docs/posix.md).
MAXMEMORY = (HEAP_MB << 20) // 2
# Bytes by which used_memory after the load and FLUSHALL may differ from before it.  Redis keeps
# some of what a load leaves behind outside its keyspace: a latency histogram of about 24 KiB for
# each command name it has run (`latency-tracking`, on by default), error statistics and up to 128
# slowlog entries; CONFIG RESETSTAT and SLOWLOG RESET free them, and the test takes both figures
# just after those (forgotten()).  What remains: two such measurements of an idle instance
# differed by 40 bytes, and SLOWLOG RESET's own slowlog entry, kept when it ran for longer than
# 10 ms, took 224.
FLUSH_TOLERANCE = 1024

BENCH_KEYSPACE = 10000
# (tests, pipeline depth, clients, value bytes).  Pushes and pops are balanced within a round,
# so lists do not grow from round to round.
BENCH_ROUNDS = [
    ("set,get,incr,mset", 1, 10, 3),
    ("lpush,rpush,lpop,rpop", 16, 4, 100),
    ("sadd,spop,hset,zadd", 4, 20, 3),
    ("ping_inline,ping_mbulk,set,get", 8, 8, 400),
    ("set,get,lpush,lpop", 32, 2, 1000),
]
BENCH_REQUESTS = 2000

# The verification client's keyspace: soak:s:<n> strings, soak:h:<n> hashes of soak fields f<m>.
STRING_KEYS, HASH_KEYS, HASH_FIELDS = 3000, 400, 8
COUNTER = b"soak:counter"

YCSB_RECORDS, YCSB_OPERATIONS = 500, 1000
YCSB_PAUSE = 30.0
# Error replies Redis 7.0 gives each workload of YCSB: Jedis 4.4.8 opens every connection (one per
# phase) with CLIENT SETINFO LIB-NAME and LIB-VER, which Redis knows only from 7.2 on (ERR unknown
# subcommand), and goes on.  Debian's redis-server on the host counts the same.
YCSB_ERRORS_PER_WORKLOAD = 4

# Records that say a Redis process ended (docs/posix.md): a fault, an exit_group, or the
# root task's report of an instance that stopped serving.
ENDED_RECORDS = ("posix_fault", "posix_exit", "redis_instance_end")


class Load:
    """What one load thread did: operations, errors with their first descriptions."""

    def __init__(self, name: str):
        self.name = name
        self.ops = 0
        self.errors = 0
        self.notes: list[str] = []
        self.note_times: list[float] = []   # time.monotonic() of each note's error
        self.finished = False
        # The slowest single operation, where the client reports it (YCSB), in microseconds.
        self.slowest_us = 0

    def error(self, what: str) -> None:
        self.errors += 1
        if len(self.notes) < 5:
            self.notes.append(what)
            self.note_times.append(time.monotonic())


# Redis's INFO `# Stats` counters, summed over the instances: printed over the run and around
# each error, to say what the servers saw of the clients' connections then.
SERVER_COUNTERS = [("total_connections_received", "connections received"),
                   ("rejected_connections", "rejected"),
                   ("total_commands_processed", "commands"),
                   ("total_error_replies", "error replies")]


def counters_between(earlier: dict[int, dict[str, str]], later: dict[int, dict[str, str]]) -> str:
    return ", ".join(f"+{sum(int(later[p][name]) - int(earlier[p][name]) for p in later)} {label}"
                     for name, label in SERVER_COUNTERS)


def around(samples: list[tuple[float, dict[int, dict[str, str]]]], when: float) -> str:
    """The counters' change over the monitor period that holds `when`."""
    before = [s for s in samples if s[0] <= when]
    after = [s for s in samples if s[0] > when]
    if not before or not after:
        return "no monitor samples on both sides"
    (t0, earlier), (t1, later) = before[-1], after[0]
    return f"{t1 - t0:.0f} s around it: " + counters_between(earlier, later)


class AckedWrites:
    """The host's record of the verification client's writes to one instance: for each key (and
    hash field) the values it may hold.  An acknowledged write leaves exactly its value; a write
    whose reply never came adds its value to what was possible before."""

    def __init__(self):
        self.strings: dict[bytes, set] = {}
        self.fields: dict[tuple[bytes, bytes], set] = {}
        self.incr_acked = 0
        self.incr_unanswered = 0

    def possible(self, table: dict, key) -> set:
        return table.get(key, {None})

    def acked(self, table: dict, key, value: bytes) -> None:
        table[key] = {value}

    def unanswered(self, table: dict, key, value: bytes) -> None:
        table[key] = self.possible(table, key) | {value}


def bench_loop(ports: list[int], stop: threading.Event, load: Load) -> None:
    for i in itertools.count():
        if stop.is_set():
            break
        tests, pipeline, clients, size = BENCH_ROUNDS[i % len(BENCH_ROUNDS)]
        port = ports[i % len(ports)]
        argv = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-q",
                "-n", str(BENCH_REQUESTS), "-c", str(clients), "-P", str(pipeline),
                "-r", str(BENCH_KEYSPACE), "-d", str(size), "-t", tests]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
        except subprocess.TimeoutExpired:
            load.error(f"redis-benchmark -t {tests} on {port} did not finish in {CLIENT_TIMEOUT} s")
            continue
        out = (proc.stdout + proc.stderr).replace("\r", "\n")
        summaries = [line for line in out.splitlines() if "requests per second" in line]
        if proc.returncode != 0 or "error" in out.lower() or len(summaries) != len(tests.split(",")):
            load.error(f"redis-benchmark -t {tests} -P {pipeline} on {port}: exit {proc.returncode}: "
                       + " ".join(out.split())[-300:])
            continue
        load.ops += BENCH_REQUESTS * len(tests.split(","))


def writer_batch(rng: random.Random, seq: int) -> list[tuple[str, tuple[bytes, ...], bytes, object]]:
    """A batch of writes: (kind, command, value, key) for SET, HSET and INCR."""
    batch = []
    for _ in range(rng.randint(1, 16)):
        seq += 1
        roll = rng.random()
        if roll < 0.6:
            key = b"soak:s:%d" % rng.randrange(STRING_KEYS)
            value = b"%d:" % seq + rng.randbytes(rng.randint(0, 1500))
            batch.append(("set", (b"SET", key, value), value, key))
        elif roll < 0.85:
            key, field = b"soak:h:%d" % rng.randrange(HASH_KEYS), b"f%d" % rng.randrange(HASH_FIELDS)
            value = b"%d:" % seq + rng.randbytes(rng.randint(0, 300))
            batch.append(("hset", (b"HSET", key, field, value), value, (key, field)))
        else:
            batch.append(("incr", (b"INCR", COUNTER), b"", COUNTER))
    return batch


def mark_unanswered(acked: AckedWrites, pending: list) -> None:
    """Writes sent whose replies will never be read: each may or may not have happened."""
    for kind, _, value, key in pending:
        if kind == "set":
            acked.unanswered(acked.strings, key, value)
        elif kind == "hset":
            acked.unanswered(acked.fields, key, value)
        else:
            acked.incr_unanswered += 1
    pending.clear()


def writer_session(port: int, rng: random.Random, acked: AckedWrites, load: Load, seq: int) -> int:
    """One connection's life: pipelined batches, then QUIT, a close, or a reset mid-batch."""
    conn = Resp(port)
    pending: list = []
    step = "connected"
    try:
        for batch_no in range(rng.randint(1, 20)):
            step = f"batch {batch_no}"
            pending = writer_batch(rng, seq)
            seq += len(pending)
            conn.send(*(command for _, command, _, _ in pending))
            while pending:
                reply = conn.reply()
                kind, command, value, key = pending.pop(0)
                if kind == "set" and reply == b"OK":
                    acked.acked(acked.strings, key, value)
                elif kind == "hset" and reply in (0, 1):
                    acked.acked(acked.fields, key, value)
                elif kind == "incr" and isinstance(reply, int):
                    acked.incr_acked += 1
                else:
                    load.error(f"{command[0].decode()} {command[1].decode()} on {port}: "
                               f"reply {reply!r:.80}")
                    mark_unanswered(acked, [(kind, command, value, key)])
                    continue
                load.ops += 1
        ending = rng.random()
        step = "ending"
        if ending < 0.4:
            reply = conn.call(b"QUIT")
            if reply != b"OK":
                load.error(f"QUIT on {port}: reply {reply!r}")
            conn.close()
        elif ending < 0.7:
            conn.close()
        else:
            pending = writer_batch(rng, seq)
            seq += len(pending)
            conn.send(*(command for _, command, _, _ in pending))
            mark_unanswered(acked, pending)
            conn.reset()
    except (OSError, RespError) as err:
        load.error(f"verification client on {port}, {step}, {len(pending)} replies due: {err}")
        mark_unanswered(acked, pending)
        conn.reset()
    return seq


def verify_sample(port: int, rng: random.Random, acked: AckedWrites, load: Load) -> None:
    """Read back some acknowledged strings while the load runs."""
    keys = [k for k, values in acked.strings.items() if len(values) == 1]
    conn = Resp(port)
    try:
        for key in rng.sample(keys, min(50, len(keys))):
            got = conn.call(b"GET", key)
            if got not in acked.strings[key]:
                load.error(f"GET {key!r} on {port} during the run: {got!r:.60} is not the "
                           f"acknowledged value")
    finally:
        conn.close()


def writer_loop(ports: list[int], stop: threading.Event, load: Load,
                acked: dict[int, AckedWrites], seed: int) -> None:
    rng = random.Random(seed)
    seq = 0
    session = 0
    while not stop.is_set():
        port = rng.choice(ports)
        seq = writer_session(port, rng, acked[port], load, seq)
        session += 1
        if session % 10 == 0:
            verify_sample(port, rng, acked[port], load)


def churn_loop(ports: list[int], stop: threading.Event, load: Load) -> None:
    """Connections opened and dropped in every way a client can drop one; load.ops counts them.
    Each port gets each way in turn."""
    for i in itertools.count():
        if stop.is_set():
            break
        port = ports[(i // 3) % len(ports)]
        try:
            if i % 3 == 0:
                flood(port, 30)
                load.ops += 30
            elif i % 3 == 1:
                for j in range(10):
                    with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as s:
                        s.sendall(b"*3\r\n$3\r\nSET\r\n$11\r\nsoak:churn:\r\n$%d\r\n%d\r\n"
                                  % (len(str(j)), j))
                    load.ops += 1
            else:
                for _ in range(10):
                    c = Resp(port)
                    reply = c.call(b"PING")
                    c.reset()
                    if reply != b"PONG":
                        load.error(f"PING on {port}: reply {reply!r}")
                    load.ops += 1
        except (OSError, RespError) as err:
            load.error(f"churn on {port}: {err}")
        stop.wait(0.2)


def ycsb_loop(ports: list[int], stop: threading.Event, load: Load, workloads: dict[int, int]) -> None:
    """YCSB workload A on each port in turn; workloads[port] counts those started there."""
    for i in itertools.count():
        if stop.is_set():
            break
        port = ports[i % len(ports)]
        workloads[port] += 1
        try:
            result = ycsb.workload_a([port], records=YCSB_RECORDS, operations=YCSB_OPERATIONS,
                                     read_timeout=CLIENT_TIMEOUT)
        except ycsb.YcsbError as err:
            load.error(str(err)[:300])
        else:
            errors = result["load"]["errors"] + result["run"]["errors"]
            done = (sum(result["load"]["operations"].values())
                    + sum(result["run"]["operations"].values()))
            if errors or done != YCSB_RECORDS + YCSB_OPERATIONS:
                load.error(f"YCSB on {port}: {done} operations, {errors} errors")
            load.ops += done
            load.slowest_us = max(load.slowest_us, result["load"]["max_latency_us"],
                                  result["run"]["max_latency_us"])
        stop.wait(YCSB_PAUSE)


def guarded(target, load: Load, *args) -> threading.Thread:
    """A load thread that reports an unexpected exception as an error instead of dying quietly."""
    def body():
        try:
            target(*args)
        except Exception as err:  # noqa: BLE001 - any escape is a failed client, reported below
            load.error(f"{load.name} stopped: {type(err).__name__}: {err}")
        finally:
            load.finished = True
    return threading.Thread(target=body, name=load.name, daemon=True)


class Console:
    """Keeps reading the guest's console after it serves, so QEMU never blocks on a full pipe."""

    def __init__(self, server: Server):
        self.server = server
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        stream = self.server.proc.stdout
        while True:
            ready, _, _ = select.select([stream], [], [], 1.0)
            if not ready:
                if self.server.proc.poll() is not None:
                    return
                continue
            chunk = os.read(stream.fileno(), 65536)
            if not chunk:
                return
            self.server.log += chunk.decode("utf-8", "replace")

    def troubles(self) -> list[str]:
        """Panics, failed invariants and ended Redis processes, as the console said them."""
        marks = ["panic"] + list(ENDED_RECORDS)
        return [line for line in self.server.log.splitlines()
                if line.startswith("invariant failed")
                or (line.startswith(PREFIX) and any(f'"{mark}"' in line for mark in marks))]


def wait_for_drain(ports: list[int]) -> dict[int, dict[str, str]]:
    """Each instance's INFO once every connection but the asking one is gone; the last INFO if
    that never came."""
    deadline = time.monotonic() + DRAIN_TIMEOUT
    while True:
        fields = {port: info(port) for port in ports}
        drained = all(f["connected_clients"] == "1" for f in fields.values())
        if drained or time.monotonic() > deadline:
            return fields
        time.sleep(2)


def refused_commands(port: int) -> list[str]:
    """The commands an instance answered with an error (INFO commandstats' failed and rejected
    calls) and its error replies by kind (errorstats), since the last CONFIG RESETSTAT."""
    conn = Resp(port)
    try:
        text = conn.call(b"INFO", b"commandstats") + conn.call(b"INFO", b"errorstats")
    finally:
        conn.close()
    found = []
    for line in text.decode().splitlines():
        name, _, value = line.partition(":")
        fields = dict(f.split("=", 1) for f in value.split(",") if "=" in f)
        if name.startswith("errorstat_") or fields.get("failed_calls", "0") != "0" \
                or fields.get("rejected_calls", "0") != "0":
            found.append(f"{name} {value}")
    return found


def forgotten(ports: list[int]) -> dict[int, dict[str, str]]:
    """Each instance's INFO once Redis has forgotten its history of commands (CONFIG RESETSTAT:
    latency histograms, error statistics and counters; SLOWLOG RESET), so that
    used_memory counts what the instance holds for its keys and clients alone."""
    for port in ports:
        conn = Resp(port)
        try:
            replies = [conn.call(b"CONFIG", b"RESETSTAT"), conn.call(b"SLOWLOG", b"RESET")]
        finally:
            conn.close()
        assert replies == [b"OK", b"OK"], replies
    return {port: info(port) for port in ports}


def verify_all(port: int, acked: AckedWrites) -> tuple[int, list[str]]:
    """Read every recorded key and field of one instance back: (reads, mismatches)."""
    wrong = []
    conn = Resp(port)
    try:
        items = list(acked.strings.items())
        for start in range(0, len(items), 100):
            chunk = items[start:start + 100]
            conn.send(*((b"GET", key) for key, _ in chunk))
            for key, values in chunk:
                got = conn.reply()
                if got not in values:
                    wrong.append(f"GET {key!r} on {port}: {got!r:.60}")
        items = list(acked.fields.items())
        for start in range(0, len(items), 100):
            chunk = items[start:start + 100]
            conn.send(*((b"HGET", key, field) for (key, field), _ in chunk))
            for (key, field), values in chunk:
                got = conn.reply()
                if got not in values:
                    wrong.append(f"HGET {key!r} {field!r} on {port}: {got!r:.60}")
        counter = conn.call(b"GET", COUNTER)
        count = int(counter) if counter is not None else 0
        if not acked.incr_acked <= count <= acked.incr_acked + acked.incr_unanswered:
            wrong.append(f"{COUNTER!r} on {port} is {count}: {acked.incr_acked} increments "
                         f"acknowledged, {acked.incr_unanswered} unanswered")
    finally:
        conn.close()
    return len(acked.strings) + len(acked.fields) + 1, wrong


@pytest.mark.skipif(SOAK_SECONDS <= 0, reason="REDIS_SOAK_SECONDS=0 skips the soak (default 90 s; `make soak`: 600 s)")
@needs_real_redis
@pytest.mark.skipif(shutil.which("redis-benchmark") is None,
                    reason="redis-benchmark is not installed (Debian's redis-tools)")
@pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                    reason="YCSB needs Java and Maven (tools/ensure_deps.sh installs them)")
def test_soak_mixed_load(capsys):
    server = Server(ARCH, LOCK, CPUS, guest_timeout=SOAK_SECONDS + 3600,
                    posix_program=redis_program(ARCH),
                    cmdline=f"app=redis heap_mb={HEAP_MB} redis_debug=1")
    stop = threading.Event()
    try:
        server.read_until_serving()
        console = Console(server)
        ports = server.ports
        assert len(ports) == INSTANCES, server.log
        control = server.control_port()
        wait_for_drain(ports)
        boot = forgotten(ports)
        seed = random.randrange(1 << 32)

        acked = {port: AckedWrites() for port in ports}
        workloads = {port: 0 for port in ports}
        loads = {name: Load(name) for name in ("redis-benchmark", "verification", "churn", "ycsb")}
        threads = [guarded(bench_loop, loads["redis-benchmark"], ports, stop, loads["redis-benchmark"]),
                   guarded(writer_loop, loads["verification"], ports, stop, loads["verification"],
                           acked, seed),
                   guarded(churn_loop, loads["churn"], ports, stop, loads["churn"]),
                   guarded(ycsb_loop, loads["ycsb"], ports, stop, loads["ycsb"], workloads)]
        began = time.monotonic()
        for t in threads:
            t.start()
        samples = [(began, boot)]
        while time.monotonic() - began < SOAK_SECONDS and server.proc.poll() is None:
            stop.wait(min(MONITOR_PERIOD, max(0.0, SOAK_SECONDS - (time.monotonic() - began))))
            if server.proc.poll() is None:
                samples.append((time.monotonic(), {port: info(port) for port in ports}))
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - began

        assert server.proc.poll() is None, f"the guest ended during the soak:\n{server.log[-4000:]}"
        assert not console.troubles(), "\n".join(console.troubles())
        drained = wait_for_drain(ports)
        samples.append((time.monotonic(), drained))
        refused = {port: refused_commands(port) for port in ports}
        reads, wrong = 0, []
        for port in ports:
            n, w = verify_all(port, acked[port])
            reads += n
            wrong += w
        checked = redis_run.control_request(control, "check", CLIENT_TIMEOUT)
        flushed = []
        for port in ports:
            c = Resp(port)
            flushed.append(c.call(b"FLUSHALL"))
            c.close()
        wait_for_drain(ports)
        after_flush = forgotten(ports)
        peaks = {port: int(drained[port]["used_memory_peak"]) for port in ports}
        high = {port: max(int(s[port]["used_memory"]) for _, s in samples) for port in ports}

        with capsys.disabled():
            print(f"\nsoak: {elapsed:.0f} s on {ARCH} {LOCK} {CPUS} CPUs, {INSTANCES} Redis "
                  f"instances, all driven, seed {seed}")
            for load in loads.values():
                slowest = f", slowest {load.slowest_us / 1e6:.3f} s" if load.slowest_us else ""
                print(f"soak: {load.name}: {load.ops} operations, {load.errors} errors{slowest}"
                      + "".join(f"\n    at {when - began:.0f} s: {note}\n      {around(samples, when)}"
                                for note, when in zip(load.notes, load.note_times)))
            print(f"soak: {reads} acknowledged writes read back, {len(wrong)} wrong; counters "
                  + ", ".join(f"{a.incr_acked}+{a.incr_unanswered}" for a in acked.values())
                  + " increments acknowledged+unanswered")
            print(f"soak: over the whole run: {counters_between(boot, drained)}; "
                  f"control port check {checked!r}; {len(samples) - 2} samples")
            for port in ports:
                print(f"soak: port {port}: commands answered with an error: {refused[port] or 'none'}")
            for port in ports:
                b, d, f = boot[port], drained[port], after_flush[port]
                print(f"soak: port {port}: used_memory before the load {b['used_memory']}, after it "
                      f"{d['used_memory']} ({d.get('db0', 'no keys')}), after FLUSHALL "
                      f"{f['used_memory']} ({int(f['used_memory']) - int(b['used_memory']):+d}: "
                      f"overhead {int(f['used_memory_overhead']) - int(b['used_memory_overhead']):+d}, "
                      f"clients {int(f['mem_clients_normal']) - int(b['mem_clients_normal']):+d}); "
                      f"highest sample {high[port]}, used_memory_peak {peaks[port]}, maxmemory "
                      f"{f['maxmemory']}; connected_clients {d['connected_clients']}, "
                      f"{f['connected_clients']} after FLUSHALL")

        assert all(load.finished for load in loads.values())
        for load in loads.values():
            assert load.errors == 0, f"{load.name}: {load.errors} errors: {load.notes}"
            assert load.ops > 0, f"{load.name} did nothing in {elapsed:.0f} s"
        assert not wrong, f"{len(wrong)} acknowledged writes not read back: {wrong[:10]}"
        for port in ports:
            expected = ([f"errorstat_ERR count={YCSB_ERRORS_PER_WORKLOAD * workloads[port]}"]
                        if workloads[port] else [])
            assert refused[port] == expected, \
                f"port {port}: error replies beyond YCSB's {expected}: {refused[port]}"
        assert checked == "OK check", f"control port check: {checked!r}\n{server.log[-4000:]}"
        assert flushed == [b"OK"] * INSTANCES, flushed
        for state in (drained, after_flush):
            assert all(s["connected_clients"] == "1" for s in state.values()), \
                f"connections did not come back in {DRAIN_TIMEOUT} s: {state}"
        for port in ports:
            assert int(after_flush[port]["maxmemory"]) == MAXMEMORY, after_flush[port]
            assert high[port] <= MAXMEMORY and peaks[port] <= MAXMEMORY, \
                f"port {port}: used_memory reached {max(high[port], peaks[port])}, over {MAXMEMORY}"
            grown = int(after_flush[port]["used_memory"]) - int(boot[port]["used_memory"])
            assert abs(grown) <= FLUSH_TOLERANCE, \
                f"port {port}: used_memory after FLUSHALL {grown:+d} from before the load: a leak"
        assert server.proc.poll() is None and not console.troubles(), server.log[-4000:]
    finally:
        stop.set()
        server.stop()
