/*
 * Race: ReadRegisters, WriteRegisters and CopyRegisters of a thread while
 * it runs on another core (docs/races.md, race 1).
 *
 * Each round the target runs regs_target(tag = round) on core 1.  At one
 * barrier, after pseudo-random delays: core 2 writes all of its registers
 * (restart at _thread_start with tag round + 1, resume); core 3 reads them
 * over and over; core 0 copies them into a suspended thread and reads the
 * copy.  Allowed outcomes:
 *   - every call returns E_OK;
 *   - every register set read or copied is either the running thread's
 *     (stack pointer inside its stack) or exactly the written one (ip at
 *     _thread_start and start argument round + 1), never a mix;
 *   - afterwards the target runs with tag round + 1 and the incarnation
 *     with tag round never runs again.
 */
#include "race.h"

#define RACE_ID 1
#define READS_PER_ROUND 3

static struct regs_race {
    struct race_barrier start;
    struct thread *target;
    cptr_t copy;                    /* a suspended TCB the copies go into */
    word_t round;
    volatile word_t tag_seen;       /* the tag of the incarnation that ran last */
    volatile word_t progress[2];    /* loop counts of the incarnations, by tag parity */
    volatile word_t reader_done;
    volatile word_t writer_done;
    struct race_failure failure;
} rr;

static void regs_target(void *arg)
{
    word_t tag = (word_t)arg;
    for (;;) {
        rr.tag_seen = tag;
        rr.progress[tag % 2]++;
    }
}

/* A register set is the target's own, or exactly the one the writer wrote this round. */
static bool regs_allowed(const word_t *regs, word_t round)
{
    struct thread *t = rr.target;
    if (regs[ARCH_REG_SP] <= t->stack_top - STACK_SIZE || regs[ARCH_REG_SP] > t->stack_top)
        return false;
    if (regs[ARCH_REG_IP] == (word_t)_thread_start)
        return regs[ARCH_REG_START_ARG] == round + 1 && regs[ARCH_REG_SP] == t->stack_top &&
               regs[ARCH_REG_START_FN] == (word_t)regs_target;
    return true;
}

static void regs_writer(void *arg)
{
    (void)arg;
    for (;;) {
        word_t round;
        uint32_t rng;
        if (!race_party_begin(&rr.start, &rr.round, RACE_ID, 1, &rr.failure, &round, &rng))
            return;
        race_jitter(&rng, 20000);
        word_t st = thread_restart_at(rr.target, (word_t)_thread_start, rr.target->stack_top,
                                      regs_target, (void *)(round + 1));
        if (st != E_OK)
            RACE_FAIL(&rr.failure, st);
        __atomic_store_n(&rr.writer_done, round + 1, __ATOMIC_RELEASE);
    }
}

static void regs_reader(void *arg)
{
    (void)arg;
    for (;;) {
        word_t round;
        uint32_t rng;
        if (!race_party_begin(&rr.start, &rr.round, RACE_ID, 2, &rr.failure, &round, &rng))
            return;
        for (word_t i = 0; i < READS_PER_ROUND; i++) {
            word_t regs[ARCH_USER_REGS];
            race_jitter(&rng, 5000);
            word_t st = tcb_read_registers(rr.target->tcb, 0, ARCH_USER_REGS, regs);
            if (st != E_OK)
                RACE_FAIL(&rr.failure, st);
            else if (!regs_allowed(regs, round))
                RACE_FAIL(&rr.failure, regs[ARCH_REG_IP]);
        }
        __atomic_store_n(&rr.reader_done, round + 1, __ATOMIC_RELEASE);
    }
}

TEST(race_registers_of_running_thread)
{
    word_t rounds = race_rounds(40);
    memset((void *)&rr, 0, sizeof(rr));
    race_barrier_init(&rr.start, 3);

    rr.target = spawn(regs_target, (void *)0, TEST_PRIO, race_core(1), 0);
    CHECK(rr.target);
    struct thread *copy = spawn_unstarted(TEST_PRIO, race_core(1), 0);
    CHECK(copy);
    rr.copy = copy->tcb;
    CHECK(spawn(regs_writer, NULL, TEST_PRIO, race_core(2), 0));
    CHECK(spawn(regs_reader, NULL, TEST_PRIO, race_core(3), 0));
    CHECK(wait_ge(&rr.progress[0], 1, RACE_WAIT_MS));

    for (word_t round = 0; round < rounds; round++) {
        rr.round = round;
        uint32_t rng = race_seed(RACE_ID, round, 0);
        CHECK(race_barrier_wait(&rr.start));
        race_jitter(&rng, 20000);
        CHECK_OK(tcb_copy_registers(rr.copy, rr.target->tcb, 0, 0));
        word_t regs[ARCH_USER_REGS];
        CHECK_OK(tcb_read_registers(rr.copy, 0, ARCH_USER_REGS, regs));
        if (!regs_allowed(regs, round))
            test_fail(__FILE__, __LINE__, "round %lu: copied registers neither the running "
                      "thread's nor the written ones (ip 0x%lx)", (unsigned long)round,
                      (unsigned long)regs[ARCH_REG_IP]);
        CHECK(!test_failed());

        CHECK(wait_eq(&rr.writer_done, round + 1, RACE_WAIT_MS));
        CHECK(wait_eq(&rr.reader_done, round + 1, RACE_WAIT_MS));
        CHECK(race_report(&rr.failure, round));
        /* The written registers took effect: the new incarnation runs ... */
        CHECK(wait_eq(&rr.tag_seen, round + 1, RACE_WAIT_MS));
        word_t before = rr.progress[(round + 1) % 2];
        CHECK(wait_ge(&rr.progress[(round + 1) % 2], before + 1, RACE_WAIT_MS));
        /* ... and the old one never again. */
        word_t old = rr.progress[round % 2];
        spin(20000);
        sys_yield();
        CHECK_EQ(rr.progress[round % 2], old);
        CHECK_EQ(rr.tag_seen, round + 1);
        CHECK_OK(sys_debug_check());
    }
    race_note(rounds);
}
