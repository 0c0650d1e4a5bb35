"""Boot on x86_64: every core online, the boot IPI round complete, a clean exit."""
import pytest

from conftest import kvm_skip_reason


def assert_booted(run, cpus):
    assert run.status == 0, f"qemu_run exited {run.status}"
    boot = run.boot_record
    assert boot["arch"] == "x86_64"
    assert boot["cores"] == cpus, f"{boot['cores']} of {cpus} cores online"
    # One core has no other core to signal: the kernel says the round was skipped.
    assert boot["ipi_round"] == ("ok" if cpus > 1 else "skipped")
    assert run.done_status == 0


@pytest.mark.parametrize("cpus", [1, 2, 4, 8])
def test_boot_tcg(guest, cpus):
    run = guest(cpus=cpus, accel="tcg")
    assert_booted(run, cpus)
    assert run.boot_record["accel"] == "tcg"


@pytest.mark.parametrize("cpus", [1, 2])
def test_boot_kvm(guest, cpus):
    reason = kvm_skip_reason()
    if reason:
        pytest.skip(reason)
    run = guest(cpus=cpus, accel="kvm")
    assert_booted(run, cpus)
    assert run.boot_record["accel"] == "kvm"


def test_iso_boots(guest):
    """The GRUB image a user writes to a USB stick boots to the same state."""
    run = guest(cpus=4, iso=True)
    assert_booted(run, 4)


def test_lock_and_build_options_reach_the_boot_record(guest):
    run = guest(cpus=2, lock="bkl")
    assert run.boot_record["lock"] == "bkl"
    assert run.boot_record["debug"] is True
