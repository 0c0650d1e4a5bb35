"""QEMU's port forwards for the Redis server, checked on the host without a guest.

- qemu_run.py --net forwards exactly the ports the app serves (docs/network.md, "Running it").
- tools/listen_backlog.c, which qemu_run preloads into QEMU, gives a listener that asked for a
  backlog of 1 (what QEMU's user network asks for each forward) room for every connection a
  client opens at once; without it the host kernel completes only the first two handshakes and
  drops the rest, the cause of the stalls of docs/network.md ("The stalls").
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading

import pytest

import qemu_run

# Connections opened at once, as redis-benchmark -c 20 does.
CONNECTIONS = 20
# How long each connect may take.  A handshake the kernel completes takes no time at all; one it
# drops waits for the client's own retransmission, and with the listener never accepting, its
# queue never frees, so those connections never complete however long this is.
CONNECT_TIMEOUT = 5.0
# A listener that asked for a backlog of 1 holds this many completed handshakes (Linux: backlog + 1).
LINUX_QUEUE_OF_BACKLOG_1 = 2

# A listener that asks for a backlog of 1, like libslirp's, and never accepts; it prints its port.
LISTENER = """
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
print(s.getsockname()[1], flush=True)
sys.stdin.read()
"""


def test_redis_forwards_one_port_per_served_instance():
    assert qemu_run.served_ports("app=redis", 4) == 3
    assert qemu_run.served_ports("app=redis", 1) == 1
    assert qemu_run.served_ports("app=redis layout=percore accel=tcg", 4) == 3
    assert qemu_run.served_ports("app=redis layout=processes", 4) == 1
    assert qemu_run.served_ports("app=tests only=nic", 2) == 2


def connected_at_once(env: dict | None) -> int:
    """How many of CONNECTIONS simultaneous connects to a backlog-1 listener complete."""
    listener = subprocess.Popen([sys.executable, "-c", LISTENER], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert listener.stdout is not None
        port = int(listener.stdout.readline())
        done = []
        lock = threading.Lock()
        socks = []

        def connect() -> None:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=CONNECT_TIMEOUT)
            except OSError:
                return
            with lock:
                done.append(1)
                socks.append(s)

        threads = [threading.Thread(target=connect) for _ in range(CONNECTIONS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for s in socks:
            s.close()
        return len(done)
    finally:
        listener.kill()
        listener.wait()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the backlog figures are Linux's")
@pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                    reason="no C compiler to build tools/listen_backlog.c")
def test_listen_backlog_shim_admits_every_connection_opened_at_once():
    shim = qemu_run.listen_backlog_shim()
    assert shim is not None and shim.exists()
    without = connected_at_once(None)
    with_shim = connected_at_once({**os.environ, "LD_PRELOAD": str(shim)})
    print(f"backlog 1: {without} of {CONNECTIONS} connected; with the shim: {with_shim}")
    assert without <= LINUX_QUEUE_OF_BACKLOG_1 + 1
    assert with_shim == CONNECTIONS
