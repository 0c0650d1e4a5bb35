/*
 * Race: a Call cancelled (its caller suspended) from one core while the
 * server replies to it from another (docs/races.md, race 6).
 *
 * Each round: the client on core 1 makes one Call (request r); the server
 * on core 2 receives it and replies (answer r + 1); the root thread on core
 * 0 suspends the client and resumes it.  All three start at a barrier and
 * each waits a pseudo-random delay first.  Allowed outcomes, in the order
 * they can happen:
 *   - the reply wins: the Call returns E_OK with r + 1; Suspend then finds
 *     the client running or already done;
 *   - the cancel wins: the client's wait (for the server or for the reply)
 *     is cancelled; the server's Reply, if it comes later, finds no caller
 *     and is dropped; Resume restarts the Call, the server receives it a
 *     second time and replies, and the Call returns E_OK with r + 1.
 * Never: an error, a wrong answer, two returns of one Call, or a client
 * that stays blocked.  The server receives the round's request once or
 * twice.
 */
#include "race.h"

#define RACE_ID 6
#define ROUND_TAG 0xca11

static struct cancel_race {
    struct race_barrier start;
    cptr_t ep;
    word_t round;
    volatile word_t returned;       /* rounds whose Call returned */
    volatile word_t status;         /* status of the last Call */
    volatile word_t answer;         /* its answer */
    volatile word_t received;       /* requests of this round the server received */
    volatile word_t stray;          /* requests of other rounds the server received */
    struct race_failure failure;
} cr;

static void cancel_client(void *arg)
{
    (void)arg;
    for (;;) {
        word_t round;
        uint32_t rng;
        if (!race_party_begin(&cr.start, &cr.round, RACE_ID, 1, &cr.failure, &round, &rng))
            return;
        race_jitter(&rng, 3000);
        struct msg m = { .info = msginfo_new(0, 0, 0, 2), .mr = { ROUND_TAG, round } };
        cr.status = sys_call(cr.ep, &m);
        cr.answer = m.mr[1];
        __atomic_fetch_add(&cr.returned, 1, __ATOMIC_RELEASE);
    }
}

static void cancel_server(void *arg)
{
    (void)arg;
    for (;;) {
        word_t round;
        uint32_t rng;
        if (!race_party_begin(&cr.start, &cr.round, RACE_ID, 2, &cr.failure, &round, &rng))
            return;
        /* Serve until the round's Call has returned: a restarted Call comes a second time. */
        while (__atomic_load_n(&cr.returned, __ATOMIC_ACQUIRE) != round + 1) {
            struct msg m;
            word_t st = sys_nbrecv(cr.ep, &m);
            if (st == E_WOULD_BLOCK) {
                sys_yield();
                continue;
            }
            if (st != E_OK || m.mr[0] != ROUND_TAG || m.mr[1] != round) {
                cr.stray++;
                continue;
            }
            cr.received++;
            race_jitter(&rng, 3000);
            m.info = msginfo_new(0, 0, 0, 2);
            m.mr[1] = round + 1;
            sys_reply(&m);
        }
    }
}

TEST(race_cancel_call_during_reply)
{
    word_t rounds = race_rounds(60);
    memset((void *)&cr, 0, sizeof(cr));
    race_barrier_init(&cr.start, 3);
    cr.ep = ep_new();
    CHECK(cr.ep);
    struct thread *client = spawn(cancel_client, NULL, TEST_PRIO, race_core(1), 0);
    CHECK(client);
    CHECK(spawn(cancel_server, NULL, TEST_PRIO, race_core(2), 0));

    word_t twice = 0;
    for (word_t round = 0; round < rounds; round++) {
        cr.round = round;
        cr.received = 0;
        uint32_t rng = race_seed(RACE_ID, round, 0);
        CHECK(race_barrier_wait(&cr.start));
        race_jitter(&rng, 3000);
        CHECK_OK(tcb_suspend(client->tcb));
        CHECK_OK(tcb_resume(client->tcb));
        if (!wait_eq(&cr.returned, round + 1, RACE_WAIT_MS))
            test_fail(__FILE__, __LINE__, "round %lu: the Call never returned (server received "
                      "it %lu times)", (unsigned long)round, (unsigned long)cr.received);
        CHECK(!test_failed());
        CHECK_OK(cr.status);
        CHECK_EQ(cr.answer, round + 1);
        CHECK(cr.received == 1 || cr.received == 2);
        CHECK_EQ(cr.stray, 0);
        CHECK(race_report(&cr.failure, round));
        twice += cr.received == 2;
        CHECK_OK(sys_debug_check());
    }
    test_note("%lu of %lu calls were cancelled and sent again", (unsigned long)twice,
              (unsigned long)rounds);
    race_note(rounds);
}
