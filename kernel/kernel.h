/*
 * Kernel-wide entry points and boot state.
 */
#ifndef KERNEL_KERNEL_H
#define KERNEL_KERNEL_H

#include "types.h"
#include "tcb.h"
#include <arch.h>

/* kernel/boot.c */
extern const char root_image_start[], root_image_end[];

/*
 * The root task's first thread, the only one that may end the run
 * (SYS_DEBUG_HALT): a thread running stray code, as the fuzzer's do, must
 * not stop the machine.  NULL once that thread is destroyed.
 */
extern struct tcb *root_thread;
extern char boot_cmdline[];
/* The value of `key=` on the boot command line, copied into out; false when absent. */
bool cmdline_get(const char *key, char *out, size_t size);

/* kernel/fault.c: the current thread faulted. */
void handle_fault(struct tcb *t, enum fault_type type, word_t w0, word_t w1, word_t w2, word_t w3);

/* kernel/syscall.c */
void syscall_return(struct tcb *t, enum status s, unsigned nresults);

/* kernel/debug.c: debug system calls (status in ABI_STATUS).  */
void handle_debug_syscall(word_t sysno);
/* kernel/kstats.c: SYS_DEBUG_KSTATS for thread t. */
void debug_kstats(struct tcb *t);
/* The invariant checker; prints what failed and returns false. */
bool kernel_check_invariants(void);

/* Whether the secondary cores may run kernel code (false for LOCK=none without UNSAFE). */
bool multicore_allowed(void);

#endif
