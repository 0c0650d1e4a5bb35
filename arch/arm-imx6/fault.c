/*
 * Aborts and undefined instructions (vectors.S brings them here).
 *
 * From user mode they become fault messages (kernel/uapi/abi/faults.h):
 *   translation, permission, domain and access-flag faults  -> FAULT_VM
 *     (address from DFAR/IFAR, MR2 1 for an instruction fetch, MR3 the
 *     DFSR/IFSR);
 *   everything else (alignment, external aborts, undefined instructions)
 *     -> FAULT_USER_EXCEPTION with the exception number of
 *     arch/exception.h and the fault status register (0 for undefined).
 *
 * From kernel mode they are kernel bugs: a register dump, then panic(),
 * which prints the `panic` record.  The exceptions are the probes that may
 * fault by design (the semihosting call on a board without a debugger, the
 * L2C-310 probe under QEMU): they resume after the instruction.
 */
#include <arch/imx6.h>
#include <core.h>
#include <printf.h>
#include <abi/faults.h>

/* Fault status: FS[4] is DFSR/IFSR bit 10, FS[3:0] bits 0..3. */
static unsigned fault_status(word_t fsr)
{
    return (fsr & 0xF) | ((fsr >> 6) & 0x10);
}

/* Faults of the translation scheme, which a pager can resolve. */
static bool is_vm_fault(unsigned fs)
{
    switch (fs) {
    case 0x03: case 0x06:   /* access flag, section / page */
    case 0x05: case 0x07:   /* translation */
    case 0x09: case 0x0B:   /* domain */
    case 0x0D: case 0x0F:   /* permission */
        return true;
    default:
        return false;
    }
}

static word_t read_dfsr(void) { word_t v; __asm__ volatile("mrc p15, 0, %0, c5, c0, 0" : "=r"(v)); return v; }
static word_t read_dfar(void) { word_t v; __asm__ volatile("mrc p15, 0, %0, c6, c0, 0" : "=r"(v)); return v; }
static word_t read_ifsr(void) { word_t v; __asm__ volatile("mrc p15, 0, %0, c5, c0, 1" : "=r"(v)); return v; }
static word_t read_ifar(void) { word_t v; __asm__ volatile("mrc p15, 0, %0, c6, c0, 2" : "=r"(v)); return v; }

_Noreturn void arch_user_exception(unsigned kind)
{
    word_t pc = tcb_context(current_thread())->pc;

    if (kind == EXC_DATA_ABORT) {
        word_t fsr = read_dfsr();
        if (is_vm_fault(fault_status(fsr)))
            handle_user_fault(FAULT_VM, read_dfar(), 0, fsr);
        handle_user_fault(FAULT_USER_EXCEPTION, pc, EXC_DATA_ABORT, fsr);
    }
    if (kind == EXC_PREFETCH_ABORT) {
        word_t fsr = read_ifsr();
        if (is_vm_fault(fault_status(fsr)))
            handle_user_fault(FAULT_VM, read_ifar(), 1, fsr);
        handle_user_fault(FAULT_USER_EXCEPTION, pc, EXC_PREFETCH_ABORT, fsr);
    }
    handle_user_fault(FAULT_USER_EXCEPTION, pc, EXC_UNDEFINED, 0);
}

static const char *exception_name(unsigned kind)
{
    switch (kind) {
    case EXC_UNDEFINED:      return "undefined instruction";
    case EXC_PREFETCH_ABORT: return "prefetch abort";
    case EXC_DATA_ABORT:     return "data abort";
    default:                 return "unexpected exception";
    }
}

/* Probe instructions that may fault by design; they resume after themselves with r0 = result. */
static bool fixup(struct kernel_frame *f)
{
    if (f->pc == (word_t)semihost_insn) {
        f->r[0] = ~(word_t)0;
    } else if (f->pc == (word_t)l2c_probe_insn) {
        f->r[0] = 0;
    } else {
        return false;
    }
    f->pc += 4;
    return true;
}

static void dump(const struct kernel_frame *f, unsigned kind, word_t svc_sp, word_t svc_lr)
{
    kprintf("kernel %s on core %u: pc %08lx cpsr %08lx\n", exception_name(kind), arch_core_id(),
            (unsigned long)f->pc, (unsigned long)f->cpsr);
    if (kind == EXC_DATA_ABORT)
        kprintf("  dfar %08lx dfsr %08lx\n", (unsigned long)read_dfar(), (unsigned long)read_dfsr());
    if (kind == EXC_PREFETCH_ABORT)
        kprintf("  ifar %08lx ifsr %08lx\n", (unsigned long)read_ifar(), (unsigned long)read_ifsr());
    for (unsigned i = 0; i < 13; i += 4) {
        kprintf(" ");
        for (unsigned j = i; j < i + 4 && j < 13; j++)
            kprintf(" r%u %08lx", j, (unsigned long)f->r[j]);
        kprintf("\n");
    }
    kprintf("  sp_svc %08lx lr_svc %08lx\n", (unsigned long)svc_sp, (unsigned long)svc_lr);
}

/*
 * The return addresses on the kernel stack, by the frame-pointer chain (A32
 * with -fno-omit-frame-pointer: fp points at the saved lr, the caller's fp
 * below it).  The walk stops at the first frame that does not look like
 * one: outside the kernel, misaligned, or not further up the same stack.
 */
#define BACKTRACE_MAX_FRAMES    16
#define BACKTRACE_MAX_FRAME     0x4000

void arch_undefined_instruction(void)
{
    __asm__ volatile("udf #0");
}

void arch_panic_backtrace(void)
{
    word_t fp = (word_t)__builtin_frame_address(0);

    kprintf("  backtrace:");
    for (int i = 0; i < BACKTRACE_MAX_FRAMES; i++) {
        if (fp < KERNEL_VBASE + sizeof(word_t) || (fp & 3))
            break;
        const word_t *frame = (const word_t *)fp;
        word_t ret = frame[0], next = frame[-1];
        if (ret < KERNEL_VBASE)
            break;
        kprintf(" %08lx", (unsigned long)ret);
        if (next <= fp || next - fp > BACKTRACE_MAX_FRAME)
            break;
        fp = next;
    }
    kprintf("\n");
    kflush();
}

void arch_kernel_exception(struct kernel_frame *f, unsigned kind, word_t svc_sp, word_t svc_lr)
{
    if (fixup(f))
        return;
    dump(f, kind, svc_sp, svc_lr);
    panic("kernel-mode %s at pc 0x%lx", exception_name(kind), (unsigned long)f->pc);
}

_Noreturn void arch_unexpected_exception(struct kernel_frame *f, unsigned kind)
{
    (void)f;
    panic("%s on core %u", exception_name(kind), arch_core_id());
}
