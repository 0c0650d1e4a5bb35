/*
 * Exception vectors, kernel entry and exit (arm-imx6).
 *
 * The kernel runs in SVC mode on one kernel stack per core, with IRQs off.
 * While a thread runs, SVC mode's banked sp points just past the saved
 * registers of the thread's struct arch_context, its cpsr word
 * (arch_restore_context leaves it there), so an entry
 * saves the user registers straight into the TCB:
 *   SRSDB sp!, #SVC  stores the return address and the SPSR as ctx->pc and
 *                    ctx->cpsr, through SVC mode's sp from whatever mode the
 *                    exception entered (IRQ, ABT, UND: no stack of their own
 *                    is needed for user entries);
 *   STMIA sp, {r0-r14}^  stores the user bank's r0..r14 below them.
 * Then sp becomes the kernel stack top kept in TPIDRPRW (boot.S), and the
 * generic handler is called; it never returns, but ends in
 * arch_return_to_user() (context.c), which comes back here.
 *
 * The idle thread runs in System mode, which shares the user bank, so an
 * interrupt that wakes it is saved like any user entry.  Aborts and
 * undefined instructions taken in the kernel (SVC mode, or System mode in
 * the idle loop) are bugs: they are saved on the mode's own small stack
 * and reported by arch_kernel_exception() (fault.c), which panics unless
 * the faulting instruction has a fixup (the semihosting and L2C probes).
 */
#include <arch/memlayout.h>
#include <arch/exception.h>
#include <abi/syscalls.h>

    .syntax unified
    .arm

    .section .text.vectors, "ax"
    .balign 32
    .global vectors
vectors:
    b reset_entry
    b undef_entry
    b svc_entry
    b pabt_entry
    b dabt_entry
    b reset_entry           @ not used by ARMv7
    b irq_entry
    b fiq_entry

/*
 * Save the user registers (SRS already done, SVC mode) and switch to the
 * kernel stack.  STM of the user bank cannot write back its base, and
 * needs not: sp is replaced right after.  fp keeps the user's value: the
 * backtrace walker (fault.c) stops at the first saved fp that is not
 * further up the kernel stack, so a user value ends the chain as 0 would.
 */
.macro save_user_rest
    stmdb sp, {r0-r14}^
    mrc p15, 0, r8, c13, c0, 4          @ TPIDRPRW: this core's kernel stack top
    sub sp, r8, #KSTACK_RESERVED
.endm

/*
 * System call: r7 holds the number (docs/arm-imx6.md).  lr_svc is the
 * instruction after the SVC, which is where the thread resumes.
 */
svc_entry:
    srsdb sp!, #MODE_SVC
    save_user_rest
    /*
     * Call and ReplyRecv go straight to the IPC fastpath (kernel/fastpath.c),
     * neither of which returns, through a table indexed by the number: two
     * instructions for either, where a compare and branch for each would
     * make ReplyRecv's four.  The LDR reads pc as its own address + 8,
     * the table's.
     */
    cmp r7, #SYSNO_REPLY_RECV
    ldrls pc, [pc, r7, lsl #2]
    b syscall_slow
    .word syscall_slow
    .word fastpath_call             @ SYSNO_CALL
    .rept SYSNO_REPLY_RECV - SYSNO_CALL - 1
    .word syscall_slow
    .endr
    .word fastpath_reply_recv       @ SYSNO_REPLY_RECV
syscall_slow:
    mov r0, r7
    bl handle_syscall

/* Interrupt: lr_irq is the interrupted instruction + 4. */
irq_entry:
    sub lr, lr, #4
    srsdb sp!, #MODE_SVC
    cps #MODE_SVC
    save_user_rest
    bl arch_handle_irq

/*
 * Aborts and undefined instructions.  The SPSR says where they came from:
 * mode bits 0..3 are 0 only for User mode.  r0 is borrowed through a word
 * below the mode's own stack, and the flags survive the LDR.
 */
.macro exception_entry adjust, mode, kind
    sub lr, lr, #\adjust
    str r0, [sp, #-4]
    mrs r0, spsr
    tst r0, #0xf
    ldr r0, [sp, #-4]
    bne 1f
    srsdb sp!, #MODE_SVC
    cps #MODE_SVC
    save_user_rest
    mov r0, #\kind
    bl arch_user_exception
1:  srsdb sp!, #\mode
    push {r0-r12}
    mov r0, sp
    mov r1, #\kind
    cps #MODE_SVC
    mov r2, sp
    mov r3, lr
    cps #\mode
    bl arch_kernel_exception
    /* Returns only after moving the frame's pc to a fixup. */
    pop {r0-r12}
    rfeia sp!
.endm

/* Undefined instruction: lr_und = the instruction + 4 (ARM state). */
undef_entry:
    exception_entry 4, MODE_UND, EXC_UNDEFINED

/* Prefetch abort: lr_abt = the instruction + 4. */
pabt_entry:
    exception_entry 4, MODE_ABT, EXC_PREFETCH_ABORT

/* Data abort: lr_abt = the instruction + 8. */
dabt_entry:
    exception_entry 8, MODE_ABT, EXC_DATA_ABORT

/* Reset is never routed here (the boot ROM owns it); FIQs are never unmasked. */
reset_entry:
fiq_entry:
    cpsid aif
    mov r0, #0
    mov r1, #EXC_UNEXPECTED
    b arch_unexpected_exception

/*
 * Leave the kernel to the context at r0: load the thread's TLS base into
 * TPIDRURO, restore r0..r14 of the user bank, then RFE loads pc and cpsr.
 * SVC mode's sp ends just past the registers, ready for the next entry.
 * CLREX drops this core's exclusive reservation, so a LDREX of one thread
 * never pairs with a STREX of another.  TPIDRURO is written on every exit,
 * two instructions, rather than compared with what the core holds: the
 * comparison would cost as much.
 * arch_return_to_user(thread) is the same code: a thread's context is the
 * first member of its TCB (static assert in context.c).
 */
    .text
    .global arch_restore_context
    .global arch_return_to_user
arch_return_to_user:
arch_restore_context:
    clrex
    ldr r1, [r0, #CTX_TLS_BASE]
    mcr p15, 0, r1, c13, c0, 3          @ TPIDRURO: user read-only thread ID
    add sp, r0, #(15 * 4)
    ldmdb sp, {r0-r14}^
    rfeia sp!

/*
 * The idle loop, entered through arch_restore_context in System mode with
 * IRQs on.  It touches no memory, so it needs no stack and its context
 * can be discarded whenever an interrupt takes it away.  DSB first: WFI
 * must not wait with stores of the kernel still buffered.
 */
    .global arch_idle_loop
arch_idle_loop:
    dsb
    wfi
    b arch_idle_loop
