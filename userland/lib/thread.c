/* Threads in the root task's space and in new spaces (thread.h).  Main thread only. */
#include <arch_user.h>
#include <thread.h>

_Noreturn void thread_exit(void)
{
    cptr_t self = tls()->self;
    for (;;) {
        if (self)
            tcb_suspend(self);
        sys_yield();
    }
}

_Noreturn void thread_entry(thread_fn fn, void *arg, struct ipc_buffer *buf, cptr_t self)
{
    struct thread_local *t = tls();
    t->ipcbuf = buf;
    t->self = self;
    t->guard = TLS_GUARD;
    fn(arg);
    thread_exit();
}

/* Map `n` fresh frames at vaddr in vspace; the root task's copies stay in its CNode. */
static word_t map_fresh(cptr_t vspace, word_t vaddr, word_t n, cptr_t *first)
{
    for (word_t i = 0; i < n; i++) {
        cptr_t f;
        word_t st = obj_alloc(OBJ_FRAME, 0, &f);
        if (st != E_OK)
            return st;
        if (i == 0 && first)
            *first = f;
        st = map_frame(f, vspace, vaddr + i * PAGE_SIZE, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT);
        if (st != E_OK)
            return st;
    }
    return E_OK;
}

static word_t set_params(struct thread *t, const struct thread_opts *o)
{
    word_t st = tcb_set_priority(t->tcb, o->prio ? o->prio : DEFAULT_PRIO);
    if (st == E_OK && o->core)
        st = tcb_set_affinity(t->tcb, o->core);
    return st;
}

word_t thread_create(struct thread *t, const struct thread_opts *o)
{
    memset(t, 0, sizeof(*t));
    word_t st = obj_alloc(OBJ_TCB, 0, &t->tcb);
    if (st != E_OK)
        return st;
    t->vspace = ROOT_SLOT_VSPACE;
    t->self = t->tcb;

    cptr_t ipc_frame;
    t->ipc_in_root = frame_new_mapped(&ipc_frame);
    if (!t->ipc_in_root)
        return E_NOT_ENOUGH_MEMORY;
    t->ipc_vaddr = (word_t)t->ipc_in_root;

    word_t stack = vaddr_alloc(STACK_SIZE, STACK_SIZE);
    st = map_fresh(ROOT_SLOT_VSPACE, stack, STACK_SIZE / PAGE_SIZE, NULL);
    if (st != E_OK)
        return st;
    t->stack_top = stack + STACK_SIZE;

    st = tcb_configure(t->tcb, o->fault_ep, ROOT_SLOT_CNODE, 0, ROOT_SLOT_VSPACE, t->ipc_vaddr,
                       ipc_frame);
    return st == E_OK ? set_params(t, o) : st;
}

/*
 * Frames every new space maps at the same address as the root task, beyond
 * the image: what a port's user-level support needs in every thread (on
 * arm-imx6 the page of the global timer, arch_cycles()).
 */
#define MAX_SHARED_FRAMES 4

static struct shared_frame {
    cptr_t frame;
    word_t vaddr, rights, attrs;
} shared_frames[MAX_SHARED_FRAMES];
static word_t nshared_frames;

word_t space_share_frame(cptr_t frame, word_t vaddr, word_t rights, word_t attrs)
{
    if (nshared_frames == MAX_SHARED_FRAMES)
        return E_NOT_ENOUGH_MEMORY;
    shared_frames[nshared_frames++] = (struct shared_frame){ frame, vaddr, rights, attrs };
    return E_OK;
}

word_t space_map_copy(cptr_t frame, cptr_t vspace, word_t vaddr, word_t rights, word_t attrs)
{
    cptr_t copy = slot_alloc();
    if (!copy)
        return E_NOT_ENOUGH_MEMORY;
    word_t st = cnode_copy(ROOT_SLOT_CNODE, copy, ROOT_DEPTH, ROOT_SLOT_CNODE, frame, ROOT_DEPTH,
                           RIGHTS_ALL);
    return st == E_OK ? map_frame(copy, vspace, vaddr, rights, attrs) : st;
}

/* The first page of the writable image (the link map's __data_start). */
extern char __data_start[];

/*
 * Map at vaddr in vspace a fresh frame holding a copy of the root task's
 * page at vaddr.  The copy is made through a scratch address of the root
 * task's space, unmapped again afterwards.
 */
static word_t map_private_copy(cptr_t vspace, word_t vaddr, word_t rights)
{
    static word_t scratch;
    if (!scratch)
        scratch = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    cptr_t f;
    word_t st = obj_alloc(OBJ_FRAME, 0, &f);
    if (st != E_OK)
        return st;
    st = map_frame(f, ROOT_SLOT_VSPACE, scratch, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT);
    if (st != E_OK)
        return st;
    memcpy((void *)scratch, (const void *)vaddr, PAGE_SIZE);
    st = frame_unmap(f);
    return st == E_OK ? map_frame(f, vspace, vaddr, rights, VM_DEFAULT) : st;
}

/* Addresses in new spaces: the same layout for every one, far from the root task's fresh ones. */
#define SPACE_IPC_VADDR   0x30000000UL
#define SPACE_STACK_VADDR 0x30010000UL

word_t thread_create_space(struct thread *t, const struct thread_opts *o)
{
    memset(t, 0, sizeof(*t));
    word_t st = obj_alloc(OBJ_TCB, 0, &t->tcb);
    if (st == E_OK)
        st = obj_alloc(OBJ_VSPACE, 0, &t->vspace);
    if (st != E_OK)
        return st;

    /* The image: copies of the root task's frame caps, mapped at the same addresses. */
    word_t rights = o->image_rights ? o->image_rights : RIGHT_READ | RIGHT_WRITE;
    word_t nframes = bootinfo->user_image_frames.end - bootinfo->user_image_frames.start;
    for (word_t i = 0; i < nframes; i++) {
        word_t vaddr = bootinfo->user_image_vaddr + i * PAGE_SIZE;
        if (o->private_data && vaddr >= (word_t)__data_start)
            st = map_private_copy(t->vspace, vaddr, rights);
        else
            st = space_map_copy(bootinfo->user_image_frames.start + i, t->vspace, vaddr, rights,
                                VM_DEFAULT);
        if (st != E_OK)
            return st;
    }
    for (word_t i = 0; i < nshared_frames; i++) {
        const struct shared_frame *f = &shared_frames[i];
        st = space_map_copy(f->frame, t->vspace, f->vaddr, f->rights, f->attrs);
        if (st != E_OK)
            return st;
    }

    cptr_t ipc_frame = 0;
    st = map_fresh(t->vspace, SPACE_IPC_VADDR, 1, &ipc_frame);
    if (st == E_OK)
        st = map_fresh(t->vspace, SPACE_STACK_VADDR, STACK_SIZE / PAGE_SIZE, NULL);
    if (st != E_OK)
        return st;
    t->ipc_vaddr = SPACE_IPC_VADDR;
    t->stack_top = SPACE_STACK_VADDR + STACK_SIZE;

    cptr_t cspace = o->cspace ? o->cspace : ROOT_SLOT_CNODE;
    t->self = o->cspace ? o->self_in_cspace : t->tcb;
    st = tcb_configure(t->tcb, o->fault_ep, cspace, o->cspace ? o->cspace_data : 0, t->vspace,
                       t->ipc_vaddr, ipc_frame);
    return st == E_OK ? set_params(t, o) : st;
}

word_t thread_restart_at(struct thread *t, word_t ip, word_t sp, thread_fn fn, void *arg)
{
    word_t regs[ARCH_USER_REGS] = { 0 };
    regs[ARCH_REG_IP] = ip;
    regs[ARCH_REG_SP] = sp;
    regs[ARCH_REG_FLAGS] = ARCH_INITIAL_FLAGS;
    regs[ARCH_REG_START_FN] = (word_t)fn;
    regs[ARCH_REG_START_ARG] = (word_t)arg;
    regs[ARCH_REG_START_IPCBUF] = t->ipc_vaddr;
    regs[ARCH_REG_START_SELF] = t->self;
    return tcb_write_registers(t->tcb, 1, ARCH_USER_REGS, regs);
}

word_t thread_start(struct thread *t, thread_fn fn, void *arg)
{
    return thread_restart_at(t, (word_t)_thread_start, t->stack_top, fn, arg);
}
