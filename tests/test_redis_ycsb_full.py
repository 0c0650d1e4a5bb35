"""YCSB workload A at the papers' size against the real Redis on the kernel.

002 (section 4.3) loads 32,000 records, "to entirely fill our prototype's memory limitations", and
runs workload A on them.  Here Debian's Redis 7.0 on the POSIX personality (docs/posix.md,
`app=redis`): one boot each of x86_64 `bkl` on 1 CPU (the NIC driver and one Redis
process on core 0) and `fine` on 2 CPUs (the driver on core 0, Redis on core 1), the load phase of
32,000 records (10 fields of 100 bytes each) and a run phase of 32,000 operations (50 % reads,
50 % updates, zipfian), with 0 errors, and then every record read back whole: the binding's key
index (bench/ycsb) lists 32,000 keys, each a hash of 10 fields.  Each is a boot, two JVM starts, a
load and a run (docs/benchmarks.md).

Redis keeps these hashes in its hash-table encoding (each value is longer than
hash-max-listpack-value), about 2 KB a record, so the process gets a heap of HEAP_MB, of which
Redis may use half (maxmemory, docs/posix-loader.md); the guest's 512 MiB hold one such process,
not three, so the multicore boot has 2 CPUs.
Skips, saying why, without lwIP's, Redis's or musl's source or without Java and Maven.
"""
from __future__ import annotations

import shutil

import pytest

import ycsb
from conftest import CLIENT_TIMEOUT, needs_real_redis, redis_cli
from redis_guest import Resp, Server, redis_program

RECORDS = OPERATIONS = 32000
FIELDS = 10
INDEX = b"ycsb:index:usertable"
HEAP_MB = 256

pytestmark = [
    needs_real_redis,
    pytest.mark.skipif(shutil.which("java") is None or shutil.which("mvn") is None,
                       reason="YCSB needs Java and Maven (tools/ensure_deps.sh installs them)"),
]


@pytest.mark.parametrize("lock,cpus", [("bkl", 1), ("fine", 2)], ids=["bkl-1cpu", "fine-2cpu"])
def test_ycsb_workload_a_with_32000_records(lock, cpus):
    server = Server("x86_64", lock, cpus, posix_program=redis_program("x86_64"),
                    cmdline=f"app=redis heap_mb={HEAP_MB}")
    try:
        server.read_until_serving()
        result = ycsb.workload_a(server.ports, records=RECORDS, operations=OPERATIONS,
                                 read_timeout=CLIENT_TIMEOUT)
        load, run = result["load"], result["run"]
        assert load["errors"] == 0 and run["errors"] == 0, result
        assert load["operations"] == {"INSERT": RECORDS}, result
        assert sum(run["operations"].values()) == OPERATIONS, result
        port = server.ports[0]
        assert redis_cli(port, "DBSIZE") == str(RECORDS + 1)
        conn = Resp(port)
        try:
            # In pages: a reply bigger than lwIP's heap (256 KiB) resets the connection (docs/network.md).
            keys = []
            for start in range(0, RECORDS + 1000, 1000):
                page = conn.call(b"ZRANGE", INDEX, b"%d" % start, b"%d" % (start + 999))
                assert isinstance(page, list), page
                keys += page
            assert len(set(keys)) == len(keys) == RECORDS, f"index: {len(keys)} keys"
            for start in range(0, RECORDS, 500):
                chunk = keys[start:start + 500]
                conn.send(*((b"HLEN", key) for key in chunk))
                lengths = [conn.reply() for _ in chunk]
                short = [(k, n) for k, n in zip(chunk, lengths) if n != FIELDS]
                assert not short, f"records without their {FIELDS} fields: {short[:5]}"
        finally:
            conn.close()
        assert server.proc.poll() is None, server.log
    finally:
        server.stop()
