/*
 * Race: Delete of an endpoint or a notification while threads on other
 * cores send, receive, call, signal and wait on it (docs/races.md, race 4).
 *
 * Endpoint rounds: a sender (core 1, Send), a receiver (core 2, Recv, and
 * Reply to calls) and a caller (core 3, Call) loop on one endpoint cap
 * until their calls fail; the root thread on core 0 deletes the endpoint
 * after a pseudo-random delay.  Allowed outcomes:
 *   - every call returns E_OK or a missing-cap status, and once a party
 *     sees the cap gone it stays gone;
 *   - a blocked party is released by the deletion (its call restarts and
 *     then finds no cap): every party ends;
 *   - nothing is lost or invented: the messages the receiver got from the
 *     sender are exactly the Sends that returned E_OK, in order, and those
 *     from the caller exactly the Calls that returned E_OK, each with its
 *     own answer.
 * Notification rounds: a signaller (core 1, through a badged copy), a
 * waiter (core 2, Wait) and a poller (core 3, Poll); the root revokes the
 * badged copies and deletes the notification.  Allowed outcomes: every call
 * E_OK (Poll also E_WOULD_BLOCK) or missing-cap; every word read is the
 * badge; no more words are read than Signals returned E_OK; every party ends.
 */
#include "race.h"

#define RACE_ID 4
#define PARTIES 3
#define SENDER_BADGE 1
#define CALLER_BADGE 2

static struct delete_race {
    struct race_barrier start;
    cptr_t obj;                     /* the endpoint or notification */
    cptr_t badged[PARTIES];
    word_t round;
    volatile word_t done[PARTIES];
    volatile word_t ok[PARTIES];    /* calls of each party that returned E_OK */
    volatile word_t got_sends, got_calls;
    struct race_failure failure;
} dr;

/* Whether a party goes on after status st; records a failure for a status no order allows. */
static bool del_go_on(word_t st, bool may_block)
{
    if (st == E_OK || (may_block && st == E_WOULD_BLOCK))
        return true;
    if (!race_cap_gone(st))
        RACE_FAIL(&dr.failure, st);
    return false;
}

static void ep_party(word_t p, uint32_t *rng)
{
    cptr_t ep = dr.badged[p];
    for (word_t i = 0;; i++) {
        struct msg m;
        word_t st;
        race_jitter(rng, 500);
        switch (p) {
        case 0:
            m = (struct msg){ .info = msginfo_new(0, 0, 0, 1), .mr = { i } };
            st = sys_send(ep, &m);
            break;
        case 1:
            st = sys_recv(ep, &m);
            if (st != E_OK)
                break;
            if (m.badge == SENDER_BADGE) {
                if (m.mr[0] != dr.got_sends)
                    RACE_FAIL(&dr.failure, m.mr[0]);
                dr.got_sends++;
            } else if (m.badge == CALLER_BADGE) {
                dr.got_calls++;
                m.info = msginfo_new(0, 0, 0, 1);
                m.mr[0] = m.mr[0] + 1;
                sys_reply(&m);
            } else {
                RACE_FAIL(&dr.failure, m.badge);
            }
            break;
        default:
            m = (struct msg){ .info = msginfo_new(0, 0, 0, 1), .mr = { i } };
            st = sys_call(ep, &m);
            if (st == E_OK && m.mr[0] != i + 1)
                RACE_FAIL(&dr.failure, m.mr[0]);
            break;
        }
        if (!del_go_on(st, false))
            return;
        dr.ok[p]++;
    }
}

static void ntfn_party(word_t p, uint32_t *rng)
{
    for (;;) {
        word_t st, word = SENDER_BADGE;
        race_jitter(rng, 500);
        switch (p) {
        case 0:
            st = sys_signal(dr.badged[0]);
            break;
        case 1:
            st = sys_wait(dr.obj, &word);
            break;
        default:
            st = sys_poll(dr.obj, &word);
            break;
        }
        if (st == E_OK && word != SENDER_BADGE)
            RACE_FAIL(&dr.failure, word);
        if (!del_go_on(st, p == 2))
            return;
        if (st == E_OK)
            dr.ok[p]++;
    }
}

static void del_party(void *arg)
{
    word_t p = (word_t)arg;
    for (;;) {
        word_t round;
        uint32_t rng;
        if (!race_party_begin(&dr.start, &dr.round, RACE_ID, p + 1, &dr.failure, &round, &rng))
            return;
        if (round % 2 == 0)
            ep_party(p, &rng);
        else
            ntfn_party(p, &rng);
        __atomic_store_n(&dr.done[p], round + 1, __ATOMIC_RELEASE);
    }
}

/* Make the round's object and the caps the parties use. */
static void del_setup(word_t round)
{
    bool ep = round % 2 == 0;
    dr.obj = ep ? ep_new() : ntfn_new();
    CHECK(dr.obj);
    dr.got_sends = dr.got_calls = 0;
    for (word_t p = 0; p < PARTIES; p++) {
        dr.ok[p] = 0;
        word_t badge = p == 0 ? SENDER_BADGE : p == 2 && ep ? CALLER_BADGE : 0;
        dr.badged[p] = badge ? mint(dr.obj, RIGHTS_ALL, badge) : dr.obj;
        CHECK(dr.badged[p]);
    }
}

TEST(race_delete_endpoint_and_notification)
{
    word_t rounds = race_rounds(40);
    memset((void *)&dr, 0, sizeof(dr));
    race_barrier_init(&dr.start, PARTIES + 1);
    for (word_t p = 0; p < PARTIES; p++)
        CHECK(spawn(del_party, (void *)p, TEST_PRIO, race_core(p + 1), 0));

    for (word_t round = 0; round < rounds; round++) {
        dr.round = round;
        del_setup(round);
        CHECK(!test_failed());
        uint32_t rng = race_seed(RACE_ID, round, 0);
        CHECK(race_barrier_wait(&dr.start));
        race_jitter(&rng, 100000);
        /* The badged copies first (they are children), then the object's last cap. */
        CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, dr.obj, ROOT_DEPTH));
        CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, dr.obj, ROOT_DEPTH));
        for (word_t p = 0; p < PARTIES; p++) {
            if (!wait_eq(&dr.done[p], round + 1, RACE_WAIT_MS))
                test_fail(__FILE__, __LINE__, "round %lu: party %lu still blocked after the "
                          "deletion", (unsigned long)round, (unsigned long)p);
            CHECK(!test_failed());
        }
        CHECK(race_report(&dr.failure, round));
        if (round % 2 == 0) {
            CHECK_EQ(dr.got_sends, dr.ok[0]);
            CHECK_EQ(dr.got_calls, dr.ok[2]);
        } else {
            CHECK(dr.ok[1] + dr.ok[2] <= dr.ok[0]);
        }
        for (word_t p = 0; p < PARTIES; p++) {
            if (dr.badged[p] != dr.obj)
                slot_free(dr.badged[p]);
        }
        slot_free(dr.obj);
        CHECK_OK(sys_debug_check());
    }
    race_note(rounds);
}
