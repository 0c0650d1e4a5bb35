"""The Redis benchmark's host side without QEMU: figures, report, model and
plots from recorded console text (tests/redis_console.py), and the driver's
parts that need no guest (tools/redis_run.py)."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import model  # noqa: E402
import plots  # noqa: E402
import records as rec  # noqa: E402
import redis_figures  # noqa: E402
import redis_report  # noqa: E402
import redis_run  # noqa: E402
import summary  # noqa: E402
from redis_console import console  # noqa: E402


def test_window_is_the_difference_of_the_two_marks():
    cores = redis_figures.window(rec.parse_text(console(cpus=2)))
    assert [c.core for c in cores] == [0, 1]
    assert (cores[0].elapsed, cores[0].idle, cores[0].kernel, cores[0].user) == \
        (10_000_000, 2_000_000, 3_000_000, 5_000_000)
    assert cores[0].entries == {"syscall": 8_000, "interrupt": 2_000, "fault": 0}
    assert cores[0].utilisation == pytest.approx(0.8)
    assert cores[1].utilisation == pytest.approx(0.1)
    assert cores[0].delay == pytest.approx(500) and cores[1].delay == pytest.approx(500)


def test_figures_of_a_window():
    fig = redis_figures.figures(rec.parse_text(console(cpus=2, ops=2000, seconds=4.0, stats=True)))
    assert fig["ops"] == 2000 and fig["errors"] == 0
    assert fig["throughput"] == pytest.approx(500)
    assert fig["utilisation"] == pytest.approx([0.8, 0.1])
    assert fig["mean_utilisation"] == pytest.approx(0.45)
    assert fig["xput"] == pytest.approx(500 / 0.45)
    assert fig["entries_per_op"] == pytest.approx((10_000 + 1_200) / 2000)
    assert fig["entries_per_op_by_cause"] == pytest.approx({"syscall": 4.5, "interrupt": 1.1, "fault": 0})
    assert fig["kernel_per_op"] == pytest.approx(1700)
    assert fig["user_per_op"] == pytest.approx(2800)
    # The lockstats after the end mark are the window's; the start mark's group is not counted.
    assert fig["lock_held_per_acquisition"] == pytest.approx(150)
    assert fig["lock_held_per_op"] == pytest.approx(150 * 11_200 / 2000)
    assert redis_figures.service_time(fig)[0] == pytest.approx(150)


def test_without_lock_statistics_the_service_time_is_kernel_time_per_entry():
    fig = redis_figures.figures(rec.parse_text(console(cpus=2, stats=False)))
    assert fig["lock_held_per_op"] is None
    s, source = redis_figures.service_time(fig)
    assert s == pytest.approx(3_400_000 / 11_200) and "upper bound" in source


def test_incomplete_windows_are_refused():
    with pytest.raises(redis_figures.WindowError, match="tag 2"):
        redis_figures.figures(rec.parse_text(console(end_mark=False)))
    untimed = console().replace('"timed": true', '"timed": false')
    with pytest.raises(redis_figures.WindowError, match="timing was off"):
        redis_figures.window(rec.parse_text(untimed))
    no_bench = "".join(line + "\n" for line in console().splitlines() if '"bench"' not in line)
    with pytest.raises(redis_figures.WindowError, match="no redis bench"):
        redis_figures.figures(rec.parse_text(no_bench))


def test_model_delays_follow_the_papers_layout():
    fig = redis_figures.figures(rec.parse_text(console(cpus=2)))
    delays, why = redis_figures.model_delays(fig, 4)
    assert delays == pytest.approx([500, 500, 500, 500]) and "measured server cores" in why
    one = redis_figures.figures(rec.parse_text(console(cpus=1)))
    delays, why = redis_figures.model_delays(one, 3)
    assert delays == pytest.approx([500, 500, 500]) and "no other core" in why


def test_prediction_is_the_mixed_model_over_entries_per_operation():
    records = rec.parse_text(console(cpus=1, stats=True))
    found = redis_report.boots(records)
    text = redis_report.prediction(found, cores=(1, 2))
    entries_per_op = 10_000 / 2000
    one = 1e6 / (500 + 150) / entries_per_op  # one core: one lock service per think time
    two = model.mixed_throughput(150, [500, 500]).throughput * 1e6 / entries_per_op
    assert f"1: {one:,.1f}" in text and f"2: {two:,.1f}" in text
    assert "lock hold time per acquisition" in text


def _sweep_records(text: str, lock: str, cpus: int, icount: bool = True) -> list:
    meta = {"job": f"{lock}/redis/cpus={cpus}/delay=-/rep=0", "lock": lock, "cpus": cpus,
            "icount": icount}
    return [{**r, rec.META_KEY: meta} for r in rec.parse_text(text)]


def test_report_has_a_row_per_configuration_and_keeps_tcg_rates_apart():
    records = (_sweep_records(console("bkl", 1), "bkl", 1) + _sweep_records(console("bkl", 2), "bkl", 2)
               + _sweep_records(console("fine", 2, seconds=8.0), "fine", 2))
    text = redis_report.report(records)
    rows = [line.split() for line in text.splitlines() if line.startswith(("bkl ", "fine "))]
    assert [(r[0], r[1]) for r in rows] == [("bkl", "1"), ("bkl", "2"), ("fine", "2")]
    fine = rows[2]
    # entries, kernel, untimed (no ping-pong timing pass in these records), user per op
    assert fine[4:8] == ["5.60", "1,700", "-", "2,800"]
    assert "instructions" in text and "machine-repairman prediction" in text
    # Under TCG, throughput and Xput are emulation speed: only in the emulator report.
    assert "Xput" not in text and "ops/s" not in text
    rates = redis_report.emulator_report(records)
    fine = [line.split() for line in rates.splitlines() if line.startswith("fine ")][0]
    assert fine[3] == "250.0"               # 2000 operations in 8 s
    assert fine[4:7] == ["45", "(80", "10)"]  # mean utilisation, then each core's
    assert fine[7] == "555.6"               # Xput = 250 / 0.45
    assert "not the kernel" in rates
    # The sweep's summary has both, the rates in its emulator section.
    summary_text = summary.report(records)
    assert summary_text.index("## 3. Redis") < summary_text.index("## Emulator") < summary_text.index("Xput")


def test_arm_icount_ticks_become_instructions():
    """Under -icount arm-imx6's kernel counter steps once per 10 instructions: the report's figures
    are instructions (ten per tick), x86_64's and a plain TCG boot's the counts as printed."""
    text = console("bkl", 2, stats=True)
    raw = redis_figures.figures(rec.parse_text(text))

    def boot_figures(arch: str, icount: bool) -> dict:
        records = [{**r, rec.META_KEY: {**r[rec.META_KEY], "arch": arch}}
                   for r in _sweep_records(text, "bkl", 2, icount=icount)]
        [found] = redis_report.boots(records)
        return found.figures

    arm = boot_figures("arm-imx6", True)
    for key in ("kernel_per_op", "user_per_op", "total_per_op", "kernel_per_entry",
                "lock_held_per_op", "lock_held_per_acquisition"):
        assert arm[key] == pytest.approx(10 * raw[key]), key
    assert arm["delay_per_core"] == pytest.approx([10 * d for d in raw["delay_per_core"]])
    assert arm["entries_per_op"] == raw["entries_per_op"] and arm["utilisation"] == raw["utilisation"]
    assert boot_figures("x86_64", True)["kernel_per_op"] == raw["kernel_per_op"]
    assert boot_figures("arm-imx6", False)["kernel_per_op"] == raw["kernel_per_op"]


def pingpong_trip(lock: str, trip: float, timing: bool, stats: bool = False) -> dict:
    return {"bench": "pingpong", "env": {"arch": "x86_64", "lock": lock, "cpus": 1},
            "config": {"same_space": False, "length": 0}, "unit": "instructions",
            "call": {"median": trip / 2}, "reply_recv": {"median": trip / 2},
            "round_trip": {"median": trip}, "lockstats": False, "timing": timing,
            rec.META_KEY: {"stats": stats}}


def test_timing_cost_per_entry_is_half_the_round_trips_difference():
    records = [pingpong_trip("bkl", 418, False), pingpong_trip("bkl", 573, True),
               pingpong_trip("fine", 429, False),
               # a LOCKSTATS=1 build's figures are another kernel's: left out
               pingpong_trip("bkl", 900, True, stats=True)]
    assert redis_report.timing_cost_per_entry(records) == {("x86_64", "bkl"): 77.5}


def test_untimed_kernel_time_takes_timing_off_each_entry():
    """kernel/op less entries/op times the timing cost of an entry, per variant."""
    records = _sweep_records(console("fine", 2, seconds=8.0), "fine", 2)
    records += [pingpong_trip("fine", 400, False), pingpong_trip("fine", 600, True)]
    text = redis_report.report(records)
    fine = [line.split() for line in text.splitlines() if line.startswith("fine ")][0]
    assert fine[4:7] == ["5.60", "1,700", "1,140"]     # 1,700 - 5.6 x 100
    assert "the kernel's timing (on in the Redis window) adds per kernel entry: x86_64 fine 100.0" \
        in summary.ipc_table(records)


def test_rates_of_boots_on_real_cores_stay_in_the_redis_section():
    records = [{**r, rec.META_KEY: {**r[rec.META_KEY], "accel": "kvm", "icount": False}}
               for r in _sweep_records(console("bkl", 2), "bkl", 2)]
    assert "Xput" in redis_report.report(records) and redis_report.emulator_report(records) == ""


def test_a_boot_without_a_window_is_left_out():
    records = _sweep_records(console("bkl", 2, end_mark=False), "bkl", 2)
    assert redis_report.boots(records) == [] and redis_report.report(records) == ""


def test_plots_of_throughput_xput_and_kernel_cost(tmp_path):
    records = []
    for lock in ("bkl", "fine"):
        for cpus in (1, 2):
            records += _sweep_records(console(lock, cpus, seconds=2.0 * cpus), lock, cpus)
    written = plots.write_all(records, tmp_path)
    names = {p.name for p in written}
    assert {"redis_throughput.png", "redis_xput.png", "redis_kernel_per_op.png"} <= names
    assert all(p.stat().st_size > 0 for p in written)
    assert plots.redis_xput([], tmp_path / "none") == []


def test_served_host_ports_and_the_benchmark_command():
    records = rec.parse_text(console(cpus=2))
    assert redis_run.served_host_ports(records) == [40000]  # the app serves 6379 only
    assert redis_run.benchmark_command(40000, 200, 5)[:7] == \
        ["redis-benchmark", "-h", "127.0.0.1", "-p", "40000", "-n", "200"]


def test_a_guest_without_a_redis_server_is_a_skip_with_its_reason():
    if redis_run.shutil.which("redis-benchmark") is None:
        pytest.skip("redis-benchmark is not installed (tools/ensure_deps.sh installs redis-tools)")
    guest = ("print('@@ {\"net\": {\"forwards\": [{\"host\": 1, \"guest\": 6379}]}}');"
             "print('root task: unknown app \\'redis\\'');"
             "print('@@ {\"done\": true, \"status\": 2}')")
    status, text = redis_run.run([sys.executable, "-c", guest], timeout=30, requests=10, clients=1)
    assert status == redis_run.SKIPPED
    assert text.rstrip().splitlines()[-1].endswith("root task: unknown app 'redis'")


def fake_info_server(replies):
    """A one-thread server on 127.0.0.1 answering each connection's INFO with the next reply."""
    import socket
    import threading

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)

    def serve():
        for reply in replies:
            conn, _ = listener.accept()
            with conn:
                assert conn.recv(64) == b"*1\r\n$4\r\nINFO\r\n"
                conn.sendall(b"$%d\r\n%s\r\n" % (len(reply), reply))
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def test_commands_processed_reads_info():
    body = b"# Server\r\nredis_version:7.0.15\r\n\r\n# Stats\r\ntotal_commands_processed:4242\r\n" + b"x" * 5000
    port = fake_info_server([body, b"# Server\r\nredis_version:7.0.15\r\n"])
    info = redis_run.server_info(port, 5.0)
    assert info["redis_version"] == "7.0.15"
    assert redis_run.commands_processed(info) == 4242
    assert redis_run.commands_processed(redis_run.server_info(port, 5.0)) is None   # without the count


def fake_control_port(replies_after: int):
    """A UDP server on 127.0.0.1 that ignores the first replies_after datagrams and answers
    each later one with "OK " and the request; it keeps what it received."""
    import socket
    import threading

    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve():
        while True:
            data, sender = sock.recvfrom(2048)
            received.append(data)
            if len(received) > replies_after:
                sock.sendto(b"OK " + data, sender)
                return

    threading.Thread(target=serve, daemon=True).start()
    return sock.getsockname()[1], received


def test_a_control_request_is_resent_until_its_reply():
    port, received = fake_control_port(replies_after=2)
    assert redis_run.control_request(port, "kstats 1", 30.0) == "OK kstats 1"
    assert received == [b"kstats 1"] * 3


def test_a_control_request_without_a_reply_times_out():
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))
        with pytest.raises(TimeoutError):
            redis_run.control_request(silent.getsockname()[1], "check", 0.5)


def test_the_marks_go_to_the_control_port_the_redis_record_names():
    net = {"net": {"forwards": [{"host": 40000, "guest": 6379}], "udp": [{"host": 40007, "guest": 7000}]}}
    served = {"redis": {"ports": [6379], "control": 7000}}
    assert redis_run.control_port([net, served]) == 40007
    # A record without a control port (a Linux guest's) and a qemu_run without the UDP forward.
    assert redis_run.control_port([net, {"redis": {"ports": [6379]}}]) is None
    assert redis_run.control_port([{"net": {"forwards": []}}, served]) is None


def test_the_server_is_named_by_the_real_redis_own_version():
    served = [{"redis": {"ports": [6379], "control": 7000}}]
    assert redis_run.server_name(served, {"redis_version": "7.0.15"}) == "redis 7.0.15"
    assert redis_run.server_name(served) == "redis"


def test_server_operations_leave_out_the_hosts_own_commands():
    # Two ports: each counts its first INFO; the marks go to the control port, not to a server.
    before = {40000: 10, 40001: 0}
    after = {40000: 10 + 1 + 400, 40001: 1 + 400}
    assert redis_run.server_operations(before, after) == 800
    assert redis_run.server_operations(before, {40000: 413, 40001: None}) is None
    assert redis_run.server_operations({}, after) is None


def test_the_table_says_where_operations_were_counted():
    server = console(cpus=1).replace('"ops": 2000', '"ops": 2000, "ops_source": "server"')
    assert redis_figures.figures(rec.parse_text(server))["ops_source"] == "server"
    text = redis_report.report(_sweep_records(server, "bkl", 1))
    assert "ops: the servers' own count of commands run in the window" in text
    text = redis_report.report(_sweep_records(console(cpus=1), "bkl", 1))
    assert "ops: the clients' configured requests, not a count the servers kept" in text
