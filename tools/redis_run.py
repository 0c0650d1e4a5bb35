"""One boot of the Redis benchmark: boot, mark, load, mark, stop.

Runs a tools/qemu_run.py command for the app `redis` with `--net`, and
while the guest serves:

  1. waits for qemu_run's `net` record (host port -> guest port) and the
     app's `redis` record (the guest ports it serves, docs/network.md);
  2. sends the start mark (tag 1: the kernel prints a `kstats` and a
     `lockstats` record per core, docs/console.md) to the NIC driver's
     control port, which the `redis` record names (a UDP datagram
     "kstats 1", sent again every second until its "OK kstats 1",
     docs/network.md).  A Linux guest (docs/linux-baseline.md) names a marks
     port in its `linux` record instead, and the marks go there as a line
     "<tag>" ("<tag> print" at the end, after which it prints its
     `procstat` records of both marks);
  3. runs the clients against every served port at once, one process per
     port: Debian's redis-benchmark (`-t set,get`, a bounded number of
     requests), or YCSB workload A (tools/ycsb.py: its load phase before the
     start mark, its run phase inside the window);
  4. sends the end mark (tag 2) the same way and waits for its records;
  5. stops QEMU, and adds a host record
     `{"bench": "redis", "config": {...}, "ops": N, "ops_source": "server", "ops_configured": N,
     "errors": N, "seconds": S}` to the console text, which tools/redis_figures.py turns into
     figures.  `ops` is what the servers counted (INFO's total_commands_processed of every
     served port just before the start mark and just after the end mark, less the host's own
     INFO commands); a server without that count leaves the configured request count, and
     `ops_source` says which.  `server` is the server the guest's `redis` record names (a Linux
     guest's); else "redis" and the version its INFO reports.

Every wait is bounded by the boot's timeout; servers are reached on
127.0.0.1 only.  Returns (status, console text) like sweep.py's runners:
status 0 when every client finished cleanly and both marks were printed.

    python3 tools/redis_run.py [--client ycsb --records 32000 --requests 100000] -- <qemu_run.py command...>
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import procstat
import records as rec
import redis_figures
import ycsb

BENCHMARK_TESTS = ("set", "get")  # redis-benchmark's tests that a window may run
# The exit status when there is nothing to measure: the guest ended without
# serving (a build without lwIP says why), or the host lacks redis-benchmark.
SKIPPED = 77
MARK_TIMEOUT = 60.0  # seconds for a mark's reply and records, whatever the load before it
# A control port request is sent again after this many seconds without its reply: a datagram,
# or its reply, may be lost (a frame the NIC dropped), and a repeat does no harm (control_port.h).
CONTROL_RESEND = 1.0


def request_line(port: int, data: bytes, timeout: float) -> str:
    """Send data to 127.0.0.1:port; the reply's first line."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(data)
        reply = b""
        while not reply.endswith(b"\n"):
            chunk = s.recv(256)
            if not chunk:
                break
            reply += chunk
    return reply.decode(errors="replace").strip()


def read_reply(sock: socket.socket) -> bytes:
    """One RESP2 reply: a line, or a bulk string whole (its `$<length>` line, data and CRLF)."""
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            return data
        data += chunk
    head, _, rest = data.partition(b"\r\n")
    if not head.startswith(b"$") or head == b"$-1":
        return head
    length = int(head[1:])
    while len(rest) < length + 2:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return rest[:length]


def server_info(port: int, timeout: float) -> dict:
    """INFO's fields of the server at 127.0.0.1:port ({name: value})."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(b"*1\r\n$4\r\nINFO\r\n")
        text = read_reply(s).decode(errors="replace")
    return dict((name, value.strip()) for name, _, value in (line.partition(":") for line in text.splitlines())
                if value)


def commands_processed(info: dict) -> int | None:
    """INFO's total_commands_processed, or None without it."""
    value = info.get("total_commands_processed", "")
    return int(value) if value.isdigit() else None


def control_request(port: int, request: str, timeout: float, host: str = "127.0.0.1") -> str:
    """One request to the NIC driver's control port, reached at host:port (UDP): its reply.
    Sent again every CONTROL_RESEND seconds until a reply comes; TimeoutError after `timeout`."""
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect((host, port))
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no reply to {request!r} on the control port in {timeout:g} s")
            try:
                s.send(request.encode())
                s.settimeout(min(CONTROL_RESEND, left))
                return s.recv(2048).decode(errors="replace").strip()
            except (socket.timeout, ConnectionRefusedError):
                continue


def send_linux_mark(port: int, tag: int, timeout: float) -> str:
    """A mark on a Linux guest's marks port: its reply line.  The end mark also asks the guest
    to print its records (tools/linux_init.sh)."""
    line = f"{tag} print\n" if tag == redis_figures.END_TAG else f"{tag}\n"
    return request_line(port, line.encode(), timeout)


def server_operations(before: dict, after: dict) -> int | None:
    """The commands the servers ran between two snapshots of INFO's
    total_commands_processed ({port: count}), less the host's own: each
    port's first INFO (counted once it has run).  The marks are no commands
    of the servers: they go to the control port or a Linux guest's marks
    port.  None when a server did not report the count."""
    if not before or set(before) != set(after) or None in before.values() or None in after.values():
        return None
    return sum(after[p] - before[p] for p in before) - len(before)


def benchmark_command(port: int, requests: int, clients: int, tests=BENCHMARK_TESTS) -> list:
    return ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-n", str(requests),
            "-c", str(clients), "-t", ",".join(tests), "-q"]


def finished_tests(output: str) -> set:
    """The tests redis-benchmark -q reported a result for ("MSET (10 keys): N requests per
    second" gives "mset"); its progress lines, ended by a carriage return, are no result."""
    return {line.split(":")[0].split()[0].lower() for line in output.replace("\r", "\n").splitlines()
            if "requests per second" in line}


def run_redis_benchmark(ports: list, requests: int, clients: int, deadline: float,
                        tests=BENCHMARK_TESTS) -> tuple:
    """redis-benchmark on every port at once: (operations, errors, seconds, notes)."""
    began = time.monotonic()
    procs = [subprocess.Popen(benchmark_command(p, requests, clients, tests), stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, errors="replace")
             for p in ports]
    errors, notes = 0, []
    for p, client in zip(ports, procs):
        try:
            out, _ = client.communicate(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            client.kill()
            out, _ = client.communicate()
            notes.append(f"redis_run: redis-benchmark on port {p} did not finish in time")
        unfinished = [t for t in tests if t not in finished_tests(out)]
        if client.returncode != 0 or "error" in out.lower() or unfinished:
            errors += 1
            if unfinished:
                notes.append(f"redis_run: redis-benchmark on port {p} reported no result for "
                             + ",".join(unfinished))
            notes.append(f"redis_run: redis-benchmark on port {p}: exit {client.returncode}: "
                         + " ".join(out.split())[-300:])
    return requests * len(tests) * len(ports), errors, time.monotonic() - began, notes


def run_ycsb(ports: list, records: int, operations: int, deadline: float, mark) -> tuple:
    """YCSB workload A: the load phase, then mark() (the window's start), then the
    run phase on every port at once: (operations, errors, seconds, notes).  The
    seconds are YCSB's own run time of its slowest client, without the JVM's start."""
    ycsb.build()
    load = ycsb.run_phase("load", ports, records, records, timeout=max(1.0, deadline - time.monotonic()))
    mark()
    run = ycsb.run_phase("run", ports, records, operations, timeout=max(1.0, deadline - time.monotonic()))
    ops = sum(run["operations"].values())
    seconds = max(c["runtime_ms"] for c in run["clients"]) / 1000.0
    return ops, load["errors"] + run["errors"], seconds, []


class MarkError(Exception):
    pass


class Console:
    """The boot's console lines, read on a thread, with the records seen so far."""

    def __init__(self, stream) -> None:
        self.lines: list[str] = []
        self.records: list[dict] = []
        self.changed = threading.Condition()
        self.ended = False
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream) -> None:
        for line in stream:
            with self.changed:
                self.lines.append(line.rstrip("\n"))
                if line.startswith(rec.PREFIX):
                    try:
                        self.records += rec.parse_lines([line])
                    except rec.RecordError:
                        pass  # kept in the text: the sweep's parser reports it
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def wait_for(self, predicate, deadline: float) -> bool:
        with self.changed:
            while not predicate(self.records):
                left = deadline - time.monotonic()
                if left <= 0 or self.ended:
                    return predicate(self.records)
                self.changed.wait(left)
            return True

    def text(self) -> str:
        with self.changed:
            return "\n".join(self.lines) + "\n"


def host_forwards(records) -> dict:
    """{guest port: the host port that reaches it}, from qemu_run's `net` record."""
    return {f["guest"]: f["host"] for r in rec.of_type(records, "net") for f in r["net"]["forwards"]}


# Console records that say the kernel or a Redis process went wrong.
FAULT_RECORDS = ("panic", "posix_fault", "redis_instance_end")


def served_address(records) -> str:
    """Where the host reaches the guest's served ports: 127.0.0.1 through QEMU's port forwards,
    or the guest's own address on a tap device (qemu_run.py --tap, tools/net_tap.py)."""
    return next((r["net"]["address"] for r in rec.of_type(records, "net") if "address" in r["net"]),
                "127.0.0.1")


def served_host_ports(records) -> list[int]:
    """The host ports that reach a port the guest's app serves, in guest port order."""
    forwards = host_forwards(records)
    served = [p for r in rec.of_type(records, "redis") for p in r["redis"]["ports"]]
    return [forwards[p] for p in sorted(served) if p in forwards]


def control_port(records) -> int | None:
    """The host UDP port that reaches the NIC driver's control port the `redis` record names,
    or None when it names none (a Linux guest) or qemu_run forwards none to it."""
    named = [r["redis"]["control"] for r in rec.of_type(records, "redis") if "control" in r["redis"]]
    udp = {f["guest"]: f["host"] for r in rec.of_type(records, "net") for f in r["net"].get("udp", [])}
    return udp.get(named[-1]) if named else None


def linux_marks_port(records) -> int | None:
    """The host port of a Linux guest's marks port, or None for the kernel's guests."""
    named = [r["linux"]["marks"] for r in rec.of_type(records, "linux") if "marks" in r["linux"]]
    return host_forwards(records).get(named[-1]) if named else None


def server_name(records, info: dict | None = None) -> str:
    """The server the guest's `redis` record names (a Linux guest's); else the real Redis, by
    the version its INFO (info, when given) reports."""
    named = [r["redis"]["server"] for r in rec.of_type(records, "redis") if "server" in r["redis"]]
    if named:
        return named[-1]
    version = (info or {}).get("redis_version")
    return f"redis {version}" if version else "redis"


def _linux_marks_printed(records) -> bool:
    """Both marks' procstat records, one per core of the `linux` record, are there."""
    found = procstat.marks(records)
    cores = [r["linux"]["cores"] for r in rec.of_type(records, "linux") if "cores" in r["linux"]]
    return bool(cores) and all(len(found.get(tag, [])) == cores[-1]
                               for tag in (redis_figures.START_TAG, redis_figures.END_TAG))


def _mark_printed(tag: int):
    def printed(records) -> bool:
        boot = rec.of_type(records, "boot")
        cores = boot[-1]["boot"]["cores"] if boot else 1
        got = redis_figures.marks(records).get(tag, [])
        lockstats = sum(1 for r in records if rec.record_type(r) == "lockstats")
        # The lockstats group follows the kstats group: wait for a full one after this mark.
        return len(got) == cores and lockstats >= cores * (2 if tag == redis_figures.END_TAG else 1)
    return printed


@contextlib.contextmanager
def booted(cmd: list):
    """Start cmd (a qemu_run.py command) in a session of its own and yield its Console; on
    leaving, stop the whole session (QEMU with it), by force after 10 s."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True)
    try:
        yield Console(proc.stdout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def run(cmd: list, timeout: float, requests: int, clients: int, client: str = "redis-benchmark",
        records: int = 1000, before_window=None, tests=BENCHMARK_TESTS) -> tuple:
    """Boot with cmd (a qemu_run.py --net command for app=redis) and measure one window.
    client: "redis-benchmark" (requests of each of `tests` per port, clients connections each;
    a window of GETs alone is preceded by the same SETs, outside it, so that its GETs find their
    key) or "ycsb" (workload A: records per server, requests operations per client).
    before_window(host ports), when given, runs once the guest serves, before anything else."""
    needed = "redis-benchmark" if client == "redis-benchmark" else "java"
    if shutil.which(needed) is None:
        return SKIPPED, f"redis_run: {needed} is not installed (tools/ensure_deps.sh installs it)\n"
    deadline = time.monotonic() + timeout
    with booted(cmd) as console:
        return _window(console, deadline, requests, clients, client, records, before_window, tests)


def _window(console: Console, deadline: float, requests: int, clients: int, client: str, records: int,
            before_window, tests) -> tuple:
    """run()'s window on a guest that booted: (status, console text and the host's notes)."""
    notes: list[str] = []
    status = 1

    def mark(tag: int) -> None:
        linux = linux_marks_port(console.records)
        control = control_port(console.records)
        if linux is not None:
            reply, ok = send_linux_mark(linux, tag, MARK_TIMEOUT), "+OK"
            # The Linux guest prints its records only after the end mark, outside the window.
            printed = _linux_marks_printed if tag == redis_figures.END_TAG else (lambda records: True)
        elif control is not None:
            reply, ok = control_request(control, f"kstats {tag}", MARK_TIMEOUT), f"OK kstats {tag}"
            printed = _mark_printed(tag)
        else:
            raise MarkError("the guest names no control port for the marks")
        if reply != ok or not console.wait_for(printed, time.monotonic() + MARK_TIMEOUT):
            raise MarkError(f"the mark {tag} failed (reply {reply!r})")

    try:
        if not console.wait_for(lambda rs: rec.of_type(rs, "net") and rec.of_type(rs, "redis"), deadline):
            if rec.done_status(console.records) is not None:
                said = [line for line in console.lines
                        if line.strip() and not line.startswith((rec.PREFIX, "qemu_run:"))]
                notes.append("redis_run: skipped: the guest ended without serving: "
                             + (said[-1] if said else "it printed no reason"))
                return SKIPPED, console.text() + "\n".join(notes) + "\n"
            notes.append("redis_run: no net and redis records before the timeout")
            return status, console.text() + "\n".join(notes) + "\n"
        ports = served_host_ports(console.records)
        if not ports:
            notes.append("redis_run: the guest serves no forwarded port")
            return status, console.text() + "\n".join(notes) + "\n"
        if before_window is not None:
            before_window(ports)
        counts: dict = {}

        def start() -> None:
            infos = {p: server_info(p, MARK_TIMEOUT) for p in ports}
            counts["info"] = infos[ports[0]]
            counts["before"] = {p: commands_processed(i) for p, i in infos.items()}
            mark(redis_figures.START_TAG)

        if client == "ycsb":
            configured, errors, seconds, more = run_ycsb(ports, records, requests, deadline, start)
            config = {"client": "ycsb", "workload": "a", "ports": len(ports), "records": records,
                      "operations": requests}
        else:
            if "get" in tests and "set" not in tests:
                _, errors, _, more = run_redis_benchmark(ports, requests, clients, deadline, ("set",))
                if errors:
                    notes += more
                    return status, console.text() + "\n".join(notes) + "\n"
            start()
            configured, errors, seconds, more = run_redis_benchmark(ports, requests, clients, deadline,
                                                                    tests)
            config = {"client": "redis-benchmark", "ports": len(ports), "requests": requests,
                      "clients": clients, "tests": list(tests)}
        notes += more
        mark(redis_figures.END_TAG)
        counted = server_operations(counts.get("before", {}),
                                    {p: commands_processed(server_info(p, MARK_TIMEOUT)) for p in ports})
        config["server"] = server_name(console.records, counts.get("info"))
        # The servers' own count when they keep one; the clients' configured count otherwise.
        record = {"bench": "redis", "config": config,
                  "ops": counted if counted is not None else configured,
                  "ops_source": "server" if counted is not None else "configured",
                  "ops_configured": configured, "errors": errors, "seconds": round(seconds, 3)}
        notes.append(rec.PREFIX + json.dumps(record))
        status = 0 if errors == 0 else 1
        return status, console.text() + "\n".join(notes) + "\n"
    except (OSError, MarkError, ycsb.YcsbError) as err:
        notes.append(f"redis_run: {err}")
        return status, console.text() + "\n".join(notes) + "\n"


def main(argv=None) -> int:
    import argparse

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--client", choices=["redis-benchmark", "ycsb"], default="redis-benchmark")
    p.add_argument("--requests", type=int, default=2000,
                   help="redis-benchmark: per port and test; ycsb: operations per client")
    p.add_argument("--clients", type=int, default=10, help="redis-benchmark: connections per port")
    p.add_argument("--tests", default=",".join(BENCHMARK_TESTS),
                   help="redis-benchmark: the tests of the window, some of " + ",".join(BENCHMARK_TESTS))
    p.add_argument("--records", type=int, default=1000, help="ycsb: records per server (the papers: 32,000)")
    p.add_argument("command", nargs="+", help="the qemu_run.py command (after --)")
    args = p.parse_args(argv)
    tests = tuple(t for t in args.tests.split(",") if t)
    if not tests or not set(tests) <= set(BENCHMARK_TESTS):
        p.error("--tests takes some of " + ",".join(BENCHMARK_TESTS))
    status, text = run(args.command, args.timeout, args.requests, args.clients, args.client, args.records,
                       tests=tests)
    sys.stdout.write(text)
    if status == 0:
        fig = redis_figures.figures(rec.parse_text(text))
        print(json.dumps(fig, indent=1))
    return status


if __name__ == "__main__":
    sys.exit(main())
