"""The NIC driver's control port (userland/net/control_port.h, docs/network.md): UDP port 7000
on the guest, served by the driver on core 0 beside the real Redis (app=redis), which
is not ours to give a mark command.

One boot per configuration (a module fixture), driven from the host through qemu_run's UDP
forward: a mark prints one `kstats` record per core with its tag, then a `lockstats` record per
core, and replies once they are out; a repeated tag replies again and prints nothing; `check` runs
the kernel invariant checker; malformed, empty, oversized and out-of-range requests get an ERR
reply and print nothing; and every Redis instance still answers afterwards.
"""
from __future__ import annotations

import itertools
import json

import pytest

import redis_run
from conftest import CLIENT_TIMEOUT, REPO, needs_arm_tools, needs_real_redis, redis_cli
from records import PREFIX
from redis_guest import Server, ask_control, redis_program

pytestmark = needs_real_redis

CONFIGS = [pytest.param(("x86_64", "bkl", 4), id="x86_64-bkl-4cpu"),
           pytest.param(("arm-imx6", "bkl", 4), id="arm-imx6-bkl-4cpu", marks=needs_arm_tools)]
CPUS = 4
# Tags of the marks that follow a bad request: each new, so each prints its records.
_fresh_tags = itertools.count(1000)


@pytest.fixture(scope="module", params=CONFIGS)
def guest(request):
    arch, lock, cpus = request.param
    s = Server(arch, lock, cpus, posix_program=redis_program(arch), cmdline="app=redis")
    s.arch = arch
    try:
        s.read_until_serving()
        s.control = s.control_port()
        yield s
    finally:
        s.stop()


def ask(guest, request: bytes) -> str:
    """One request to the guest's control port; the reply."""
    return ask_control(guest.control, request, guest.log)


def records_since(guest, start: int, kind: str) -> list[dict]:
    """The records of this kind on the console after the first `start` characters of its log."""
    return [r for r in (json.loads(line[len(PREFIX):]) for line in guest.log[start:].splitlines()
                        if line.startswith(PREFIX)) if kind in r]


def mark(guest, tag: int) -> int:
    """Take a mark that must be new; wait for its kstats and lockstats records and return where
    in the log its records begin."""
    start = len(guest.log)
    assert ask(guest, f"kstats {tag}".encode()) == f"OK kstats {tag}"
    guest.read_until(lambda r: "lockstats" in r and r["lockstats"]["core"] == CPUS - 1,
                     CLIENT_TIMEOUT, f"the lockstats records of mark {tag}")
    return start


def test_a_mark_prints_one_kstats_record_per_core_with_its_tag(guest):
    start = mark(guest, 11)
    kstats = records_since(guest, start, "kstats")
    assert [r["kstats"]["core"] for r in kstats] == list(range(CPUS)), guest.log[start:]
    assert {r["kstats"]["tag"] for r in kstats} == {11}
    assert all(r["kstats"]["timed"] for r in kstats)
    assert [r["lockstats"]["core"] for r in records_since(guest, start, "lockstats")] == list(range(CPUS))


def test_a_repeated_tag_replies_ok_and_marks_nothing(guest):
    start = mark(guest, 12)
    assert ask(guest, b"kstats 12") == "OK kstats 12"
    assert ask(guest, b"kstats 12\n") == "OK kstats 12"
    # The next new mark's records follow at once: nothing was printed for the repeats.
    mark(guest, 13)
    tags = [r["kstats"]["tag"] for r in records_since(guest, start, "kstats")]
    assert tags == [12] * CPUS + [13] * CPUS, guest.log[start:]


def test_check_runs_the_kernel_invariant_checker(guest):
    assert ask(guest, b"check") == "OK check"


@pytest.mark.parametrize("request_bytes, why", [
    (b"hello", "ERR unknown request"),
    (b"", "ERR empty request"),
    (b"\n", "ERR empty request"),
    (b"kstats", "ERR unknown request"),
    (b"kstats ", "ERR bad tag"),
    (b"kstats -1", "ERR bad tag"),
    (b"kstats x", "ERR bad tag"),
    (b"kstats 1x", "ERR bad tag"),
    (b"kstats 99999999999999999999999", "ERR bad tag"),
    (b"kstats 18446744073709551616", "ERR bad tag"),     # 2^64
    (b"check please", "ERR unknown request"),
    (b"\x00\xff" * 16, "ERR unknown request"),
    (b"kstats 1" + b" " * 100, "ERR request too long"),
    (b"x" * 1400, "ERR request too long"),                # one frame, far too long
    (b"kstats 14" + b"9" * 4000, "ERR request too long"),  # fragments: only the first is seen
], ids=["word", "empty", "newline", "no-tag", "empty-tag", "negative", "letter", "trailing",
        "too-many-digits", "two-to-the-64", "check-with-words", "binary", "long", "one-frame",
        "fragmented"])
def test_a_bad_request_gets_an_error_and_marks_nothing(guest, request_bytes, why):
    start = len(guest.log)
    assert ask(guest, request_bytes).startswith(why)
    # A mark after it: its records are the first since the bad request.
    tag = next(_fresh_tags)
    mark(guest, tag)
    tags = [r["kstats"]["tag"] for r in records_since(guest, start, "kstats")]
    assert tags == [tag] * CPUS, guest.log[start:]


def test_a_tag_beyond_the_word_is_refused_on_32_bit_arm(guest):
    if guest.arch == "arm-imx6":
        assert ask(guest, b"kstats 4294967296").startswith("ERR bad tag")     # 2^32
        assert ask(guest, b"kstats 4294967295") == "OK kstats 4294967295"
        guest.read_until(lambda r: "lockstats" in r and r["lockstats"]["core"] == CPUS - 1,
                         CLIENT_TIMEOUT, "the lockstats records of mark 2^32 - 1")
    else:
        start = mark(guest, 2**32)
        assert {r["kstats"]["tag"] for r in records_since(guest, start, "kstats")} == {2**32}


def test_redis_still_answers_on_every_instance(guest):
    assert len(guest.ports) == CPUS - 1
    for port in guest.ports:
        assert redis_cli(port, "PING") == "PONG"
    assert ask(guest, b"check") == "OK check"


# ---- tools/redis_run.py on the real Redis: the marks on the control port

# The window of the redis_run boot: requests of each test (set, get) per port, connections per port.
REQUESTS = 200
CLIENTS = 5
# Guest seconds (qemu_run's GuestBudget) for the boot and its window: only a bound on waiting.
RUN_TIMEOUT = 600


@pytest.mark.parametrize("cpus", [1, 2])
def test_redis_run_measures_the_real_redis_through_the_control_port(cpus):
    """One boot through redis_run under -icount: on 1 CPU the driver and one Redis
    process on core 0, on 2 one Redis process on core 1.  The marks go to the control port, and
    the figures are the real Redis's, counted by the servers themselves."""
    import shutil
    import sys

    import redis_figures
    from conftest import build
    from records import parse_text, record_type

    if shutil.which("redis-benchmark") is None:
        pytest.skip("redis-benchmark (Debian's redis-tools) is not installed (make deps)")
    image = build("x86_64", "bkl", posix_program=redis_program("x86_64")) / "kernel.elf"
    cmd = [sys.executable, str(REPO / "tools" / "qemu_run.py"), "--arch", "x86_64", "--lock", "bkl",
           "--image", str(image), "--cpus", str(cpus), "--accel", "tcg", "--icount",
           "--timeout", str(RUN_TIMEOUT), "--cmdline", "app=redis", "--net"]
    status, text = redis_run.run(cmd, RUN_TIMEOUT, REQUESTS, CLIENTS)
    assert status == 0, text[-3000:]
    records = parse_text(text)

    served = [r["redis"] for r in records if record_type(r) == "redis"][-1]
    assert served["control"] == 7000
    assert [i["core"] for i in served["instances"]] == ([0] if cpus == 1 else [1])
    bench = [r for r in records if r.get("bench") == "redis"][-1]
    assert bench["config"]["server"].startswith("redis 7.0.")
    # Both marks, one kstats record per core each, taken through the control port.
    marks = redis_figures.marks(records)
    assert {tag: len(cores) for tag, cores in marks.items()} == {1: cpus, 2: cpus}
    fig = redis_figures.figures(records)
    # What Redis counted: the window's SETs and GETs and redis-benchmark's own CONFIG GETs, and
    # none of the marks.
    assert fig["ops_source"] == "server"
    assert REQUESTS * 2 <= fig["ops"] <= REQUESTS * 2 + 4, fig
    assert fig["errors"] == 0
    assert fig["kernel_per_op"] > 0 and fig["user_per_op"] > 0 and fig["entries_per_op"] > 0
    assert all(0 < u <= 1 for u in fig["utilisation"])
