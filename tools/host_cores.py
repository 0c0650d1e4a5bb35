"""The host's cores, shared by the guests that parallel test workers boot.

`make test` runs in two pytest-xdist workers, one per core of the two-core build machines.  A
guest with several virtual CPUs runs one host thread per virtual CPU and keeps every host core
busy; beside another guest its lock holders are descheduled while their waiters spin, and a bkl
suite on four CPUs runs several times slower.  So such a guest takes the cores for itself, while
a guest that runs on one host thread (one virtual CPU, or any number in turns: under -icount or
with qemu_run.py --one-thread) takes one core and leaves the other.

That is a reader-writer lock on a file: one thread shares (LOCK_SH), several take all
(LOCK_EX).  A turnstile in front of it keeps the writer from starving: whoever is next in line
holds the turnstile while it waits, so the other worker's next guest queues behind it.

Only the workers' guests take part: the lock is used when the environment names its file
(HOST_CORES_LOCK, set by tests/conftest.py in each worker).  A guest that a worker boots while
its own earlier guest holds the cores (a module's server still running when a test boots
another) runs under that hold, since waiting for it would wait for itself; a mark file per
worker says that it holds them.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path
from typing import Iterator

LOCK_ENV = "HOST_CORES_LOCK"
WORKER_ENV = "PYTEST_XDIST_WORKER"


def needs_every_core(cpus: int, one_thread: bool) -> bool:
    """A guest whose virtual CPUs run on host threads of their own (not all on one, as under
    -icount or qemu_run.py --one-thread)."""
    return cpus > 1 and not one_thread


def holder_mark(lock: Path, worker: str) -> Path:
    return lock.with_name(f"{lock.name}.held-by-{worker}")


@contextlib.contextmanager
def held(every_core: bool) -> Iterator[None]:
    path = os.environ.get(LOCK_ENV)
    if not path:
        yield
        return
    lock = Path(path)
    mark = holder_mark(lock, os.environ.get(WORKER_ENV, str(os.getppid())))
    if mark.exists():
        yield
        return
    with open(lock.with_name(lock.name + ".turnstile"), "a") as turnstile, open(lock, "a") as cores:
        fcntl.flock(turnstile, fcntl.LOCK_EX)
        fcntl.flock(cores, fcntl.LOCK_EX if every_core else fcntl.LOCK_SH)
        fcntl.flock(turnstile, fcntl.LOCK_UN)
        mark.touch()
        try:
            yield
        finally:
            mark.unlink(missing_ok=True)
