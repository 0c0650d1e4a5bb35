/*
 * What the root task hands a POSIX process when it starts it (docs/posix.md).
 *
 * A POSIX process is a static ELF built against the C library and the
 * personality (userland/posix): its Linux system calls are function calls
 * into the personality, which implements them on the kernel's objects.  The
 * root task loads the ELF into a new address space, builds the Linux start
 * stack (argc, argv, envp, auxv) and maps this page read-only at
 * POSIX_START_VADDR.  Everything the personality uses is made beforehand by
 * the root task, as for the network instances (net_channel.h, socket_link.h): a process
 * allocates no kernel object and no slot.  Its CSpace is the root CNode, so
 * the slot numbers below are valid in it.
 *
 * Both sides include this header: the root task with its own library, the
 * personality with the C library's headers.  So it uses only abi types.
 */
#ifndef POSIX_START_H
#define POSIX_START_H

#include <abi/types.h>

#define POSIX_START_VADDR   0x10002000UL
#define POSIX_START_MAGIC   0x706f7378UL    /* "posx" */

/* Threads the process can have at once, its main thread included (clone takes one from the pool). */
#define POSIX_MAX_THREADS   8

struct net_channel;
struct socket_link;

/*
 * One thread of the pool.  The TCB is configured (this space, the root
 * CNode, the IPC buffer below, the process's priority and core, the fault
 * endpoint) but not running, except threads[0], the main thread.
 */
struct posix_thread_slot {
    cptr_t tcb;             /* the thread's TCB */
    cptr_t wait;            /* a notification only this thread waits on (futex waits) */
    word_t ipcbuf_vaddr;    /* its IPC buffer, mapped in this space */
};

struct posix_start {
    word_t magic;                   /* POSIX_START_MAGIC */
    word_t core;                    /* the core every thread of the process runs on */
    word_t cycle_hz;                /* ticks per second of the arch cycle counter (bootinfo) */
    word_t clock_vaddr;             /* arm-imx6: the global timer's page, mapped read-only; else 0 */
    word_t heap_vaddr;              /* brk and mmap carve their memory from here: */
    word_t heap_size;               /*   mapped read-write and zeroed */
    struct net_channel *channel;    /* the channel to the NIC driver (same address here), or NULL */
    word_t nthreads;                /* entries of threads[] filled */
    uint64_t realtime_ms;           /* Unix time (ms) no later than the cycle counter's 0, from the
                                     * boot command line's realtime_ms= (tools/qemu_run.py gives the
                                     * host's clock); 0: unknown.  64 bits on both ports: a word of
                                     * 32 bits holds milliseconds since 1970 only for 49 days */
    struct posix_thread_slot threads[POSIX_MAX_THREADS];
    struct socket_link *link;       /* the socket link to a stack process (same address here), or
                                     * NULL; at most one of channel and link is set */
};

/*
 * The root task (the kernel's user toolchain) and the process (musl's)
 * compile this struct separately, so its layout is pinned: eight words,
 * then realtime_ms on an 8-byte boundary on both ports, then the pool, then
 * the link.
 */
_Static_assert(__builtin_offsetof(struct posix_start, realtime_ms) == 8 * sizeof(word_t),
               "realtime_ms follows eight words, 8-byte aligned on both ports");
_Static_assert(__builtin_offsetof(struct posix_start, threads) == 8 * sizeof(word_t) + 8,
               "the pool follows realtime_ms");
_Static_assert(sizeof(struct posix_thread_slot) == 3 * sizeof(word_t), "a slot is three words");
_Static_assert(__builtin_offsetof(struct posix_start, link) ==
               8 * sizeof(word_t) + 8 + POSIX_MAX_THREADS * 3 * sizeof(word_t), "the link follows the pool");
_Static_assert(sizeof(struct posix_start) <= 4096, "the start page is one page");

#endif
