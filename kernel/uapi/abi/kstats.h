/*
 * SYS_DEBUG_KSTATS: the kernel's per-core accounting (kernel/accounting.c,
 * docs/abi.md).
 *
 *   in:  MR0 core to read, MR1 flags below, MR2 a tag copied into printed records
 *   out: MR0.. the values of enum kstats_value for that core
 */
#ifndef ABI_KSTATS_H
#define ABI_KSTATS_H

enum kstats_flag {
    KSTATS_PRINT = 1 << 0,      /* print a kstats record per core online */
    KSTATS_TIME_ON = 1 << 1,    /* from now on also split time into kernel and user */
    KSTATS_TIME_OFF = 1 << 2,   /* stop that (idle time is always kept) */
};

enum kstats_value {
    KSTATS_ENTRIES_SYSCALL,     /* system calls, the fastpath's included */
    KSTATS_ENTRIES_INTERRUPT,   /* interrupts: timer, IPI, device */
    KSTATS_ENTRIES_FAULT,       /* user faults */
    KSTATS_IDLE,                /* counter units spent in the idle thread */
    KSTATS_KERNEL,              /* units in the kernel while timing was on */
    KSTATS_USER,                /* units in user threads while timing was on */
    KSTATS_NOW,                 /* the counter when read */
    KSTATS_TICKS,               /* timer ticks taken (an idle core takes none) */
    KSTATS_VALUES
};

#endif
