/* Helpers for the race suite (race.h). */
#include "race.h"

/* Spin-checks between yields while waiting at a barrier. */
#define BARRIER_SPINS_PER_YIELD 64

void race_barrier_init(struct race_barrier *b, word_t parties)
{
    b->arrived = 0;
    b->generation = 0;
    b->parties = parties;
}

bool race_barrier_wait(struct race_barrier *b)
{
    word_t gen = __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE);

    /* acq_rel: the last party sees every earlier party's writes before it releases them. */
    if (__atomic_add_fetch(&b->arrived, 1, __ATOMIC_ACQ_REL) == b->parties) {
        b->arrived = 0;
        /* Release pairs with the waiters' acquire load: the reset above is seen first. */
        __atomic_store_n(&b->generation, gen + 1, __ATOMIC_RELEASE);
        return true;
    }
    /*
     * Spin first so that parties on different cores leave within a few
     * iterations of each other; yield now and then so that parties sharing
     * a core (fewer cores than parties) still get to arrive.
     */
    for (uint64_t until = deadline_in(RACE_WAIT_MS); !deadline_passed(until); sys_yield()) {
        for (word_t i = 0; i < BARRIER_SPINS_PER_YIELD; i++) {
            if (__atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) != gen)
                return true;
            arch_relax();
        }
    }
    return __atomic_load_n(&b->generation, __ATOMIC_ACQUIRE) != gen;
}

uint32_t race_seed(word_t race, word_t round, word_t party)
{
    uint32_t s = (uint32_t)arg_word("race_seed", 1);
    s ^= (uint32_t)(race * 0x9e3779b9u) ^ (uint32_t)(round * 0x85ebca6bu) ^
         (uint32_t)(party * 0xc2b2ae35u);
    return s ? s : 1;
}

uint32_t race_rand(uint32_t *state)
{
    /* Marsaglia's xorshift32: any non-zero state, period 2^32 - 1. */
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

void race_jitter(uint32_t *state, word_t max)
{
    spin(max ? race_rand(state) % max : 0);
}

word_t race_rounds(word_t dflt)
{
    return arg_word("race_rounds", dflt);
}

word_t race_core(word_t party)
{
    return party % ncores();
}

void race_fail(struct race_failure *f, const char *file, word_t line, word_t value)
{
    word_t none = 0;
    /* Relaxed: the root thread reads it after the party's release of its done flag. */
    if (__atomic_compare_exchange_n(&f->line, &none, line, false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
        f->file = file;
        f->value = value;
    }
}

bool race_party_begin(struct race_barrier *b, const word_t *round_set, word_t race, word_t party,
                      struct race_failure *f, word_t *round, uint32_t *rng)
{
    if (!race_barrier_wait(b)) {
        RACE_FAIL(f, party);
        return false;
    }
    *round = *round_set;
    *rng = race_seed(race, *round, party);
    return true;
}

bool race_report(const struct race_failure *f, word_t round)
{
    if (!f->line)
        return true;
    test_fail(f->file, (int)f->line, "round %lu: value %lu (0x%lx)", (unsigned long)round,
              (unsigned long)f->value, (unsigned long)f->value);
    return false;
}

bool race_cap_gone(word_t status)
{
    return status == E_FAILED_LOOKUP || status == E_INVALID_CAPABILITY;
}

void race_note(word_t rounds)
{
    if (ncores() == 1)
        test_note("%lu rounds, seed %lu; 1 core online: the parties interleaved on core 0 only",
                  (unsigned long)rounds, (unsigned long)arg_word("race_seed", 1));
    else
        test_note("%lu rounds on %lu cores, seed %lu", (unsigned long)rounds,
                  (unsigned long)ncores(), (unsigned long)arg_word("race_seed", 1));
}
