/*
 * User faults (kernel/fault.c, abi/faults.h).
 */
#ifndef KERNEL_FAULT_H
#define KERNEL_FAULT_H

#include "types.h"
#include "tcb.h"
#include <abi/faults.h>

/*
 * t faulted: send the fault (type and w0..w3, as abi/faults.h lists them)
 * to t's fault endpoint as a Call, or suspend t and print a `fault`
 * record when it has no usable one.
 */
void handle_fault(struct tcb *t, enum fault_type type, word_t w0, word_t w1, word_t w2, word_t w3);

#endif
