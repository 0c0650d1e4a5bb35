"""Preemption points under -icount, on both ports.

The in-guest suites (tests/test_guest_suite.py, tests/test_arm.py) run the preemption tests
under plain TCG, where each virtual CPU is a host thread.  Under `-icount` QEMU runs the virtual
CPUs in turns on one host thread and time is counted in instructions, which changes when
interrupts land.  The tests arm their interrupts through SYS_DEBUG_PREEMPT
(userland/tests/test_preempt.c), so they must give the same verdict in both modes.
"""
import pytest

from conftest import assert_guest_test_passed

PREEMPT_TESTS = ["preempt_retype_clear", "preempt_revoke", "preempt_delete_cnode"]
CONFIGS = [("x86_64", "bkl"), ("x86_64", "fine"), ("arm-imx6", "bkl")]


@pytest.mark.parametrize("name", PREEMPT_TESTS)
@pytest.mark.parametrize("arch,lock", CONFIGS, ids=[f"{a}-{lk}" for a, lk in CONFIGS])
def test_preemption_under_icount(guest, arch, lock, name):
    run = guest(arch=arch, lock=lock, cpus=4, app="tests", args="only=preempt", icount=True,
                timeout=600)
    assert_guest_test_passed(run, name)
    assert run.done_status == 0
