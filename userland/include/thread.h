/*
 * Threads made by the root task.  thread_create() makes a thread in the
 * root task's own address space and CSpace; thread_create_space() makes
 * one in a new address space that maps the root task's image frames (same
 * code and, if writable, the same globals), the frames given to
 * space_share_frame(), a fresh stack and IPC buffer.  With private_data,
 * the writable image pages (.data and .bss, from __data_start) are instead
 * fresh frames holding a copy of the root task's globals as they are at
 * that moment, a fork of the data segment: the new space's globals (a
 * library's state, malloc's) are its own from then on.
 * Both leave the thread configured but not running; thread_start() sets
 * its registers and resumes it.  fn runs with the thread's IPC buffer and
 * thread block (thread_local.h) set up; when it returns the thread
 * suspends itself if it has a capability to its own TCB.
 */
#ifndef THREAD_H
#define THREAD_H

#include <root.h>

typedef void (*thread_fn)(void *arg);

struct thread_opts {
    word_t prio;            /* priority (0..255) */
    word_t core;            /* affinity */
    cptr_t fault_ep;        /* fault endpoint, in the thread's CSpace (0: none) */
    /* thread_create_space only: */
    cptr_t cspace;          /* CSpace root (0: the root CNode) */
    word_t cspace_data;     /* guard data for a fresh CNode (ignored for the root CNode) */
    cptr_t self_in_cspace;  /* where its own TCB cap is in that CSpace (0: none) */
    word_t image_rights;    /* rights of the image mappings (0: read-write) */
    bool private_data;      /* copy the writable image instead of sharing it */
};

struct thread {
    cptr_t tcb;             /* in the root CNode */
    cptr_t vspace;          /* its VSpace root (ROOT_SLOT_VSPACE when shared) */
    cptr_t self;            /* its own TCB in its own CSpace, or 0 */
    word_t ipc_vaddr;       /* IPC buffer, in its space */
    word_t stack_top;       /* in its space */
    struct ipc_buffer *ipc_in_root; /* the IPC buffer as the root task sees it (shared space only) */
};

/* Priority of the root task's main thread while tests run (roottask/main.c). */
#define ROOT_PRIO 200
#define DEFAULT_PRIO 100

word_t thread_create(struct thread *t, const struct thread_opts *o);
word_t thread_create_space(struct thread *t, const struct thread_opts *o);
word_t thread_start(struct thread *t, thread_fn fn, void *arg);

/*
 * Map `frame` (a cap in the root CNode, mapped at vaddr in the root task's
 * space) at the same address in every space thread_create_space() makes
 * from now on.  For a port's user-level support (docs/userland.md).
 */
word_t space_share_frame(cptr_t frame, word_t vaddr, word_t rights, word_t attrs);

/*
 * Map a copy of the root task's frame cap `frame` at vaddr in vspace (a
 * space thread_create_space() made); the copy takes a root CNode slot.
 */
word_t space_map_copy(cptr_t frame, cptr_t vspace, word_t vaddr, word_t rights, word_t attrs);

/* Set a thread's ip and sp (and resume it when resume != 0), keeping the start registers. */
word_t thread_restart_at(struct thread *t, word_t ip, word_t sp, thread_fn fn, void *arg);

/* The C entry of new threads, called by _thread_start (crt0.S). */
_Noreturn void thread_entry(thread_fn fn, void *arg, struct ipc_buffer *buf, cptr_t self);

/* End the calling thread: suspend it through its own TCB cap, or spin yielding. */
_Noreturn void thread_exit(void);

#endif
