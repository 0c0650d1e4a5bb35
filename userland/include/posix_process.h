/*
 * POSIX processes made by the root task (docs/posix-loader.md): the static
 * Linux ELF embedded in the root task's image (program_image.S) loaded into
 * an address space of its own, with the Linux start stack, a heap, the
 * start page of posix_start.h and a pool of configured threads, its main
 * thread started at the ELF's entry.
 *
 * The root task's side only: creating processes takes the root task's
 * allocators, so only its main thread may call posix_process_create().
 * A thread of a process that faults, or that makes Linux's exit_group
 * system call with the machine's own instruction, is reported by the
 * root task's fault server (posix_fault.c), which stops the process.
 */
#ifndef POSIX_PROCESS_H
#define POSIX_PROCESS_H

#include <posix_start.h>
#include <root.h>

/* The address-space layout of every process (docs/posix-loader.md). */
#define POSIX_STACK_TOP         0x0ff00000UL
#define POSIX_STACK_SIZE        (1UL << 20)
#define POSIX_RESERVED_START    0x10000000UL    /* boot info, start page, clock, IPC buffers */
#define POSIX_RESERVED_END      0x10100000UL
#define POSIX_CLOCK_VADDR       0x10003000UL
#define POSIX_IPCBUF_VADDR      0x10010000UL    /* thread k's at + k * PAGE_SIZE */
#define POSIX_HEAP_VADDR        0x40000000UL

/* How many processes may exist at once (the fault server's table). */
#define POSIX_MAX_PROCESSES     16

/* The most argv and envp strings a process starts with, each. */
#define POSIX_MAX_ARGS          32

struct posix_process_opts {
    word_t core;                    /* every thread of the process runs there */
    word_t prio;                    /* their priority (0: DEFAULT_PRIO) */
    const char *const *argv;        /* NULL-terminated; argv[0] is the program's name */
    const char *const *envp;        /* NULL-terminated, or NULL for none */
    word_t heap_size;               /* bytes, mapped read-write and zero at POSIX_HEAP_VADDR */
    struct net_channel *channel;    /* mapped at the same address in the process, or NULL */
    cptr_t channel_frame;           /* the channel's large frame (when channel is set) */
    struct socket_link *link;       /* or a socket link to a stack process, mapped the same way */
    cptr_t link_frame;              /* the link's large frame (when link is set) */
    cptr_t ended_signal;            /* signalled when the process ends (0: none) */
};

enum posix_process_state {
    POSIX_RUNNING,
    POSIX_EXITED,       /* a thread made exit_group: status is its argument */
    POSIX_FAULTED,      /* a thread faulted: status is 128 + the signal Linux would send */
};

struct posix_process {
    word_t index;                   /* in the fault server's table; badges of its fault caps */
    cptr_t vspace;
    cptr_t storage;                 /* a CNode holding the caps of the frames mapped in vspace */
    word_t entry;                   /* the ELF's entry point */
    word_t sp;                      /* the main thread's stack pointer at entry */
    struct posix_start start;       /* what the start page holds */
    word_t state;                   /* enum posix_process_state, written by the fault server */
    word_t status;
};

/*
 * Load the embedded program as a new process and start its main thread.
 * E_OK, or the status of the step that failed after printing why (a
 * program that is absent or not a valid ELF for this port: E_INVALID_ARGUMENT).
 */
word_t posix_process_create(const struct posix_process_opts *opts, struct posix_process *proc);

/* Whether the root task's image holds a program (make POSIX_PROGRAM=..., docs/posix-loader.md). */
bool posix_program_present(void);

/* The process's state (enum posix_process_state) as the fault server last set it. */
static inline word_t posix_process_state(const struct posix_process *proc)
{
    return __atomic_load_n(&proc->state, __ATOMIC_ACQUIRE);
}

/*
 * The fault server (posix_fault.c).  posix_fault_attach() starts it on
 * first use and returns a cap to its endpoint badged for thread k of
 * proc, the fault endpoint of that thread (0 on failure);
 * posix_fault_watch() hands it proc before proc's threads run.
 */
cptr_t posix_fault_attach(const struct posix_process *proc, word_t k);
void posix_fault_watch(struct posix_process *proc, cptr_t ended_signal);
/* A free index of the fault server's table, or POSIX_MAX_PROCESSES when none is left. */
word_t posix_fault_free_index(void);

#endif
