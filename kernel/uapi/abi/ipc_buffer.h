/*
 * The IPC buffer: one per thread, in a frame the thread has mapped and
 * registered with TCB Configure (or TCB SetIPCBuffer).  Message registers
 * beyond those held in machine registers (ARCH_MSG_REGISTERS, docs/abi.md)
 * live here, as do capability addresses to send and the receive slot.
 * msg[i] is message register i for every i, so the first ARCH_MSG_REGISTERS
 * entries are unused when the registers carry them.
 */
#ifndef ABI_IPC_BUFFER_H
#define ABI_IPC_BUFFER_H

#include "msginfo.h"

struct ipc_buffer {
    word_t tag;                                 /* unused by the kernel */
    word_t msg[MSG_MAX_LENGTH];
    word_t user_data;                           /* free for the thread's own use */
    cptr_t caps[MSG_MAX_EXTRA_CAPS];            /* to send */
    word_t badges[MSG_MAX_EXTRA_CAPS];          /* received: badges of unwrapped caps */
    cptr_t receive_cnode;                       /* where a received cap goes */
    cptr_t receive_index;
    word_t receive_depth;
};

_Static_assert(sizeof(struct ipc_buffer) <= 4096, "the IPC buffer fits one small frame");

#endif
