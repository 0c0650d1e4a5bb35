/*
 * Boot: the kernel's own state, the root task, the untyped memory handed
 * to it, the boot record, and the start of scheduling on every core.
 *
 * Memory for the root task's objects comes from the start of the largest
 * free region (a bump allocator, each object aligned to its size); what is
 * left of every free region becomes untyped capabilities in power-of-two
 * aligned blocks.
 */
#include "kernel.h"
#include "cdt.h"
#include "core.h"
#include "cspace.h"
#include "printf.h"
#include "sched.h"
#include "untyped.h"
#include "vspace.h"
#include <abi/bootinfo.h>
#include <lock.h>

char boot_cmdline[BOOTINFO_CMDLINE_MAX];

#define ROOT_STACK_PAGES 4
#define ROOT_STACK_TOP   (BOOTINFO_VADDR - PAGE_SIZE)   /* one unmapped guard page above */
#define UNTYPED_BOOT_MAX_BITS (WORD_BITS == 64 ? 36 : 30)

static struct mem_region free_mem[BOOT_MAX_REGIONS];
static unsigned nfree;
static unsigned boot_region;            /* the region the bump allocator takes from */
static struct cte *root_slots;          /* the root CNode's slots */
static word_t next_slot = ROOT_SLOT_FIRST_FREE_FIXED;
static int boot_done;                   /* secondaries wait for the root task */
static struct bootinfo *root_bootinfo;
struct tcb *root_thread;

static bool streq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

bool cmdline_get(const char *key, char *out, size_t size)
{
    size_t klen = strlen(key);
    const char *p = boot_cmdline;

    while (*p) {
        while (*p == ' ')
            p++;
        if (!memcmp(p, key, klen) && p[klen] == '=') {
            size_t n = 0;
            p += klen + 1;
            while (p[n] && p[n] != ' ' && n + 1 < size) {
                out[n] = p[n];
                n++;
            }
            out[n] = '\0';
            return true;
        }
        while (*p && *p != ' ')
            p++;
    }
    return false;
}

/* A zeroed, size-aligned block of 2^bits bytes from the boot region. */
static word_t boot_alloc(unsigned bits)
{
    struct mem_region *r = &free_mem[boot_region];
    word_t p = ALIGN_UP(r->start, bits);

    if (p + BIT(bits) > r->end || p < r->start)
        panic("boot: out of memory for the root task");
    r->start = p + BIT(bits);
    memset(arch_phys_to_virt(p), 0, BIT(bits));
    return p;
}

static word_t root_slot_put(struct cap c)
{
    if (next_slot >= BIT(ROOT_CNODE_BITS))
        panic("boot: the root CNode is full");
    cte_insert_root(&root_slots[next_slot], c);
    return next_slot++;
}

static void root_slot_put_fixed(unsigned slot, struct cap c)
{
    cte_insert_root(&root_slots[slot], c);
}

static word_t alloc_page_table(void)
{
    word_t p = boot_alloc(arch_object_bits(OBJ_PAGE_TABLE));
    return p;
}

/* Root task page tables are made by the boot mapper; each gets a cap afterwards. */
static word_t boot_tables[64];
static unsigned nboot_tables;

static word_t alloc_and_note_table(void)
{
    word_t p = alloc_page_table();
    if (nboot_tables == ARRAY_SIZE(boot_tables))
        panic("boot: too many root task page tables");
    boot_tables[nboot_tables++] = p;
    return p;
}

static struct cap frame_cap(word_t paddr, unsigned asid, word_t vaddr)
{
    struct cap c = object_create(OBJ_FRAME, paddr, 0, false);
    cap_note_mapping(&c, asid, vaddr);
    return c;
}

/* ---- The root task's ELF image (ELF32 or ELF64, whichever matches the word size). */

struct elf_segment {
    word_t offset, vaddr, filesz, memsz;
};

static word_t rd(const unsigned char *p, unsigned n)
{
    word_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (word_t)p[i] << (8 * i);
    return v;
}

static unsigned elf_segments(const unsigned char *elf, word_t size, struct elf_segment *seg,
                             unsigned max, word_t *entry)
{
    bool is64 = sizeof(word_t) == 8;
    unsigned w = is64 ? 8 : 4;

    if (size < 52 || memcmp(elf, "\177ELF", 4) || elf[4] != (is64 ? 2 : 1) || elf[5] != 1)
        panic("boot: the root image is not a little-endian ELF of this word size");
    *entry = rd(elf + 24, w);
    word_t phoff = rd(elf + (is64 ? 32 : 28), w);
    unsigned phentsize = (unsigned)rd(elf + (is64 ? 54 : 42), 2);
    unsigned phnum = (unsigned)rd(elf + (is64 ? 56 : 44), 2);
    unsigned n = 0;

    for (unsigned i = 0; i < phnum; i++) {
        const unsigned char *ph = elf + phoff + (word_t)i * phentsize;
        if (phoff + (word_t)(i + 1) * phentsize > size)
            panic("boot: ELF program headers out of the image");
        if (rd(ph, 4) != 1)     /* PT_LOAD */
            continue;
        if (n == max)
            panic("boot: too many ELF segments");
        if (is64) {
            seg[n].offset = rd(ph + 8, 8);
            seg[n].vaddr = rd(ph + 16, 8);
            seg[n].filesz = rd(ph + 32, 8);
            seg[n].memsz = rd(ph + 40, 8);
        } else {
            seg[n].offset = rd(ph + 4, 4);
            seg[n].vaddr = rd(ph + 8, 4);
            seg[n].filesz = rd(ph + 16, 4);
            seg[n].memsz = rd(ph + 20, 4);
        }
        if (seg[n].offset + seg[n].filesz > size || seg[n].filesz > seg[n].memsz ||
            seg[n].vaddr + seg[n].memsz >= BOOTINFO_VADDR - ROOT_STACK_PAGES * PAGE_SIZE - PAGE_SIZE)
            panic("boot: ELF segment out of range");
        n++;
    }
    return n;
}

/* Map and fill the image; frame caps go to consecutive root slots in address order. */
static void load_root_image(void *root, unsigned asid, struct bootinfo *bi, word_t *entry)
{
    const unsigned char *elf = (const unsigned char *)root_image_start;
    word_t size = (word_t)(root_image_end - root_image_start);
    struct elf_segment seg[8];
    unsigned n = elf_segments(elf, size, seg, ARRAY_SIZE(seg), entry);
    word_t lo = ~(word_t)0, hi = 0;

    for (unsigned i = 0; i < n; i++) {
        lo = MIN(lo, seg[i].vaddr & ~MASK(PAGE_BITS));
        hi = MAX(hi, ALIGN_UP(seg[i].vaddr + seg[i].memsz, PAGE_BITS));
    }
    bi->user_image_frames.start = next_slot;
    bi->user_image_vaddr = lo;
    for (word_t va = lo; va < hi; va += PAGE_SIZE) {
        bool used = false;
        for (unsigned i = 0; i < n; i++)
            used |= va < seg[i].vaddr + seg[i].memsz && va + PAGE_SIZE > seg[i].vaddr;
        if (!used)
            continue;
        word_t pa = boot_alloc(PAGE_BITS);
        char *kva = arch_phys_to_virt(pa);
        for (unsigned i = 0; i < n; i++) {
            /* The file bytes of segment i that fall into this page (bss stays zero). */
            word_t from = MAX(va, seg[i].vaddr), to = MIN(va + PAGE_SIZE, seg[i].vaddr + seg[i].filesz);
            if (from < to)
                memcpy(kva + (from - va), elf + seg[i].offset + (from - seg[i].vaddr), to - from);
        }
        vspace_boot_map(root, va, pa, RIGHT_READ | RIGHT_WRITE, alloc_and_note_table);
        root_slot_put(frame_cap(pa, asid, va));
    }
    bi->user_image_frames.end = next_slot;
}

/* What is left of free memory becomes untyped caps: the largest aligned blocks that fit. */
static void make_untypeds(struct bootinfo *bi, const struct arch_boot_info *info)
{
    unsigned nut = 0;

    bi->untyped.start = next_slot;
    for (unsigned pass = 0; pass < 2; pass++) {
        unsigned count = pass == 0 ? nfree : info->ndevice;
        for (unsigned r = 0; r < count; r++) {
            word_t start = pass == 0 ? free_mem[r].start : info->device[r].start;
            word_t end = pass == 0 ? free_mem[r].end : info->device[r].end;
            start = ALIGN_UP(start, PAGE_BITS);
            while (start < end && end - start >= PAGE_SIZE && nut < BOOTINFO_MAX_UNTYPED) {
                unsigned bits = start ? (unsigned)__builtin_ctzl(start) : UNTYPED_BOOT_MAX_BITS;
                bits = MIN(bits, (unsigned)UNTYPED_BOOT_MAX_BITS);
                while (BIT(bits) > end - start)
                    bits--;
                struct cap c = object_create(OBJ_UNTYPED, start, bits, pass == 1);
                c.clear_index = 0;  /* boot memory is not known to be zero */
                bi->untyped_list[nut].paddr = start;
                bi->untyped_list[nut].size_bits = (uint8_t)bits;
                bi->untyped_list[nut].is_device = pass == 1;
                nut++;
                root_slot_put(c);
                start += BIT(bits);
            }
        }
    }
    bi->untyped.end = next_slot;
}

static struct tcb *create_root_task(const struct arch_boot_info *info)
{
    struct bootinfo *bi;
    word_t cnode_pa, vspace_pa, tcb_pa, bi_pa, ipc_pa, entry;
    struct cap cnode, vspace, c;
    struct tcb *t;

    /* The largest free region feeds the boot allocator. */
    for (unsigned i = 0; i < nfree; i++) {
        if (free_mem[i].end - free_mem[i].start > free_mem[boot_region].end - free_mem[boot_region].start)
            boot_region = i;
    }

    cnode_pa = boot_alloc(ROOT_CNODE_BITS + CTE_BITS);
    cnode = object_create(OBJ_CNODE, cnode_pa, ROOT_CNODE_BITS, false);
    cnode.guard_bits = (uint8_t)(WORD_BITS - ROOT_CNODE_BITS);
    cnode.guard = 0;
    root_slots = cnode.obj;
    root_slot_put_fixed(ROOT_SLOT_CNODE, cnode);

    vspace_pa = boot_alloc(arch_object_bits(OBJ_VSPACE));
    vspace = object_create(OBJ_VSPACE, vspace_pa, 0, false);
    if (vspace.asid == 0)
        panic("boot: no ASID");
    root_slot_put_fixed(ROOT_SLOT_VSPACE, vspace);

    tcb_pa = boot_alloc(TCB_BITS);
    c = object_create(OBJ_TCB, tcb_pa, 0, false);
    t = c.obj;
    root_thread = t;
    tcb_install_master_reply(t);
    root_slot_put_fixed(ROOT_SLOT_TCB, c);

    c = cap_null();
    c.type = CAP_IRQ_CONTROL;
    root_slot_put_fixed(ROOT_SLOT_IRQ_CONTROL, c);

    c = cap_null();
    if (arch_root_io_ports(&c.io_port_first, &c.io_port_last)) {
        c.type = CAP_IO_PORT;
        c.rights = RIGHT_READ | RIGHT_WRITE;
        root_slot_put_fixed(ROOT_SLOT_IO_PORT, c);
    }

    /* Boot information and IPC buffer frames. */
    bi_pa = boot_alloc(PAGE_BITS);
    bi = arch_phys_to_virt(bi_pa);
    vspace_boot_map(vspace.obj, BOOTINFO_VADDR, bi_pa, RIGHT_READ, alloc_and_note_table);
    c = frame_cap(bi_pa, vspace.asid, BOOTINFO_VADDR);
    root_slot_put_fixed(ROOT_SLOT_BOOTINFO_FRAME, c);

    ipc_pa = boot_alloc(PAGE_BITS);
    vspace_boot_map(vspace.obj, IPC_BUFFER_VADDR, ipc_pa, RIGHT_READ | RIGHT_WRITE, alloc_and_note_table);
    c = frame_cap(ipc_pa, vspace.asid, IPC_BUFFER_VADDR);
    root_slot_put_fixed(ROOT_SLOT_IPC_BUFFER, c);

    load_root_image(vspace.obj, vspace.asid, bi, &entry);

    /* A small initial stack (the root task may switch to its own). */
    for (unsigned i = 0; i < ROOT_STACK_PAGES; i++) {
        word_t va = ROOT_STACK_TOP - (i + 1) * PAGE_SIZE;
        word_t pa = boot_alloc(PAGE_BITS);
        vspace_boot_map(vspace.obj, va, pa, RIGHT_READ | RIGHT_WRITE, alloc_and_note_table);
        root_slot_put(frame_cap(pa, vspace.asid, va));
    }

    /* Caps to the page tables the mappings above needed. */
    bi->user_image_page_tables.start = next_slot;
    for (unsigned i = 0; i < nboot_tables; i++) {
        c = object_create(OBJ_PAGE_TABLE, boot_tables[i], 0, false);
        root_slot_put(c);
    }
    bi->user_image_page_tables.end = next_slot;

    /* The TCB runs with copies of its CSpace, VSpace and IPC buffer caps. */
    cte_insert_child(&root_slots[ROOT_SLOT_CNODE], &t->slots[TCB_SLOT_CSPACE], root_slots[ROOT_SLOT_CNODE].cap);
    cte_insert_child(&root_slots[ROOT_SLOT_VSPACE], &t->slots[TCB_SLOT_VSPACE], root_slots[ROOT_SLOT_VSPACE].cap);
    c = root_slots[ROOT_SLOT_IPC_BUFFER].cap;
    cap_clear_mapping(&c);
    cte_insert_child(&root_slots[ROOT_SLOT_IPC_BUFFER], &t->slots[TCB_SLOT_IPC_BUFFER], c);
    t->ipc_buffer_vaddr = IPC_BUFFER_VADDR;
    t->priority = PRIORITY_COUNT - 1;
    t->max_priority = PRIORITY_COUNT - 1;
    t->affinity = 0;
    tcb_set_name(t, "root");
    arch_set_reg(&t->context, ABI_IP, entry);
    arch_set_reg(&t->context, ABI_SP, ROOT_STACK_TOP);
    arch_set_reg(&t->context, ABI_MR0, BOOTINFO_VADDR);

    make_untypeds(bi, info);

    bi->node_id = 0;
    bi->empty.start = next_slot;
    bi->empty.end = BIT(ROOT_CNODE_BITS);
    bi->cycle_hz = arch_cycle_hz();
    bi->timer_irq = arch_user_timer_irq();
    bi->lock_variant = LOCK_VARIANT;
    bi->rtm_active = lock_rtm_active();
    strlcpy(bi->arch, ARCH_NAME, sizeof(bi->arch));
    strlcpy(bi->lock, lock_variant_name, sizeof(bi->lock));
    strlcpy(bi->cmdline, boot_cmdline, sizeof(bi->cmdline));
    root_bootinfo = bi;
    return t;
}

bool multicore_allowed(void)
{
    /* LOCK=none gives no mutual exclusion: only with UNSAFE=1 may several cores enter. */
    return LOCK_VARIANT != LOCK_NONE || UNSAFE;
}

static void print_boot_record(const struct arch_boot_info *info)
{
    char accel[16];

    if (!cmdline_get("accel", accel, sizeof(accel)))
        strlcpy(accel, "unknown", sizeof(accel));
    kprintf("@@ {\"boot\": {\"arch\": \"%s\", \"lock\": \"%s\", \"cores\": %u, "
            "\"cores_expected\": %u, \"accel\": \"", ARCH_NAME, lock_variant_name,
            ncores_online, info->ncores);
    kprint_json_string(accel, sizeof(accel));
    kprintf("\", \"rtm\": %s, \"rtm_path\": \"%s\", \"ipi_round\": \"%s\", "
            "\"debug\": %s, \"ncpus_max\": %u}}\n",
            lock_rtm_active() ? "true" : "false", lock_rtm_active() ? "rtm" : "lock",
            ncores_online < 2 ? "skipped" : (arch_ipi_round_ok() ? "ok" : "failed"),
            DEBUG ? "true" : "false", (unsigned)NCPUS);
}

/*
 * DEBUG builds with the boot option kernel_fault=1 stop here on purpose,
 * with a kernel-mode exception, so that a test sees the one panic path
 * work: register dump, backtrace, `panic` record, the core halted.
 */
static void check_panic_path(void)
{
    char v[4];

    if (!DEBUG || !cmdline_get("kernel_fault", v, sizeof(v)) || !streq(v, "1"))
        return;
    kprintf("kernel: kernel_fault=1: an undefined instruction in the kernel, on purpose\n");
    kflush();
    arch_undefined_instruction();
}

/* Every core's first entry into scheduling. */
static _Noreturn void start_scheduling(void)
{
    struct core *c = my_core();

    kernel_lock_acquire(ENTRY_GENERAL);
    schedule();
    kernel_lock_release();
    core_run_deferred_work(c);
    arch_return_to_user(c->current);
}

_Noreturn void kernel_boot(const struct arch_boot_info *info)
{
    struct tcb *root;
    unsigned want = info->ncores ? info->ncores : 1;

    strlcpy(boot_cmdline, info->cmdline ? info->cmdline : "", sizeof(boot_cmdline));
    nfree = MIN(info->nfree, (unsigned)BOOT_MAX_REGIONS);
    for (unsigned i = 0; i < nfree; i++)
        free_mem[i] = info->free[i];
    if (want > NCPUS)
        want = NCPUS;
    if (!multicore_allowed() && want > 1) {
        kprintf("kernel: LOCK=none without UNSAFE=1: running on the boot core only "
                "(%u cores found)\n", want);
        want = 1;
    }

    asid_table_init();
    core_init(0);
    lock_env_init(want);
    kernel_lock_init(want);
    kprintf("kernel: %s, lock %s, %u core(s), git %s\n", ARCH_NAME, lock_variant_name, want,
            GIT_REV);

    root = create_root_task(info);
    kprintf("kernel: root task: %lu slots used, %lu untyped caps\n",
            (unsigned long)next_slot,
            (unsigned long)(root_bootinfo->untyped.end - root_bootinfo->untyped.start));

    ncores_online = want;
    if (want > 1) {
        arch_start_secondary_cores();
        ncores_online = arch_cores_online();
        if (ncores_online > want)
            ncores_online = want;
        core_wait_initialised(ncores_online);
    }
    root_bootinfo->ncores = ncores_online;
    print_boot_record(info);
    check_panic_path();

    root->state = TS_RUNNING;
    sched_enqueue(root, QUEUE_BACK);
    /* Release: the secondaries see the whole boot state once they see this. */
    __atomic_store_n(&boot_done, 1, __ATOMIC_RELEASE);
    start_scheduling();
}

_Noreturn void kernel_boot_secondary(unsigned core)
{
    core_init(core);
    /* Acquire pairs with the boot core's release of boot_done. */
    while (!__atomic_load_n(&boot_done, __ATOMIC_ACQUIRE))
        core_serve_mailbox();
    start_scheduling();
}
