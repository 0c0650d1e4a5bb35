/*
 * Object invocations: the argument layout of every label (docs/abi.md).
 * Arguments go in MR0.., extra capabilities in the IPC buffer's caps[], and
 * the invocation is a Call on the object's capability.
 */
#include <invoke.h>
#include <libc.h>

word_t invoke(cptr_t cap, word_t label, unsigned nargs, const word_t *args,
              unsigned ncaps, const cptr_t *caps, struct msg *out)
{
    struct msg m = { .info = msginfo_new(label, 0, ncaps, nargs) };
    struct ipc_buffer *b = ipcbuf();
    for (unsigned i = 0; i < nargs; i++)
        msg_set(&m, i, args[i]);
    for (unsigned i = 0; i < ncaps; i++)
        b->caps[i] = caps[i];
    word_t st = sys_call(cap, &m);
    if (st != E_OK) {
        tls()->detail[0] = m.mr[0];
        tls()->detail[1] = m.mr[1];
    }
    if (out)
        *out = m;
    return st;
}

word_t invoke_last_detail(unsigned i)
{
    return tls()->detail[i & 1];
}

#define INVOKE(cap, label, caps_, ...)                                                  \
    ({                                                                                  \
        const word_t a_[] = { 0, __VA_ARGS__ };                                         \
        invoke(cap, label, ARRAY_SIZE(a_) - 1, a_ + 1, ARRAY_SIZE(caps_), caps_, NULL); \
    })

static const cptr_t no_caps[0];

/* ---- Untyped: caps[0] root; MR0 type, MR1 size_bits, MR2 index, MR3 depth of the destination
 * CNode within root (depth 0: root itself), MR4 offset of the first slot, MR5 count. */
word_t untyped_retype(cptr_t untyped, word_t type, word_t size_bits, cptr_t root,
                      word_t node_index, word_t node_depth, word_t node_offset, word_t num)
{
    const cptr_t caps[] = { root };
    return INVOKE(untyped, UNTYPED_RETYPE, caps, type, size_bits, node_index, node_depth,
                  node_offset, num);
}

/* ---- CNode: MR0 index, MR1 depth of the destination; caps[0] the source root, MR2, MR3 its slot. */
word_t cnode_revoke(cptr_t cnode, word_t index, word_t depth)
{
    return INVOKE(cnode, CNODE_REVOKE, no_caps, index, depth);
}

word_t cnode_delete(cptr_t cnode, word_t index, word_t depth)
{
    return INVOKE(cnode, CNODE_DELETE, no_caps, index, depth);
}

word_t cnode_save_caller(cptr_t cnode, word_t index, word_t depth)
{
    return INVOKE(cnode, CNODE_SAVE_CALLER, no_caps, index, depth);
}

word_t cnode_copy(cptr_t cnode, word_t index, word_t depth,
                  cptr_t src_root, word_t src_index, word_t src_depth, word_t rights)
{
    const cptr_t caps[] = { src_root };
    return INVOKE(cnode, CNODE_COPY, caps, index, depth, src_index, src_depth, rights);
}

word_t cnode_mint(cptr_t cnode, word_t index, word_t depth,
                  cptr_t src_root, word_t src_index, word_t src_depth, word_t rights, word_t badge)
{
    const cptr_t caps[] = { src_root };
    return INVOKE(cnode, CNODE_MINT, caps, index, depth, src_index, src_depth, rights, badge);
}

word_t cnode_move(cptr_t cnode, word_t index, word_t depth,
                  cptr_t src_root, word_t src_index, word_t src_depth)
{
    const cptr_t caps[] = { src_root };
    return INVOKE(cnode, CNODE_MOVE, caps, index, depth, src_index, src_depth);
}

word_t cnode_mutate(cptr_t cnode, word_t index, word_t depth,
                    cptr_t src_root, word_t src_index, word_t src_depth, word_t badge)
{
    const cptr_t caps[] = { src_root };
    return INVOKE(cnode, CNODE_MUTATE, caps, index, depth, src_index, src_depth, badge);
}

/* Rotate: MR0,1 dest, MR2,3 pivot, MR4 pivot badge, MR5,6 source, MR7 dest badge;
 * caps[0] pivot root, caps[1] source root.  The pivot's cap moves to dest, the source's to the pivot. */
word_t cnode_rotate(cptr_t cnode, word_t dest_index, word_t dest_depth, word_t dest_badge,
                    cptr_t pivot_root, word_t pivot_index, word_t pivot_depth, word_t pivot_badge,
                    cptr_t src_root, word_t src_index, word_t src_depth)
{
    const cptr_t caps[] = { pivot_root, src_root };
    return INVOKE(cnode, CNODE_ROTATE, caps, dest_index, dest_depth, pivot_index, pivot_depth,
                  pivot_badge, src_index, src_depth, dest_badge);
}

/* ---- TCB */

/* MR0 suspend, MR1 count; the registers come back in MR0.. */
word_t tcb_read_registers(cptr_t tcb, word_t suspend, word_t count, word_t *regs)
{
    const word_t args[] = { suspend, count };
    struct msg m;
    word_t st = invoke(tcb, TCB_READ_REGISTERS, 2, args, 0, NULL, &m);
    if (st == E_OK)
        for (word_t i = 0; i < count && i < msginfo_length(m.info); i++)
            regs[i] = msg_get(&m, i);
    return st;
}

/* MR0 resume, MR1 count, MR2.. the registers. */
word_t tcb_write_registers(cptr_t tcb, word_t resume, word_t count, const word_t *regs)
{
    word_t args[2 + 64];
    if (count > 64)
        count = 64;
    args[0] = resume;
    args[1] = count;
    for (word_t i = 0; i < count; i++)
        args[2 + i] = regs[i];
    return invoke(tcb, TCB_WRITE_REGISTERS, 2 + count, args, 0, NULL, NULL);
}

/* caps[0] source; MR0 flags: bit 0 suspend the source, bit 1 resume the target. */
word_t tcb_copy_registers(cptr_t tcb, cptr_t source, word_t suspend_source, word_t resume_target)
{
    const cptr_t caps[] = { source };
    return INVOKE(tcb, TCB_COPY_REGISTERS, caps, (suspend_source ? 1 : 0) | (resume_target ? 2 : 0));
}

/* MR0 fault endpoint (a cptr in the thread's new CSpace), MR1 cspace data, MR2 buffer address;
 * caps[0] CSpace root, caps[1] VSpace root, caps[2] the buffer's frame. */
word_t tcb_configure(cptr_t tcb, cptr_t fault_ep, cptr_t cspace, word_t cspace_data,
                     cptr_t vspace, word_t ipc_buffer_vaddr, cptr_t ipc_buffer_frame)
{
    const cptr_t caps[] = { cspace, vspace, ipc_buffer_frame };
    return INVOKE(tcb, TCB_CONFIGURE, caps, fault_ep, cspace_data, ipc_buffer_vaddr);
}

/*
 * SetPriority sets the maximum priority too, and checks the new one against
 * the maximum of an authority TCB (caps[0]) or of the caller.  Once a
 * thread has lowered its own priority it cannot raise it again, so the root
 * task keeps a TCB at the highest priority as the authority (root.h).
 */
cptr_t prio_authority;

word_t tcb_set_priority(cptr_t tcb, word_t prio)
{
    if (prio_authority) {
        const cptr_t caps[] = { prio_authority };
        return INVOKE(tcb, TCB_SET_PRIORITY, caps, prio);
    }
    return INVOKE(tcb, TCB_SET_PRIORITY, no_caps, prio);
}

word_t tcb_set_affinity(cptr_t tcb, word_t core)
{
    return INVOKE(tcb, TCB_SET_AFFINITY, no_caps, core);
}

word_t tcb_set_ipc_buffer(cptr_t tcb, word_t vaddr, cptr_t frame)
{
    const cptr_t caps[] = { frame };
    return INVOKE(tcb, TCB_SET_IPC_BUFFER, caps, vaddr);
}

word_t tcb_set_space(cptr_t tcb, cptr_t fault_ep, cptr_t cspace, word_t cspace_data, cptr_t vspace)
{
    const cptr_t caps[] = { cspace, vspace };
    return INVOKE(tcb, TCB_SET_SPACE, caps, fault_ep, cspace_data);
}

word_t tcb_suspend(cptr_t tcb)
{
    return invoke(tcb, TCB_SUSPEND, 0, NULL, 0, NULL, NULL);
}

word_t tcb_resume(cptr_t tcb)
{
    return invoke(tcb, TCB_RESUME, 0, NULL, 0, NULL, NULL);
}

word_t tcb_bind_notification(cptr_t tcb, cptr_t ntfn)
{
    const cptr_t caps[] = { ntfn };
    return invoke(tcb, TCB_BIND_NOTIFICATION, 0, NULL, 1, caps, NULL);
}

word_t tcb_unbind_notification(cptr_t tcb)
{
    return invoke(tcb, TCB_UNBIND_NOTIFICATION, 0, NULL, 0, NULL, NULL);
}

/* MR0 length, MR1.. the bytes packed little-endian (as SYS_DEBUG_PUTS). */
word_t tcb_set_name(cptr_t tcb, const char *name)
{
    word_t args[1 + (TCB_NAME_MAX + sizeof(word_t) - 1) / sizeof(word_t)] = { 0 };
    word_t len = strlen(name);
    if (len > TCB_NAME_MAX - 1)
        len = TCB_NAME_MAX - 1;
    args[0] = len;
    for (word_t i = 0; i < len; i++)
        args[1 + i / sizeof(word_t)] |= (word_t)(unsigned char)name[i] << (8 * (i % sizeof(word_t)));
    return invoke(tcb, TCB_SET_NAME, 1 + (len + sizeof(word_t) - 1) / sizeof(word_t), args, 0, NULL,
                  NULL);
}

word_t tcb_set_tls_base(cptr_t tcb, word_t base)
{
    return invoke(tcb, TCB_SET_TLS_BASE, 1, &base, 0, NULL, NULL);
}

/* ---- IRQ: Get has MR0 irq, MR1 index, MR2 depth, caps[0] the destination root. */
word_t irq_control_get(cptr_t irq_control, word_t irq, cptr_t root, word_t index, word_t depth)
{
    const cptr_t caps[] = { root };
    return INVOKE(irq_control, IRQ_CONTROL_GET, caps, irq, index, depth);
}

word_t irq_handler_ack(cptr_t handler)
{
    return invoke(handler, IRQ_HANDLER_ACK, 0, NULL, 0, NULL, NULL);
}

word_t irq_handler_set_notification(cptr_t handler, cptr_t ntfn)
{
    const cptr_t caps[] = { ntfn };
    return invoke(handler, IRQ_HANDLER_SET_NOTIFICATION, 0, NULL, 1, caps, NULL);
}

word_t irq_handler_clear(cptr_t handler)
{
    return invoke(handler, IRQ_HANDLER_CLEAR, 0, NULL, 0, NULL, NULL);
}

/* ---- Address spaces: Map has MR0 vaddr, (frames: MR1 rights,) then attributes; caps[0] the VSpace. */
word_t page_table_map(cptr_t pt, cptr_t vspace, word_t vaddr, word_t attrs)
{
    const cptr_t caps[] = { vspace };
    return INVOKE(pt, PAGE_TABLE_MAP, caps, vaddr, attrs);
}

word_t page_table_unmap(cptr_t pt)
{
    return invoke(pt, PAGE_TABLE_UNMAP, 0, NULL, 0, NULL, NULL);
}

word_t frame_map(cptr_t frame, cptr_t vspace, word_t vaddr, word_t rights, word_t attrs)
{
    const cptr_t caps[] = { vspace };
    return INVOKE(frame, FRAME_MAP, caps, vaddr, rights, attrs);
}

word_t frame_unmap(cptr_t frame)
{
    return invoke(frame, FRAME_UNMAP, 0, NULL, 0, NULL, NULL);
}

word_t frame_get_address(cptr_t frame, word_t *paddr)
{
    struct msg m;
    word_t st = invoke(frame, FRAME_GET_ADDRESS, 0, NULL, 0, NULL, &m);
    if (st == E_OK && paddr)
        *paddr = m.mr[0];
    return st;
}

/* ---- I/O ports: MR0 port (Out: MR1 value); In returns the value in MR0. */
static const word_t io_port_in_label[] = { [1] = IO_PORT_IN8, [2] = IO_PORT_IN16, [4] = IO_PORT_IN32 };
static const word_t io_port_out_label[] = { [1] = IO_PORT_OUT8, [2] = IO_PORT_OUT16, [4] = IO_PORT_OUT32 };

word_t io_port_in(cptr_t io_port, word_t port, unsigned bytes, uint32_t *value)
{
    struct msg m;
    word_t label = bytes < ARRAY_SIZE(io_port_in_label) ? io_port_in_label[bytes] : INV_INVALID;
    word_t st = invoke(io_port, label, 1, &port, 0, NULL, &m);
    if (st == E_OK && value)
        *value = (uint32_t)m.mr[0];
    return st;
}

word_t io_port_out(cptr_t io_port, word_t port, unsigned bytes, word_t value)
{
    const word_t args[] = { port, value };
    word_t label = bytes < ARRAY_SIZE(io_port_out_label) ? io_port_out_label[bytes] : INV_INVALID;
    return invoke(io_port, label, 2, args, 0, NULL, NULL);
}

word_t cspace_guard_data(word_t radix)
{
    return guard_data_new(WORD_BITS - radix, 0);
}

const char *status_name(word_t status)
{
    static const char *const names[] = {
        "E_OK", "E_INVALID_ARGUMENT", "E_INVALID_CAPABILITY", "E_ILLEGAL_OPERATION",
        "E_RANGE", "E_ALIGNMENT", "E_FAILED_LOOKUP", "E_TRUNCATED_MESSAGE",
        "E_DELETE_FIRST", "E_REVOKE_FIRST", "E_NOT_ENOUGH_MEMORY", "E_WOULD_BLOCK",
        "E_INVARIANT", "E_UNKNOWN_SYSCALL",
    };
    _Static_assert(ARRAY_SIZE(names) == E_COUNT, "a name for every status");
    return status < E_COUNT ? names[status] : "E_?";
}
