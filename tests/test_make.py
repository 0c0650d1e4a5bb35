"""The build refuses what it cannot build, naming the valid values."""
import subprocess

import pytest

from conftest import REPO


def make(*words):
    return subprocess.run(["make", "-C", str(REPO), "-n", "kernel", *words],
                          capture_output=True, text=True)


@pytest.mark.parametrize("words, message", [
    (["ARCH=sparc"], "unknown ARCH 'sparc': valid values are x86_64 arm-imx6"),
    (["LOCK=spin"], "unknown LOCK 'spin': valid values are none bkl fine rtm"),
    (["DEBUG=2"], "unknown DEBUG '2': valid values are 0 1"),
    (["NCPUS=zero"], "NCPUS 'zero' must be a number from 1 to 99"),
    (["ARCH=arm-imx6", "LOCK=rtm"], "LOCK=rtm needs Intel TSX"),
    (["BOOT=uboot"], "unknown BOOT 'uboot' for ARCH=x86_64: valid values are kernel iso"),
    (["ARCH=arm-imx6", "BOOT=iso"], "unknown BOOT 'iso' for ARCH=arm-imx6: valid values are kernel uboot"),
])
def test_make_refuses_bad_values(words, message):
    proc = make(*words)
    assert proc.returncode != 0
    assert message in proc.stderr


def test_variants_build_into_their_own_folders():
    dirs = set()
    for lock in ("none", "bkl", "fine", "rtm"):
        proc = subprocess.run(["make", "-s", "-C", str(REPO), "print-build-dir", f"LOCK={lock}"],
                              capture_output=True, text=True, check=True)
        dirs.add(proc.stdout.strip())
    assert dirs == {f"build/x86_64-{lock}" for lock in ("none", "bkl", "fine", "rtm")}


def test_none_on_several_cores_needs_unsafe():
    proc = subprocess.run(["make", "-s", "-C", str(REPO), "qemu", "LOCK=none", "CPUS=2"],
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert "UNSAFE=1" in proc.stderr


def build_dir(*words) -> str:
    return subprocess.run(["make", "-s", "-C", str(REPO), "print-build-dir", *words],
                          capture_output=True, text=True, check=True).stdout.strip()


def test_app_redis_embeds_the_real_redis_unless_told_otherwise():
    """`make qemu APP=redis` boots the real Redis: the image embeds build/posix/<arch>/redis-server
    (its own folder, docs/posix-loader.md); another POSIX_PROGRAM wins."""
    assert build_dir("APP=redis").startswith("build/x86_64-bkl/posix-redis-server-")
    assert build_dir("APP=redis", "ARCH=arm-imx6").startswith("build/arm-imx6-bkl/posix-redis-server-")
    assert build_dir("APP=redis", "POSIX_PROGRAM=/tmp/other").startswith("build/x86_64-bkl/posix-other-")
    assert build_dir("APP=tests") == "build/x86_64-bkl"
