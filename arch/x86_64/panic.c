/*
 * The port's panic path for kernel-mode exceptions: a register dump for
 * people, then the `panic` record for tools (docs/console.md), then this
 * core stops.  The generic panic() (kernel/) prints its own record and ends in
 * arch_halt_core().
 */
#include <arch/cpu.h>
#include <arch/machine.h>
#include <arch/x86.h>

static const char *const exception_names[32] = {
    "#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
    "#BR bound range", "#UD invalid opcode", "#NM device not available",
    "#DF double fault", "coprocessor overrun", "#TS invalid TSS", "#NP segment not present",
    "#SS stack fault", "#GP general protection", "#PF page fault", "reserved 15",
    "#MF x87 error", "#AC alignment check", "#MC machine check", "#XM SIMD exception",
    "#VE virtualisation", "#CP control protection", "reserved 22", "reserved 23",
    "reserved 24", "reserved 25", "reserved 26", "reserved 27",
    "#HV hypervisor injection", "#VC VMM communication", "#SX security", "reserved 31",
};

static void reg(const char *name, word_t v)
{
    x86_puts(name);
    x86_puts("=");
    x86_put_hex(v);
    x86_puts(" ");
}

static void dump(const struct trap_frame *f)
{
    reg(" rax", f->rax); reg("rbx", f->rbx); reg("rcx", f->rcx); x86_puts("\n");
    reg(" rdx", f->rdx); reg("rsi", f->rsi); reg("rdi", f->rdi); x86_puts("\n");
    reg(" rbp", f->rbp); reg("r8 ", f->r8);  reg("r9 ", f->r9);  x86_puts("\n");
    reg(" r10", f->r10); reg("r11", f->r11); reg("r12", f->r12); x86_puts("\n");
    reg(" r13", f->r13); reg("r14", f->r14); reg("r15", f->r15); x86_puts("\n");
    reg(" rip", f->rip); reg("rsp", f->rsp); reg("rfl", f->rflags); x86_puts("\n");
    reg(" cs ", f->cs);  reg("ss ", f->ss);  reg("err", f->error); x86_puts("\n");
    reg(" cr2", read_cr2()); reg("cr3", read_cr3()); x86_puts("\n");
}

/*
 * The return addresses on the kernel stack, by the frame-pointer chain
 * (the kernel is built with -fno-omit-frame-pointer), for addr2line.  The
 * walk stops at the first frame that does not look like one: outside the
 * kernel image, misaligned, or not further up the same stack.
 */
#define BACKTRACE_MAX_FRAMES    16
#define BACKTRACE_MAX_FRAME     0x4000

static void backtrace(word_t rbp)
{
    x86_puts(" backtrace:");
    for (int i = 0; i < BACKTRACE_MAX_FRAMES; i++) {
        if (rbp < KERNEL_VMA || (rbp & 7))
            break;
        const word_t *frame = (const word_t *)rbp;
        if (frame[1] < KERNEL_VMA)
            break;
        x86_puts(" ");
        x86_put_hex(frame[1]);
        if (frame[0] <= rbp || frame[0] - rbp > BACKTRACE_MAX_FRAME)
            break;
        rbp = frame[0];
    }
    x86_puts("\n");
}

void arch_undefined_instruction(void)
{
    __asm__ volatile("ud2");
}

void arch_panic_backtrace(void)
{
    x86_console_lock();
    backtrace((word_t)__builtin_frame_address(0));
    x86_console_unlock();
}

_Noreturn void arch_panic_dump(const char *reason, const struct trap_frame *f)
{
    unsigned core = arch_core_id();

    x86_console_lock();
    x86_puts("\nx86_64: PANIC on core ");
    x86_put_dec(core);
    x86_puts(": ");
    x86_puts(reason);
    if (f) {
        x86_puts(", vector ");
        x86_put_dec(f->vector);
        if (f->vector < 32) {
            x86_puts(" (");
            x86_puts(exception_names[f->vector]);
            x86_puts(")");
        }
        x86_puts("\n");
        dump(f);
        if ((f->cs & 3) == 0)
            backtrace(f->rbp);
    } else {
        x86_puts("\n");
    }
    /* The reason strings are constants without quotes or backslashes: valid JSON as is. */
    x86_puts("@@ {\"panic\": {\"core\": ");
    x86_put_dec(core);
    x86_puts(", \"reason\": \"");
    x86_puts(reason);
    if (f) {
        x86_puts(" ");
        x86_puts(f->vector < 32 ? exception_names[f->vector] : "interrupt");
        x86_puts(" at rip ");
        x86_put_hex(f->rip);
        if (f->vector == 14) {
            x86_puts(" addr ");
            x86_put_hex(read_cr2());
        }
    }
    x86_puts("\"}}\n");
    x86_console_unlock();
    arch_halt_core();
}
