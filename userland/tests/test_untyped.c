/* Untyped Retype and revoke. */
#include "test.h"


static word_t retype_at(cptr_t ut, word_t type, word_t bits, cptr_t slot)
{
    return untyped_retype(ut, type, bits, ROOT_SLOT_CNODE, 0, 0, slot, 1);
}

TEST(untyped_retype_every_type)
{
    static const struct { word_t type, bits; } kinds[] = {
        { OBJ_UNTYPED, 12 }, { OBJ_TCB, 0 }, { OBJ_ENDPOINT, 0 }, { OBJ_NOTIFICATION, 0 },
        { OBJ_CNODE, 4 }, { OBJ_FRAME, 0 }, { OBJ_PAGE_TABLE, 0 }, { OBJ_VSPACE, 0 },
        { OBJ_LARGE_FRAME, 0 },     /* last: it takes half of the test's arena */
    };
    for (unsigned i = 0; i < ARRAY_SIZE(kinds); i++) {
        cptr_t s;
        word_t st = obj_alloc(kinds[i].type, kinds[i].bits, &s);
        if (st != E_OK) {
            test_fail(__FILE__, __LINE__, "type %lu: %s", (unsigned long)kinds[i].type, status_name(st));
            return;
        }
    }
}

TEST(untyped_retype_invalid_type)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 16);
    CHECK(ut);
    cptr_t s = slot_alloc();
    CHECK_ST(retype_at(ut, OBJ_TYPE_COUNT, 0, s), E_INVALID_ARGUMENT);
    CHECK_ST(retype_at(ut, 1000, 0, s), E_INVALID_ARGUMENT);
}

TEST(untyped_retype_dest_occupied)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 16);
    cptr_t ep = ep_new();
    CHECK(ut && ep);
    CHECK_ST(retype_at(ut, OBJ_ENDPOINT, 0, ep), E_DELETE_FIRST);
}

TEST(untyped_retype_not_enough_memory)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 13);   /* room for two frames */
    CHECK(ut);
    CHECK_OK(retype_at(ut, OBJ_FRAME, 0, slot_alloc()));
    CHECK_OK(retype_at(ut, OBJ_FRAME, 0, slot_alloc()));
    CHECK_ST(retype_at(ut, OBJ_FRAME, 0, slot_alloc()), E_NOT_ENOUGH_MEMORY);
}

TEST(untyped_retype_child_too_big)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 14);
    CHECK(ut);
    CHECK_ST(retype_at(ut, OBJ_UNTYPED, 15, slot_alloc()), E_NOT_ENOUGH_MEMORY);
    CHECK_ST(retype_at(ut, OBJ_UNTYPED, 2, slot_alloc()), E_INVALID_ARGUMENT);
    CHECK_ST(retype_at(ut, OBJ_UNTYPED, WORD_BITS, slot_alloc()), E_RANGE);
    CHECK_ST(retype_at(ut, OBJ_CNODE, 0, slot_alloc()), E_INVALID_ARGUMENT);
}

TEST(untyped_retype_many)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 16);
    CHECK(ut);
    /* Four endpoints into four consecutive slots. */
    cptr_t base = 0;
    for (int tries = 0; tries < 64 && !base; tries++) {
        cptr_t s = slot_alloc();
        cptr_t s1 = slot_alloc(), s2 = slot_alloc(), s3 = slot_alloc();
        if (s1 == s + 1 && s2 == s + 2 && s3 == s + 3)
            base = s;
    }
    CHECK(base);
    CHECK_OK(untyped_retype(ut, OBJ_ENDPOINT, 0, ROOT_SLOT_CNODE, 0, 0, base, 4));
    CHECK_ST(untyped_retype(ut, OBJ_ENDPOINT, 0, ROOT_SLOT_CNODE, 0, 0, base, 0), E_RANGE);
    CHECK_ST(untyped_retype(ut, OBJ_ENDPOINT, 0, ROOT_SLOT_CNODE, 0, 0, (1 << ROOT_CNODE_BITS) - 1, 2), E_RANGE);
    for (int i = 0; i < 4; i++) {
        struct msg m = { .info = msginfo_new(0, 0, 0, 0) };
        CHECK_OK(sys_nbsend(base + i, &m));
    }
}

TEST(untyped_retype_bad_root)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 16);
    cptr_t ep = ep_new();
    CHECK(ut && ep);
    CHECK_ST(untyped_retype(ut, OBJ_ENDPOINT, 0, ep, 0, 0, slot_alloc(), 1), E_INVALID_CAPABILITY);
    /* A path to a slot that holds no CNode. */
    CHECK_ST(untyped_retype(ut, OBJ_ENDPOINT, 0, ROOT_SLOT_CNODE, ep, ROOT_DEPTH, 0, 1),
             E_INVALID_CAPABILITY);
}

TEST(untyped_revoke_resets_watermark)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 12);
    CHECK(ut);
    cptr_t f = slot_alloc();
    CHECK_OK(retype_at(ut, OBJ_FRAME, 0, f));
    CHECK_ST(retype_at(ut, OBJ_FRAME, 0, slot_alloc()), E_NOT_ENOUGH_MEMORY);
    CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, ut, ROOT_DEPTH));
    /* The child frame is gone with the revoke. */
    word_t pa;
    CHECK(frame_get_address(f, &pa) != E_OK);
    CHECK_OK(retype_at(ut, OBJ_FRAME, 0, f));
}

/*
 * A copy of an untyped hands out the same memory as the original.  What the
 * copy's objects left in it must be gone when the original retypes after
 * the copy was deleted: the original's own marks still said "never used,
 * known to be zero", and a Retype trusting them gave out a frame (or a
 * CNode) with the old contents (docs/locking.md, "Known problems").
 */
TEST(untyped_copy_leaves_no_dirty_memory)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 12);   /* one page */
    cptr_t copy = slot_alloc(), f = slot_alloc();
    CHECK(ut && copy && f);
    CHECK_OK(cnode_copy(ROOT_SLOT_CNODE, copy, ROOT_DEPTH, ROOT_SLOT_CNODE, ut, ROOT_DEPTH, RIGHTS_ALL));
    CHECK_OK(retype_at(copy, OBJ_FRAME, 0, f));
    word_t v = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, v, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT));
    volatile word_t *p = (volatile word_t *)v;
    for (word_t i = 0; i < PAGE_SIZE / sizeof(word_t); i++)
        p[i] = 0x5a5a0000 + i;
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, f, ROOT_DEPTH));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, copy, ROOT_DEPTH));

    /* The original has no children now: it starts over at the same memory. */
    CHECK_OK(retype_at(ut, OBJ_FRAME, 0, f));
    word_t v2 = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    CHECK_OK(map_frame(f, ROOT_SLOT_VSPACE, v2, RIGHT_READ, VM_DEFAULT));
    const volatile word_t *q = (const volatile word_t *)v2;
    word_t nonzero = 0;
    for (word_t i = 0; i < PAGE_SIZE / sizeof(word_t); i++)
        nonzero += q[i] != 0;
    CHECK_EQ(nonzero, 0);
}

TEST(untyped_retype_on_wrong_object)
{
    cptr_t tcb = obj_new(OBJ_TCB, 0);
    CHECK(tcb);
    /* The label means nothing to a TCB. */
    CHECK_ST(retype_at(tcb, OBJ_ENDPOINT, 0, slot_alloc()), E_ILLEGAL_OPERATION);
}

TEST(untyped_retype_truncated)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 16);
    CHECK(ut);
    const word_t args[] = { OBJ_ENDPOINT, 0 };
    const cptr_t caps[] = { ROOT_SLOT_CNODE };
    CHECK_ST(invoke(ut, UNTYPED_RETYPE, 2, args, 1, caps, NULL), E_TRUNCATED_MESSAGE);
}

TEST(untyped_device_memory)
{
    /* Device untypeds make frames but never kernel objects. */
    word_t n = bootinfo->untyped.end - bootinfo->untyped.start;
    cptr_t dev = 0;
    for (word_t i = 0; i < n && !dev; i++)
        if (bootinfo->untyped_list[i].is_device && bootinfo->untyped_list[i].size_bits >= 12)
            dev = bootinfo->untyped.start + i;
    if (!dev) {
        test_note("no device untyped in bootinfo: checked that every untyped is RAM");
        return;
    }
    CHECK_ST(retype_at(dev, OBJ_TCB, 0, slot_alloc()), E_INVALID_ARGUMENT);
    CHECK_ST(retype_at(dev, OBJ_ENDPOINT, 0, slot_alloc()), E_INVALID_ARGUMENT);
}

TEST(untyped_bootinfo_sane)
{
    CHECK(bootinfo->ncores >= 1 && bootinfo->ncores <= BOOTINFO_MAX_CORES);
    CHECK(bootinfo->empty.start < bootinfo->empty.end);
    CHECK(bootinfo->untyped.end > bootinfo->untyped.start);
    CHECK(bootinfo->untyped.end - bootinfo->untyped.start <= BOOTINFO_MAX_UNTYPED);
    CHECK(bootinfo->user_image_frames.end > bootinfo->user_image_frames.start);
    CHECK_EQ(bootinfo->user_image_vaddr, 0x400000);
    word_t pa;
    CHECK_OK(frame_get_address(bootinfo->user_image_frames.start, &pa));
    CHECK_EQ(pa & (PAGE_SIZE - 1), 0);
}
