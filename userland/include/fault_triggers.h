/*
 * Fault triggers, for the fault tests: each port's arch/<port>/user/faults.S
 * runs one faulting instruction at the symbol arch_fault_<kind>_at; a
 * handler that replies with MR0 = arch_fault_<kind>_resume skips it, and the
 * function then returns ARCH_FAULT_SKIPPED.  The VM variants access the
 * address given.
 */
#ifndef FAULT_TRIGGERS_H
#define FAULT_TRIGGERS_H

#include <abi/types.h>

#define ARCH_FAULT_SKIPPED 0x5a5a
word_t arch_fault_illegal(void);
word_t arch_fault_general(void);
word_t arch_fault_divide(void);
word_t arch_fault_read(word_t addr);
word_t arch_fault_write(word_t addr);
word_t arch_fault_syscall(word_t sysno);
extern const char arch_fault_illegal_at[], arch_fault_illegal_resume[];
extern const char arch_fault_general_at[], arch_fault_general_resume[];
extern const char arch_fault_divide_at[], arch_fault_divide_resume[];
extern const char arch_fault_read_at[], arch_fault_read_resume[];
extern const char arch_fault_write_at[], arch_fault_write_resume[];
extern const char arch_fault_syscall_at[], arch_fault_syscall_resume[];

#endif
