/*
 * The fuzzer thread (fuzz.h): calls the kernel with what generate.c builds,
 * counts the results in its stats page, and stops for the root task to
 * restart or rebuild it.  Runs in the fuzzer's space.
 */
#include "fuzz.h"

/* Stop for good: the root task restarts a fuzzer that stopped (and rebuilds its pool if asked). */
static _Noreturn void fuzz_stop(void)
{
    for (;;) {
        struct msg m = { 0 };
        sys_raw(SYS_CALL, FS_SELF, &(struct msg){ .info = msginfo_new(TCB_SUSPEND, 0, 0, 0) });
        m.info = msginfo_new(FUZZ_MAGIC_LABEL, 0, 0, 0);
        sys_raw(SYS_CALL, FS_FAULT, &m);
        /* Both caps gone: an unknown system call faults, and without a handler the kernel
         * suspends the thread. */
        sys_raw(SYS_COUNT + 1, 0, &m);
    }
}

void fuzz_thread(void *argp)
{
    struct fstate f;
    f.cfg = argp;
    f.stats = (struct fuzz_stats *)FUZZ_STATS_VADDR(f.cfg->index);
    f.buf = ipcbuf();
    f.s = f.cfg->seed ? f.cfg->seed : 1;
    f.vwant = 0;
    f.full_untyped = 0;
    f.kind = f.stats->kind;
    if (f.stats->fresh) {
        /* Just rebuilt: the pool as built, the churn area empty. */
        fuzz_pool_kinds(f.kind);
        for (unsigned s = FS_FIRST_FREE; s < FUZZ_SLOTS; s++)
            f.kind[s] = K_EMPTY;
        f.stats->fresh = 0;
    }
    if (f.cfg->ncores == 1)
        for (unsigned i = FS_PEER0; i < FS_PEER_END; i++)
            f.kind[i] = K_EMPTY;

    struct call c;
    while (f.stats->calls < f.cfg->quota) {
        fuzz_build(&f, &c);
        struct msg m = { .info = msginfo_new(c.label, c.unwrapped, c.ncaps, c.nargs) };
        for (unsigned i = 0; i < c.nargs; i++)
            msg_set(&m, i, c.args[i]);
        for (unsigned i = 0; i < c.ncaps; i++)
            f.buf->caps[i] = c.caps[i];
        f.stats->last[0] = c.sysno;
        f.stats->last[1] = c.cap;
        f.stats->last[2] = (word_t)c.kind;
        f.stats->last[3] = c.label;
        word_t st = sys_raw(c.sysno, c.cap, &m);
        struct fuzz_stats *s = f.stats;
        s->status[st < E_COUNT ? st : E_COUNT]++;
        s->kind_calls[c.kind]++;
        s->kind_status[c.kind][st < E_COUNT ? st : E_COUNT]++;
        if (st == E_FAILED_LOOKUP)
            s->lookup_fail[c.kind][m.mr[0] % 5][msginfo_length(m.info) < 2 ? 7 : m.mr[1] % 7]++;
        if (st == E_OK) {
            s->kind_ok[c.kind]++;
            if (c.sysno <= SYS_REPLY_RECV && (c.kind == K_EP || c.kind == K_NTFN || c.kind == K_REPLY))
                s->ipc_ok++;
        }
        s->digest = (s->digest ^ (st * 131 + msginfo_length(m.info))) * 0x01000193u;
        s->calls++;
        fuzz_track(&f, &c, st, &m);
        /* The status proves nothing: a peer holding this TCB may rewrite it before it is read.
         * The kernel counts its own failures, and the root task reads that count. */
        if (f.cfg->check_every && s->calls % f.cfg->check_every == 0 && sys_debug_check() != E_OK)
            s->check_not_ok++;
        /* Its pool runs dry when it deleted or moved most of what it was given: ask for a new one. */
        if (s->calls % FUZZ_EPOCH == 0 || (s->calls % 64 == 0 && fuzz_own_cnode(&f) == FS_CNODE &&
                                             f.kind[FS_CNODE] != K_CSPACE)) {
            s->want_rebuild = 1;
            fuzz_stop();
        }
    }
    fuzz_stop();
}
