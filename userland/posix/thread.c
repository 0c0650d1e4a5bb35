/*
 * Threads: clone, futexes, the thread pointer, exit.
 *
 * The root task made a pool of TCBs for the process (posix_start.h), all
 * configured for its space and its core; slot 0 is the main thread.  clone
 * takes a free slot and starts it where the trap's contract says
 * (arch/<port>/user/posix_trap.S): at __posix_trap_clone_child, with the
 * stack pointer at the frame the trap wrote below the child's stack.
 *
 * A thread is known by its thread pointer (the TLS base the kernel loads
 * for it): px_self() looks it up among the slots.  Before the main
 * thread has set its own, the only thread is the main thread.
 *
 * Futexes: a waiter records the address it waits on, then waits on its
 * slot's notification; a wake signals the notifications of the waiters on
 * that address.  A signal that comes between the record and the wait is
 * kept by the notification, so no wake is lost; a stale one only makes a
 * later wait return early, which futex callers allow for.  All threads
 * share one core, so px_lock() yields instead of spinning.
 */
#include <errno.h>
#include <sched.h>
#include <abi/invocation.h>
#include <abi/errors.h>
#include <arch_user.h>
#include "net_channel.h"
#include "personality.h"

/* Linux's futex operations (musl installs no kernel headers). */
#define FUTEX_WAIT          0
#define FUTEX_WAKE          1
#define FUTEX_REQUEUE       3
#define FUTEX_CMP_REQUEUE   4
#define FUTEX_CMD_MASK      0x7f    /* without FUTEX_PRIVATE_FLAG (every futex here is private) */

extern char __posix_trap_clone_child[];

enum slot_state { SLOT_FREE, SLOT_RUNNING, SLOT_EXITING };

struct thread_slot {
    enum slot_state state;
    unsigned long tls;          /* its thread pointer */
    int *clear_tid;             /* CLONE_CHILD_CLEARTID: zeroed and woken at exit */
    int *futex;                 /* the address it waits on, or NULL */
    unsigned long stack, stack_len;     /* its own stack, unmapped as it exits (deferred) */
};

static struct thread_slot slots[POSIX_MAX_THREADS] = { [0] = { .state = SLOT_RUNNING } };
static bool some_exiting;

static bool tls_set;
static int lock_word;

void px_lock(void)
{
    while (__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
        px_yield();
}

void px_unlock(void)
{
    __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
}

int px_self(void)
{
    if (!__atomic_load_n(&tls_set, __ATOMIC_ACQUIRE))
        return 0;
    unsigned long tp = (unsigned long)__builtin_thread_pointer();
    for (int k = 0; k < POSIX_MAX_THREADS; k++)
        if (slots[k].state == SLOT_RUNNING && slots[k].tls == tp)
            return k;
    return 0;
}

struct ipc_buffer *px_ipcbuf(void)
{
    return (struct ipc_buffer *)posix_start_page->threads[px_self()].ipcbuf_vaddr;
}

static word_t set_tls_of(int slot, unsigned long base)
{
    const word_t args[] = { base };
    return px_invoke(posix_start_page->threads[slot].tcb, TCB_SET_TLS_BASE, 1, args);
}

long px_set_tls(unsigned long base)
{
    int self = px_self();
    if (set_tls_of(self, base) != E_OK)
        return -EINVAL;
    px_lock();
    slots[self].tls = base;
    px_unlock();
    __atomic_store_n(&tls_set, true, __ATOMIC_RELEASE);
    return 0;
}

static long tid_of(int slot)
{
    return 1 + slot;            /* the main thread's tid is the pid, as on Linux */
}

long px_gettid(void)
{
    return tid_of(px_self());
}

long px_set_tid_address(int *tidptr)
{
    int self = px_self();
    px_lock();
    slots[self].clear_tid = tidptr;
    px_unlock();
    return tid_of(self);
}

long px_clone(unsigned long flags, unsigned long stack, int *parent_tid, int *child_tid,
                 unsigned long tls)
{
    const unsigned long thread = CLONE_VM | CLONE_THREAD | CLONE_SIGHAND;
    if ((flags & thread) != thread || !stack)
        return -ENOSYS;         /* a new process: there is no fork */
    const struct posix_start *start = posix_start_page;
    px_reap_exited();
    px_lock();
    int k = 1;
    while (k < (int)start->nthreads && slots[k].state != SLOT_FREE)
        k++;
    if (k >= (int)start->nthreads) {
        px_unlock();
        return -EAGAIN;
    }
    slots[k] = (struct thread_slot){ .state = SLOT_RUNNING, .tls = flags & CLONE_SETTLS ? tls : 0,
                                    .clear_tid = flags & CLONE_CHILD_CLEARTID ? child_tid : NULL };
    px_unlock();
    if (flags & CLONE_PARENT_SETTID)
        *parent_tid = (int)tid_of(k);
    if (flags & CLONE_CHILD_SETTID)
        *child_tid = (int)tid_of(k);
    word_t regs[2 + ARCH_USER_REGS] = { 1, ARCH_USER_REGS };
    regs[2 + ARCH_REG_IP] = (word_t)__posix_trap_clone_child;
    regs[2 + ARCH_REG_SP] = stack;
    regs[2 + ARCH_REG_FLAGS] = ARCH_INITIAL_FLAGS;
    if ((flags & CLONE_SETTLS) && set_tls_of(k, tls) != E_OK) {
        slots[k].state = SLOT_FREE;
        return -EINVAL;
    }
    if (px_invoke(start->threads[k].tcb, TCB_WRITE_REGISTERS, 2 + ARCH_USER_REGS, regs) != E_OK) {
        slots[k].state = SLOT_FREE;
        return -EAGAIN;
    }
    return tid_of(k);
}

static long futex_wake(int *uaddr, int n)
{
    int woken = 0;
    px_lock();
    for (int k = 0; k < POSIX_MAX_THREADS && woken < n; k++) {
        if (slots[k].state == SLOT_RUNNING && slots[k].futex == uaddr) {
            slots[k].futex = NULL;
            px_signal(posix_start_page->threads[k].wait);
            woken++;
        }
    }
    px_unlock();
    return woken;
}

struct futex_wait {
    int self;
};

static bool woken(void *ctx)
{
    struct futex_wait *w = ctx;
    return !__atomic_load_n(&slots[w->self].futex, __ATOMIC_ACQUIRE);
}

static long futex_wait(int *uaddr, int val, uint64_t timeout_ns)
{
    int self = px_self();
    px_lock();
    if (__atomic_load_n(uaddr, __ATOMIC_RELAXED) != val) {
        px_unlock();
        return -EAGAIN;
    }
    slots[self].futex = uaddr;
    px_unlock();
    if (timeout_ns == UINT64_MAX) {
        px_wait(posix_start_page->threads[self].wait);
    } else {
        /* Relative, as FUTEX_WAIT takes it; the thread yields while it waits. */
        uint64_t deadline = px_now_ns() + timeout_ns;
        struct futex_wait w = { self };
        while (!woken(&w) && px_now_ns() < deadline)
            px_yield();
    }
    px_lock();
    bool timed_out = slots[self].futex == uaddr;
    slots[self].futex = NULL;
    px_unlock();
    return timed_out && timeout_ns != UINT64_MAX ? -ETIMEDOUT : 0;
}

long px_futex(int *uaddr, int op, int val, uint64_t timeout_ns, int *uaddr2, int val3)
{
    (void)uaddr2;
    (void)val3;
    switch (op & FUTEX_CMD_MASK) {
    case FUTEX_WAIT:
        return futex_wait(uaddr, val, timeout_ns);
    case FUTEX_WAKE:
        return futex_wake(uaddr, val);
    case FUTEX_REQUEUE:
    case FUTEX_CMP_REQUEUE:
        /* Waking every waiter is a correct requeue: each rechecks its condition and waits again. */
        if ((op & FUTEX_CMD_MASK) == FUTEX_CMP_REQUEUE && __atomic_load_n(uaddr, __ATOMIC_RELAXED) != val3)
            return -EAGAIN;
        return futex_wake(uaddr, POSIX_MAX_THREADS);
    default:
        return -ENOSYS;
    }
}

/*
 * musl frees an exiting thread's stack with munmap and then calls exit on
 * it (__unmapself).  If the pages were free at once, another thread could
 * take them while the exiting one still runs on them; so the munmap of the
 * caller's own stack is only noted, and the pages are freed once the thread
 * is surely stopped: another thread suspends it first (px_reap_exited).
 */
bool px_defer_own_stack(unsigned long addr, unsigned long len)
{
    unsigned long sp = (unsigned long)__builtin_frame_address(0);
    int self = px_self();
    if (self == 0 || sp < addr || sp - addr >= len)
        return false;
    px_lock();
    slots[self].stack = addr;
    slots[self].stack_len = len;
    px_unlock();
    return true;
}

void px_reap_exited(void)
{
    if (!__atomic_load_n(&some_exiting, __ATOMIC_ACQUIRE))
        return;
    const struct posix_start *start = posix_start_page;
    int self = px_self();
    for (int k = 1; k < (int)start->nthreads; k++) {
        if (k == self || __atomic_load_n(&slots[k].state, __ATOMIC_ACQUIRE) != SLOT_EXITING)
            continue;
        px_invoke(start->threads[k].tcb, TCB_SUSPEND, 0, NULL);
        unsigned long stack = slots[k].stack, len = slots[k].stack_len;
        px_lock();
        slots[k] = (struct thread_slot){ .state = SLOT_FREE };
        px_unlock();
        if (len)
            px_munmap(stack, len);
    }
    __atomic_store_n(&some_exiting, false, __ATOMIC_RELEASE);
}

/*
 * A thread's end.  Clearing the tid word (CLONE_CHILD_CLEARTID) hands the
 * thread's memory back: its joiner then frees the stack and may reuse it,
 * and musl lets the next thread into pthread_exit, which may run on the
 * static stack of its __unmapself that this thread came from (the tid word
 * is musl's thread-list lock).  Linux clears it once the thread is gone.
 * Here the thread still has a few steps to take after it (the wake, the
 * slot's state, its own suspension), so it first moves to a stack of its
 * slot's that nothing else uses (arch_posix_run_on_stack) and takes them
 * there: a preemption among them finds nothing it runs on in anyone's hands.
 * The slot, and with it that stack, is given out again only after another
 * thread has suspended this one (px_reap_exited).  From there on the thread
 * reads nothing of its own memory, not even the TLS behind its thread
 * pointer (px_self()), which the joiner may have reused: it knows its slot
 * from the argument.
 */
#define EXIT_STACK_SIZE 2048

static unsigned char exit_stacks[POSIX_MAX_THREADS][EXIT_STACK_SIZE] __attribute__((aligned(16)));

_Static_assert(EXIT_STACK_SIZE % 16 == 0, "each exit stack's top is 16-byte aligned");

static _Noreturn void thread_end(word_t self)
{
    int *clear = slots[self].clear_tid;
    if (clear) {
        __atomic_store_n(clear, 0, __ATOMIC_RELEASE);
        futex_wake(clear, 1);
    }
    px_lock();
    slots[self].state = SLOT_EXITING;
    __atomic_store_n(&some_exiting, true, __ATOMIC_RELEASE);
    px_unlock();
    cptr_t tcb = posix_start_page->threads[self].tcb;
    for (;;)
        px_invoke(tcb, TCB_SUSPEND, 0, NULL);
}

_Noreturn void px_thread_exit(void)
{
    int self = px_self();
    if (self == 0)
        px_exit_group(0);
    arch_posix_run_on_stack(exit_stacks[self] + EXIT_STACK_SIZE, thread_end, (word_t)self);
}

_Noreturn void px_exit_group(int status)
{
    struct net_channel *ch = posix_start_page->channel;
    if (ch)
        channel_report(&ch->state, ch->driver, CHANNEL_FAILED);     /* it serves no more */
    px_linux_exit_group(status);
}
