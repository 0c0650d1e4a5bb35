"""Helpers for the tests that boot the real Redis in the guest and drive it from the host.

The app `redis` (docs/network.md) serves the embedded POSIX program, Debian's redis-server built
for the port (`make posix`, docs/posix.md), over the NIC on QEMU user networking
(tools/qemu_run.py --net).  The guest prints the ports it serves in a `redis` record; qemu_run's
`net` record maps them to host ports on 127.0.0.1.  Server boots one such guest and reads its
console; the rest are small clients: RESP requests and replies, INFO, floods of reset
connections and the NIC driver's control port.
"""
from __future__ import annotations

import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

from conftest import CLIENT_TIMEOUT, REPO, build, redis_cli
from records import PREFIX

import redis_run

# Seconds for the guest to boot and start serving under TCG (4 virtual CPUs on 2 host cores): only
# a bound on waiting, generous because a loaded host stretches the per-core layout's start to
# minutes.
SERVE_TIMEOUT = 600
# The guest's own limit; a test stops it long before, when it is done.
GUEST_TIMEOUT = 1800
# Each Redis process's heap (boot argument heap_mb): maxmemory is half of it
# (userland/redis/redis_layouts.c).
HEAP_MB = 64

_programs: dict[str, Path] = {}


def redis_program(arch: str) -> Path:
    """build/posix/<arch>/redis-server, built once a session (make posix)."""
    if arch not in _programs:
        subprocess.run(["make", "-s", "-C", str(REPO), "posix", f"ARCH={arch}", "-j2"], check=True,
                       capture_output=True, text=True)
        _programs[arch] = REPO / "build" / "posix" / arch / "redis-server"
    return _programs[arch]


class Server:
    """A booted guest serving Redis: its qemu_run process and the host ports of its instances."""

    def __init__(self, arch: str, lock: str, cpus: int, cmdline: str,
                 guest_timeout: float = GUEST_TIMEOUT, posix_program: Path | None = None,
                 tap: bool = False):
        """cmdline is the guest's boot command line ("app=redis ..."); posix_program embeds a
        POSIX program (the real Redis, docs/posix-loader.md) in the image; tap puts the NIC on a
        tap device (tools/net_tap.py), where the host reaches the guest at `address`."""
        opts = {"posix_program": str(posix_program)} if posix_program else {}
        image = build(arch, lock, **opts) / "kernel.elf"
        self.argv = [sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", arch,
                     "--lock", lock, "--image", str(image), "--cpus", str(cpus), "--accel", "tcg",
                     "--timeout", str(guest_timeout), "--net", *(["--tap"] if tap else []),
                     "--cmdline", cmdline]
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.log = ""
        self.forwards: dict[int, int] = {}
        self.address = "127.0.0.1"
        self.ports: list[int] = []
        self.pending = b""

    def read_until(self, found, timeout: float, what: str) -> dict:
        """Read the console until found(record) is true for an `@@` record, and return that
        record; fail with the log when the guest ends or `timeout` seconds pass first."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if not ready:
                continue
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                break
            self.pending += chunk
            *lines, self.pending = self.pending.split(b"\n")
            for i, raw in enumerate(lines):
                line = raw.decode("utf-8", "replace").rstrip("\r")
                self.log += line + "\n"
                if not line.startswith(PREFIX):
                    continue
                record = json.loads(line[len(PREFIX):])
                if "net" in record:
                    self.forwards = {f["guest"]: f["host"] for f in record["net"]["forwards"]}
                    self.address = record["net"].get("address", self.address)
                if found(record):
                    self.pending = b"\n".join(lines[i + 1:] + [self.pending])
                    return record
        raise AssertionError(f"no {what} in {timeout} s:\n{self.log}")

    def read_until_serving(self) -> None:
        """Read the console until the guest's `redis` record; fail with the log otherwise."""
        record = self.read_until(lambda r: "redis" in r, SERVE_TIMEOUT, "redis record (serving)")
        guest_ports = record["redis"]["ports"]
        missing = [p for p in guest_ports if p not in self.forwards]
        assert not missing, f"guest ports without a host forward: {missing}\n{self.log}"
        self.ports = [self.forwards[p] for p in guest_ports]

    def records(self, kind: str) -> list[dict]:
        """The console's records of this kind so far."""
        return [r for r in (json.loads(line[len(PREFIX):]) for line in self.log.splitlines()
                            if line.startswith(PREFIX)) if kind in r]

    def control_port(self) -> int:
        """The host UDP port of the NIC driver's control port (docs/network.md)."""
        port = redis_run.control_port(self.records("net") + self.records("redis"))
        assert port is not None, f"no control port forwarded:\n{self.log[-4000:]}"
        return port

    def stop(self) -> None:
        """End QEMU (qemu_run's child, found by its parent's id), then qemu_run itself."""
        if self.proc.poll() is None:
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children")
            try:
                qemu_pids = [int(p) for p in children.read_text().split()]
            except OSError:
                qemu_pids = []
            for pid in qemu_pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc.stdout:
            self.log += self.proc.stdout.read().decode("utf-8", "replace")
            self.proc.stdout.close()


def ask_control(port: int, request: bytes, log: str = "") -> str:
    """Send one datagram to the control port at 127.0.0.1:port (again every second until a
    reply); the reply.  log is the guest's console, shown when no reply comes."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("127.0.0.1", port))
        for _ in range(int(CLIENT_TIMEOUT)):
            s.send(request)
            s.settimeout(redis_run.CONTROL_RESEND)
            try:
                return s.recv(2048).decode(errors="replace")
            except socket.timeout:
                continue
    raise AssertionError(f"no reply to {request[:40]!r}\n{log[-3000:]}")


def flood(port: int, count: int) -> None:
    """count connections at once; half send part of a command; all end in a reset (RST)."""
    socks = []
    try:
        for i in range(count):
            s = socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            if i % 2:
                s.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nk")
            socks.append(s)
    finally:
        for s in socks:
            s.close()


def resp_command(*args: bytes | str) -> bytes:
    """One request in RESP's multibulk form."""
    parts = [a.encode() if isinstance(a, str) else a for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def resp_reply(port: int, request: bytes) -> bytes:
    """Send raw bytes on a fresh connection; what comes back before the server closes it."""
    with socket.create_connection(("127.0.0.1", port), timeout=CLIENT_TIMEOUT) as s:
        s.sendall(request)
        s.shutdown(socket.SHUT_WR)
        reply = b""
        while chunk := s.recv(65536):
            reply += chunk
    return reply


class RespError(Exception):
    pass


class Resp:
    """A RESP2 client on one socket, enough to pipeline commands and read their replies."""

    def __init__(self, port: int, host: str = "127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=CLIENT_TIMEOUT)
        self.buf = b""

    def send(self, *commands: tuple[bytes, ...]) -> None:
        self.sock.sendall(b"".join(resp_command(*words) for words in commands))

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise RespError("the server closed the connection")
        self.buf += chunk

    def _line(self) -> bytes:
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line

    def reply(self):
        """One reply: bytes for +status, RespError instance for -error, int, bulk or None, list."""
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind == b"+":
            return rest
        if kind == b"-":
            return RespError(rest.decode(errors="replace"))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            if n < 0:
                return None
            while len(self.buf) < n + 2:
                self._fill()
            data, self.buf = self.buf[:n], self.buf[n + 2:]
            return data
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self.reply() for _ in range(n)]
        raise RespError(f"unparsable reply line {line[:80]!r}")

    def call(self, *words: bytes):
        self.send(words)
        return self.reply()

    def reset(self) -> None:
        """Close with a reset (RST), whatever is unread or unsent."""
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.sock.close()

    def close(self) -> None:
        self.sock.close()


def info(port: int) -> dict[str, str]:
    """INFO from a fresh connection, as name -> value."""
    c = Resp(port)
    try:
        text = c.call(b"INFO")
    finally:
        c.close()
    assert isinstance(text, bytes), text
    fields = {}
    for line in text.decode().splitlines():
        if ":" in line and not line.startswith("#"):
            name, value = line.split(":", 1)
            fields[name] = value
    return fields


def info_section(port: int, section: str) -> dict[str, str]:
    """One section of INFO, through redis-cli, as name -> value."""
    text = redis_cli(port, "INFO", section)
    return dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
