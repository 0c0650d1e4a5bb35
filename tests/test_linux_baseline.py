"""The Linux baseline (docs/linux-baseline.md): Debian's Linux with Debian's redis-server, one
instance per core, in the QEMU machine the kernel's Redis runs use, measured the same way.

Each configuration builds the port's guest from Debian packages (tools/linux_image.py), boots it
through tools/redis_run.py (under -icount where Linux runs so, see icount()), SETs a key on every
served port through its host forward and GETs it back, then measures a small redis-benchmark
window between the guest's marks.  The window's records must be there and sane: every core's procstat record of both
marks, the servers' own operation count, instructions per operation above 0 and kernel + user
no more than the window's total.

Skips, saying which, when a Debian package cannot be fetched, or QEMU or redis-benchmark is
missing.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "tools"))
import linux_image  # noqa: E402
import procstat  # noqa: E402
import redis_figures  # noqa: E402
import redis_run  # noqa: E402
from records import parse_text, record_type  # noqa: E402

QEMU = {"x86_64": "qemu-system-x86_64", "arm-imx6": "qemu-system-arm"}
# Guest seconds (qemu_run's GuestBudget) for a boot and its window: only a bound on waiting.
TIMEOUT = 300
# Every boot runs under -icount but arm-imx6's on 2 CPUs, which livelocks there in this QEMU
# (docs/linux-baseline.md): it runs on plain TCG, where the figures are guest nanoseconds, not
# instructions; the checks are the same.
def icount(arch: str, cpus: int) -> bool:
    return cpus == 1 or linux_image.PORTS[arch].smp_under_icount


# The window: requests of each test (set, get) per port, connections per port.  /proc/stat counts
# 10 ms ticks (10^7 instructions under -icount): the window must span several for kernel time
# to show at all.
REQUESTS = 2000
CLIENTS = 5


def resp(*words: str) -> bytes:
    return b"*%d\r\n" % len(words) + b"".join(b"$%d\r\n%s\r\n" % (len(w), w.encode()) for w in words)


def set_and_get(ports: list[int]) -> list[tuple[int, str, str]]:
    """SET a key of its own on every port, then GET each back: [(port, SET reply, GET reply)]."""
    replies = []
    for port in ports:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            s.sendall(resp("SET", f"baseline:{port}", f"value-{port}"))
            set_reply = redis_run.read_reply(s).decode()
    for port in ports:
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            s.sendall(resp("GET", f"baseline:{port}"))
            replies.append((port, set_reply, redis_run.read_reply(s).decode()))
    return replies


@pytest.fixture(scope="module", params=["x86_64", "arm-imx6"])
def guest(request):
    """The port's guest, built once."""
    arch = request.param
    if shutil.which(QEMU[arch]) is None:
        pytest.skip(f"{QEMU[arch]} is not installed (make deps)")
    if shutil.which("redis-benchmark") is None:
        pytest.skip("redis-benchmark (Debian's redis-tools) is not installed (make deps)")
    try:
        return arch, linux_image.build(arch)
    except (linux_image.ImageError, subprocess.CalledProcessError) as err:
        pytest.skip(f"the Linux guest could not be made: {err}")


@pytest.mark.parametrize("cpus", [1, 2])
def test_linux_serves_and_measures(guest, cpus, tmp_path):
    arch, folder = guest
    checked: list = []
    cmd = linux_image.boot_command(arch, folder, cpus, icount=icount(arch, cpus), timeout=TIMEOUT,
                                   log=tmp_path / "console.log")
    status, text = redis_run.run(cmd, TIMEOUT, REQUESTS, CLIENTS,
                                 before_window=lambda ports: checked.extend(set_and_get(ports)))
    assert status == 0, text[-3000:]
    records = parse_text(text)

    # One instance per core, each holding the key set through its own forward.
    served = [r["redis"] for r in records if record_type(r) == "redis"]
    assert served and served[-1]["ports"] == [6379 + k for k in range(cpus)]
    assert served[-1]["server"].startswith("Debian's redis-server 7.")
    assert len(checked) == cpus
    for port, set_reply, got in checked:
        assert (set_reply, got) == ("+OK", f"value-{port}")

    # Both marks, one procstat record per core each.
    marks = procstat.marks(records)
    assert {tag: len(cores) for tag, cores in marks.items()} == {1: cpus, 2: cpus}
    fig = redis_figures.figures(records)
    # What the servers counted: the window's SETs and GETs and redis-benchmark's own CONFIG GETs.
    assert fig["ops_source"] == "server"
    assert REQUESTS * 2 * cpus <= fig["ops"] <= REQUESTS * 2 * cpus + 4 * cpus
    assert fig["errors"] == 0
    assert fig["kernel_per_op"] > 0
    assert fig["kernel_per_op"] + fig["user_per_op"] <= fig["total_per_op"]
    assert all(0 < u <= 1 for u in fig["utilisation"])
    assert fig["entries_per_op"] is None


# --- without QEMU: the window's arithmetic and the report's rows ---------------------------------


def test_procstat_window_in_guest_nanoseconds():
    from redis_console import LINUX_TICKS, linux_console

    cores = redis_figures.window(parse_text(linux_console(cpus=2)))
    tick = 10_000_000  # one USER_HZ tick of guest time: 10^7 instructions under -icount
    for c in cores:
        assert c.elapsed == 50 * tick
        assert c.kernel == (LINUX_TICKS["system"] + LINUX_TICKS["softirq"]) * tick
        assert c.user == (LINUX_TICKS["user"] + LINUX_TICKS["nice"]) * tick
        assert c.idle == LINUX_TICKS["idle"] * tick
        assert c.entries is None and c.delay is None
    fig = redis_figures.figures(parse_text(linux_console(cpus=2, ops=2000)))
    assert fig["kernel_per_op"] == 2 * 14 * tick / 2000
    assert fig["user_per_op"] == 2 * 6 * tick / 2000
    assert fig["total_per_op"] == 2 * 50 * tick / 2000
    assert fig["utilisation"] == [pytest.approx(0.4)] * 2
    assert fig["entries_per_op"] is None and fig["entries_per_op_by_cause"] is None


def test_linux_window_needs_both_marks():
    from redis_console import linux_console

    text = "\n".join(line for line in linux_console().splitlines() if '"tag": 2' not in line)
    with pytest.raises(redis_figures.WindowError, match="no procstat records with tag 2"):
        redis_figures.figures(parse_text(text))


def test_marks_go_to_the_marks_port_and_not_to_a_server():
    from redis_console import linux_console

    records = parse_text(linux_console(cpus=2))
    assert redis_run.linux_marks_port(records) == 40002  # guest port 6381's host forward
    assert redis_run.served_host_ports(records) == [40000, 40001]
    assert redis_run.server_name(records) == "Debian's redis-server 7.0.15"
    assert redis_run._linux_marks_printed(records)
    # No mark is a server command: only each port's first INFO is the host's own.
    assert redis_run.server_operations({1: 10, 2: 20}, {1: 111, 2: 121}) == 200


def test_report_puts_linux_beside_the_variants_by_cores():
    import redis_report
    from redis_console import console, linux_console

    records = []
    for job, text in (("bkl-1", console("bkl", 1)), ("bkl-2", console("bkl", 2)),
                      ("linux-1", linux_console(1)), ("linux-2", linux_console(2))):
        lock, cpus = job.split("-")
        records += [{**r, "sweep": {"job": job, "lock": lock, "cpus": int(cpus), "icount": True}}
                    for r in parse_text(text)]
    rows = [line.split() for line in redis_report.per_op_table(redis_report.boots(records)).splitlines()[2:]]
    assert [(r[0], r[1]) for r in rows] == [("bkl", "1"), ("linux", "1"), ("bkl", "2"), ("linux", "2")]
    assert " ".join(rows[0][9:]) == "redis 7.0.15"
    # Its figures are in /proc/stat's 10 ms ticks: 10,000,000 instructions over 2,000 operations.
    assert " ".join(rows[1][9:]) == "Debian's redis-server 7.0.15 (one /proc/stat tick is 5,000 per op)"
    assert rows[1][4] == "-"  # Linux counts no kernel entries
