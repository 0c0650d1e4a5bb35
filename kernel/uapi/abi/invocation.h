/*
 * Invocation labels: the label of the message info on a Call (or Send) to
 * an object capability.  Arguments go in message registers MR0.., extra
 * capabilities in the IPC buffer's caps[]; results come back in MRs.
 * docs/abi.md lists every invocation's arguments, results and errors.
 */
#ifndef ABI_INVOCATION_H
#define ABI_INVOCATION_H

/* TCB SetName: bytes of a thread name, its terminating NUL included. */
#define TCB_NAME_MAX 32

enum invocation_label {
    INV_INVALID = 0,

    /* Untyped */
    UNTYPED_RETYPE,

    /* TCB */
    TCB_READ_REGISTERS,
    TCB_WRITE_REGISTERS,
    TCB_COPY_REGISTERS,
    TCB_CONFIGURE,
    TCB_SET_PRIORITY,
    TCB_SET_AFFINITY,
    TCB_SET_IPC_BUFFER,
    TCB_SET_SPACE,
    TCB_SUSPEND,
    TCB_RESUME,
    TCB_BIND_NOTIFICATION,
    TCB_UNBIND_NOTIFICATION,
    TCB_SET_NAME,
    TCB_SET_TLS_BASE,

    /* CNode */
    CNODE_REVOKE,
    CNODE_DELETE,
    CNODE_COPY,
    CNODE_MINT,
    CNODE_MOVE,
    CNODE_MUTATE,
    CNODE_ROTATE,
    CNODE_SAVE_CALLER,

    /* IRQ */
    IRQ_CONTROL_GET,
    IRQ_HANDLER_ACK,
    IRQ_HANDLER_SET_NOTIFICATION,
    IRQ_HANDLER_CLEAR,

    /* Address spaces */
    PAGE_TABLE_MAP,
    PAGE_TABLE_UNMAP,
    FRAME_MAP,
    FRAME_UNMAP,
    FRAME_GET_ADDRESS,

    /* I/O ports (x86_64) */
    IO_PORT_IN8,
    IO_PORT_IN16,
    IO_PORT_IN32,
    IO_PORT_OUT8,
    IO_PORT_OUT16,
    IO_PORT_OUT32,

    INV_COUNT
};

#endif
