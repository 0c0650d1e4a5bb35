/*
 * The debug system calls (kernel/debug.c, kernel/kstats.c; docs/abi.md).
 */
#ifndef KERNEL_DEBUG_H
#define KERNEL_DEBUG_H

#include "types.h"
#include "tcb.h"

/* A debug system call by the current thread; its status goes to ABI_STATUS. */
void handle_debug_syscall(word_t sysno);
/* SYS_DEBUG_KSTATS for thread t (kernel/kstats.c). */
void debug_kstats(struct tcb *t);

#endif
