/*
 * Exception kinds passed from vectors.S to fault.c, and the ARM exception
 * numbers reported in FAULT_USER_EXCEPTION messages (MR2): the offset of
 * the vector divided by 4.  Constants only (shared with assembly).
 */
#ifndef ARCH_EXCEPTION_H
#define ARCH_EXCEPTION_H

#define EXC_UNDEFINED       1
#define EXC_PREFETCH_ABORT  3
#define EXC_DATA_ABORT      4
#define EXC_UNEXPECTED      7

/* Offset of struct arch_context's tls_base (machine.h), for the exit in vectors.S. */
#define CTX_TLS_BASE        68

#ifndef __ASSEMBLY__
#include <abi/types.h>

/* What an exception taken in kernel mode left on its mode's stack (vectors.S). */
struct kernel_frame {
    word_t r[13];
    word_t pc;
    word_t cpsr;
};

void arch_restore_context(const void *ctx) __attribute__((noreturn));
void arch_idle_loop(void);
#endif

#endif
