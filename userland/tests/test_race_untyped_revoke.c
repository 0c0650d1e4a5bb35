/*
 * Race: Revoke of an untyped while threads on other cores retype from it
 * and use the children (docs/races.md, race 3).
 *
 * Each round every worker (cores 1..3) loops: Retype a notification from
 * the shared untyped into its own slot A, Mint a badged copy B of it (a
 * grandchild of the untyped), Signal B, Poll A, delete B and A.  The root
 * thread on core 0 revokes the untyped after a pseudo-random delay.
 * Revoke deletes one child per step with a preemption point in between,
 * so workers may retype again between its steps.  Allowed outcomes, per
 * iteration:
 *   - Retype returns E_OK (its slot is empty: the worker emptied it);
 *   - Mint, Signal and Poll return E_OK or a missing-cap status (revoked);
 *   - a Poll that returns E_OK after a successful Signal reads exactly the
 *     worker's badge; without one it would block (E_WOULD_BLOCK) or reads
 *     the badge (the revoke came between) -- never another worker's badge;
 *   - after the round the untyped has no children left after one more
 *     Revoke and its whole size can be retyped again (watermark reset).
 */
#include "race.h"

#define RACE_ID 3
#define WORKERS 3
#define ITERATIONS 12
#define UNTYPED_BITS 16

static struct untyped_race {
    struct race_barrier start;
    cptr_t untyped;
    cptr_t slot_a[WORKERS], slot_b[WORKERS];
    word_t round;
    volatile word_t done[WORKERS];
    volatile word_t used;           /* iterations whose Poll saw the signal */
    volatile word_t revoked;        /* iterations that found their cap gone */
    struct race_failure failure;
} ur;

static void ut_iteration(word_t w, uint32_t *rng)
{
    cptr_t a = ur.slot_a[w], b = ur.slot_b[w];
    word_t badge = (word_t)1 << w, st, word = 0;

    st = untyped_retype(ur.untyped, OBJ_NOTIFICATION, 0, ROOT_SLOT_CNODE, 0, 0, a, 1);
    if (st != E_OK) {
        RACE_FAIL(&ur.failure, st);
        return;
    }
    race_jitter(rng, 2000);
    st = cnode_mint(ROOT_SLOT_CNODE, b, ROOT_DEPTH, ROOT_SLOT_CNODE, a, ROOT_DEPTH, RIGHTS_ALL,
                    badge);
    bool signalled = false;
    if (st == E_OK) {
        st = sys_signal(b);
        signalled = st == E_OK;
    }
    if (st != E_OK && !race_cap_gone(st))
        RACE_FAIL(&ur.failure, st);
    st = sys_poll(a, &word);
    if (st == E_OK && word != badge)
        RACE_FAIL(&ur.failure, word);
    else if (st == E_WOULD_BLOCK && signalled)
        RACE_FAIL(&ur.failure, st);
    else if (st != E_OK && st != E_WOULD_BLOCK && !race_cap_gone(st))
        RACE_FAIL(&ur.failure, st);
    if (st == E_OK)
        __atomic_fetch_add(&ur.used, 1, __ATOMIC_RELAXED);
    else
        __atomic_fetch_add(&ur.revoked, 1, __ATOMIC_RELAXED);
    /* Deleting an empty slot is not an error: the revoke may have emptied it. */
    if ((st = cnode_delete(ROOT_SLOT_CNODE, b, ROOT_DEPTH)) != E_OK)
        RACE_FAIL(&ur.failure, st);
    if ((st = cnode_delete(ROOT_SLOT_CNODE, a, ROOT_DEPTH)) != E_OK)
        RACE_FAIL(&ur.failure, st);
}

static void ut_worker(void *arg)
{
    word_t w = (word_t)arg;
    for (;;) {
        word_t round;
        uint32_t rng;
        if (!race_party_begin(&ur.start, &ur.round, RACE_ID, w + 1, &ur.failure, &round, &rng))
            return;
        for (word_t i = 0; i < ITERATIONS; i++)
            ut_iteration(w, &rng);
        __atomic_store_n(&ur.done[w], round + 1, __ATOMIC_RELEASE);
    }
}

TEST(race_revoke_untyped_during_retype)
{
    word_t rounds = race_rounds(30);
    memset((void *)&ur, 0, sizeof(ur));
    race_barrier_init(&ur.start, WORKERS + 1);
    CHECK_OK(obj_alloc(OBJ_UNTYPED, UNTYPED_BITS, &ur.untyped));
    for (word_t w = 0; w < WORKERS; w++) {
        ur.slot_a[w] = slot_alloc();
        ur.slot_b[w] = slot_alloc();
        CHECK(ur.slot_a[w] && ur.slot_b[w]);
    }
    for (word_t w = 0; w < WORKERS; w++)
        CHECK(spawn(ut_worker, (void *)w, TEST_PRIO, race_core(w + 1), 0));

    cptr_t whole = slot_alloc();
    CHECK(whole);
    for (word_t round = 0; round < rounds; round++) {
        ur.round = round;
        uint32_t rng = race_seed(RACE_ID, round, 0);
        CHECK(race_barrier_wait(&ur.start));
        race_jitter(&rng, 60000);
        CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, ur.untyped, ROOT_DEPTH));
        for (word_t w = 0; w < WORKERS; w++)
            CHECK(wait_eq(&ur.done[w], round + 1, RACE_WAIT_MS));
        CHECK(race_report(&ur.failure, round));
        CHECK_OK(sys_debug_check());
        /* Nothing made from it is left, and all of it can be retyped again. */
        CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, ur.untyped, ROOT_DEPTH));
        CHECK_OK(untyped_retype(ur.untyped, OBJ_UNTYPED, UNTYPED_BITS, ROOT_SLOT_CNODE, 0, 0,
                                whole, 1));
        CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, whole, ROOT_DEPTH));
    }
    test_note("%lu uses, %lu found revoked", (unsigned long)ur.used, (unsigned long)ur.revoked);
    race_note(rounds);
}
