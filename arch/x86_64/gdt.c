/*
 * Each core's GDT and TSS.  The TSS must be per core: RSP0 and the IST
 * pointers name this core's stacks, and a busy TSS descriptor cannot be
 * loaded by a second core.  The GDT lives in the per-core data beside it.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

/* Long-mode descriptors: base and limit are ignored for code and data. */
#define DESC_KERNEL_CODE 0x00af9a000000ffffull  /* P, DPL 0, code, L */
#define DESC_KERNEL_DATA 0x00cf92000000ffffull  /* P, DPL 0, data, writable */
#define DESC_USER_DATA   0x00cff2000000ffffull  /* P, DPL 3, data, writable */
#define DESC_USER_CODE   0x00affa000000ffffull  /* P, DPL 3, code, L */

_Static_assert(SEL_KERNEL_SS == SEL_KERNEL_CS + 8, "SYSCALL loads SS = CS + 8");
_Static_assert((SEL_USER_SS & ~3) == SEL_KERNEL_SS + 8 && (SEL_USER_CS & ~3) == SEL_KERNEL_SS + 16,
               "SYSRET loads SS = STAR[63:48] + 8 and CS = STAR[63:48] + 16");

/* NMI, #DF and #MC run here, so that a core with a broken kernel stack can still report. */
static uint8_t emergency_stacks[NCPUS][EMERGENCY_STACK_SIZE] __attribute__((aligned(16)));

struct __attribute__((packed)) descriptor_ptr {
    uint16_t limit;
    uint64_t base;
};

void gdt_init_core(struct x86_core *core)
{
    uint64_t *gdt = core->gdt;
    struct tss *tss = &core->tss;
    word_t base = (word_t)tss;
    word_t limit = sizeof(*tss) - 1;

    tss->rsp[0] = core->kernel_stack_top;
    tss->ist[IST_INTERRUPT - 1] = core->kernel_stack_top;
    tss->ist[IST_EMERGENCY - 1] = (word_t)&emergency_stacks[core->core_id][EMERGENCY_STACK_SIZE];
    tss->iopb_offset = sizeof(*tss);

    gdt[0] = 0;
    gdt[SEL_KERNEL_CS >> 3] = DESC_KERNEL_CODE;
    gdt[SEL_KERNEL_SS >> 3] = DESC_KERNEL_DATA;
    gdt[SEL_USER_SS >> 3] = DESC_USER_DATA;
    gdt[SEL_USER_CS >> 3] = DESC_USER_CODE;
    /* A 16-byte system descriptor: type 9 (available 64-bit TSS), present. */
    gdt[SEL_TSS >> 3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
                        ((limit >> 16 & 0xf) << 48) | ((base >> 24 & 0xff) << 56);
    gdt[(SEL_TSS >> 3) + 1] = base >> 32;

    struct descriptor_ptr ptr = { .limit = sizeof(core->gdt) - 1, .base = (word_t)gdt };
    __asm__ volatile(
        "lgdt %0\n\t"
        /* Reload CS by a far return; data segments are plain loads. */
        "pushq %[cs]\n\t"
        "leaq 1f(%%rip), %%rax\n\t"
        "pushq %%rax\n\t"
        "lretq\n"
        "1:\n\t"
        "movl %[ss], %%eax\n\t"
        "movl %%eax, %%ss\n\t"
        "movl %%eax, %%ds\n\t"
        "movl %%eax, %%es\n\t"
        "xorl %%eax, %%eax\n\t"
        "movl %%eax, %%fs\n\t"
        "movl %%eax, %%gs\n\t"
        "ltr %w[tss]"
        :
        : "m"(ptr), [cs] "i"(SEL_KERNEL_CS), [ss] "i"(SEL_KERNEL_SS), [tss] "r"(SEL_TSS)
        : "rax", "memory");

    /* Loading %gs cleared its base: point it at this core's data now.  The
     * user's GS base (swapped in on exit) is always 0. */
    wrmsr(MSR_GS_BASE, (word_t)core);
    wrmsr(MSR_KERNEL_GS_BASE, 0);
    wrmsr(MSR_FS_BASE, 0);
}
