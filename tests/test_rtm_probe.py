"""The `rtm` variant probes RTM at boot and falls back to the lock where RTM faults.

Inside the KVM guests of the build machines CPUID advertises RTM, yet XBEGIN faults.
The kernel must catch that fault during its probe, say so, and boot
on the big-lock path. User mode does not run under that KVM, so the test reads only what the
kernel prints before the root task starts: the probe's line and the boot record.
"""
import re

import pytest

import qemu_run

# The kernel's first console line: the guest ran at least that far.
KERNEL_STARTED = "x86_64: booting"


def qemu_refused_kvm_guest(log: str) -> str | None:
    """QEMU's own error when it stopped before the guest ran a single instruction, else None."""
    if KERNEL_STARTED in log:
        return None
    errors = re.findall(r"^qemu-system-x86_64: (.*)$", log, re.MULTILINE)
    return errors[0] if errors else "QEMU ended before the kernel printed anything"


def test_rtm_probe_falls_back_where_rtm_faults(guest):
    if not qemu_run.kvm_opens():
        pytest.skip("/dev/kvm does not open: no KVM guest in which RTM could fault")
    run = guest(lock="rtm", cpus=2, accel="kvm", timeout=20)
    refused = qemu_refused_kvm_guest(run.log)
    if refused:
        # On AMD hosts QEMU's `-cpu host` sets an Intel-only MSR and aborts ("failed to set
        # MSR 0x10a"): no guest runs, so there is no probe to test.
        pytest.skip(f"QEMU cannot start a KVM guest here ({refused}): no guest in which RTM could fault")
    if "RTM not advertised" in run.log:
        pytest.skip("CPUID under this KVM does not advertise RTM: the faulting case cannot arise")
    assert "RTM advertised but XBEGIN raised" in run.log
    boot = run.boot_record
    assert boot["cores"] == 2 and boot["lock"] == "rtm"
    assert boot["rtm"] is False and boot["rtm_path"] == "lock"
    assert not run.of_type("panic")


def test_rtm_absent_under_tcg_uses_the_lock(guest):
    """TCG does not offer RTM: the rtm variant runs, and says it runs, the lock path."""
    run = guest(lock="rtm", cpus=2, accel="tcg")
    assert "RTM not advertised" in run.log
    assert run.boot_record["rtm_path"] == "lock"
    assert run.done_status == 0


def test_refused_kvm_guest_is_told_from_a_guest_that_ran():
    aborted = ("qemu_run: accelerator kvm (asked for)\n"
               "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n"
               "qemu_run: QEMU ended (exit -6) after 0.0 s without a done record: the guest failed\n")
    assert qemu_refused_kvm_guest(aborted) == "error: failed to set MSR 0x10a to 0x69"
    assert qemu_refused_kvm_guest("qemu_run: QEMU ended (exit 1)\n") == \
        "QEMU ended before the kernel printed anything"
    ran = "x86_64: booting (rtm, NCPUS=8)\nrtm: RTM advertised but XBEGIN raised #UD\n"
    assert qemu_refused_kvm_guest(ran) is None
