/*
 * Per-thread data.  The kernel's TLS base (TCB SetTLSBase) is left to a
 * libc, so every thread stack is STACK_SIZE bytes aligned to STACK_SIZE
 * and this block sits at its lowest address: masking the stack pointer
 * finds it.  The root task's stack is root_stack (crt0.S); others come from
 * thread.c.
 */
#ifndef THREAD_LOCAL_H
#define THREAD_LOCAL_H

#include <abi/ipc_buffer.h>

#define STACK_SIZE 16384

struct thread_local {
    struct ipc_buffer *ipcbuf;  /* this thread's IPC buffer */
    cptr_t self;                /* its own TCB in its CSpace, or 0 */
    word_t guard;               /* TLS_GUARD: catches stacks without a block */
    word_t detail[2];           /* MR0, MR1 of the last failed invocation (invoke.c) */
};

#define TLS_GUARD 0x7e57ab1e

static inline struct thread_local *tls(void)
{
    word_t sp = (word_t)__builtin_frame_address(0);
    return (struct thread_local *)(sp & ~(word_t)(STACK_SIZE - 1));
}

static inline struct ipc_buffer *ipcbuf(void)
{
    return tls()->ipcbuf;
}

#endif
