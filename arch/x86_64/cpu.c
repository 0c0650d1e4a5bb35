/*
 * CPU features and the control registers every core sets the same way.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

struct x86_features x86_features;

void cpu_detect_features(void)
{
    struct cpuid_regs basic = cpuid(0, 0);
    struct cpuid_regs leaf1 = cpuid(1, 0);
    struct cpuid_regs ext = cpuid(0x80000001, 0);

    x86_features.pge = (leaf1.edx >> 13) & 1;
    x86_features.pcid = (leaf1.ecx >> 17) & 1;
    x86_features.nx = (ext.edx >> 20) & 1;
    if (basic.eax >= 7)
        x86_features.rtm_cpuid = (cpuid(7, 0).ebx >> 11) & 1;
    /* Firmware that starts in x2APIC mode cannot be switched back to xAPIC safely. */
    x86_features.x2apic = (rdmsr(MSR_APIC_BASE) >> 10) & 1;
}

void cpu_init_core(void)
{
    /*
     * The x87 and SSE registers are user state, switched lazily (fpu.c):
     * EM clear and CR4.OSFXSR set enable them and FXSAVE; CR0.TS starts
     * set, since no thread owns this core's FPU yet, and CR0.MP makes WAIT
     * trap with it too.  CR0.NE reports an unmasked x87 exception as #MF and
     * CR4.OSXMMEXCPT an unmasked SSE one as #XM, both to the thread's fault
     * handler like any exception.  The kernel itself uses none of them
     * (-mgeneral-regs-only).
     */
    word_t cr0 = read_cr0();
    cr0 = (cr0 | CR0_MP | CR0_NE | CR0_TS | CR0_WP) & ~CR0_EM;
    write_cr0(cr0);

    /* CR4.TSD clear: user code may read the TSC (benchmarks do).  PGE keeps the
     * kernel's global mappings across address-space switches. */
    word_t cr4 = (read_cr4() & ~CR4_TSD) | CR4_OSFXSR | CR4_OSXMMEXCPT;
    if (x86_features.pge)
        cr4 |= CR4_PGE;
    if (x86_features.pcid && !(read_cr3() & 0xfff)) {
        cr4 |= CR4_PCIDE;
        this_core()->cr3_asid_mask = 0xfff;
    }
    write_cr4(cr4);

    if (x86_features.nx)
        wrmsr(MSR_EFER, rdmsr(MSR_EFER) | EFER_NXE);
}
