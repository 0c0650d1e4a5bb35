/*
 * Object-lock ordering of the `fine` glue, built with DEBUG=1.
 *
 *   lockorder <scenario>
 *
 * `sorted` must succeed: an unsorted call with a duplicate and a NULL takes
 * each lock exactly once, and the release frees them all.  `one` must
 * succeed: object_lock_acquire() takes a lock above those held, and
 * object_lock_release() frees it.  `one_below` takes one below a held lock
 * and must panic.  Every other
 * scenario breaks a rule and must end in lock_panic() (exit status
 * HOST_PANIC_EXIT, message on stderr); returning from it is a failure.
 */
#include "env.h"
#include "lock.h"
#include "ticket.h"

#include <stdio.h>
#include <string.h>

/* Ascending addresses: objs[0] < objs[1] < objs[2]. */
static struct object_lock objs[5];

static int sorted(void)
{
    struct object_lock *set[OBJECT_LOCKS_MAX] = { &objs[2], &objs[0], NULL, &objs[2] };
    struct object_lock *more[1] = { &objs[3] };

    kernel_lock_acquire(ENTRY_IPC);
    object_locks_acquire(set, OBJECT_LOCKS_MAX);
    /* Above everything held: allowed. */
    object_locks_acquire(more, 1);
    bool held = ticket_is_locked(&objs[0].ticket) && ticket_is_locked(&objs[2].ticket) &&
                ticket_is_locked(&objs[3].ticket) && !ticket_is_locked(&objs[1].ticket);
    /* Taken once each: one release frees each lock. */
    object_locks_release(set, OBJECT_LOCKS_MAX);
    object_locks_release(more, 1);
    bool freed = !ticket_is_locked(&objs[0].ticket) && !ticket_is_locked(&objs[2].ticket) &&
                 !ticket_is_locked(&objs[3].ticket);
    kernel_lock_release();
    printf("sorted: held=%d freed=%d\n", held, freed);
    return held && freed ? 0 : 1;
}

static int one(void)
{
    struct object_lock *first = &objs[1];

    kernel_lock_acquire(ENTRY_IPC);
    object_locks_acquire(&first, 1);
    object_lock_acquire(&objs[3]);
    bool held = ticket_is_locked(&objs[1].ticket) && ticket_is_locked(&objs[3].ticket);
    object_lock_release(&objs[3]);
    object_locks_release(&first, 1);
    bool freed = !ticket_is_locked(&objs[1].ticket) && !ticket_is_locked(&objs[3].ticket);
    kernel_lock_release();
    printf("one: held=%d freed=%d\n", held, freed);
    return held && freed ? 0 : 1;
}

static void take(struct object_lock *l)
{
    object_locks_acquire(&l, 1);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: lockorder sorted|one|one_below|descending|same_twice|release_unheld|exit_holding|too_many\n");
        return 2;
    }
    const char *s = argv[1];

    host_set_core(0);
    kernel_lock_init(1);
    for (unsigned i = 0; i < 5; i++) {
        object_lock_init(&objs[i]);
    }
    if (strcmp(s, "sorted") == 0) {
        return sorted();
    }
    if (strcmp(s, "one") == 0) {
        return one();
    }
    kernel_lock_acquire(ENTRY_IPC);
    if (strcmp(s, "descending") == 0) {
        take(&objs[2]);
        take(&objs[1]);
    } else if (strcmp(s, "one_below") == 0) {
        take(&objs[2]);
        object_lock_acquire(&objs[1]);
    } else if (strcmp(s, "same_twice") == 0) {
        take(&objs[1]);
        take(&objs[1]);
    } else if (strcmp(s, "release_unheld") == 0) {
        struct object_lock *l = &objs[1];
        object_locks_release(&l, 1);
    } else if (strcmp(s, "exit_holding") == 0) {
        take(&objs[1]);
        kernel_lock_release();
    } else if (strcmp(s, "too_many") == 0) {
        struct object_lock *set[5] = { &objs[0], &objs[1], &objs[2], &objs[3], &objs[4] };
        object_locks_acquire(set, 5);
    } else {
        fprintf(stderr, "unknown scenario %s\n", s);
        return 2;
    }
    printf("%s: no panic\n", s);
    return 1;
}
