/* Helpers shared by the tests (test.h). */
#include "test.h"

cptr_t ep_new(void)   { return obj_new(OBJ_ENDPOINT, 0); }
cptr_t ntfn_new(void) { return obj_new(OBJ_NOTIFICATION, 0); }

cptr_t mint(cptr_t src, word_t rights, word_t badge)
{
    cptr_t s = slot_alloc();
    if (s && cnode_mint(ROOT_SLOT_CNODE, s, ROOT_DEPTH, ROOT_SLOT_CNODE, src, ROOT_DEPTH, rights,
                        badge) != E_OK) {
        slot_free(s);
        return 0;
    }
    return s;
}

cptr_t copy_cap(cptr_t src, word_t rights)
{
    cptr_t s = slot_alloc();
    if (s && cnode_copy(ROOT_SLOT_CNODE, s, ROOT_DEPTH, ROOT_SLOT_CNODE, src, ROOT_DEPTH,
                        rights) != E_OK) {
        slot_free(s);
        return 0;
    }
    return s;
}

struct thread *spawn_unstarted(word_t prio, word_t core, cptr_t fault_ep)
{
    struct thread *t = malloc(sizeof(*t));
    if (!t) {
        test_fail(__FILE__, __LINE__, "out of heap");
        return NULL;
    }
    struct thread_opts o = { .prio = prio, .core = core, .fault_ep = fault_ep };
    word_t st = thread_create(t, &o);
    if (st != E_OK) {
        test_fail(__FILE__, __LINE__, "thread_create: %s (detail %lu)", status_name(st),
                  (unsigned long)invoke_last_detail(0));
        free(t);
        return NULL;
    }
    return t;
}

struct thread *spawn(thread_fn fn, void *arg, word_t prio, word_t core, cptr_t fault_ep)
{
    struct thread *t = spawn_unstarted(prio, core, fault_ep);
    if (!t)
        return NULL;
    word_t st = thread_start(t, fn, arg);
    if (st != E_OK) {
        test_fail(__FILE__, __LINE__, "thread_start: %s", status_name(st));
        return NULL;
    }
    return t;
}

uint64_t deadline_in(word_t ms)
{
    /* cycle_hz 0: the port could not tell; take 1 GHz, the -icount rate. */
    uint64_t hz = bootinfo->cycle_hz ? bootinfo->cycle_hz : 1000000000ULL;
    return arch_cycles() + (uint64_t)ms * (hz / 1000);
}

bool deadline_passed(uint64_t deadline)
{
    return (int64_t)(arch_cycles() - deadline) > 0;
}

/*
 * The loads acquire: what the other thread wrote before it published *p is
 * seen by the caller once the wait returns true.
 */
bool wait_eq(volatile word_t *p, word_t v, word_t ms)
{
    for (uint64_t until = deadline_in(ms); !deadline_passed(until); sys_yield())
        if (__atomic_load_n(p, __ATOMIC_ACQUIRE) == v)
            return true;
    return __atomic_load_n(p, __ATOMIC_ACQUIRE) == v;
}

bool wait_ge(volatile word_t *p, word_t v, word_t ms)
{
    for (uint64_t until = deadline_in(ms); !deadline_passed(until); sys_yield())
        if (__atomic_load_n(p, __ATOMIC_ACQUIRE) >= v)
            return true;
    return __atomic_load_n(p, __ATOMIC_ACQUIRE) >= v;
}

word_t recv_timeout(cptr_t ep, struct msg *m, word_t ms)
{
    for (uint64_t until = deadline_in(ms); !deadline_passed(until); sys_yield()) {
        word_t st = sys_nbrecv(ep, m);
        if (st != E_WOULD_BLOCK)
            return st;
    }
    return sys_nbrecv(ep, m);
}

void spin(word_t n)
{
    for (volatile word_t i = 0; i < n; i++)
        ;
}

word_t ncores(void)
{
    return bootinfo->ncores ? bootinfo->ncores : 1;
}
