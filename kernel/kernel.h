/*
 * Kernel-wide entry points and boot state.
 */
#ifndef KERNEL_KERNEL_H
#define KERNEL_KERNEL_H

#include "types.h"
#include "tcb.h"
#include <arch.h>
#include <abi/errors.h>
#include <abi/msginfo.h>

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

/*
 * End t's system call with status s and nresults message registers (set
 * before).  Inline here, below every file that ends a call, so that the
 * system-call dispatch and the calls it dispatches to do not depend on
 * each other.
 */
static inline void syscall_return(struct tcb *t, enum status s, unsigned nresults)
{
    arch_set_reg(&t->context, ABI_STATUS, s);
    arch_set_reg(&t->context, ABI_MSGINFO, msginfo_new(0, 0, 0, nresults));
}

/* Whether the secondary cores may run kernel code (false for LOCK=none without UNSAFE). */
bool multicore_allowed(void);

#endif
