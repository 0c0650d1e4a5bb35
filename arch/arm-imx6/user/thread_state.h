/*
 * The per-thread user state the kernel keeps besides the registers, as a
 * thread sees it (in-guest tests test_tls.c and test_fpu.c): the thread
 * pointer loaded from the TCB's TLS base.  There are no FPU registers per
 * thread: user code is soft-float and VFP stays disabled.
 */
#ifndef ARCH_THREAD_STATE_H
#define ARCH_THREAD_STATE_H

#include <abi/types.h>

/* TPIDRURO, as musl for ARMv7 reads its thread pointer. */
static inline word_t arch_thread_pointer_word(void)
{
    word_t w;
    __asm__ volatile("mrc p15, 0, %0, c13, c0, 3" : "=r"(w));
    return w;
}

/* Every word is a valid TLS base here. */
#define ARCH_HAS_INVALID_TLS_BASE 0
#define ARCH_INVALID_TLS_BASE 0

#define ARCH_FPU_PER_THREAD 0

/* An FPU instruction: VFP is disabled, so it is undefined (thread_state.S). */
#define ARCH_EXC_FPU 1
word_t arch_fault_fpu(void);
extern const char arch_fault_fpu_at[], arch_fault_fpu_resume[];

#endif
