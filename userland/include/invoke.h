/*
 * Object invocations: one wrapper per label of abi/invocation.h.  Each
 * returns the status (abi/errors.h); results, when there are any, come back
 * through pointer arguments.  The argument layout of each invocation is the
 * one docs/abi.md gives; invoke.c is the only file that knows it.
 *
 * Capability addresses are resolved in the caller's CSpace.  A slot is
 * named seL4-style by (root CNode cap, index, depth); the root task's own
 * slots are (ROOT_SLOT_CNODE, slot, WORD_BITS).
 */
#ifndef INVOKE_H
#define INVOKE_H

#include <abi/bootinfo.h>
#include <abi/cnode_guard.h>
#include <abi/invocation.h>
#include <abi/objects.h>
#include <sys.h>

/* The raw form: label, arguments in MR0.., capabilities in caps[]; *out gets the reply. */
word_t invoke(cptr_t cap, word_t label, unsigned nargs, const word_t *args,
              unsigned ncaps, const cptr_t *caps, struct msg *out);

/* Untyped */
word_t untyped_retype(cptr_t untyped, word_t type, word_t size_bits, cptr_t root,
                      word_t node_index, word_t node_depth, word_t node_offset, word_t num);

/* CNode: the destination (or only) slot is (cnode, index, depth). */
word_t cnode_revoke(cptr_t cnode, word_t index, word_t depth);
word_t cnode_delete(cptr_t cnode, word_t index, word_t depth);
word_t cnode_copy(cptr_t cnode, word_t index, word_t depth,
                  cptr_t src_root, word_t src_index, word_t src_depth, word_t rights);
word_t cnode_mint(cptr_t cnode, word_t index, word_t depth,
                  cptr_t src_root, word_t src_index, word_t src_depth, word_t rights, word_t badge);
word_t cnode_move(cptr_t cnode, word_t index, word_t depth,
                  cptr_t src_root, word_t src_index, word_t src_depth);
word_t cnode_mutate(cptr_t cnode, word_t index, word_t depth,
                    cptr_t src_root, word_t src_index, word_t src_depth, word_t badge);
word_t cnode_rotate(cptr_t cnode, word_t dest_index, word_t dest_depth, word_t dest_badge,
                    cptr_t pivot_root, word_t pivot_index, word_t pivot_depth, word_t pivot_badge,
                    cptr_t src_root, word_t src_index, word_t src_depth);
word_t cnode_save_caller(cptr_t cnode, word_t index, word_t depth);

/* TCB */
word_t tcb_read_registers(cptr_t tcb, word_t suspend, word_t count, word_t *regs);
word_t tcb_write_registers(cptr_t tcb, word_t resume, word_t count, const word_t *regs);
word_t tcb_copy_registers(cptr_t tcb, cptr_t source, word_t suspend_source, word_t resume_target);
word_t tcb_configure(cptr_t tcb, cptr_t fault_ep, cptr_t cspace, word_t cspace_data,
                     cptr_t vspace, word_t ipc_buffer_vaddr, cptr_t ipc_buffer_frame);
word_t tcb_set_priority(cptr_t tcb, word_t prio);
/* The TCB whose maximum priority authorises tcb_set_priority (0: the caller's own). */
extern cptr_t prio_authority;
word_t tcb_set_affinity(cptr_t tcb, word_t core);
word_t tcb_set_ipc_buffer(cptr_t tcb, word_t vaddr, cptr_t frame);
word_t tcb_set_space(cptr_t tcb, cptr_t fault_ep, cptr_t cspace, word_t cspace_data, cptr_t vspace);
word_t tcb_suspend(cptr_t tcb);
word_t tcb_resume(cptr_t tcb);
word_t tcb_bind_notification(cptr_t tcb, cptr_t ntfn);
word_t tcb_unbind_notification(cptr_t tcb);
word_t tcb_set_name(cptr_t tcb, const char *name);
word_t tcb_set_tls_base(cptr_t tcb, word_t base);

/* IRQ */
word_t irq_control_get(cptr_t irq_control, word_t irq, cptr_t root, word_t index, word_t depth);
word_t irq_handler_ack(cptr_t handler);
word_t irq_handler_set_notification(cptr_t handler, cptr_t ntfn);
word_t irq_handler_clear(cptr_t handler);

/* Address spaces */
word_t page_table_map(cptr_t pt, cptr_t vspace, word_t vaddr, word_t attrs);
word_t page_table_unmap(cptr_t pt);
word_t frame_map(cptr_t frame, cptr_t vspace, word_t vaddr, word_t rights, word_t attrs);
word_t frame_unmap(cptr_t frame);
word_t frame_get_address(cptr_t frame, word_t *paddr);

/* I/O ports (x86_64): bytes is 1, 2 or 4 (another width sends INV_INVALID). */
word_t io_port_in(cptr_t io_port, word_t port, unsigned bytes, uint32_t *value);
word_t io_port_out(cptr_t io_port, word_t port, unsigned bytes, word_t value);

/* The MR0 / MR1 detail of the last failed invocation on this thread (abi/errors.h). */
word_t invoke_last_detail(unsigned i);

/* CSpace guard data (abi/cnode_guard.h) for a CNode of `radix` bits that must resolve a whole word. */
word_t cspace_guard_data(word_t radix);

/* A short name for a status, for messages. */
const char *status_name(word_t status);

#endif
