/*
 * Race: Frame Unmap and the deletion of a page table while threads on
 * other cores write to the frame and fault on it (docs/races.md, race 5).
 *
 * Each round, in a fresh arena: a frame mapped through page tables of its
 * own; a writer on each of cores 1..3 stores i into its word of the frame
 * and then i into its progress word (on another page), for i = 1, 2, ...
 * After a barrier and pseudo-random delays the root thread on core 0
 * unmaps the frame (even rounds) or deletes the last-level page table
 * (odd rounds).  Faults go to a fault endpoint the root thread receives
 * on.  Allowed outcomes:
 *   - the unmap or delete returns E_OK;
 *   - every writer faults exactly there (a VM fault on its word), and no
 *     write reaches the frame once the call has returned: a writer's
 *     progress grows by one at most after it (the store to the progress
 *     page of a write that landed just before);
 *   - the frame holds each writer's last completed value (progress), so
 *     no write was lost or landed through a stale TLB entry afterwards;
 *   - mapped again, the frame shows exactly that.
 */
#include "race.h"

#define RACE_ID 5
#define WRITERS 3

static struct unmap_race {
    struct race_barrier start;
    volatile word_t *page;
    volatile word_t progress[WRITERS];
    uint32_t seed[WRITERS];
} vr;

static void unmap_writer(void *arg)
{
    word_t w = (word_t)arg;
    uint32_t rng = vr.seed[w];
    if (!race_barrier_wait(&vr.start))
        return;
    race_jitter(&rng, 20000);
    for (word_t i = 1;; i++) {
        vr.page[w] = i;
        vr.progress[w] = i;
    }
}

/*
 * Map `frame` at vaddr in the root task's space, making each missing page
 * table (top down); *last_pt gets the lowest one, which the map needed last.
 */
static word_t map_with_tables(cptr_t frame, word_t vaddr, cptr_t *last_pt)
{
    word_t st = E_OK;
    *last_pt = 0;
    for (int tries = 0; tries < 5; tries++) {
        st = frame_map(frame, ROOT_SLOT_VSPACE, vaddr, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT);
        if (st != E_FAILED_LOOKUP)
            return st;
        word_t pst = obj_alloc(OBJ_PAGE_TABLE, 0, last_pt);
        if (pst == E_OK)
            pst = page_table_map(*last_pt, ROOT_SLOT_VSPACE, vaddr, VM_DEFAULT);
        if (pst != E_OK)
            return pst;
    }
    return st;
}

static void unmap_round(word_t round, cptr_t fault_ep)
{
    uint32_t rng = race_seed(RACE_ID, round, 0);
    bool delete_table = round % 2;
    word_t vaddr = ARCH_FAR_VADDR;
    cptr_t frame, pt;

    CHECK_OK(obj_alloc(OBJ_FRAME, 0, &frame));
    CHECK_OK(map_with_tables(frame, vaddr, &pt));
    CHECK(pt);
    vr.page = (volatile word_t *)vaddr;
    race_barrier_init(&vr.start, WRITERS + 1);
    for (word_t w = 0; w < WRITERS; w++) {
        vr.progress[w] = 0;
        vr.seed[w] = race_seed(RACE_ID, round, w + 1);
        CHECK(spawn(unmap_writer, (void *)w, TEST_PRIO, race_core(w + 1), fault_ep));
    }
    CHECK(race_barrier_wait(&vr.start));
    race_jitter(&rng, 40000);
    if (delete_table)
        CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, pt, ROOT_DEPTH));
    else
        CHECK_OK(frame_unmap(frame));
    word_t after[WRITERS];
    for (word_t w = 0; w < WRITERS; w++)
        after[w] = vr.progress[w];

    /* One fault from each writer, on its own word. */
    word_t faulted = 0;
    for (word_t i = 0; i < WRITERS; i++) {
        struct msg m;
        word_t st = recv_timeout(fault_ep, &m, RACE_WAIT_MS);
        if (st != E_OK)
            test_fail(__FILE__, __LINE__, "round %lu: %lu of %d writers faulted (%s)",
                      (unsigned long)round, (unsigned long)faulted, WRITERS, status_name(st));
        CHECK(!test_failed());
        CHECK_EQ(msginfo_label(m.info), FAULT_VM);
        word_t w = (m.mr[1] - vaddr) / sizeof(word_t);
        CHECK(m.mr[1] >= vaddr && w < WRITERS && m.mr[1] % sizeof(word_t) == 0);
        CHECK(!(faulted & ((word_t)1 << w)));
        faulted |= (word_t)1 << w;
    }
    for (word_t w = 0; w < WRITERS; w++) {
        if (vr.progress[w] > after[w] + 1)
            test_fail(__FILE__, __LINE__, "round %lu: writer %lu progressed from %lu to %lu after "
                      "the %s returned", (unsigned long)round, (unsigned long)w,
                      (unsigned long)after[w], (unsigned long)vr.progress[w],
                      delete_table ? "page-table delete" : "unmap");
        CHECK(!test_failed());
    }

    /* Map it again (a stale unmap first, after a table delete) and read what it holds. */
    CHECK_OK(frame_unmap(frame));
    CHECK_OK(map_frame(frame, ROOT_SLOT_VSPACE, vaddr, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT));
    for (word_t w = 0; w < WRITERS; w++) {
        if (vr.page[w] != vr.progress[w])
            test_fail(__FILE__, __LINE__, "round %lu: writer %lu: frame holds %lu, last completed "
                      "write %lu", (unsigned long)round, (unsigned long)w,
                      (unsigned long)vr.page[w], (unsigned long)vr.progress[w]);
        CHECK(!test_failed());
    }
    CHECK_OK(sys_debug_check());
}

TEST(race_unmap_and_page_table_delete_while_touched)
{
    word_t rounds = race_rounds(30);
    for (word_t round = 0; round < rounds && !test_failed(); round++) {
        struct arena a;
        CHECK_OK(arena_begin(&a, 20));
        cptr_t fault_ep = ep_new();
        CHECK(fault_ep);
        unmap_round(round, fault_ep);
        arena_end(&a);
    }
    race_note(rounds);
}
