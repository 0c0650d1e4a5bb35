"""tools/host_cores.py: how the guests of two test workers share the host's cores.

Each party is a process of its own (flock locks belong to open files, and the worker's name comes
from its environment), which enters the lock, says so in a file, and stays until the test lets
it go.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO
import host_cores

PARTY = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tools!r})
import host_cores
inside, release = Path(sys.argv[2]), Path(sys.argv[3])
give_up = time.monotonic() + 300      # a test that failed before letting it go
with host_cores.held(every_core=sys.argv[1] == "all"):
    inside.touch()
    while not release.exists() and time.monotonic() < give_up:
        time.sleep(0.02)
"""


class Party:
    def __init__(self, folder: Path, name: str, worker: str, every_core: bool, lock: Path | None):
        self.inside, self.release = folder / f"{name}.inside", folder / f"{name}.release"
        env = {k: v for k, v in os.environ.items() if k not in (host_cores.LOCK_ENV, host_cores.WORKER_ENV)}
        env[host_cores.WORKER_ENV] = worker
        if lock is not None:
            env[host_cores.LOCK_ENV] = str(lock)
        self.proc = subprocess.Popen([sys.executable, "-c", PARTY.format(tools=str(REPO / "tools")),
                                      "all" if every_core else "one", str(self.inside), str(self.release)],
                                     env=env)

    def entered(self, within: float) -> bool:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            if self.inside.exists():
                return True
            time.sleep(0.02)
        return self.inside.exists()

    def leave(self) -> None:
        self.release.touch()
        assert self.proc.wait(timeout=30) == 0


@pytest.fixture
def lock(tmp_path):
    return tmp_path / "cores.lock"


# How long a party that may not enter is watched: it would enter at once if the lock let it.
WATCH = 1.0
# How long a party that may enter may take to start Python and get there.
START = 30.0


def test_two_one_core_guests_share(tmp_path, lock):
    a = Party(tmp_path, "a", "gw0", False, lock)
    assert a.entered(START)
    b = Party(tmp_path, "b", "gw1", False, lock)
    assert b.entered(START), "a one-core guest waited for another one-core guest"
    a.leave()
    b.leave()


def test_an_every_core_guest_runs_alone(tmp_path, lock):
    a = Party(tmp_path, "a", "gw0", False, lock)
    assert a.entered(START)
    b = Party(tmp_path, "b", "gw1", True, lock)
    assert not b.entered(WATCH), "a guest that needs every core ran beside another"
    a.leave()
    assert b.entered(START)
    c = Party(tmp_path, "c", "gw0", False, lock)
    assert not c.entered(WATCH), "a one-core guest ran beside a guest that needs every core"
    b.leave()
    assert c.entered(START)
    c.leave()


def test_the_waiting_every_core_guest_goes_before_later_ones(tmp_path, lock):
    """The turnstile: once a guest that needs every core waits, the other worker's next guest
    waits behind it, so a stream of one-core guests cannot starve it (c stands for the next
    guest of a's worker, once a is done, or of any other worker)."""
    a = Party(tmp_path, "a", "gw0", False, lock)
    assert a.entered(START)
    b = Party(tmp_path, "b", "gw1", True, lock)
    assert not b.entered(WATCH)
    c = Party(tmp_path, "c", "gw2", False, lock)
    assert not c.entered(WATCH), "a later one-core guest went before the waiting one"
    a.leave()
    assert b.entered(START)
    b.leave()
    assert c.entered(START)
    c.leave()


def test_a_workers_guest_runs_under_its_own_earlier_hold(tmp_path, lock):
    """A test that boots a guest while its module's server holds the cores would otherwise wait
    for itself."""
    a = Party(tmp_path, "a", "gw0", True, lock)
    assert a.entered(START)
    b = Party(tmp_path, "b", "gw0", False, lock)
    assert b.entered(START), "a worker's guest waited for that worker's own hold"
    b.leave()
    a.leave()
    assert not host_cores.holder_mark(lock, "gw0").exists()


def test_outside_the_workers_nothing_is_locked(tmp_path):
    a = Party(tmp_path, "a", "gw0", True, None)
    b = Party(tmp_path, "b", "gw1", True, None)
    assert a.entered(START) and b.entered(START)
    a.leave()
    b.leave()
    assert not any(p.name.startswith("cores.lock") for p in tmp_path.iterdir())


def test_which_guests_need_every_core():
    assert host_cores.needs_every_core(cpus=4, one_thread=False)
    assert not host_cores.needs_every_core(cpus=1, one_thread=False)
    assert not host_cores.needs_every_core(cpus=4, one_thread=True), \
        "-icount and --one-thread run every CPU on one thread"
