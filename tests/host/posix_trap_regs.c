/*
 * The trap's register contract (arch/<port>/user/posix_trap.S), checked
 * under Linux (tests/test_posix_build.py): trap_regs_call() (posix_linux/
 * <port>/trap_regs.S) loads every register from trap_regs_before, calls
 * __posix_syscall_trap with the stack pointer aligned or not, and stores
 * every register into trap_regs_after.  This file is the personality: for
 * the test's number it records its arguments and returns a known value,
 * after overwriting every register a C function may change, as a real
 * personality may; other calls (musl's own) go to Linux.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "linux_call.h"
#include "trap_regs.h"

#define TEST_NUMBER 0x1ee
#define TEST_RESULT 0x5eed

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f);

struct trap_regs trap_regs_before, trap_regs_after;
uintptr_t trap_regs_misalign;
static long received[7];

long __posix_syscall(long n, long a, long b, long c, long d, long e, long f)
{
    if (n != TEST_NUMBER)
        return linux_syscall(n, a, b, c, d, e, f);
    long args[7] = { n, a, b, c, d, e, f };
    memcpy(received, args, sizeof received);
    clobber_caller_saved();
    return TEST_RESULT;
}

static int check(int misalign)
{
    fill_trap_regs(&trap_regs_before, TEST_NUMBER, misalign);
    memset(&trap_regs_after, 0, sizeof trap_regs_after);
    memset(received, 0, sizeof received);
    trap_regs_misalign = (uintptr_t)misalign;
    trap_regs_call();
    int bad = compare_trap_regs(&trap_regs_before, &trap_regs_after, TEST_RESULT, received);
    printf("misalign %d: %s\n", misalign, bad ? "differs" : "kept");
    return bad;
}

int main(void)
{
    int bad = check(0) | check(1);
    return bad;
}
