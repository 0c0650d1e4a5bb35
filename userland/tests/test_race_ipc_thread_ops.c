/*
 * Race: Suspend, SetPriority, SetAffinity and Delete of a thread that is
 * in an IPC with a thread on another core, issued from a third core
 * (docs/races.md, race 2).
 *
 * Each round, in a fresh arena: a client on core 1 calls a server on core
 * 2 over and over; the root thread on core 0 waits until calls flow, waits
 * a pseudo-random delay and applies one operation to the client or the
 * server.  Allowed outcomes, for every operation:
 *   - no Call ever returns an error or a reply that is not the answer to
 *     its own request;
 *   - Suspend: the target stops (the client completes no call while it or
 *     the server is suspended); after Resume the calls flow again;
 *   - SetPriority: the calls keep flowing;
 *   - SetAffinity: the target runs on the new core and the calls flow;
 *   - Delete of the client: the server is left waiting and serves a new
 *     message; Delete of the server: the client is left either in the
 *     endpoint's queue (a new server serves it) or blocked on a reply that
 *     can never come (Suspend and Resume restart its Call); either way the
 *     calls then flow again with a new server.
 */
#include "race.h"

#define RACE_ID 2
#define MAGIC 0x5eed
/* How long a client may stay blocked on a deleted server's reply before it is restarted. */
#define RESTART_AFTER_MS 200

enum ipc_op { OP_SUSPEND, OP_SET_PRIORITY, OP_SET_AFFINITY, OP_DELETE, OP_COUNT };

static const char *const op_names[OP_COUNT] = { "Suspend", "SetPriority", "SetAffinity", "Delete" };

static struct ipc_race {
    cptr_t ep;
    volatile word_t calls_ok;
    volatile word_t served;
    volatile word_t errors;         /* calls that returned an error */
    volatile word_t wrong;          /* calls that returned someone else's answer */
    volatile word_t last_error;
    volatile word_t client_core;    /* core of the client's last completed call, + 1 */
    volatile word_t server_core;    /* core of the server's last receive, + 1 */
    struct thread *threads[3];      /* the round's threads */
    word_t nthreads;
} ir;

static struct thread *ipc_spawn(thread_fn fn, word_t core)
{
    struct thread *t = spawn(fn, NULL, TEST_PRIO, core, 0);
    if (t)
        ir.threads[ir.nthreads++] = t;
    return t;
}

static void ipc_client(void *arg)
{
    (void)arg;
    for (word_t i = 0;; i++) {
        struct msg m = { .info = msginfo_new(1, 0, 0, 2), .mr = { MAGIC, i } };
        word_t st = sys_call(ir.ep, &m);
        if (st != E_OK) {
            ir.last_error = st;
            __atomic_fetch_add(&ir.errors, 1, __ATOMIC_RELAXED);
        } else if (m.mr[0] != MAGIC + 1 || m.mr[1] != i * 3) {
            __atomic_fetch_add(&ir.wrong, 1, __ATOMIC_RELAXED);
        } else {
            ir.client_core = sys_debug_core() + 1;
            __atomic_fetch_add(&ir.calls_ok, 1, __ATOMIC_RELEASE);
        }
    }
}

static void ipc_server(void *arg)
{
    (void)arg;
    struct msg m;
    word_t st = sys_recv(ir.ep, &m);
    for (;;) {
        if (st != E_OK) {
            ir.last_error = st;
            __atomic_fetch_add(&ir.errors, 1, __ATOMIC_RELAXED);
            st = sys_recv(ir.ep, &m);
            continue;
        }
        ir.server_core = sys_debug_core() + 1;
        __atomic_fetch_add(&ir.served, 1, __ATOMIC_RELEASE);
        m.info = msginfo_new(0, 0, 0, 2);
        m.mr[0] = m.mr[0] + 1;
        m.mr[1] = m.mr[1] * 3;
        st = sys_reply_recv(ir.ep, &m);
    }
}

/*
 * Calls complete again: at least `more` after now.  Otherwise the round
 * fails, saying where the calls stopped.
 */
static bool calls_flow(word_t round, const char *when, word_t more)
{
    word_t now = ir.calls_ok;
    if (wait_ge(&ir.calls_ok, now + more, RACE_WAIT_MS))
        return true;
    test_fail(__FILE__, __LINE__, "round %lu, %s: calls did not flow: %lu completed (%lu before the wait), "
              "server received %lu, client last on core %ld, server on core %ld", (unsigned long)round, when,
              (unsigned long)ir.calls_ok, (unsigned long)now, (unsigned long)ir.served,
              (long)ir.client_core - 1, (long)ir.server_core - 1);
    return false;
}

/*
 * The counter grows by `slack` at most from now on.  A client whose server
 * was stopped may still count one call: the reply came before the stop,
 * the count after it.
 */
static bool counter_frozen(volatile word_t *c, word_t slack)
{
    word_t before = *c;
    spin(50000);
    for (int i = 0; i < 10; i++)
        sys_yield();
    return *c <= before + slack;
}

/* One round: the operation `op` on the client (server false) or the server. */
static void ipc_round(word_t round, enum ipc_op op, bool server)
{
    uint32_t rng = race_seed(RACE_ID, round, 0);
    word_t n = ncores();
    memset((void *)&ir, 0, sizeof(ir));
    ir.ep = ep_new();
    CHECK(ir.ep);
    struct thread *cl = ipc_spawn(ipc_client, race_core(1));
    CHECK(cl);
    struct thread *sv = ipc_spawn(ipc_server, race_core(2));
    CHECK(sv);
    struct thread *target = server ? sv : cl;
    CHECK(calls_flow(round, "before the operation", 3));

    race_jitter(&rng, 50000);
    switch (op) {
    case OP_SUSPEND:
        CHECK_OK(tcb_suspend(target->tcb));
        CHECK(counter_frozen(&ir.calls_ok, server));
        CHECK_OK(tcb_resume(target->tcb));
        break;
    case OP_SET_PRIORITY:
        /* Not below the root thread: on one core it would then never run while we poll. */
        CHECK_OK(tcb_set_priority(target->tcb, TEST_PRIO + race_rand(&rng) % 3));
        break;
    case OP_SET_AFFINITY: {
        word_t core = race_rand(&rng) % n;
        volatile word_t *seen = server ? &ir.server_core : &ir.client_core;
        CHECK_OK(tcb_set_affinity(target->tcb, core));
        /* The target's next IPC runs on the new core, and the calls keep flowing. */
        CHECK(wait_eq(seen, core + 1, RACE_WAIT_MS));
        break;
    }
    case OP_DELETE:
        CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, target->tcb, ROOT_DEPTH));
        if (!server) {
            CHECK(counter_frozen(&ir.calls_ok, 0));
            /* The server still waits on the endpoint and serves a new message. */
            word_t served = ir.served;
            struct msg m = { .info = msginfo_new(0, 0, 0, 2), .mr = { MAGIC, 0 } };
            bool got = false;
            for (uint64_t until = deadline_in(RACE_WAIT_MS); !deadline_passed(until) && !got;) {
                sys_nbsend(ir.ep, &m);
                sys_yield();
                got = ir.served > served;
            }
            CHECK(got);
        } else {
            CHECK(counter_frozen(&ir.calls_ok, 1));
            CHECK(ipc_spawn(ipc_server, race_core(3)));
            word_t now = ir.calls_ok;
            if (!wait_ge(&ir.calls_ok, now + 1, RESTART_AFTER_MS)) {
                /* Blocked on the dead server's reply: a restart sends the Call again. */
                CHECK_OK(tcb_suspend(cl->tcb));
                CHECK_OK(tcb_resume(cl->tcb));
            }
        }
        break;
    default:
        break;
    }
    if (op != OP_DELETE || server)
        CHECK(calls_flow(round, op_names[op], 3));
    if (ir.errors || ir.wrong)
        test_fail(__FILE__, __LINE__, "round %lu, %s of the %s: %lu calls failed (last %s), "
                  "%lu wrong answers", (unsigned long)round, op_names[op],
                  server ? "server" : "client", (unsigned long)ir.errors,
                  status_name(ir.last_error), (unsigned long)ir.wrong);
    CHECK(!test_failed());
    CHECK_OK(sys_debug_check());
}

/*
 * Delete the round's threads before their arena goes: revoking it frees
 * their stacks first (the newer objects), and a thread still running would
 * fault on its stack.
 */
static void ipc_stop_threads(void)
{
    for (word_t i = 0; i < ir.nthreads; i++) {
        cnode_delete(ROOT_SLOT_CNODE, ir.threads[i]->tcb, ROOT_DEPTH);
        free(ir.threads[i]);
    }
}

TEST(race_thread_ops_during_ipc)
{
    word_t rounds = race_rounds(40);
    for (word_t round = 0; round < rounds && !test_failed(); round++) {
        struct arena a;
        CHECK_OK(arena_begin(&a, 20));
        ipc_round(round, (enum ipc_op)(round % OP_COUNT), (round / OP_COUNT) % 2);
        ipc_stop_threads();
        arena_end(&a);
        if (test_failed())
            test_note("failed in round %lu", (unsigned long)round);
    }
    race_note(rounds);
}
