/*
 * Fault messages.  A faulting thread is blocked and the kernel sends a
 * message on its fault endpoint, as if by Call: the handler's reply resumes
 * the thread.  The label names the fault; the MRs describe it.
 *
 *   FAULT_VM:               MR0 ip, MR1 address, MR2 1 if an instruction fetch, MR3 arch fault status
 *   FAULT_USER_EXCEPTION:   MR0 ip, MR1 sp, MR2 arch exception number, MR3 arch error code
 *   FAULT_UNKNOWN_SYSCALL:  MR0 ip, MR1 sp, MR2 syscall number
 *
 * An invalid capability is not a fault: the call returns E_FAILED_LOOKUP or
 * E_INVALID_CAPABILITY in the status register.
 *
 * A reply with label 0 resumes the thread where it faulted (a VM fault
 * retries the access).  A reply whose length is at least 1 sets the ip to
 * MR0 first, so a handler can skip a faulting instruction.  A thread with no
 * valid fault endpoint is suspended and the kernel prints a `fault` record.
 */
#ifndef ABI_FAULTS_H
#define ABI_FAULTS_H

enum fault_type {
    FAULT_NONE = 0,
    FAULT_VM,
    FAULT_USER_EXCEPTION,
    FAULT_UNKNOWN_SYSCALL,
};

#endif
