/*
 * A VFP instruction for the FPU fault test (thread_state.h): with VFP
 * disabled (CPACR at its reset value) it is an undefined instruction.
 */
#define SKIPPED 0x5a5a

    .syntax unified
    .arm
    .fpu vfpv3
    .text

    .global arch_fault_fpu, arch_fault_fpu_at, arch_fault_fpu_resume
arch_fault_fpu:
    mov r0, #0
arch_fault_fpu_at:
    vadd.f64 d0, d0, d1
    bx lr
arch_fault_fpu_resume:
    ldr r0, =SKIPPED
    bx lr
