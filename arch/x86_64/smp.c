/*
 * Per-core data and the start of the other cores: INIT-SIPI-SIPI to one AP
 * at a time (so core indices stay dense even when one fails to start), then
 * the boot IPI round, in which every core sends one IPI to every other.
 */
#include <arch/cpu.h>
#include <arch/x86.h>
#include <core.h>

#define TRAMPOLINE_PADDR    0x8000
#define AP_START_TIMEOUT_MS 10000   /* generous: TCG runs many vCPUs on few, maybe busy, host cores,
                                       and a busy host can skew the TSC calibration too */
#define ROUND_TIMEOUT_MS    10000
#define TPR_ONLY_BOOT_IPI   0xe0    /* blocks every vector class below VEC_BOOT_IPI's */

_Static_assert(VEC_BOOT_IPI >> 4 > TPR_ONLY_BOOT_IPI >> 4, "the boot IPI passes the TPR");
_Static_assert(VEC_TIMER >> 4 <= TPR_ONLY_BOOT_IPI >> 4 && VEC_IPI >> 4 <= TPR_ONLY_BOOT_IPI >> 4,
               "the timer and the kernel IPI are held off during the round");

struct x86_core x86_cores[NCPUS];
uint8_t x86_kernel_stacks[NCPUS][KERNEL_STACK_SIZE] __attribute__((aligned(4096)));

extern const char trampoline_start[], trampoline_end[];
extern const uint64_t trampoline_cr3[], trampoline_efer[], trampoline_stack[],
    trampoline_entry[], trampoline_core[];

/* The copy's data word that corresponds to one in the kernel's image. */
static uint64_t *trampoline_word(const uint64_t *word)
{
    word_t offset = (word_t)word - (word_t)trampoline_start;
    return (uint64_t *)arch_phys_to_virt(TRAMPOLINE_PADDR + offset);
}

/* Written by the boot core while it starts cores; read by all. */
static volatile unsigned cores_online = 1;
static unsigned cores_expected = 1;
/* The round: which core sends now (== cores_online when finished). */
static volatile unsigned round_sender;
static volatile bool round_started;
static bool round_ok = true;     /* cleared by any core that sees a failure */

void arch_set_lock_data(unsigned core, void *data)
{
    x86_cores[core].lock_data = data;
}

void smp_init_boot_core(void)
{
    for (unsigned i = 0; i < NCPUS; i++) {
        x86_cores[i].self = &x86_cores[i];
        x86_cores[i].core_id = i;
        x86_cores[i].kernel_core = &cores[i];
        x86_cores[i].kernel_stack_top = (word_t)&x86_kernel_stacks[i][KERNEL_STACK_SIZE];
    }
    x86_cores[0].online = 1;
}

unsigned arch_cores_online(void)
{
    return __atomic_load_n(&cores_online, __ATOMIC_ACQUIRE);
}

bool arch_ipi_round_ok(void)
{
    return round_ok;
}

unsigned arch_ipi_irq(void)
{
    return X86_IRQ_IPI;
}

/* The boot round's handler (idt.c), on the receiving core. */
void smp_boot_ipi_received(void)
{
    /* Release: the sender's acquire load sees the count only after our EOI is due. */
    __atomic_fetch_add(&this_core()->ipi_received, 1, __ATOMIC_RELEASE);
    lapic_eoi();
}

/* Spin until *word reaches value, or timeout_ms pass (by the TSC calibrated at boot). */
static bool wait_for(volatile uint32_t *word, uint32_t value, unsigned timeout_ms)
{
    uint64_t hz = x86_tsc_hz ? x86_tsc_hz : 1000000000ull;
    uint64_t end = arch_cycles() + hz / 1000 * timeout_ms;
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value) {
        if (arch_cycles() > end)
            return false;
        x86_pause();
    }
    return true;
}

/*
 * One core's turn: an IPI to every other core, one at a time, each waited
 * for, so that no two are pending at one receiver (the APIC would merge them).
 */
static void round_send(unsigned me, unsigned n)
{
    for (unsigned t = 0; t < n; t++) {
        if (t == me)
            continue;
        uint32_t before = __atomic_load_n(&x86_cores[t].ipi_received, __ATOMIC_ACQUIRE);
        lapic_send_ipi(x86_cores[t].lapic_id, VEC_BOOT_IPI);
        if (!wait_for(&x86_cores[t].ipi_received, before + 1, ROUND_TIMEOUT_MS))
            __atomic_store_n(&round_ok, false, __ATOMIC_RELAXED);
    }
}

/* Every online core runs this; interrupts are on only for the boot vector. */
static void round_take_part(unsigned me, unsigned n)
{
    lapic_set_priority(TPR_ONLY_BOOT_IPI);
    __asm__ volatile("sti" ::: "memory");
    uint64_t end = arch_cycles() + (x86_tsc_hz ? x86_tsc_hz : 1000000000ull) / 1000 * ROUND_TIMEOUT_MS * n;
    while (__atomic_load_n(&round_sender, __ATOMIC_ACQUIRE) < n) {
        if (__atomic_load_n(&round_sender, __ATOMIC_ACQUIRE) == me) {
            round_send(me, n);
            /* Release: the next sender starts after our IPIs were counted. */
            __atomic_store_n(&round_sender, me + 1, __ATOMIC_RELEASE);
        }
        if (arch_cycles() > end) {
            __atomic_store_n(&round_ok, false, __ATOMIC_RELAXED);
            break;
        }
        x86_pause();
    }
    __asm__ volatile("cli" ::: "memory");
    lapic_set_priority(0);
}

_Noreturn void x86_ap_main(unsigned core)
{
    struct x86_core *c = &x86_cores[core];

    gdt_init_core(c);
    /* Leave the trampoline's tables (they still identity-map low memory). */
    write_cr3(arch_virt_to_phys(x86_boot_pml4));
    idt_load();
    cpu_init_core();
    lapic_init_core();
    syscall_init_core();
    c->lapic_id = lapic_id();
    /* Release: the boot core reads our set-up only after it sees us online. */
    __atomic_store_n(&c->online, 1, __ATOMIC_RELEASE);

    while (!__atomic_load_n(&round_started, __ATOMIC_ACQUIRE))
        x86_pause();
    round_take_part(core, cores_expected);

    lapic_timer_start();
    kernel_boot_secondary(core);
}

static bool start_ap(unsigned core, uint32_t apic_id)
{
    struct x86_core *c = &x86_cores[core];
    *trampoline_word(trampoline_stack) = c->kernel_stack_top;
    *trampoline_word(trampoline_core) = core;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);    /* the copy is complete before the AP runs */

    /* The MP start-up protocol: INIT, 10 ms, STARTUP, 200 us, STARTUP. */
    lapic_send_init(apic_id);
    pit_delay_us(10000);
    lapic_send_sipi(apic_id, TRAMPOLINE_PADDR >> 12);
    pit_delay_us(200);
    if (!__atomic_load_n(&c->online, __ATOMIC_ACQUIRE))
        lapic_send_sipi(apic_id, TRAMPOLINE_PADDR >> 12);
    return wait_for(&c->online, 1, AP_START_TIMEOUT_MS);
}

void arch_start_secondary_cores(void)
{
    unsigned want = acpi_info.ncpus < NCPUS ? acpi_info.ncpus : NCPUS;
    if (acpi_info.ncpus > NCPUS) {
        x86_console_lock();
        x86_puts("x86_64: ");
        x86_put_dec(acpi_info.ncpus);
        x86_puts(" CPUs found, starting NCPUS=");
        x86_put_dec(NCPUS);
        x86_puts("; the others stay off\n");
        x86_console_unlock();
    }

    /* The trampoline image: code, then the data words filled in here. */
    char *dst = arch_phys_to_virt(TRAMPOLINE_PADDR);
    for (const char *s = trampoline_start; s < trampoline_end; s++)
        *dst++ = *s;
    *trampoline_word(trampoline_cr3) = memory_trampoline_cr3();
    *trampoline_word(trampoline_efer) = EFER_LME | (x86_features.nx ? EFER_NXE : 0);
    *trampoline_word(trampoline_entry) = (word_t)x86_ap_main;

    unsigned online = 1;
    for (unsigned i = 1; i < want; i++) {
        if (start_ap(online, acpi_info.apic_ids[i])) {
            online++;
        } else {
            x86_console_lock();
            x86_puts("x86_64: the CPU with APIC ID ");
            x86_put_dec(acpi_info.apic_ids[i]);
            x86_puts(" did not start\n");
            x86_console_unlock();
        }
    }
    cores_expected = online;
    /* Release: cores see cores_expected before they start the round. */
    __atomic_store_n(&cores_online, online, __ATOMIC_RELEASE);
    __atomic_store_n(&round_started, true, __ATOMIC_RELEASE);

    round_take_part(0, online);
    for (unsigned i = 0; i < online; i++) {
        if (__atomic_load_n(&x86_cores[i].ipi_received, __ATOMIC_ACQUIRE) != online - 1)
            __atomic_store_n(&round_ok, false, __ATOMIC_RELAXED);
    }
    x86_console_lock();
    x86_puts("x86_64: ");
    x86_put_dec(online);
    x86_puts(" cores online, IPI round ");
    x86_puts(round_ok ? "ok\n" : "FAILED\n");
    x86_console_unlock();
}
