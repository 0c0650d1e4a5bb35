/*
 * Interfaces between the x86_64 port's own files (not used by generic code).
 */
#ifndef ARCH_X86_H
#define ARCH_X86_H

#include <stdbool.h>
#include <stdint.h>
#include <arch.h>
#include <arch/percore.h>

/* ---- Interrupt vectors.  Device IRQ n (0 .. IOAPIC_MAX_IRQS-1) uses VEC_IRQ_BASE + n. */
#define VEC_IRQ_BASE    0x20
#define VEC_PIC_BASE    0x40    /* the masked 8259s (pic.c): only spurious IRQs */
#define VEC_TIMER       0xd0    /* the local APIC timer (timeslice) */
#define VEC_IPI         0xe0    /* arch_send_ipi() */
#define VEC_BOOT_IPI    0xf0    /* the boot-time IPI round only (smp.c) */
#define VEC_SPURIOUS    0xff

/* IRQ numbers given to handle_interrupt() besides the device IRQs. */
#define IOAPIC_MAX_IRQS 24
#define X86_IRQ_TIMER   24
#define X86_IRQ_IPI     25

/* The trap frame built by traps.S on the stack it entered on. */
struct trap_frame {
    word_t r15, r14, r13, r12, r11, r10, r9, r8, rbp, rdi, rsi, rdx, rcx, rbx, rax;
    word_t vector, error;
    word_t rip, cs, rflags, rsp, ss;    /* pushed by the CPU */
};

/* console.c: COM1 and small formatting helpers for the port's own messages. */
void serial_init(void);
void x86_puts(const char *s);
void x86_put_hex(word_t v);
void x86_put_dec(word_t v);
void x86_console_lock(void);
void x86_console_unlock(void);

/* gdt.c */
void gdt_init_core(struct x86_core *core);

/* idt.c / traps.S */
void idt_init(void);
void idt_load(void);
void x86_trap(struct trap_frame *f);
extern const char trap_stubs[];

/* panic.c */
_Noreturn void arch_panic_dump(const char *reason, const struct trap_frame *f);

/* cpu.c: per-core control-register setup and feature flags. */
struct x86_features {
    bool nx;
    bool pcid;
    bool pge;
    bool rtm_cpuid;
    bool x2apic;
};
extern struct x86_features x86_features;
void cpu_detect_features(void);
void cpu_init_core(void);

/* syscall.S / context.c */
void syscall_init_core(void);
void x86_syscall_entry(void);
_Noreturn void x86_exit_iret(struct arch_context *ctx);
_Noreturn void x86_fault_on_fresh_stack(unsigned type, word_t addr, word_t code, word_t status);
void x86_save_trap_frame(struct arch_context *ctx, const struct trap_frame *f);

/* fpu.c: #NM from user mode. */
void x86_fpu_trap(void);

/* multiboot.c */
void multiboot_parse(uint32_t magic, uint32_t mbi_paddr, struct arch_boot_info *info);

/* memory.c: the kernel's own address space. */
extern uint64_t x86_boot_pdpt_direct[512], x86_boot_pdpt_kernel[512];
extern uint64_t x86_boot_pd[4][512];
extern char _kernel_start[], _kernel_end[];
void memory_init(struct arch_boot_info *info);
void memory_map_uncached(word_t paddr);
void memory_drop_identity(void);
word_t memory_trampoline_cr3(void);

/* acpi.c */
struct acpi_info {
    unsigned ncpus;                 /* enabled CPUs found (may exceed NCPUS) */
    uint32_t apic_ids[NCPUS];       /* the first NCPUS, the boot CPU among them */
    word_t ioapic_paddr;            /* 0: none found */
    uint32_t ioapic_gsi_base;
    /* ISA IRQ -> GSI and polarity/trigger (MADT interrupt source overrides). */
    uint32_t isa_gsi[16];
    uint16_t isa_flags[16];
};
extern struct acpi_info acpi_info;
void acpi_init(uint32_t boot_apic_id);

/* pic.c: the legacy 8259 pair and the PIT. */
void pic_disable(void);
void pit_start_periodic(unsigned hz);
uint64_t pit_measure_start(unsigned ms);
bool pit_measure_done(void);
void pit_delay_us(unsigned us);

/* lapic.c */
void lapic_init_core(void);
void lapic_calibrate(void);
void lapic_timer_start(void);
void lapic_eoi(void);
void lapic_set_priority(uint32_t tpr);
uint32_t lapic_id(void);
void lapic_send_ipi(uint32_t apic_id, uint8_t vector);
void lapic_send_init(uint32_t apic_id);
void lapic_send_sipi(uint32_t apic_id, uint8_t page);
bool lapic_ipi_idle(void);
extern word_t x86_tsc_hz;

/* ioapic.c */
void ioapic_init(void);
void ioapic_mask_on_delivery(unsigned irq);

/* smp.c */
extern uint8_t x86_kernel_stacks[NCPUS][KERNEL_STACK_SIZE];
void smp_init_boot_core(void);
void smp_boot_ipi_received(void);
_Noreturn void x86_ap_main(unsigned core);

/* rtm_probe.c */
bool x86_fixup_selftest(void);

/* boot.c */
_Noreturn void x86_boot_main(uint32_t magic, uint32_t mbi_paddr);

#endif
