/*
 * The per-thread user state the kernel keeps besides the registers, as a
 * thread sees it (in-guest tests test_tls.c and test_fpu.c): the thread
 * pointer loaded from the TCB's TLS base, and the x87/SSE registers.
 */
#ifndef ARCH_THREAD_STATE_H
#define ARCH_THREAD_STATE_H

#include <abi/types.h>

/* The word at the thread pointer, as musl reads it (the x86_64 TLS ABI's self pointer at %fs:0). */
static inline word_t arch_thread_pointer_word(void)
{
    word_t w;
    __asm__ volatile("movq %%fs:0, %0" : "=r"(w));
    return w;
}

/* A TLS base the kernel refuses (E_INVALID_ARGUMENT): FS base must be canonical. */
#define ARCH_HAS_INVALID_TLS_BASE 1
#define ARCH_INVALID_TLS_BASE 0x0000800000000000UL

/* Each thread has its own x87/SSE registers (thread_state.S). */
#define ARCH_FPU_PER_THREAD 1

/* xmm0..xmm15 and the eight x87 registers get values made from seed. */
void arch_fpu_fill(word_t seed);
/* 0 when they still hold what arch_fpu_fill(seed) put there, else 1 + the first that differs
 * (xmm0..15: 1..16, x87: 17..24).  It empties the x87 stack. */
word_t arch_fpu_check(word_t seed);
/* The x87 control word << 32 | MXCSR, and setting both. */
word_t arch_fpu_control(void);
void arch_fpu_set_control(word_t control);
#define ARCH_FPU_CONTROL_FRESH ((0x037fUL << 32) | 0x1f80)  /* FNINIT's and the reset MXCSR */
#define ARCH_FPU_CONTROL_OTHER ((0x0f7fUL << 32) | 0x7f80)  /* both rounding toward zero */

/* An FPU exception: x87 divide by zero with the exception unmasked in FCW, #MF. */
#define ARCH_EXC_FPU 16
word_t arch_fault_fpu(void);
extern const char arch_fault_fpu_at[], arch_fault_fpu_resume[];

/* A SIMD exception: SSE divide by zero with the exception unmasked in MXCSR, #XM; returns
 * ARCH_FAULT_NONE on a CPU that completes the division instead (QEMU's TCG). */
#define ARCH_EXC_SIMD 19
#define ARCH_FAULT_NONE 0x0f0f
word_t arch_fault_simd(void);
extern const char arch_fault_simd_at[], arch_fault_simd_resume[];

#endif
