/*
 * User faults: a fault message to the thread's fault handler, or, without
 * a usable one, a `fault` record and the thread suspended (abi/faults.h).
 */
#include "fault.h"
#include "kernel.h"
#include "core.h"
#include "cspace.h"
#include "endpoint.h"
#include "ipc_locks.h"
#include "printf.h"
#include "sched.h"
#include <lock.h>

static const char *const fault_names[] = {
    [FAULT_NONE] = "none",
    [FAULT_VM] = "vm",
    [FAULT_USER_EXCEPTION] = "exception",
    [FAULT_UNKNOWN_SYSCALL] = "syscall",
};

/*
 * Send a fault message to t's fault endpoint, as a Call: the reply resumes
 * it.  With no usable fault endpoint the thread is suspended and a `fault`
 * record is printed.
 */
void handle_fault(struct tcb *t, enum fault_type type, word_t w0, word_t w1, word_t w2, word_t w3)
{
    struct lookup_result r = cspace_lookup_cap(t, t->fault_endpoint);

    t->fault_type = (uint8_t)type;
    t->fault[0] = w0;
    t->fault[1] = w1;
    t->fault[2] = w2;
    t->fault[3] = w3;
    if (t->fault_endpoint && !r.failure && r.slot->cap.type == CAP_ENDPOINT &&
        (r.slot->cap.rights & RIGHT_WRITE) &&
        (r.slot->cap.rights & (RIGHT_GRANT | RIGHT_GRANT_REPLY))) {
        endpoint_send_fault(t, r.slot->cap.obj, r.slot->cap.badge);
        return;
    }
    kernel_lock_require_exclusive();
    kprintf("@@ {\"fault\": {\"thread\": \"");
    if (t->name[0])
        kprint_json_string(t->name, sizeof(t->name));
    else
        kprintf("%p", (void *)t);
    kprintf("\", \"type\": \"%s\", \"ip\": \"0x%lx\", \"addr\": \"0x%lx\"}}\n",
            type < ARRAY_SIZE(fault_names) ? fault_names[type] : "unknown",
            (unsigned long)w0, (unsigned long)(type == FAULT_VM ? w1 : w2));
    /* Read side under LOCK=fine: another core may be taking t's lock or t's core's queues. */
    struct ipc_locks locks = ipc_locks_of(NULL, NULL, t);
    ipc_locks_acquire(&locks);
    t->fault_type = FAULT_NONE;
    t->state = TS_INACTIVE;
    sched_dequeue(t);
    ipc_locks_release(&locks);
}
