/*
 * The architecture hooks: everything the generic kernel asks of a port.
 * Each port implements them under arch/<port>/ and provides, on the include
 * path as <arch/...>, the headers named below.  No generic file tests which
 * port it is built for.
 *
 * <arch/machine.h> must define:
 *   PAGE_BITS, LARGE_PAGE_BITS     frame sizes (log2 bytes)
 *   CACHE_LINE_SIZE                for per-core data alignment
 *   ARCH_MSG_REGISTERS             message registers held in machine registers (4)
 *   ARCH_USER_REGS                 length of the register set of TCB Read/WriteRegisters
 *   USER_TOP                       first address above user space
 *   struct arch_context            a thread's saved user registers (and FPU state if any),
 *                                  and a word `tls_base`: the thread's TLS base, 0 in a fresh
 *                                  context, which every exit to the thread loads into the
 *                                  port's thread-pointer register
 *   static inline unsigned arch_core_id(void)   index of the calling core (0 is the boot core)
 *   static inline word_t arch_cycles(void)      the cycle counter
 *   static inline void *arch_phys_to_virt(word_t paddr)  through the kernel's direct map
 *   static inline word_t arch_virt_to_phys(const void *vaddr)
 *
 * <arch/abi_regs.h> must define the register accessors (below, inline).
 * <arch/exit.h> must define or declare the two steps out of the kernel
 * that every IPC takes (inline where the port can):
 *   void arch_vspace_load(word_t vspace_root_paddr, unsigned asid)
 *       load an address space on this core (done after the lock release);
 *       ASID 0 is the kernel-only space, whose root is
 *       arch_kernel_vspace_paddr().  Called only for a space other than
 *       the loaded one.
 *   static inline word_t arch_kernel_vspace_paddr(void)
 *       the root table of the kernel-only space, which maps the kernel only
 *   _Noreturn void arch_return_to_user_thread(struct arch_context *ctx)
 *       arch_return_to_user() for a user thread (never the idle thread),
 *       which the thread's core has made current.
 * <arch/this_core.h>, included by kernel/core.h once struct core is
 * complete, must define
 *   static inline struct core *arch_this_core(void)   &cores[arch_core_id()]
 */
#ifndef KERNEL_ARCH_H
#define KERNEL_ARCH_H

#include <stdbool.h>
#include <stddef.h>

#include <abi/types.h>
#include <arch/machine.h>

struct tcb;

/* ---- Boot.  The port's entry code brings up the boot core, then calls kernel_boot(). */

struct mem_region {
    word_t start;   /* physical, inclusive */
    word_t end;     /* physical, exclusive */
};

#define BOOT_MAX_REGIONS 16

struct arch_boot_info {
    struct mem_region free[BOOT_MAX_REGIONS];   /* RAM free for untyped memory */
    unsigned nfree;
    struct mem_region device[BOOT_MAX_REGIONS]; /* device memory handed out as device untyped */
    unsigned ndevice;
    word_t root_elf_paddr;                      /* the root task's ELF image */
    word_t root_elf_size;
    const char *cmdline;                        /* boot command line, NUL-terminated */
    unsigned ncores;                            /* cores found (and to be started) */
};

/* Generic: set up the kernel and the root task on the boot core.  Never returns. */
_Noreturn void kernel_boot(const struct arch_boot_info *info);

/* Generic: each secondary core calls this once its arch state is up.  Never returns. */
_Noreturn void kernel_boot_secondary(unsigned core);

/* Start every secondary core; each calls kernel_boot_secondary().  Returns once all are up. */
void arch_start_secondary_cores(void);

/* Number of cores online. */
unsigned arch_cores_online(void);

/* ---- Console. */

/* Write one character to the console (polling; never fails). */
void arch_console_putc(char c);

/* End the run with a status (QEMU exit device, or a board reset).  Never returns. */
_Noreturn void arch_shutdown(int status);

/* Execute an undefined instruction in kernel mode (boot option kernel_fault=1, DEBUG builds). */
void arch_undefined_instruction(void);

/* Print the return addresses on this core's kernel stack (panic(); for addr2line). */
void arch_panic_backtrace(void);

/* Stop this core for good after a panic, interrupts off. */
_Noreturn void arch_halt_core(void);

/* ---- Kernel entry and exit.
 *
 * The port's entry code saves the user registers into the current thread's
 * struct arch_context and calls one of the generic handlers below on this
 * core's kernel stack, with interrupts off.  The handlers end by calling
 * arch_return_to_user(), which restores the (possibly new) current thread.
 */
_Noreturn void handle_syscall(word_t sysno);
/* Call and ReplyRecv (SYSNO_CALL, SYSNO_REPLY_RECV), which the entry code
 * sends here instead of to handle_syscall(): kernel/fastpath.c. */
_Noreturn void fastpath_call(void);
_Noreturn void fastpath_reply_recv(void);
_Noreturn void handle_interrupt(unsigned irq);
_Noreturn void handle_user_fault(unsigned fault_type, word_t addr, word_t arch_code, word_t arch_status);

/* Restore the thread's user context (or the idle loop) and leave the kernel. */
_Noreturn void arch_return_to_user(struct tcb *thread);

/* The idle thread: runs in kernel mode with interrupts on until one arrives. */
void arch_context_init_idle(struct arch_context *ctx, word_t kernel_stack_top);
bool arch_context_is_idle(const struct arch_context *ctx);

/* A fresh user context: all registers zero, user mode, interrupts on. */
void arch_context_init_user(struct arch_context *ctx);

/* ABI registers by purpose (docs/abi.md maps them to machine registers). */
enum abi_reg {
    ABI_SYSNO,      /* in: syscall number; shares a register with ABI_STATUS */
    ABI_STATUS,     /* out: enum status */
    ABI_CPTR,       /* in: capability address; shares a register with ABI_BADGE */
    ABI_BADGE,      /* out: the sender's badge */
    ABI_MSGINFO,
    ABI_MR0,
    ABI_MR1,
    ABI_MR2,
    ABI_MR3,
    ABI_IP,
    ABI_SP,
};
/*
 * The port's <arch/abi_regs.h> defines them as static inline functions:
 *   word_t arch_get_reg(const struct arch_context *ctx, enum abi_reg reg);
 *   void arch_set_reg(struct arch_context *ctx, enum abi_reg reg, word_t value);
 * Inline, so that with a constant `reg` each is one load or store: every
 * kernel entry reads and writes several, the IPC fastpath a dozen.
 */
#include <arch/abi_regs.h>
#include <arch/exit.h>

/* Make the thread re-execute the system call it is in (preemption points, restarts). */
void arch_context_restart_syscall(struct arch_context *ctx);

/* TCB Read/Write/CopyRegisters: the whole user register set, ARCH_USER_REGS words, in docs/abi.md order. */
void arch_context_read_all(const struct arch_context *ctx, word_t *regs);
void arch_context_write_all(struct arch_context *ctx, const word_t *regs);

/* TCB SetTLSBase: whether `base` may be loaded into the thread-pointer register. */
bool arch_tls_base_valid(word_t base);

/*
 * Registers a core switches lazily (x86_64: the FPU's) stay in the core
 * after their thread stops running there, until another thread needs them.
 * arch_core_held_context(): the context whose registers `core` holds that
 * way, or NULL.  Called with the lock held exclusively; the answer for a
 * thread that runs on no core cannot become that thread meanwhile.
 * arch_core_release_context(): on that core, save them into ctx and let
 * them go, so that no core refers to ctx any more (ctx is about to be freed
 * or to run on another core).
 */
const struct arch_context *arch_core_held_context(unsigned core);
void arch_core_release_context(struct arch_context *ctx);

/* ---- Interrupts and cross-core signalling. */

/*
 * handle_interrupt(irq) is called with a device IRQ (< arch_irq_count()),
 * arch_timer_irq() or arch_ipi_irq().  The port acknowledges the timer and
 * the IPI itself (they are per-core) before calling; device IRQs are masked
 * and acknowledged by the generic kernel through the deferred work.
 */
unsigned arch_ipi_irq(void);

/*
 * Send the reschedule/request IPI to a core.  Normally deferred until after
 * the lock is released; a core holding the lock exclusively may also send
 * one at once when it must wait for the target's acknowledgement.
 */
void arch_send_ipi(unsigned core);

/*
 * The boot IPI round: each core has sent an IPI to every other and each
 * was received.  Generic code prints the result in the boot record
 * ("ipi_round": "ok" or "failed").  Called on the boot core after
 * arch_start_secondary_cores().
 */
bool arch_ipi_round_ok(void);

/* Is a device interrupt pending on this core?  (Preemption points poll this.) */
bool arch_interrupt_pending(void);

/*
 * Make device IRQ `irq`'s line follow *open: enabled when true, masked when
 * false.  Called after the kernel lock is released, on any core.  The port
 * reads *open under the lock that orders its own writes of the line's mask,
 * so when two cores apply one line's decisions in the other order than they
 * were made, the line still ends as the latest decision says (kernel/irq.c).
 * The entry code masks a device IRQ itself when it delivers one.
 */
void arch_irq_follow(unsigned irq, const bool *open);

/* Valid user IRQ numbers are 0 .. arch_irq_count()-1; some are reserved by the kernel. */
unsigned arch_irq_count(void);
bool arch_irq_reserved(unsigned irq);

/*
 * The per-core timeslice timer IRQ.  The timer is periodic: once started
 * it raises its IRQ every period with no further call, so a tick needs no
 * rearm.  arch_timer_rearm() starts a whole period (and the timer, if it
 * was stopped); arch_timer_stop() stops it until the next rearm.
 */
#define IRQ_TIMESLICE_NONE (~0u)
unsigned arch_timer_irq(void);
void arch_timer_rearm(void);
void arch_timer_stop(void);

/* ---- Memory and address spaces.
 *
 * Generic code (kernel/vspace.c) decodes Frame and PageTable invocations and
 * keeps the capabilities; the port walks and edits its own table format.
 * `root` is the kernel virtual address of an OBJ_VSPACE object.  Levels are
 * counted from the root (0) downwards; the port says how many there are.
 */

/* log2 size of OBJ_VSPACE and OBJ_PAGE_TABLE objects. */
unsigned arch_object_bits(unsigned object_type);

/*
 * The level at which a page table is missing on the way to mapping a frame
 * (large or not) at vaddr, or 0 when every table needed is present.
 */
unsigned arch_pt_missing_level(void *root, word_t vaddr, bool large);

/* Install a zeroed page table at the missing level found above. */
void arch_pt_install(void *root, word_t vaddr, unsigned level, word_t table_paddr);

/*
 * The physical address of the page table at `level` (as numbered by
 * arch_pt_missing_level and arch_pt_install: 1 is the one the root points
 * to) on the way to vaddr, or 0 when there is none.
 * Generic code checks it before arch_pt_remove(), so a stale page-table cap
 * never removes a newer table installed at the same place.
 */
word_t arch_pt_lookup(void *root, word_t vaddr, unsigned level);

/* Remove the table installed at (vaddr, level) and flush; its entries are dropped with it. */
void arch_pt_remove(void *root, word_t vaddr, unsigned level);

/* True when nothing is mapped at vaddr at the frame's size. */
bool arch_frame_slot_free(void *root, word_t vaddr, bool large);

/* Map / unmap a frame.  Callers have checked alignment, USER_TOP and arch_frame_slot_free(). */
void arch_frame_map(void *root, word_t vaddr, word_t paddr, bool large, unsigned rights, unsigned attrs);
void arch_frame_unmap(void *root, word_t vaddr, bool large);

/* Translate a user address in an address space (for the kernel's own checks); false if unmapped. */
bool arch_user_translate(void *root, word_t vaddr, word_t *paddr, bool *writable);

/* Flush this core's TLB entries for an address space (or everything: asid ~0u). */
void arch_tlb_flush_local(unsigned asid, word_t vaddr, bool whole_space);

/* Make a freshly retyped VSpace root share the kernel's mappings. */
void arch_vspace_init_root(void *root);

/* The cycle counter's frequency in Hz (0: unknown), for the boot information. */
word_t arch_cycle_hz(void);

/* A device timer IRQ that user level may take (IRQ tests), or ~0u when there is none. */
unsigned arch_user_timer_irq(void);

/* ---- I/O ports (x86_64; other ports have none). */

/* The port range of the root task's I/O port cap; false when the port has no I/O ports. */
bool arch_root_io_ports(word_t *first, word_t *last);

/* ---- RTM (x86_64; other ports return false). */
bool lock_rtm_probe(void);

#endif
