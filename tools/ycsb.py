#!/usr/bin/env python3
"""Run YCSB workload A against Redis-protocol servers, one client per server, started together.

    .venv/bin/python tools/ycsb.py --ports 6379,6380 --records 32000 --operations 100000

YCSB 0.17.0 (site.ycsb:core) and Jedis come from Maven Central; our binding
(bench/ycsb/, ycsbredis.RedisBinding) is built by Maven into build/ycsb/ on first use.
Each server gets its own client process: first the load phase (every client inserts
`--records` records into its server), then the run phase, workload A as the papers
measured it: 50 % reads, 50 % updates, keys drawn from a zipfian distribution.

The result of each phase is the sum over clients of throughput and of YCSB's per-operation
counts, with every return that is not OK counted as an error.  Only 127.0.0.1 is a target.
"""
from __future__ import annotations

import argparse
import fcntl
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PROJECT = REPO / "bench" / "ycsb"
BUILD = REPO / "build" / "ycsb"
JAR = BUILD / "ycsb-redis-binding-1.0.jar"
BINDING = "ycsbredis.RedisBinding"
HOST = "127.0.0.1"

# Workload A of YCSB's core workload, written out here rather than read from YCSB's
# distribution, which is not on Maven Central.
WORKLOAD_A = {
    "workload": "site.ycsb.workloads.CoreWorkload",
    "readallfields": "true",
    "readproportion": "0.5",
    "updateproportion": "0.5",
    "scanproportion": "0",
    "insertproportion": "0",
    "requestdistribution": "zipfian",
}


class YcsbError(Exception):
    pass


def build() -> None:
    """Build the binding with Maven unless its jar is newer than its sources.  One build at a
    time: the test workers of `make test` may all want it at once, and two Mavens in one project
    folder would write the same files."""
    sources = [PROJECT / "pom.xml", *PROJECT.rglob("*.java")]
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / ".build.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if JAR.exists() and all(s.stat().st_mtime <= JAR.stat().st_mtime for s in sources):
            return
        if shutil.which("mvn") is None:
            raise YcsbError("Maven (mvn) is not installed: run tools/ensure_deps.sh")
        proc = subprocess.run(["mvn", "-q", "-B", "-f", str(PROJECT / "pom.xml"), "package"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise YcsbError(f"building the YCSB binding failed:\n{proc.stdout}\n{proc.stderr}")


def parse_output(text: str) -> dict:
    """YCSB's `[SECTION], metric, value` lines: throughput, operations, returns, errors, and the
    slowest operation's latency in microseconds."""
    result: dict = {"throughput": 0.0, "runtime_ms": 0.0, "operations": {}, "returns": {},
                    "errors": 0, "max_latency_us": 0}
    for line in text.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not parts[0].startswith("[") or not parts[0].endswith("]"):
            continue
        section, metric, value = parts[0][1:-1], parts[1], parts[2]
        if section == "OVERALL" and metric == "Throughput(ops/sec)":
            result["throughput"] = float(value)
        elif section == "OVERALL" and metric == "RunTime(ms)":
            result["runtime_ms"] = float(value)
        elif metric == "Operations" and not section.endswith("-FAILED") and section != "CLEANUP":
            result["operations"][section] = int(value)
        elif metric == "MaxLatency(us)" and section not in ("OVERALL", "CLEANUP"):
            result["max_latency_us"] = max(result["max_latency_us"], int(float(value)))
        elif metric.startswith("Return="):
            status = metric[len("Return="):]
            result["returns"].setdefault(section, {})[status] = int(value)
            if status != "OK":
                result["errors"] += int(value)
    return result


def client_argv(phase: str, port: int, records: int, operations: int, threads: int,
                read_timeout: float | None = None) -> list[str]:
    """read_timeout: seconds Jedis waits to connect and for each read of a reply
    (`redis.timeout`); None keeps the binding's 10 s."""
    props = {**WORKLOAD_A, "recordcount": records, "operationcount": operations,
             "redis.host": HOST, "redis.port": port}
    if read_timeout is not None:
        props["redis.timeout"] = int(read_timeout * 1000)
    argv = ["java", "-cp", f"{JAR}:{BUILD / 'lib'}/*", "site.ycsb.Client",
            "-load" if phase == "load" else "-t", "-db", BINDING, "-threads", str(threads)]
    for key, value in props.items():
        argv += ["-p", f"{key}={value}"]
    return argv


def run_phase(phase: str, ports: list[int], records: int, operations: int, threads: int = 1,
              timeout: float = 1800, read_timeout: float | None = None) -> dict:
    """One phase on every port at once; the clients' results summed, and each client's."""
    procs = [subprocess.Popen(client_argv(phase, port, records, operations, threads, read_timeout),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for port in ports]
    clients = []
    for port, proc in zip(ports, procs):
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            for p in procs:
                p.kill()
            raise YcsbError(f"YCSB {phase} on port {port} did not finish in {timeout} s")
        parsed = parse_output(out)
        if proc.returncode != 0 or not parsed["operations"]:
            raise YcsbError(f"YCSB {phase} on port {port} failed (exit {proc.returncode}):\n"
                            f"{out[-2000:]}\n{err[-2000:]}")
        clients.append({"port": port, **parsed})
    total: dict = {"phase": phase, "throughput": sum(c["throughput"] for c in clients),
                   "errors": sum(c["errors"] for c in clients), "operations": {}, "clients": clients,
                   "max_latency_us": max(c["max_latency_us"] for c in clients)}
    for c in clients:
        for section, n in c["operations"].items():
            total["operations"][section] = total["operations"].get(section, 0) + n
    return total


def workload_a(ports: list[int], records: int, operations: int, threads: int = 1,
               read_timeout: float | None = None) -> dict:
    build()
    return {"load": run_phase("load", ports, records, records, threads, read_timeout=read_timeout),
            "run": run_phase("run", ports, records, operations, threads, read_timeout=read_timeout)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ports", required=True, help="comma-separated ports on 127.0.0.1, one client each")
    p.add_argument("--records", type=int, default=32000, help="records per server (the papers: 32,000)")
    p.add_argument("--operations", type=int, default=100000, help="operations per client")
    p.add_argument("--threads", type=int, default=1, help="YCSB threads per client")
    p.add_argument("--read-timeout", type=float,
                   help="seconds Jedis waits to connect and for each read of a reply (default 10)")
    p.add_argument("--json", type=Path, help="also write the result here")
    args = p.parse_args(argv)
    try:
        result = workload_a([int(x) for x in args.ports.split(",")], args.records, args.operations,
                            args.threads, read_timeout=args.read_timeout)
    except YcsbError as e:
        print(f"ycsb: {e}", file=sys.stderr)
        return 1
    for phase in ("load", "run"):
        r = result[phase]
        print(f"{phase}: {r['throughput']:.0f} ops/s over {len(r['clients'])} clients, "
              f"operations {r['operations']}, errors {r['errors']}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0 if all(result[ph]["errors"] == 0 for ph in ("load", "run")) else 1


if __name__ == "__main__":
    sys.exit(main())
