"""The soak test: the kernel-hosted Redis server under a mixed load.

One boot of the app `redis` (docs/network.md) on x86_64 with LOCK=fine and 4 CPUs, the
configuration most likely to expose races, serves for REDIS_SOAK_SECONDS while the host drives it
from four threads at once, every one of them bounded.  `make test` runs a short soak (90 s, so
that the whole suite stays within its time); `make soak` runs the long one (600 s; SOAK_SECONDS
sets another length), and REDIS_SOAK_SECONDS=0 skips the test.  The loads:

- redis-benchmark rounds, one after another, cycling through command mixes, pipelining depths,
  client counts and value sizes (BENCH_ROUNDS), each over a keyspace bounded by `-r`;
- a verification client that writes strings, hash fields and a counter over its own bounded
  keyspace (`soak:*`), pipelined in batches, and ends each connection with QUIT, a close, or a
  reset with a batch still unanswered; every acknowledged write is recorded on the host, and a
  write whose reply never came may or may not have happened (both outcomes are allowed);
- connection churn: floods of connections reset at once (half in the middle of a command),
  connections that send a command and close without reading, and short-lived PINGs;
- YCSB workload A (tools/ycsb.py), a small load and run phase, repeated while time remains.

A monitor reads INFO every few seconds for the memory figures (docs/redis.md, `# Memory`).

At the end, with every client stopped, the test asserts that:
- the guest never panicked and still runs;
- every client finished its rounds with no error (redis-benchmark, YCSB, the verification
  client's replies), and every connection came back: `connected_clients` 1 (the one asking)
  and lwIP's TCP connections 1, its own heap empty;
- every acknowledged write reads back intact (GET, HGET; the counter between its acknowledged
  increments and those plus the unanswered ones);
- the kernel's invariant checker passes (DEBUG CHECK);
- memory is bounded: the heap never took more than HEAP_BUDGET, and after FLUSHALL the heap in
  use is exactly what it was at boot (a leak anywhere in the server or the TCP glue shows here).

Nothing asserts a rate: a slow host does fewer operations, and the figures printed at the end
(operations and errors of each client) say how many.  The test skips, saying why, without lwIP's
source, redis-benchmark, or Java and Maven.
"""
from __future__ import annotations

import itertools
import json
import os
import random
import select
import shutil
import socket
import subprocess
import threading
import time

import pytest

from records import PREFIX
from test_redis_guest import CLIENT_TIMEOUT, LWIP_PRESENT, Resp, RespError, Server, flood, info, ycsb

# The short soak of `make test`; `make soak` sets 600 s, 0 skips.
SOAK_SECONDS = float(os.environ.get("REDIS_SOAK_SECONDS", "90"))
ARCH, LOCK, CPUS = "x86_64", "fine", 4
# Seconds between the monitor's INFO samples.
MONITOR_PERIOD = 10.0
# Seconds for connections to drain once the clients have stopped: QEMU's user network closes
# the guest's side of a connection the host reset only later, and the server resets a close that
# cannot finish after about 20 s (docs/network.md).  Only a bound on waiting, not a rate.
DRAIN_TIMEOUT = 300.0
# The key universe of the load is bounded by construction (redis-benchmark's -r, the
# verification client's key counts, YCSB's records), so the heap's high water is too: about half of
# this budget in a 600 s soak, and the budget is well inside the 192 MiB heap.
HEAP_BUDGET = 64 << 20

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


# INFO's `# Stats` counters of the TCP glue (docs/redis.md), and NIC overruns: how connections
# ended, printed around each error to say which way a client lost its connection.
CONNECTION_COUNTERS = [("total_connections_received", "received"), ("rejected_connections", "rejected"),
                       ("connections_evicted", "evicted"),
                       ("connections_reset_by_server", "reset by the server"),
                       ("connections_reset_by_peer", "reset by the clients"),
                       ("connections_aborted_by_stack", "aborted by lwIP"),
                       ("nic_rx_overruns", "NIC overrun interrupts")]


def counters_between(earlier: dict[str, str], later: dict[str, str]) -> str:
    return ", ".join(f"+{int(later[name]) - int(earlier[name])} {label}"
                     for name, label in CONNECTION_COUNTERS)


def around(samples: list[tuple[float, dict[str, str]]], when: float) -> str:
    """The counters' change over the monitor period that holds `when`."""
    before = [s for s in samples if s[0] <= when]
    after = [s for s in samples if s[0] > when]
    if not before or not after:
        return "no monitor samples on both sides"
    (t0, earlier), (t1, later) = before[-1], after[0]
    return f"{t1 - t0:.0f} s around it: " + counters_between(earlier, later)


class AckedWrites:
    """The host's record of the verification client's writes: for each key (and hash field) the
    values it may hold.  An acknowledged write leaves exactly its value; a write whose reply
    never came adds its value to what was possible before."""

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


def bench_loop(port: int, stop: threading.Event, load: Load) -> None:
    for i in itertools.count():
        if stop.is_set():
            break
        tests, pipeline, clients, size = BENCH_ROUNDS[i % len(BENCH_ROUNDS)]
        argv = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-q",
                "-n", str(BENCH_REQUESTS), "-c", str(clients), "-P", str(pipeline),
                "-r", str(BENCH_KEYSPACE), "-d", str(size), "-t", tests]
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=CLIENT_TIMEOUT)
        except subprocess.TimeoutExpired:
            load.error(f"redis-benchmark -t {tests} did not finish in {CLIENT_TIMEOUT} s")
            continue
        out = (proc.stdout + proc.stderr).replace("\r", "\n")
        summaries = [line for line in out.splitlines() if "requests per second" in line]
        if proc.returncode != 0 or "error" in out.lower() or len(summaries) != len(tests.split(",")):
            load.error(f"redis-benchmark -t {tests} -P {pipeline}: exit {proc.returncode}: "
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
                    load.error(f"{command[0].decode()} {command[1].decode()}: reply {reply!r:.80}")
                    mark_unanswered(acked, [(kind, command, value, key)])
                    continue
                load.ops += 1
        ending = rng.random()
        step = "ending"
        if ending < 0.4:
            reply = conn.call(b"QUIT")
            if reply != b"OK":
                load.error(f"QUIT: reply {reply!r}")
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
        load.error(f"verification client, {step}, {len(pending)} replies due: {err}")
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
                load.error(f"GET {key!r} during the run: {got!r:.60} is not the acknowledged value")
    finally:
        conn.close()


def writer_loop(port: int, stop: threading.Event, load: Load, acked: AckedWrites, seed: int) -> None:
    rng = random.Random(seed)
    seq = 0
    session = 0
    while not stop.is_set():
        seq = writer_session(port, rng, acked, load, seq)
        session += 1
        if session % 10 == 0:
            verify_sample(port, rng, acked, load)


def churn_loop(port: int, stop: threading.Event, load: Load) -> None:
    """Connections opened and dropped in every way a client can drop one; load.ops counts them."""
    for i in itertools.count():
        if stop.is_set():
            break
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
                        load.error(f"PING: reply {reply!r}")
                    load.ops += 1
        except (OSError, RespError) as err:
            load.error(f"churn: {err}")
        stop.wait(0.2)


def ycsb_loop(port: int, stop: threading.Event, load: Load) -> None:
    while not stop.is_set():
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
                load.error(f"YCSB: {done} operations, {errors} errors")
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

    def panics(self) -> list[str]:
        found = []
        for line in self.server.log.splitlines():
            line = line.rstrip("\r")
            if line.startswith(PREFIX) and "panic" in json.loads(line[len(PREFIX):]):
                found.append(line)
            elif line.startswith("invariant failed"):
                found.append(line)
        return found


def wait_for_drain(port: int) -> dict[str, str]:
    """INFO once every connection but the asking one is gone; the last INFO if that never came."""
    deadline = time.monotonic() + DRAIN_TIMEOUT
    while True:
        fields = info(port)
        drained = (fields["connected_clients"] == "1" and fields["tcp_pcbs"] == "1"
                   and fields["stack_heap_used"] == "0")
        if drained or time.monotonic() > deadline:
            return fields
        time.sleep(2)


def verify_all(port: int, acked: AckedWrites) -> tuple[int, list[str]]:
    """Read every recorded key and field back: (reads, mismatches)."""
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
                    wrong.append(f"GET {key!r}: {got!r:.60}")
        items = list(acked.fields.items())
        for start in range(0, len(items), 100):
            chunk = items[start:start + 100]
            conn.send(*((b"HGET", key, field) for (key, field), _ in chunk))
            for (key, field), values in chunk:
                got = conn.reply()
                if got not in values:
                    wrong.append(f"HGET {key!r} {field!r}: {got!r:.60}")
        counter = conn.call(b"GET", COUNTER)
        count = int(counter) if counter is not None else 0
        if not acked.incr_acked <= count <= acked.incr_acked + acked.incr_unanswered:
            wrong.append(f"{COUNTER!r} is {count}: {acked.incr_acked} increments acknowledged, "
                         f"{acked.incr_unanswered} unanswered")
    finally:
        conn.close()
    return len(acked.strings) + len(acked.fields) + 1, wrong


@pytest.mark.skipif(SOAK_SECONDS <= 0, reason="REDIS_SOAK_SECONDS=0 skips the soak (default 90 s; `make soak`: 600 s)")
@pytest.mark.skipif(not LWIP_PRESENT, reason="lwIP's source could not be fetched into .deps/lwip "
                    "(tools/ensure_deps.sh says why)")
@pytest.mark.skipif(shutil.which("redis-benchmark") is None,
                    reason="redis-benchmark is not installed (Debian's redis-tools)")
@pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                    reason="YCSB needs Java and Maven (tools/ensure_deps.sh installs them)")
def test_soak_mixed_load(capsys):
    server = Server(ARCH, LOCK, CPUS, guest_timeout=SOAK_SECONDS + 3600)
    stop = threading.Event()
    try:
        server.read_until_serving()
        console = Console(server)
        port = server.ports[0]
        boot = wait_for_drain(port)
        baseline = int(boot["used_memory"])
        seed = random.randrange(1 << 32)

        acked = AckedWrites()
        loads = {name: Load(name) for name in ("redis-benchmark", "verification", "churn", "ycsb")}
        threads = [guarded(bench_loop, loads["redis-benchmark"], port, stop, loads["redis-benchmark"]),
                   guarded(writer_loop, loads["verification"], port, stop, loads["verification"],
                           acked, seed),
                   guarded(churn_loop, loads["churn"], port, stop, loads["churn"]),
                   guarded(ycsb_loop, loads["ycsb"], port, stop, loads["ycsb"])]
        began = time.monotonic()
        for t in threads:
            t.start()
        samples = [(began, boot)]
        while time.monotonic() - began < SOAK_SECONDS and server.proc.poll() is None:
            stop.wait(min(MONITOR_PERIOD, max(0.0, SOAK_SECONDS - (time.monotonic() - began))))
            if server.proc.poll() is None:
                samples.append((time.monotonic(), info(port)))
        stop.set()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - began

        assert server.proc.poll() is None, f"the guest ended during the soak:\n{server.log[-4000:]}"
        assert not console.panics(), "\n".join(console.panics())
        drained = wait_for_drain(port)
        reads, wrong = verify_all(port, acked)
        check = Resp(port)
        checked = check.call(b"DEBUG", b"CHECK")
        flushed = check.call(b"FLUSHALL")
        check.close()
        after_flush = wait_for_drain(port)
        samples.append((time.monotonic(), drained))
        carved = max(int(s["heap_carved"]) for _, s in samples)

        with capsys.disabled():
            print(f"\nsoak: {elapsed:.0f} s on {ARCH} {LOCK} {CPUS} CPUs, seed {seed}")
            for load in loads.values():
                slowest = f", slowest {load.slowest_us / 1e6:.3f} s" if load.slowest_us else ""
                print(f"soak: {load.name}: {load.ops} operations, {load.errors} errors{slowest}"
                      + "".join(f"\n    at {when - began:.0f} s: {note}\n      {around(samples, when)}"
                                for note, when in zip(load.notes, load.note_times)))
            print(f"soak: {reads} acknowledged writes read back, {len(wrong)} wrong; counter "
                  f"{acked.incr_acked} increments acknowledged, {acked.incr_unanswered} unanswered")
            print(f"soak: heap in use at boot {baseline}, after the load {drained['used_memory']} "
                  f"({drained.get('db0', 'no keys')}), after FLUSHALL {after_flush['used_memory']}; "
                  f"high water {carved} of {after_flush['heap_size']}; {len(samples) - 2} samples")
            print(f"soak: connections over the whole run: {counters_between(boot, drained)}")
            for label, state in (("after the load", drained), ("after FLUSHALL", after_flush)):
                print(f"soak: {label}: connected_clients {state['connected_clients']}, tcp_pcbs "
                      f"{state['tcp_pcbs']} (+{state['tcp_pcbs_time_wait']} TIME-WAIT), lwIP heap "
                      f"{state['stack_heap_used']}, frames dropped with the receive pool empty "
                      f"{state['rx_pool_empty']}, NIC overrun interrupts "
                      f"{state.get('nic_rx_overruns', '?')}; DEBUG CHECK {checked!r}")

        assert all(load.finished for load in loads.values())
        for load in loads.values():
            assert load.errors == 0, f"{load.name}: {load.errors} errors: {load.notes}"
            assert load.ops > 0, f"{load.name} did nothing in {elapsed:.0f} s"
        assert not wrong, f"{len(wrong)} acknowledged writes not read back: {wrong[:10]}"
        assert checked == b"OK", f"DEBUG CHECK: {checked!r}\n{server.log[-4000:]}"
        assert flushed == b"OK"
        for state in (drained, after_flush):
            assert (state["connected_clients"], state["tcp_pcbs"], state["stack_heap_used"]) == \
                ("1", "1", "0"), f"connections did not come back in {DRAIN_TIMEOUT} s: {state}"
        assert carved <= HEAP_BUDGET, f"the heap's high water {carved} is over {HEAP_BUDGET}"
        assert int(after_flush["used_memory"]) == baseline, \
            f"heap in use after FLUSHALL {after_flush['used_memory']} != {baseline} at boot: a leak"
        assert server.proc.poll() is None and not console.panics(), server.log[-4000:]
    finally:
        stop.set()
        server.stop()
