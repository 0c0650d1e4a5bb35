/*
 * System-call entry by SYSCALL, and every way back to user mode.
 *
 * SYSCALL leaves RSP at the user's stack and puts the user RIP in RCX and
 * RFLAGS in R11 (FMASK has cleared IF, DF, TF and AC).  The entry swaps in the
 * kernel GS base, parks the user RSP in the per-core data, saves every
 * register straight into the current thread's struct arch_context and calls
 * handle_syscall(rax) at the top of this core's kernel stack, or for Call
 * and ReplyRecv the fastpath's own entry points.
 */
#include <arch/machine.h>
#include <abi/syscalls.h>

#define R(n) ((n) * 8)

/* Load the general registers from the context at RSP, all but RCX and R11 (SYSRET uses them). */
.macro load_registers_but_rcx_r11
    movq R(CTX_RAX)(%rsp), %rax
    movq R(CTX_RBX)(%rsp), %rbx
    movq R(CTX_RDX)(%rsp), %rdx
    movq R(CTX_RSI)(%rsp), %rsi
    movq R(CTX_RDI)(%rsp), %rdi
    movq R(CTX_RBP)(%rsp), %rbp
    movq R(CTX_R8)(%rsp), %r8
    movq R(CTX_R9)(%rsp), %r9
    movq R(CTX_R10)(%rsp), %r10
    movq R(CTX_R12)(%rsp), %r12
    movq R(CTX_R13)(%rsp), %r13
    movq R(CTX_R14)(%rsp), %r14
    movq R(CTX_R15)(%rsp), %r15
.endm

    .text
    .global x86_syscall_entry
x86_syscall_entry:
    swapgs
    movq %rsp, %gs:PERCORE_USER_RSP
    movq %gs:PERCORE_CONTEXT, %rsp
    movq %rax, R(CTX_RAX)(%rsp)
    movq %rbx, R(CTX_RBX)(%rsp)
    movq %rcx, R(CTX_RCX)(%rsp)
    movq %rdx, R(CTX_RDX)(%rsp)
    movq %rsi, R(CTX_RSI)(%rsp)
    movq %rdi, R(CTX_RDI)(%rsp)
    movq %rbp, R(CTX_RBP)(%rsp)
    movq %r8, R(CTX_R8)(%rsp)
    movq %r9, R(CTX_R9)(%rsp)
    movq %r10, R(CTX_R10)(%rsp)
    movq %r11, R(CTX_R11)(%rsp)
    movq %r12, R(CTX_R12)(%rsp)
    movq %r13, R(CTX_R13)(%rsp)
    movq %r14, R(CTX_R14)(%rsp)
    movq %r15, R(CTX_R15)(%rsp)
    movq %rcx, R(CTX_RIP)(%rsp)
    movq %r11, R(CTX_RFLAGS)(%rsp)
    movq %gs:PERCORE_USER_RSP, %rcx
    movq %rcx, R(CTX_RSP)(%rsp)
    movq $1, R(CTX_SYSRET)(%rsp)
    movq %gs:PERCORE_KSTACK, %rsp
    xorl %ebp, %ebp
    /* Call and ReplyRecv go straight to the IPC fastpath (kernel/fastpath.c). */
    cmpq $SYSNO_CALL, %rax
    je 1f
    cmpq $SYSNO_REPLY_RECV, %rax
    je 2f
    movq %rax, %rdi
    call handle_syscall
    ud2
1:  call fastpath_call
    ud2
2:  call fastpath_reply_recv
    ud2

/*
 * x86_exit_sysret(ctx): back to a thread that entered by SYSCALL and whose
 * RCX/R11 are dead.  The caller has checked that the RIP is canonical (Intel
 * CPUs raise #GP in ring 0, on the user stack, for a non-canonical RCX).
 */
    .global x86_exit_sysret
x86_exit_sysret:
    movq %rdi, %rsp
    load_registers_but_rcx_r11
    movq R(CTX_RIP)(%rsp), %rcx
    movq R(CTX_RFLAGS)(%rsp), %r11
    movq R(CTX_RSP)(%rsp), %rsp
    /* Interrupts stay off until SYSRET loads R11 into RFLAGS. */
    swapgs
    sysretq

/*
 * x86_exit_iret(ctx): back to any context, user or the idle loop.  The
 * context's RIP..SS words are an IRETQ frame, so RSP points into it for the
 * final IRETQ (interrupts are off; NMI and #MC use their own IST stack).
 */
    .global x86_exit_iret
x86_exit_iret:
    movq %rdi, %rsp
    load_registers_but_rcx_r11
    movq R(CTX_RCX)(%rsp), %rcx
    movq R(CTX_R11)(%rsp), %r11
    leaq R(CTX_RIP)(%rsp), %rsp
    testb $3, 8(%rsp)               /* the frame's CS: user mode needs the user GS base */
    jz 1f
    swapgs
1:  iretq

/*
 * x86_fault_on_fresh_stack(type, addr, code, status): enter
 * handle_user_fault() at the top of the kernel stack, as a real exception
 * would.  Used when the exit path finds a context it cannot return to.
 */
    .global x86_fault_on_fresh_stack
x86_fault_on_fresh_stack:
    movq %gs:PERCORE_KSTACK, %rsp
    xorl %ebp, %ebp
    call handle_user_fault
    ud2

    .section .note.GNU-stack, "", @progbits
