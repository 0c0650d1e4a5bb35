/*
 * The user-level cycle counter (arm-imx6).
 *
 * The global timer sits in the Cortex-A9's private region, in the same
 * 4 KiB page as the SCU and the GIC CPU interface; there is no page with
 * the timer alone.  The kernel hands that page out as a device untyped
 * (docs/arm-imx6.md).  Before root_entry() the root task retypes it into a
 * frame and maps it read-only and uncached; arch_cycles() then reads the
 * counter at offset 0x200.  Only the root task holds the cap, and nothing
 * here reads any other register of the page (a read of the GIC's IAR would
 * acknowledge an interrupt).  Every space thread_create_space() makes maps
 * the page at the same address (space_share_frame()), so threads there can
 * read the counter through the same pointer.
 *
 * Under -icount the counter must count instructions (bootinfo.h,
 * docs/console.md).  QEMU clocks the global timer at 100 MHz of virtual
 * time, and with -icount shift=0 an instruction takes 1 ns, so one tick is
 * 10 instructions: arch_cycles() multiplies by arm_cycles_scale = 10 then
 * (a resolution of 10 instructions), and by 1 otherwise.
 */
#include <root.h>
#include <thread.h>
#include <thread_local.h>
#include <arch_user.h>
#include <posix_arch.h>

#define MPCORE_PBASE    0x00A00000UL
#define GTIMER_OFFSET   0x200
#define ICOUNT_INSNS_PER_TICK 10    /* 1 ns per instruction, 10 ns per 100 MHz tick */

volatile const uint32_t *arm_global_timer;
/* The timer's frame, for the POSIX loader's processes (posix_arch.h). */
cptr_t arm_global_timer_frame;
uint32_t arm_cycles_scale = 1;

/* Not a time: a count of calls, monotonic, so loops bounded by arch_cycles() still end. */
uint64_t arm_cycles_fallback(void)
{
    static uint64_t calls;
    return __atomic_add_fetch(&calls, 1, __ATOMIC_RELAXED);
}

static void map_global_timer(void)
{
    word_t n = bootinfo->untyped.end - bootinfo->untyped.start;
    for (word_t i = 0; i < n; i++) {
        const struct untyped_desc *u = &bootinfo->untyped_list[i];
        if (!u->is_device || u->paddr != MPCORE_PBASE)
            continue;
        cptr_t frame = slot_alloc();
        if (!frame)
            return;
        if (untyped_retype(bootinfo->untyped.start + i, OBJ_FRAME, 0, ROOT_SLOT_CNODE, 0, 0, frame, 1) != E_OK) {
            slot_free(frame);
            return;
        }
        word_t v = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
        word_t attrs = VM_UNCACHED | VM_EXECUTE_NEVER;
        if (map_frame(frame, ROOT_SLOT_VSPACE, v, RIGHT_READ, attrs) != E_OK)
            return;
        if (space_share_frame(frame, v, RIGHT_READ, attrs) != E_OK)
            return;
        arm_global_timer = (volatile const uint32_t *)(v + GTIMER_OFFSET);
        arm_global_timer_frame = frame;
        return;
    }
}

/*
 * Called by crt0.S before root_entry().  The IPC buffer pointer is set here
 * as root_entry() will set it, because invocations may use the buffer.
 */
void arm_user_init(void);
void arm_user_init(void)
{
    tls()->ipcbuf = (struct ipc_buffer *)IPC_BUFFER_VADDR;
    if (arg_word("icount", 0))
        arm_cycles_scale = ICOUNT_INSNS_PER_TICK;
    map_global_timer();
}
