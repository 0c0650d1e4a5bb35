/*
 * Helpers for the race suite (test_race_*.c, docs/races.md): threads on
 * different cores start an operation on the same object together, each
 * after a pseudo-random delay, many rounds in a row.
 *
 *   race_barrier   every party arrives, then all leave at once; bounded
 *   race_rand      a seeded PRNG (xorshift32), so a round's delays can be replayed
 *   race_jitter    spin a pseudo-random number of iterations before acting
 *   race_rounds    rounds per race: the `race_rounds=` argument, else a default
 *   race_core      the core of party i: parties spread over the cores online
 *   race_fail      record the first failure a party saw, for the root thread to report
 *
 * Every wait is bounded: a party that never comes is a failure with a
 * message, never a hang.  With one core online every party runs on core 0;
 * the operations then interleave only where the timer preempts them, and
 * the tests say so in their detail.
 */
#ifndef RACE_H
#define RACE_H

#include "test.h"

/*
 * How long a race waits for another party's progress before it fails, in
 * spins: far longer than WAIT_ROUNDS.  Under QEMU each virtual CPU is a host
 * thread, and on a loaded host one can go unscheduled for seconds while the
 * waiter spins through its count (a Call that seems never to return, a
 * party that seems to miss the start barrier).  A party that
 * never makes progress still fails the race, only later.
 */
#define RACE_WAIT_ROUNDS ((word_t)WAIT_ROUNDS * 64)

struct race_barrier {
    volatile word_t arrived;        /* parties in the current generation so far */
    volatile word_t generation;     /* bumped by the last party to arrive: releases the others */
    word_t parties;
};

void race_barrier_init(struct race_barrier *b, word_t parties);
/* Arrive and wait for all parties; false when they did not all come within the bound. */
bool race_barrier_wait(struct race_barrier *b);

/* The PRNG state of one party in one round of one race, from the run's seed. */
uint32_t race_seed(word_t race, word_t round, word_t party);
uint32_t race_rand(uint32_t *state);
/* Spin a pseudo-random 0 .. max-1 iterations, no system call. */
void race_jitter(uint32_t *state, word_t max);

word_t race_rounds(word_t dflt);
word_t race_core(word_t party);

/*
 * The first failure a party saw: where, and the value that was wrong.
 * Parties record (RACE_FAIL); the root thread reports it after the round.
 */
struct race_failure {
    const char *volatile file;
    volatile word_t line;           /* 0: none yet */
    volatile word_t value;
};

void race_fail(struct race_failure *f, const char *file, word_t line, word_t value);
#define RACE_FAIL(f, value) race_fail((f), __FILE__, __LINE__, (value))

/*
 * A party's start of a round: meet the others at the barrier, then read the
 * round the root thread set before it arrived and seed this party's delays.
 * False (and a failure recorded) when the others did not all come.
 */
bool race_party_begin(struct race_barrier *b, const word_t *round_set, word_t race, word_t party,
                      struct race_failure *f, word_t *round, uint32_t *rng);

/* The root thread: fail the test with the parties' first failure, if there was one. */
bool race_report(const struct race_failure *f, word_t round);

/* Statuses a call on a slot whose object was just deleted may return. */
bool race_cap_gone(word_t status);

/* The detail every race adds: rounds, cores, seed. */
void race_note(word_t rounds);

#endif
