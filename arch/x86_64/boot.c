/*
 * The boot core's C entry (from boot.S): bring up this core, read what the
 * boot loader and ACPI say about the machine, and hand over to kernel_boot().
 * The order matters and is explained step by step.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

#define USER_TIMER_IRQ  0       /* the PIT */
#define USER_TIMER_HZ   100

extern const char root_image_start[], root_image_end[];

static struct arch_boot_info boot_info;

word_t arch_cycle_hz(void)
{
    return x86_tsc_hz;
}

/* The PIT ticks on IRQ 0 from boot; without an I/O APIC nothing can deliver it. */
unsigned arch_user_timer_irq(void)
{
    return arch_irq_count() > USER_TIMER_IRQ ? USER_TIMER_IRQ : ~0u;
}

_Noreturn void x86_boot_main(uint32_t magic, uint32_t mbi_paddr)
{
    /* Per-core data and GS first: arch_core_id() and the panic path use them. */
    smp_init_boot_core();
    gdt_init_core(&x86_cores[0]);
    idt_init();
    idt_load();
    /* Now that the GDT and IDT are at kernel addresses, low memory can go. */
    memory_drop_identity();
    cpu_detect_features();
    cpu_init_core();

    serial_init();
    x86_puts("\nx86_64: booting (" LOCK_NAME ", NCPUS=");
    x86_put_dec(NCPUS);
    x86_puts(")\n");
    if (DEBUG && !x86_fixup_selftest())
        arch_panic_dump("the exception fixup self-test failed", NULL);

    /* Copy out the boot loader's information before memory becomes untyped. */
    multiboot_parse(magic, mbi_paddr, &boot_info);
    memory_init(&boot_info);

    /* Interrupt controllers: the 8259s off, this core's APIC, then ACPI's view. */
    pic_disable();
    lapic_init_core();
    x86_cores[0].lapic_id = lapic_id();
    acpi_init(x86_cores[0].lapic_id);
    ioapic_init();
    lapic_calibrate();
    pit_start_periodic(USER_TIMER_HZ);
    syscall_init_core();

    boot_info.ncores = acpi_info.ncpus < NCPUS ? acpi_info.ncpus : NCPUS;
    boot_info.root_elf_paddr = arch_virt_to_phys(root_image_start);
    boot_info.root_elf_size = (word_t)(root_image_end - root_image_start);

    x86_puts("x86_64: ");
    x86_put_dec(acpi_info.ncpus);
    x86_puts(" CPUs, TSC ");
    x86_put_dec(x86_tsc_hz / 1000000);
    x86_puts(" MHz, ");
    x86_put_dec(arch_irq_count());
    x86_puts(" IRQs, NX ");
    x86_puts(x86_features.nx ? "yes" : "no");
    x86_puts(", PCID ");
    x86_puts(x86_features.pcid ? "yes" : "no");
    x86_puts(x86_features.x2apic ? ", x2APIC" : ", xAPIC");
    x86_puts(", cmdline \"");
    x86_puts(boot_info.cmdline);
    x86_puts("\"\n");
    for (unsigned i = 0; i < boot_info.nfree; i++) {
        x86_puts("x86_64: free RAM ");
        x86_put_hex(boot_info.free[i].start);
        x86_puts(" - ");
        x86_put_hex(boot_info.free[i].end);
        x86_puts("\n");
    }

    /* The timeslice tick pends until the first return to user mode enables interrupts. */
    lapic_timer_start();
    kernel_boot(&boot_info);
}
