/*
 * What the root task hands a POSIX process when it starts it (docs/posix.md).
 *
 * A POSIX process is a static ELF built against the C library and the
 * personality (userland/posix): its Linux system calls are function calls
 * into the personality, which implements them on the kernel's objects.  The
 * root task loads the ELF into a new address space, builds the Linux start
 * stack (argc, argv, envp, auxv) and maps this page read-only at
 * POSIX_START_VADDR.  Everything the personality uses is made beforehand by
 * the root task, as for the network instances (net_channel.h): a process
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
    word_t realtime;                /* Unix time (s) when the cycle counter read 0, from the boot
                                     * command line's realtime= (tools/qemu_run.py gives the host's
                                     * clock); 0: unknown */
    word_t heap_vaddr;              /* brk and mmap carve their memory from here: */
    word_t heap_size;               /*   mapped read-write and zeroed */
    struct net_channel *channel;    /* the channel to the NIC driver (same address here), or NULL */
    word_t nthreads;                /* entries of threads[] filled */
    struct posix_thread_slot threads[POSIX_MAX_THREADS];
};

#endif
