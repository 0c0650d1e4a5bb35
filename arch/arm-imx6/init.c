/*
 * The boot core's bring-up after boot.S: the SCU, the L2 cache, the
 * interrupt controller and timers (the user-level GPT tick too), the boot command line and the memory
 * map for the generic kernel, then kernel_boot().
 */
#include <arch/imx6.h>
#include <arch/boot.h>

extern const char __kernel_end[];
extern const char root_image_start[], root_image_end[];
void smp_boot_core_arrived(void);

/*
 * QEMU's sabrelite has no L2C-310; the board always has one.  Used only
 * to pick the timer frequency (timer.c), never to change behaviour.
 */
bool arm_is_qemu;

/* The command line, copied out of its page before that page becomes free memory. */
static char cmdline[512];

/*
 * The blob at CMDLINE_PADDR (tools/qemu_run.py: -device loader; U-Boot:
 * fatload after clearing the page) ends at a NUL; a line end or any other
 * control character ends it too, so a cmdline.txt written by an editor
 * works.  RAM nobody loaded reads as zero under QEMU; on the board it is
 * whatever was there, hence the check for printable text.
 */
static void copy_cmdline(void)
{
    const char *blob = arch_phys_to_virt(CMDLINE_PADDR);
    size_t n = 0;
    while (n < sizeof(cmdline) - 1 && blob[n] >= ' ' && blob[n] < 0x7F) {
        cmdline[n] = blob[n];
        n++;
    }
    cmdline[n] = '\0';
}

_Noreturn void arch_init_boot_core(void)
{
    static struct arch_boot_info info;

    arm_set_this_core(0);
    smp_boot_core_arrived();
    scu_enable();
    arm_is_qemu = !l2c_init();
    gic_init_distributor();
    gic_init_core();
    global_timer_init();
    arch_timer_rearm();
    gpt_init();
    copy_cmdline();

    /* All RAM after the kernel image is free; the command line page was copied. */
    info.free[0].start = arch_virt_to_phys(__kernel_end);
    info.free[0].end = RAM_PBASE + RAM_SIZE;
    info.nfree = 1;
    /*
     * The page with the MPCore's SCU, GIC CPU interface and global timer,
     * for user-level cycle counting (docs/arm-imx6.md): the root task may
     * map it read-only and read the global timer at offset 0x200.
     */
    info.device[0].start = MPCORE_PBASE;
    info.device[0].end = MPCORE_PBASE + PAGE_SIZE;
    /* The Ethernet controller, for the user-level ENET driver (docs/drivers.md). */
    info.device[1].start = ENET_PBASE;
    info.device[1].end = ENET_PBASE + ENET_SIZE;
    info.ndevice = 2;
    info.root_elf_paddr = arch_virt_to_phys(root_image_start);
    info.root_elf_size = (word_t)(root_image_end - root_image_start);
    info.cmdline = cmdline;
    info.ncores = scu_core_count();
    kernel_boot(&info);
}
