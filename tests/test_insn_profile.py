"""tools/insn_profile.py: a per-function instruction profile of a benchmark's marked windows.

The host-side tests feed the trace parser and the symbol mapping made-up input with a known
answer.  The QEMU test profiles pingpong for real and holds the result to two independent facts:
the table adds up to the instruction count the guest measured itself with the -icount counter,
and functions whose number of executions the benchmark fixes are found exactly that often.
"""
import json
import shutil
from collections import Counter

import pytest

from conftest import build
import insn_profile as prof

SYMBOLS = prof.SymbolTable([
    prof.Symbol(0x1000, "alpha", "user"),
    prof.Symbol(0x1010, "beta", "user"),
    prof.Symbol(0xffffffff80000000, "kentry", "kernel"),
])


def trace(*pcs_and_exits) -> bytes:
    """Lines in QEMU 7.2's format: an int is a Trace line, a string an exec_tb_exit flags value."""
    out = []
    for item in pcs_and_exits:
        if isinstance(item, int):
            out.append(f"Trace 0: 0x7fb408000100 [0000000000000000/{item:016x}/00000040/ff020201] \n")
        else:
            out.append(f"exec_tb_exit tb:0x7fb408000100 flags={item}\n")
    return "".join(out).encode()


def test_nm_parsing_keeps_functions_only():
    text = ("0000000000001000 T alpha\n0000000000001010 t beta\n0000000000002000 D data\n"
            "0000000000001020 t $a\n0000000000001030 W weak\n")
    assert [(s.address, s.name) for s in prof.parse_nm(text, "user")] == \
        [(0x1000, "alpha"), (0x1010, "beta"), (0x1030, "weak")]


def test_window_counts_between_the_markers_in_chunks():
    begin, end = 0x1000, 0x1010
    data = trace(0x500, begin, "0x0", 0x1004, "0x0", 0xffffffff80000004, "0x1", end, "0x0", 0x1004, "0x0",
                 begin, "0x0", 0x1004, "0x0", end)
    wc = prof.WindowCounter(begin, end)
    for i in range(0, len(data), 7):        # lines split anywhere between chunks
        wc.feed(data[i:i + 7])
    wc.feed(b"")
    assert wc.windows == [Counter({begin: 1, 0x1004: 1, 0xffffffff80000004: 1}),
                          Counter({begin: 1, 0x1004: 1})]


def test_instruction_that_did_not_run_is_not_counted():
    """tb_exit 2 (icount budget spent): the instruction is logged again when it runs."""
    begin, end = 0x1000, 0x1010
    wc = prof.WindowCounter(begin, end)
    wc.feed(trace(begin, "0x2", begin, "0x0", 0x1004, "0x2", 0x1004, "0x0", 0x1008, "0x3", 0x1008, "0x1", end))
    assert wc.windows == [Counter({begin: 1, 0x1004: 1, 0x1008: 1})]


def test_device_access_translated_again_is_counted_once():
    """Under icount an MMIO load in a block not made for I/O is stopped (no exit logged) and
    translated again; a block left by an exception (no exit either) goes elsewhere next."""
    begin, end = 0x1000, 0x1010
    wc = prof.WindowCounter(begin, end)
    wc.feed(trace(begin, "0x0", 0x1004, 0x1004, "0x0", 0x1008, 0xffffffff80000000, "0x0", end))
    assert wc.windows == [Counter({begin: 1, 0x1004: 1, 0x1008: 1, 0xffffffff80000000: 1})]


def test_functions_and_entries():
    pcs = Counter({0x1000: 3, 0x1004: 5, 0x1010: 2, 0xffffffff80000000: 4, 0xffffffff80000010: 6, 0x10: 1})
    rows = {r["function"]: r for r in prof.profile_window(pcs, SYMBOLS)}
    assert rows["alpha"] == {"function": "alpha", "image": "user", "instructions": 8, "entries": 3}
    assert rows["beta"]["instructions"] == 2 and rows["beta"]["entries"] == 2
    assert rows["kentry"] == {"function": "kentry", "image": "kernel", "instructions": 10, "entries": 4}
    assert rows["?"]["instructions"] == 1
    assert sum(r["instructions"] for r in rows.values()) == sum(pcs.values())


def test_counter_check():
    pcs = Counter({0x1000: 10})
    record = {"bench": "b", "config": {}, "unit": "instructions", "counter": 10, "operations": 5}
    assert prof.window_report(pcs, record, SYMBOLS, 1)["matches_counter"]
    assert prof.window_report(pcs, record, SYMBOLS, 1)["per_operation"] == 2
    assert not prof.window_report(pcs, dict(record, counter=11), SYMBOLS, 1)["matches_counter"]
    assert not prof.window_report(pcs, dict(record, unit="cycles"), SYMBOLS, 1)["matches_counter"]


ITERS = 10


@pytest.fixture(scope="module")
def pingpong_profile(tmp_path_factory):
    if shutil.which("qemu-system-x86_64") is None:
        pytest.skip("qemu-system-x86_64 is not installed (make deps)")
    build_dir = build("x86_64", "none", debug="0")
    out = tmp_path_factory.mktemp("profile") / "profile.json"
    status = prof.main(["--arch", "x86_64", "--lock", "none", "--image", str(build_dir / "kernel.elf"),
                        "--cmdline", f"app=pingpong runs=1 iters={ITERS}", "--json", str(out)])
    assert out.exists(), f"insn_profile.py exited {status} without writing its JSON"
    return status, json.loads(out.read_text())


def test_profile_adds_up_to_the_icount_counter(pingpong_profile):
    status, result = pingpong_profile
    assert len(result["windows"]) == 4, "pingpong marks one window per configuration"
    for w in result["windows"]:
        assert w["counter_unit"] == "instructions"
        assert w["traced_instructions"] == w["counter"], w["config"]
        assert sum(f["instructions"] for f in w["functions"]) == w["counter"], w["config"]
        assert "?" not in {f["function"] for f in w["functions"]}, "every PC is in a known function"
    assert status == 0


def test_profile_attributes_known_functions(pingpong_profile):
    """Each round trip is one Call and one ReplyRecv, both by the fastpath, each one system call."""
    _, result = pingpong_profile
    for w in result["windows"]:
        f = {r["function"]: r for r in w["functions"]}
        assert w["operations"] == ITERS
        assert f["fastpath_call"]["entries"] == ITERS and f["fastpath_call"]["image"] == "kernel"
        assert f["fastpath_reply_recv"]["entries"] == ITERS
        assert f["x86_syscall_entry"]["entries"] == 2 * ITERS
        assert f["bench_window_begin"]["image"] == "user" and f["bench_window_begin"]["entries"] == 1
        assert "bench_window_end" not in f, "the window ends at the end marker's first instruction"


@pytest.fixture(scope="module")
def arm_pingpong_profile(tmp_path_factory):
    if shutil.which("qemu-system-arm") is None or shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc or qemu-system-arm is not installed (make deps)")
    build_dir = build("arm-imx6", "none", debug="0")
    out = tmp_path_factory.mktemp("profile-arm") / "profile.json"
    status = prof.main(["--arch", "arm-imx6", "--lock", "none", "--image", str(build_dir / "kernel.elf"),
                        "--cmdline", f"app=pingpong runs=1 iters={ITERS}", "--json", str(out)])
    assert out.exists(), f"insn_profile.py exited {status} without writing its JSON"
    return status, json.loads(out.read_text())


def test_arm_profile_matches_the_counter_and_known_functions(arm_pingpong_profile):
    """On arm-imx6 the counter counts in steps of 10 instructions: the table must agree within one."""
    status, result = arm_pingpong_profile
    assert len(result["windows"]) == 4
    for w in result["windows"]:
        assert abs(w["traced_instructions"] - w["counter"]) < prof.COUNTER_RESOLUTION["arm-imx6"], w["config"]
        assert sum(f["instructions"] for f in w["functions"]) == w["traced_instructions"]
        f = {r["function"]: r for r in w["functions"]}
        assert f["fastpath_call"]["entries"] == ITERS and f["fastpath_reply_recv"]["entries"] == ITERS
        assert f["svc_entry"]["entries"] == 2 * ITERS
    assert status == 0
