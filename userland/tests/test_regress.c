/*
 * Regression tests for kernel bugs the fuzzer found.  Each states the bug it
 * guards against; the runner's invariant check after every test adds to them.
 */
#include "test.h"

static word_t retype_one(cptr_t ut, word_t type, cptr_t slot)
{
    return untyped_retype(ut, type, 0, ROOT_SLOT_CNODE, 0, 0, slot, 1);
}

static word_t copy_into(cptr_t dest, cptr_t src)
{
    return cnode_copy(ROOT_SLOT_CNODE, dest, ROOT_DEPTH, ROOT_SLOT_CNODE, src, ROOT_DEPTH, RIGHTS_ALL);
}

/*
 * Deleting a capability once left its children one level too deep in the
 * derivation tree, so they looked like children of the previous sibling:
 * deleting frame B made B's copy a child of frame A, and revoking A then
 * deleted it.
 */
TEST(regress_delete_keeps_children_under_their_parent)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 14);
    CHECK(ut);
    cptr_t a = slot_alloc(), b = slot_alloc(), a_copy = slot_alloc(), b_copy = slot_alloc();
    /*
     * A new child goes right after its parent in the tree's preorder list, so
     * retyping B first leaves ut, A, A', B, B': B' follows A' there.
     */
    CHECK_OK(retype_one(ut, OBJ_FRAME, b));
    CHECK_OK(retype_one(ut, OBJ_FRAME, a));
    CHECK_OK(copy_into(a_copy, a));
    CHECK_OK(copy_into(b_copy, b));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, b, ROOT_DEPTH));
    CHECK_OK(cnode_revoke(ROOT_SLOT_CNODE, a, ROOT_DEPTH));
    word_t pa;
    CHECK_ST(frame_get_address(a_copy, &pa), E_FAILED_LOOKUP);
    CHECK_OK(frame_get_address(b_copy, &pa));
    CHECK_OK(sys_debug_check());
}

/*
 * Objects retyped from a copy of an untyped became the original's children
 * when the copy was deleted, but the original's free mark stayed where it
 * was, so its next Retype handed out memory those objects still used.
 */
TEST(regress_untyped_copy_delete_keeps_memory_in_use)
{
    cptr_t ut = obj_new(OBJ_UNTYPED, 14);
    CHECK(ut);
    cptr_t ut_copy = slot_alloc(), first = slot_alloc(), second = slot_alloc();
    CHECK_OK(copy_into(ut_copy, ut));
    CHECK_OK(retype_one(ut_copy, OBJ_FRAME, first));
    word_t first_pa, second_pa;
    CHECK_OK(frame_get_address(first, &first_pa));
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, ut_copy, ROOT_DEPTH));
    CHECK_OK(retype_one(ut, OBJ_FRAME, second));
    CHECK_OK(frame_get_address(second, &second_pa));
    CHECK(second_pa != first_pa);
    CHECK_OK(frame_get_address(first, &first_pa));
    CHECK_OK(sys_debug_check());
}
