"""Redis's own test suite against a running server, and the comparison with Debian's.

The suite is the tests/ folder of Debian's redis source (.deps/redis, fetched by
tools/ensure_deps.sh), run unmodified in its external mode: `runtest --host H --port P`
with the flags of docs/posix.md (one database, one client, no encoding or digest checks,
and no tests that need what an external server on another machine cannot give: DEBUG,
replication, saving, ...).  Each unit runs as its own process in a scratch copy of the
suite, since the harness writes into its own folder.

    python3 tools/redis_suite.py --port P [--host H] [--units type/string,expire] [--json out.json]
    python3 tools/redis_suite.py --baseline [--units ...]     # Debian's redis-server, on a free port
    python3 tools/redis_suite.py --guest x86_64-bkl-4 [--guest ...] [--markdown out.md]
        # the kernel-hosted real Redis (app=redis), each against the baseline

A unit's result is its tests' verdicts: ok, err, exception (the unit stopped there) and
skip; `compare()` says which of the tests that Debian's server passes the other one
passes.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import net_tap  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE = os.path.join(ROOT, ".deps", "redis")

# The units of the real-Redis issue: the data types, keyspace, expiry and the protocol.
UNITS = ("type/string", "type/incr", "keyspace", "expire", "type/hash", "type/list", "type/set",
         "type/zset", "protocol", "info-command", "quit", "pubsub")
# What a server the suite did not start cannot be asked for.
NOT_NEEDED = ("debug", "repl", "save", "config-maxmemory", "reset", "pfdebug", "latency",
              "other-server", "config-resetstat", "local-process")
UNIT_TIMEOUT = 900.0    # seconds for one unit, whatever the server's speed
HARNESS_PORTS = 200     # the harness's --portcount
HARNESS_PORT_STRIDE = 10000  # the harness checks each port and this much above it

ANSI = re.compile(r"\x1b\[[0-9;]*m")
VERDICT = re.compile(r"^\[(ok|err|exception|skip)\]: (.*?)(?: \(\d+ ms\))?$")


def suite_flags(host: str, port: int) -> list[str]:
    flags = ["--host", host, "--port", str(port), "--singledb", "--clients", "1",
             "--ignore-encoding", "--ignore-digest"]
    for need in NOT_NEEDED:
        flags += ["--tags", "-needs:" + need]
    return flags


def parse(output: str) -> dict:
    """The verdicts in a run's output: {"ok": [names], "err": [...], "exception": [...], "skip": [...]}."""
    verdicts: dict[str, list[str]] = {"ok": [], "err": [], "exception": [], "skip": []}
    for line in output.splitlines():
        m = VERDICT.match(ANSI.sub("", line).strip())
        if m:
            name = re.sub(r" in tests/unit/\S+$", "", m.group(2))
            verdicts[m.group(1)].append(name)
    return verdicts


def harness_base_port() -> int:
    """The first of the harness's own ports (its test server's; it also tries each port + 10000),
    from a base of this run's, so that two runs at once do not take the same, and all below the
    host's ephemeral ports, where a client connection's local port can take the harness's test
    server's port between its check and its bind ("couldn't open socket: address already in
    use"), and the unit then runs no test."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            ephemeral = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        ephemeral = 32768
    low = 10000
    span = max(1, ephemeral - HARNESS_PORT_STRIDE - HARNESS_PORTS - low)
    return low + (os.getpid() * 97 + int(time.monotonic() * 1000)) % span


def run_unit(unit: str, host: str, port: int, timeout: float = UNIT_TIMEOUT) -> dict:
    """Run one unit against host:port; its verdicts and the output's tail."""
    with tempfile.TemporaryDirectory(prefix="redis-suite-") as scratch:
        shutil.copytree(os.path.join(SOURCE, "tests"), os.path.join(scratch, "tests"))
        shutil.copy(os.path.join(SOURCE, "runtest"), scratch)
        base = harness_base_port()
        cmd = ["tclsh", "tests/test_helper.tcl", *suite_flags(host, port), "--baseport", str(base),
               "--portcount", str(HARNESS_PORTS), "--single", "unit/" + unit]
        try:
            done = subprocess.run(cmd, cwd=scratch, stdin=subprocess.DEVNULL, capture_output=True,
                                  text=True, timeout=timeout)
            output, status = done.stdout + done.stderr, done.returncode
        except subprocess.TimeoutExpired as e:
            output = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            status = None
    result = parse(output)
    result.update(unit=unit, status=status, tail=ANSI.sub("", output)[-2000:])
    return result


def redis_cli(host: str, port: int, *words: str) -> list[str]:
    done = subprocess.run(["redis-cli", "-h", host, "-p", str(port), "--raw", *words],
                          capture_output=True, text=True, timeout=60)
    return done.stdout.split("\n")[:-1]


def server_config(host: str, port: int) -> dict:
    lines = redis_cli(host, port, "CONFIG", "GET", "*")
    return dict(zip(lines[0::2], lines[1::2]))


def restore(host: str, port: int, config: dict) -> None:
    """Undo what a unit changed: its keys, and the settings it left changed.

    The harness gives each unit a fresh server of its own; against one server, a unit's
    CONFIG SET outlives it (type/list leaves proto-max-bulk-len at 10 GB, and unit/protocol
    then waits for a bulk that never comes)."""
    redis_cli(host, port, "FLUSHALL")
    now = server_config(host, port)
    for key, value in config.items():
        if now.get(key) != value:
            redis_cli(host, port, "CONFIG", "SET", key, value)


def run_units(units, host: str, port: int, say=print) -> list[dict]:
    """Each unit in turn against host:port, with the server's settings restored after each."""
    results = []
    config = server_config(host, port)
    for unit in units:
        start = time.monotonic()
        r = run_unit(unit, host, port)
        restore(host, port, config)
        r["seconds"] = round(time.monotonic() - start, 1)
        say(f"{unit}: {len(r['ok'])} ok, {len(r['err'])} err, {len(r['exception'])} exception "
            f"({r['seconds']} s)", flush=True)
        results.append(r)
    return results


def compare(results: list[dict], baseline: list[dict]) -> dict:
    """Of the tests the baseline passed, per unit: how many these results passed, and which not.
    A unit may run tests of one name several times (once per encoding): each run counts."""
    mine = {r["unit"]: r for r in results}
    rows, passed, total = [], 0, 0
    for b in baseline:
        reference = Counter(b["ok"])
        r = mine.get(b["unit"], {})
        got = Counter(r.get("ok", []))
        ok = sum(min(n, got[name]) for name, n in reference.items())
        missing = sorted(name for name, n in reference.items() if got[name] < n)
        how = {name: ("failed" if name in r.get("err", []) else "skipped" if name in r.get("skip", [])
                      else "not run") for name in missing}
        rows.append({"unit": b["unit"], "baseline_ok": sum(reference.values()), "ok": ok,
                     "missing": missing, "how": how})
        passed += ok
        total += sum(reference.values())
    return {"units": rows, "ok": passed, "baseline_ok": total,
            "ratio": passed / total if total else None}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def baseline_run(units, say=print) -> list[dict]:
    """The same units against Debian's redis-server, started here with persistence off."""
    port = free_port()
    server = subprocess.Popen(["redis-server", "--port", str(port), "--save", "", "--appendonly", "no",
                               "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        return run_units(units, "127.0.0.1", port, say)
    finally:
        server.terminate()
        server.wait(timeout=30)


GUEST_HEAP_MB = 64
SERVE_TIMEOUT = 900.0
CONTROL_TIMEOUT = 60.0


def guest_run(config: str, units, say=print, tap: bool = False) -> tuple[list[dict], dict]:
    """Boot the real Redis on the kernel (config "arch-lock-cpus"), run the units against its
    first instance; the verdicts, and the kernel's health after them (kernel_health()).  tap: the
    guest's NIC on a tap device (tools/net_tap.py), which keeps the order between the harness's
    connections."""
    import redis_run    # the boot's console reader

    arch, lock, cpus = config.rsplit("-", 2)
    subprocess.run(["make", "-s", "posix", f"ARCH={arch}", "-j2"], cwd=ROOT, check=True)
    program = os.path.join(ROOT, "build", "posix", arch, "redis-server")
    cmd = ["make", "-s", "qemu", f"ARCH={arch}", f"LOCK={lock}", f"CPUS={cpus}", "APP=redis",
           f"NET={'tap' if tap else 1}", f"POSIX_PROGRAM={program}", f"ARGS=heap_mb={GUEST_HEAP_MB}",
           "TIMEOUT=7200"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", start_new_session=True)
    console = redis_run.Console(proc.stdout)
    try:
        serving = console.wait_for(lambda rs: any("redis" in r for r in rs), time.monotonic() + SERVE_TIMEOUT)
        ports = redis_run.served_host_ports(console.records) if serving else []
        if not ports:
            raise RuntimeError(f"{config}: the guest did not serve:\n" + "\n".join(console.lines[-40:]))
        address = redis_run.served_address(console.records)
        results = run_units(units, address, ports[0], say)
        return results, kernel_health(console, address)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=60)


def kernel_health(console, address: str) -> dict:
    """After the units: the kernel invariant checker's answer through the NIC driver's control
    port, and how many records of each kind that says something went wrong the console holds."""
    import redis_run

    control = redis_run.control_port(console.records)
    try:
        check = redis_run.control_request(control, "check", CONTROL_TIMEOUT, address) \
            if control is not None else "no control port"
    except (OSError, TimeoutError) as err:
        check = str(err)
    return {"check": check,
            "faults": {kind: sum(kind in r for r in console.records) for kind in redis_run.FAULT_RECORDS}}


def healthy(health: dict) -> bool:
    return health["check"] == "OK check" and not any(health["faults"].values())


def markdown(table: dict[str, dict], baseline: list[dict]) -> str:
    """The table of docs/posix.md: per unit, Debian's passes and each configuration's."""
    configs = list(table)
    lines = ["| unit | Debian's redis-server | " + " | ".join(configs) + " |",
             "|---|---|" + "---|" * len(configs)]
    for i, b in enumerate(baseline):
        cells = [str(table[c]["units"][i]["ok"]) for c in configs]
        lines.append(f"| {b['unit']} | {len(b['ok'])} | " + " | ".join(cells) + " |")
    total = [f"{table[c]['ok']} ({100 * table[c]['ratio']:.1f} %)" for c in configs]
    lines.append(f"| all | {sum(len(b['ok']) for b in baseline)} | " + " | ".join(total) + " |")
    failures = sorted({(u["unit"], name) for c in configs for u in table[c]["units"] for name in u["missing"]})
    lines += ["", "Not passed, of the tests Debian's server passes:", ""]
    for unit, name in failures:
        where = [f"{c}: {u['how'][name]}" for c in configs for u in table[c]["units"]
                 if u["unit"] == unit and name in u["missing"]]
        lines.append(f"- {unit}: {name} ({'; '.join(where)})")
    lines += ["", "The kernel after the suite:", ""]
    for c in configs:
        health = table[c].get("health")
        if health is not None:
            faults = ", ".join(f"{n} {kind}" for kind, n in health["faults"].items() if n) or "none"
            lines.append(f"- {c}: invariant check {health['check']!r}; panic, posix_fault or "
                         f"redis_instance_end records: {faults}")
    return "\n".join(lines) + "\n"


def missing_parts() -> str | None:
    """Why the suite cannot run here, or None."""
    if not os.path.isfile(os.path.join(SOURCE, "tests", "test_helper.tcl")):
        return "Redis's source (Debian package redis) is not in .deps/redis: run tools/ensure_deps.sh"
    if not shutil.which("redis-cli"):
        return "redis-cli is missing (Debian package redis-tools)"
    if not shutil.which("tclsh"):
        return "tclsh is missing (Debian package tcl)"
    return None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int)
    ap.add_argument("--baseline", action="store_true", help="run against Debian's redis-server instead")
    ap.add_argument("--units", default=",".join(UNITS))
    ap.add_argument("--guest", action="append", default=[],
                    help="arch-lock-cpus: boot the kernel-hosted real Redis and compare with the baseline")
    ap.add_argument("--markdown", help="with --guest: write the comparison table here")
    ap.add_argument("--network", choices=("auto", "tap", "user"), default="auto",
                    help="with --guest: the guest's NIC on a tap device (keeps the order between "
                         "connections, needs root), on QEMU's user network, or tap where it can")
    ap.add_argument("--json", help="write the verdicts here")
    args = ap.parse_args(argv)
    why = missing_parts()
    if why:
        print(why, file=sys.stderr)
        return 77
    units = [u for u in args.units.split(",") if u]
    if args.guest:
        say = lambda text, **k: print(text, flush=True)  # noqa: E731
        no_tap = net_tap.unavailable()
        if args.network == "tap" and no_tap:
            print(f"--network tap: {no_tap}", file=sys.stderr)
            return 77
        tap = args.network == "tap" or (args.network == "auto" and no_tap is None)
        say("network: " + ("a tap device (tools/net_tap.py)" if tap else
                           "QEMU's user network, which does not keep the order between connections "
                           f"(docs/network.md){': ' + no_tap if no_tap and args.network == 'auto' else ''}"))
        say("baseline: Debian's redis-server")
        baseline = baseline_run(units, say)
        table = {}
        raw = {"baseline": baseline}
        for config in args.guest:
            say(f"{config}: the kernel-hosted Redis")
            results, health = guest_run(config, units, say, tap)
            raw[config] = {"units": results, "health": health}
            table[config] = compare(results, baseline) | {"health": health}
        if args.json:
            with open(args.json, "w") as f:
                json.dump(raw, f, indent=1)
        text = markdown(table, baseline)
        print(text)
        if args.markdown:
            with open(args.markdown, "w") as f:
                f.write(text)
        return 0 if all(t["ratio"] is not None and t["ratio"] >= 0.95 and healthy(t["health"])
                        for t in table.values()) else 1
    if args.baseline:
        results = baseline_run(units)
    elif args.port:
        results = run_units(units, args.host, args.port)
    else:
        ap.error("give --port or --baseline")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all(not r["err"] and not r["exception"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
