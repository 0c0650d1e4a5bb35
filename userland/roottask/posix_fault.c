/*
 * The fault server of POSIX processes (posix_process.h): a thread of the
 * root task, at the highest priority on core 0, receiving on one endpoint
 * that every thread of every process has as its fault endpoint, each
 * through a cap badged with its process and thread.  A process cannot take
 * the root task or another process down: when one of its threads faults,
 * the server prints a `posix_fault` record and suspends every thread of
 * the process.  A thread that makes Linux's exit_group with the machine's
 * own system-call instruction reaches the kernel as an unknown system
 * call; the server takes that as the process's exit, prints a
 * `posix_exit` record with the status from the call's first argument and
 * stops the process the same way.  Either way it then signals the
 * process's ended notification, so that the root task's main thread (the
 * only thread that may end the run) learns of it.
 *
 * The server uses no allocator: everything is made by the main thread in
 * posix_fault_attach() and posix_fault_watch(), before the process runs.
 */
#include <abi/faults.h>
#include <arch_user.h>
#include <posix_arch.h>
#include <posix_process.h>
#include <sys.h>
#include <thread.h>

/* Above every other thread, so that a stopped process stops at once. */
#define FAULT_SERVER_PRIO 254

/* The status a faulting process ends with: 128 + the signal Linux would send, as shells say. */
#define STATUS_SIGILL  (128 + 4)
#define STATUS_SIGSEGV (128 + 11)
#define STATUS_SIGSYS  (128 + 31)

struct watched {
    struct posix_process *proc;     /* published with release, after its fields are set */
    cptr_t ended_signal;
};

static struct watched watched[POSIX_MAX_PROCESSES];
static cptr_t fault_endpoint;
static struct thread server;

static word_t badge_of(word_t index, word_t k)
{
    return index * POSIX_MAX_THREADS + k + 1;
}

static void stop(const struct watched *w, word_t state, word_t status)
{
    struct posix_process *p = w->proc;
    for (word_t k = 0; k < p->start.nthreads; k++)
        tcb_suspend(p->start.threads[k].tcb);
    p->status = status;
    /* Pairs with posix_process_state()'s acquire: status is read after the state. */
    __atomic_store_n(&p->state, state, __ATOMIC_RELEASE);
    if (w->ended_signal)
        sys_signal(w->ended_signal);
}

static void report_fault(const struct watched *w, word_t k, const struct msg *m)
{
    const struct posix_process *p = w->proc;
    unsigned long ip = m->mr[0], second = m->mr[1], third = m->mr[2], fourth = m->mr[3];
    unsigned long idx = p->index, thread = k;
    char fields[192];
    word_t status;

    switch (msginfo_label(m->info)) {
    case FAULT_VM:
        printf("posix: process %lu thread %lu: page fault at ip 0x%lx, address 0x%lx%s\n", idx, thread,
               ip, second, third ? " (instruction fetch)" : "");
        snprintf(fields, sizeof(fields), "\"type\": \"vm\", \"ip\": %lu, \"address\": %lu, "
                 "\"fetch\": %s, \"arch_status\": %lu", ip, second, third ? "true" : "false", fourth);
        status = STATUS_SIGSEGV;
        break;
    case FAULT_USER_EXCEPTION:
        printf("posix: process %lu thread %lu: exception %lu at ip 0x%lx\n", idx, thread, third, ip);
        snprintf(fields, sizeof(fields), "\"type\": \"user_exception\", \"ip\": %lu, \"sp\": %lu, "
                 "\"exception\": %lu, \"code\": %lu", ip, second, third, fourth);
        status = third == ARCH_EXC_ILLEGAL ? STATUS_SIGILL : STATUS_SIGSEGV;
        break;
    case FAULT_UNKNOWN_SYSCALL:
        printf("posix: process %lu thread %lu: unknown system call %lu at ip 0x%lx\n", idx, thread,
               third, ip);
        snprintf(fields, sizeof(fields), "\"type\": \"unknown_syscall\", \"ip\": %lu, \"sp\": %lu, "
                 "\"number\": %lu", ip, second, third);
        status = STATUS_SIGSYS;
        break;
    default:
        snprintf(fields, sizeof(fields), "\"type\": \"unknown\", \"label\": %lu",
                 (unsigned long)msginfo_label(m->info));
        status = STATUS_SIGSEGV;
        break;
    }
    /* One printf, one line: other cores' output cannot come between the record's parts. */
    printf("@@ {\"posix_fault\": {\"process\": %lu, \"thread\": %lu, \"core\": %lu, %s, "
           "\"status\": %lu}}\n", idx, thread, (unsigned long)p->start.core, fields,
           (unsigned long)status);
    stop(w, POSIX_FAULTED, status);
}

/* exit_group(status): the status is the call's first argument, as Linux reads it (low 8 bits). */
static void report_exit(const struct watched *w, word_t k)
{
    word_t regs[ARCH_USER_REGS];
    word_t st = tcb_read_registers(w->proc->start.threads[k].tcb, 1, ARCH_USER_REGS, regs);
    word_t status = st == E_OK ? regs[ARCH_REG_ARG0] & 0xff : STATUS_SIGSYS;
    printf("@@ {\"posix_exit\": {\"process\": %lu, \"thread\": %lu, \"status\": %lu}}\n",
           (unsigned long)w->proc->index, (unsigned long)k, (unsigned long)status);
    stop(w, POSIX_EXITED, status);
}

static void handle(const struct msg *m)
{
    if (m->badge == 0)
        return;
    word_t index = (m->badge - 1) / POSIX_MAX_THREADS, k = (m->badge - 1) % POSIX_MAX_THREADS;
    if (index >= POSIX_MAX_PROCESSES)
        return;
    /* Pairs with posix_fault_watch()'s release: the process's fields and its signal are set. */
    const struct posix_process *p = __atomic_load_n(&watched[index].proc, __ATOMIC_ACQUIRE);
    if (!p || posix_process_state(p) != POSIX_RUNNING)
        return;
    if (msginfo_label(m->info) == FAULT_UNKNOWN_SYSCALL && m->mr[2] == ARCH_LINUX_EXIT_GROUP)
        report_exit(&watched[index], k);
    else
        report_fault(&watched[index], k, m);
}

/* The server's loop: it never replies, so a faulting thread stays blocked until suspended. */
static void serve(void *arg)
{
    (void)arg;
    for (;;) {
        struct msg m;
        if (sys_recv(fault_endpoint, &m) == E_OK)
            handle(&m);
    }
}

static bool server_start(void)
{
    if (fault_endpoint)
        return true;
    cptr_t ep;
    if (obj_alloc(OBJ_ENDPOINT, 0, &ep) != E_OK)
        return false;
    struct thread_opts o = { .prio = FAULT_SERVER_PRIO, .core = 0 };
    if (thread_create(&server, &o) != E_OK) {
        slot_drop(&ep);
        return false;
    }
    /* Set before the server runs, which receives on it; cleared again if it cannot run. */
    fault_endpoint = ep;
    if (thread_start(&server, serve, NULL) != E_OK) {
        fault_endpoint = 0;
        slot_drop(&ep);
        return false;
    }
    return true;
}

word_t posix_fault_free_index(void)
{
    for (word_t i = 0; i < POSIX_MAX_PROCESSES; i++)
        if (!watched[i].proc)
            return i;
    return POSIX_MAX_PROCESSES;
}

cptr_t posix_fault_attach(const struct posix_process *proc, word_t k)
{
    if (!server_start())
        return 0;
    cptr_t slot = slot_alloc();
    if (slot && cnode_mint(ROOT_SLOT_CNODE, slot, ROOT_DEPTH, ROOT_SLOT_CNODE, fault_endpoint,
                           ROOT_DEPTH, RIGHT_WRITE | RIGHT_GRANT_REPLY,
                           badge_of(proc->index, k)) != E_OK)
        slot_drop(&slot);
    return slot;
}

void posix_fault_watch(struct posix_process *proc, cptr_t ended_signal)
{
    watched[proc->index].ended_signal = ended_signal;
    __atomic_store_n(&watched[proc->index].proc, proc, __ATOMIC_RELEASE);
}
