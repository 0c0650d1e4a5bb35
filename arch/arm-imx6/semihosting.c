/*
 * ARM semihosting (ARM IHI 0056): how the guest ends QEMU with a status.
 *
 * In A32 state the call is HLT #0xF000 with the operation in r0 and the
 * parameter in r1.  QEMU (-semihosting-config enable=on,target=native)
 * traps it in privileged modes even on ARMv7, where HLT is otherwise an
 * undefined encoding.  Without a debugger or QEMU behind it (the real board)
 * it raises an undefined-instruction exception in the kernel; fault.c then
 * resumes after it with r0 = ~0, so callers can fall back.  HLT rather than
 * the older SVC #0x123456: an SVC would enter the system-call path, which
 * assumes it came from user mode.
 */
#include <arch/imx6.h>

__attribute__((noinline)) word_t semihost_call(word_t op, word_t arg)
{
    register word_t r0 __asm__("r0") = op;
    register word_t r1 __asm__("r1") = arg;
    __asm__ volatile(".global semihost_insn\n"
                     "semihost_insn:\n"
                     "    .inst 0xe10f0070\n"       /* HLT #0xF000 */
                     : "+r"(r0)
                     : "r"(r1)
                     : "memory");
    return r0;
}
