/*
 * The interrupt descriptor table (one, shared by every core) and the C side
 * of every exception and interrupt: traps.S builds a struct trap_frame and
 * calls x86_trap().
 *
 *   #NM (device not available) from user mode:
 *       the lazy FPU switch (fpu.c), which returns to the same instruction;
 *   from user mode, or an interrupt that woke the idle loop:
 *       the registers go into the current thread's struct arch_context and
 *       a generic handler runs; it never returns (it leaves through
 *       arch_return_to_user()).
 *   a kernel-mode exception:
 *       resumes at the core's fixup address when one is armed (rtm_probe.c),
 *       otherwise is the kernel's panic path (panic.c).
 */
#include <abi/faults.h>
#include <arch/cpu.h>
#include <arch/x86.h>

#define GATE_INTERRUPT  0xe     /* clears IF on entry: the kernel runs with interrupts off */
#define VEC_NM          7
#define VEC_PF          14
#define VEC_NMI         2
#define VEC_DF          8
#define VEC_BP          3
#define VEC_MC          18
#define TRAP_STUB_SIZE  16      /* traps.S aligns every stub to this */

struct __attribute__((packed)) idt_gate {
    uint16_t offset_low;
    uint16_t selector;
    uint8_t ist;
    uint8_t type_attr;
    uint16_t offset_mid;
    uint32_t offset_high;
    uint32_t reserved;
};
_Static_assert(sizeof(struct idt_gate) == 16, "long-mode gates are 16 bytes");

static struct idt_gate idt[256] __attribute__((aligned(CACHE_LINE_SIZE)));

static unsigned gate_ist(unsigned vector)
{
    if (vector == VEC_NMI || vector == VEC_DF || vector == VEC_MC)
        return IST_EMERGENCY;
    /*
     * Device, timer and IPI interrupts start at the top of the kernel stack
     * even when they arrive in the idle loop (kernel mode, where the CPU would
     * otherwise keep the current stack).  The others stay on the current
     * stack: the boot IPI round and a spurious interrupt can arrive while
     * kernel_boot() is live on the kernel stack, and both return in place.
     */
    if ((vector >= VEC_IRQ_BASE && vector < VEC_IRQ_BASE + IOAPIC_MAX_IRQS) ||
        vector == VEC_TIMER || vector == VEC_IPI)
        return IST_INTERRUPT;
    return 0;
}

void idt_init(void)
{
    for (unsigned v = 0; v < 256; v++) {
        word_t handler = (word_t)trap_stubs + v * TRAP_STUB_SIZE;
        /* int3 may be executed by user code (DPL 3); other software INTs raise #GP. */
        unsigned dpl = v == VEC_BP ? 3 : 0;
        idt[v] = (struct idt_gate){
            .offset_low = handler & 0xffff,
            .selector = SEL_KERNEL_CS,
            .ist = (uint8_t)gate_ist(v),
            .type_attr = (uint8_t)(0x80 | dpl << 5 | GATE_INTERRUPT),
            .offset_mid = handler >> 16 & 0xffff,
            .offset_high = (uint32_t)(handler >> 32),
        };
    }
}

void idt_load(void)
{
    struct __attribute__((packed)) {
        uint16_t limit;
        uint64_t base;
    } ptr = { sizeof(idt) - 1, (word_t)idt };
    __asm__ volatile("lidt %0" : : "m"(ptr));
}

static _Noreturn void user_exception(const struct trap_frame *f)
{
    if (f->vector == VEC_PF) {
        /* Error code bit 4: the access was an instruction fetch. */
        handle_user_fault(FAULT_VM, read_cr2(), (f->error >> 4) & 1, f->error);
    }
    handle_user_fault(FAULT_USER_EXCEPTION, f->rip, f->vector, f->error);
}

static _Noreturn void interrupt(unsigned vector)
{
    unsigned irq;
    if (vector == VEC_TIMER) {
        irq = X86_IRQ_TIMER;
    } else if (vector == VEC_IPI) {
        irq = X86_IRQ_IPI;
    } else if (vector >= VEC_IRQ_BASE && vector < VEC_IRQ_BASE + IOAPIC_MAX_IRQS) {
        irq = vector - VEC_IRQ_BASE;
        /* Masked until the driver's Ack reaches arch_irq_follow(), so that a
         * level-triggered line cannot storm while its user-level driver works. */
        ioapic_mask_on_delivery(irq);
    } else {
        arch_panic_dump("interrupt on an unused vector", NULL);
    }
    /* EOI now: the local APIC blocks lower-priority vectors until it, and a
     * user-level driver's acknowledgement may come much later, on another core. */
    lapic_eoi();
    handle_interrupt(irq);
}

void x86_trap(struct trap_frame *f)
{
    struct x86_core *core = this_core();
    bool from_user = (f->cs & 3) != 0;

    if (f->vector == VEC_SPURIOUS || (f->vector >= VEC_PIC_BASE && f->vector < VEC_PIC_BASE + 16))
        return;     /* no EOI for a spurious interrupt (APIC or a stray 8259 one) */
    if (f->vector == VEC_BOOT_IPI) {
        smp_boot_ipi_received();
        return;
    }

    /* Not the interrupted code's doing, whatever mode it was in. */
    if (f->vector == VEC_NMI || f->vector == VEC_MC)
        arch_panic_dump("NMI or machine check", f);

    /* The FPU is switched lazily (fpu.c): the thread resumes at the same instruction. */
    if (from_user && f->vector == VEC_NM) {
        x86_fpu_trap();
        return;
    }

    if (!from_user && f->vector < VEC_IRQ_BASE) {
        if (core->fixup_rip) {
            /* An armed probe instruction faulted: resume at its recovery label. */
            f->rip = core->fixup_rip;
            core->fixup_vector = f->vector;
            core->fixup_rip = 0;
            return;
        }
        arch_panic_dump("kernel-mode exception", f);
    }

    if (!core->current || (!from_user && !arch_context_is_idle(core->current)))
        arch_panic_dump("interrupt while in the kernel", f);

    x86_save_trap_frame(core->current, f);
    if (f->vector < VEC_IRQ_BASE)
        user_exception(f);
    interrupt((unsigned)f->vector);
}
