/*
 * The loader of POSIX processes (posix_process.h, docs/posix-loader.md).
 *
 * The program is the static ELF that program_image.S embeds in the root
 * task's image.  Every check of it comes before anything is made, so a
 * program that is not one this port can run is refused with a message and
 * costs nothing.  Then: a new VSpace that maps nothing of the root task;
 * each PT_LOAD segment in fresh frames (retyped memory is zero, so only
 * the file's bytes are copied, through a scratch page of the root task's
 * space); the stack with the Linux start layout; the heap; the boot info
 * page, the start page and (where the port has one) the clock page, all
 * read-only; the thread pool; and the main thread started at the entry.
 *
 * A process maps hundreds of frames, more than the root CNode could hold
 * for several processes beside the root task's own image.  So each frame
 * cap, once mapped, moves into a CNode of the process's own (the storage
 * CNode, one root slot): a moved cap keeps its mapping.  The TCBs and
 * notifications stay in the root CNode, which is the process's CSpace and
 * where the start page names them.
 */
#include <arch_user.h>
#include <posix_arch.h>
#include <posix_process.h>
#include <sys.h>
#include <thread.h>

/* program_image.S: the embedded ELF's bytes (none when the build embeds no program). */
extern const char posix_program_start[], posix_program_end[];

#define ELFCLASS_OFFSET 4
#define ELFDATA_OFFSET  5
#define ELFVERSION_OFFSET 6
#define ELFDATA2LSB     1
#define EV_CURRENT      1
#define ET_EXEC         2
#define PT_LOAD         1
#define PF_X            1
#define PF_W            2

/* The ELF header; with word_t for addresses and offsets it is both Elf32_Ehdr and Elf64_Ehdr. */
struct elf_ehdr {
    uint8_t e_ident[16];
    uint16_t e_type;
    uint16_t e_machine;
    uint32_t e_version;
    word_t e_entry;
    word_t e_phoff;
    word_t e_shoff;
    uint32_t e_flags;
    uint16_t e_ehsize;
    uint16_t e_phentsize;
    uint16_t e_phnum;
    uint16_t e_shentsize;
    uint16_t e_shnum;
    uint16_t e_shstrndx;
};

_Static_assert(sizeof(struct elf_ehdr) == 24 + 3 * sizeof(word_t) + 16,
               "Elf32_Ehdr is 52 bytes and Elf64_Ehdr 64");

/* Auxiliary vector keys (Linux's include/uapi/linux/auxvec.h). */
enum {
    AT_NULL = 0, AT_PHDR = 3, AT_PHENT = 4, AT_PHNUM = 5, AT_PAGESZ = 6, AT_ENTRY = 9,
    AT_UID = 11, AT_EUID = 12, AT_GID = 13, AT_EGID = 14, AT_HWCAP = 16, AT_SECURE = 23,
    AT_RANDOM = 25, AT_HWCAP2 = 26,
};
#define AUXV_PAIRS 14

/* The top of the stack that holds the start layout: strings, AT_RANDOM's bytes and the vectors. */
#define START_AREA_SIZE (4 * PAGE_SIZE)
#define RANDOM_BYTES 16

#define PAGE_DOWN(v)    ((v) & ~(PAGE_SIZE - 1))
#define PAGE_UP(v)      (((v) + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1))

struct loader {
    const char *image;              /* the ELF's bytes */
    word_t size;
    struct elf_ehdr eh;
    struct posix_process *proc;
    word_t storage_bits;            /* the storage CNode's radix */
    word_t stored;                  /* its slots used */
};

/* A page of the root task's space through which fresh frames are filled. */
static word_t scratch_page;

/* Two symbols of program_image.S: compared as addresses, not as pointers into one object. */
static word_t program_size(void)
{
    return (word_t)posix_program_end - (word_t)posix_program_start;
}

bool posix_program_present(void)
{
    return program_size() != 0;
}

static word_t refuse(const char *fmt, unsigned long a, unsigned long b)
{
    char why[160];
    snprintf(why, sizeof(why), fmt, a, b);
    printf("posix: the embedded program is refused: %s\n", why);
    return E_INVALID_ARGUMENT;
}

/* Program header i, copied out: the image's bytes need not be aligned for word loads. */
static struct elf_phdr phdr(const struct loader *l, word_t i)
{
    struct elf_phdr ph;
    memcpy(&ph, l->image + l->eh.e_phoff + i * sizeof(ph), sizeof(ph));
    return ph;
}

static bool overlaps(word_t a_start, word_t a_end, word_t b_start, word_t b_end)
{
    return a_start < b_end && b_start < a_end;
}

/* Pages of memory [start, end) of segment ph, page-aligned outward. */
static void segment_pages(const struct elf_phdr *ph, word_t *start, word_t *end)
{
    *start = PAGE_DOWN((word_t)ph->p_vaddr);
    *end = PAGE_UP((word_t)ph->p_vaddr + (word_t)ph->p_memsz);
}

/* The checks of one PT_LOAD segment (index i) against the file and the process's layout. */
static word_t check_segment(const struct loader *l, word_t i, const struct posix_process_opts *o)
{
    struct elf_phdr ph = phdr(l, i);
    if (ph.p_filesz > ph.p_memsz)
        return refuse("segment %lu has more file bytes than memory (%lu)", i, ph.p_filesz);
    if (ph.p_offset > l->size || l->size - ph.p_offset < ph.p_filesz)
        return refuse("segment %lu's bytes lie beyond the file's end (%lu bytes): truncated?", i, l->size);
    if (ph.p_vaddr >= ARCH_POSIX_USER_TOP || ARCH_POSIX_USER_TOP - ph.p_vaddr < ph.p_memsz ||
        ARCH_POSIX_USER_TOP - ph.p_vaddr - ph.p_memsz < PAGE_SIZE)
        return refuse("segment %lu at 0x%lx is outside user space", i, ph.p_vaddr);
    word_t start, end;
    segment_pages(&ph, &start, &end);
    if (start < PAGE_SIZE)
        return refuse("segment %lu at 0x%lx maps the null page", i, ph.p_vaddr);
    if (overlaps(start, end, POSIX_STACK_TOP - POSIX_STACK_SIZE - PAGE_SIZE, POSIX_RESERVED_END))
        return refuse("segment %lu at 0x%lx overlaps the stack or 0x10000000-0x10100000", i, ph.p_vaddr);
    if (overlaps(start, end, POSIX_HEAP_VADDR, POSIX_HEAP_VADDR + PAGE_UP(o->heap_size)))
        return refuse("segment %lu at 0x%lx overlaps the heap", i, ph.p_vaddr);
    if (o->channel && overlaps(start, end, (word_t)o->channel, (word_t)o->channel + ARCH_LARGE_PAGE_SIZE))
        return refuse("segment %lu at 0x%lx overlaps the network channel", i, ph.p_vaddr);
    if (o->link && overlaps(start, end, (word_t)o->link, (word_t)o->link + ARCH_LARGE_PAGE_SIZE))
        return refuse("segment %lu at 0x%lx overlaps the socket link", i, ph.p_vaddr);
    for (word_t j = 0; j < i; j++) {
        struct elf_phdr other = phdr(l, j);
        word_t ostart, oend;
        segment_pages(&other, &ostart, &oend);
        if (other.p_type == PT_LOAD && overlaps(start, end, ostart, oend))
            return refuse("segments %lu and %lu share a page", j, i);
    }
    return E_OK;
}

/* Check everything of the ELF before anything is made; *pages gets the pages its segments take. */
static word_t check_elf(struct loader *l, const struct posix_process_opts *o, word_t *pages)
{
    if (l->size == 0)
        return refuse("there is none: build with POSIX_PROGRAM=path/to/static.elf", 0, 0);
    if (l->size < sizeof(l->eh))
        return refuse("%lu bytes is shorter than an ELF header (%lu): truncated?", l->size, sizeof(l->eh));
    memcpy(&l->eh, l->image, sizeof(l->eh));
    const struct elf_ehdr *eh = &l->eh;
    if (memcmp(eh->e_ident, "\177ELF", 4))
        return refuse("not an ELF file", 0, 0);
    /* e_machine is at the same offset in either class: a program for another machine says so. */
    if (eh->e_machine != ARCH_ELF_MACHINE)
        return refuse("ELF machine %lu, this port runs machine %lu (" ARCH_ELF_MACHINE_NAME ")",
                      eh->e_machine, ARCH_ELF_MACHINE);
    if (eh->e_ident[ELFCLASS_OFFSET] != ARCH_ELF_CLASS)
        return refuse("ELF class %lu, this port runs class %lu (" ARCH_ELF_MACHINE_NAME ")",
                      eh->e_ident[ELFCLASS_OFFSET], ARCH_ELF_CLASS);
    if (eh->e_ident[ELFDATA_OFFSET] != ELFDATA2LSB || eh->e_ident[ELFVERSION_OFFSET] != EV_CURRENT)
        return refuse("not a little-endian ELF of version 1 (data %lu, version %lu)",
                      eh->e_ident[ELFDATA_OFFSET], eh->e_ident[ELFVERSION_OFFSET]);
    if (eh->e_type != ET_EXEC)
        return refuse("ELF type %lu is not a static executable (ET_EXEC, %lu)", eh->e_type, ET_EXEC);
    if (eh->e_phentsize != sizeof(struct elf_phdr) || eh->e_phnum == 0)
        return refuse("program header size %lu (expected %lu), or no program headers",
                      eh->e_phentsize, sizeof(struct elf_phdr));
    if (eh->e_phoff > l->size || (l->size - eh->e_phoff) / sizeof(struct elf_phdr) < eh->e_phnum)
        return refuse("%lu program headers run past the file's end (%lu bytes): truncated?", eh->e_phnum,
                      l->size);

    *pages = 0;
    bool entry_found = false;
    for (word_t i = 0; i < eh->e_phnum; i++) {
        struct elf_phdr ph = phdr(l, i);
        if (ph.p_type != PT_LOAD)
            continue;
        word_t st = check_segment(l, i, o);
        if (st != E_OK)
            return st;
        word_t start, end;
        segment_pages(&ph, &start, &end);
        *pages += (end - start) / PAGE_SIZE;
        if ((ph.p_flags & PF_X) && eh->e_entry >= ph.p_vaddr && eh->e_entry - ph.p_vaddr < ph.p_memsz)
            entry_found = true;
    }
    if (!entry_found)
        return refuse("the entry point 0x%lx is in no executable segment", eh->e_entry, 0);
    return E_OK;
}

/* Move the frame cap in root slot *frame into the storage CNode, where its mapping stays. */
static word_t store(struct loader *l, cptr_t *frame)
{
    if (l->stored == ((word_t)1 << l->storage_bits))
        return E_NOT_ENOUGH_MEMORY;
    word_t st = cnode_move(l->proc->storage, l->stored, l->storage_bits, ROOT_SLOT_CNODE, *frame,
                           ROOT_DEPTH);
    if (st != E_OK)
        return st;
    l->stored++;
    slot_free(*frame);
    *frame = 0;
    return E_OK;
}

/*
 * A fresh frame (of `type`) mapped at vaddr in the process's space, with
 * len bytes of src at `offset` in it; the rest stays zero.
 */
static word_t map_fresh(struct loader *l, word_t type, word_t vaddr, const void *src, word_t offset,
                        word_t len, word_t rights, word_t attrs)
{
    cptr_t f;
    word_t st = obj_alloc(type, 0, &f);
    if (st != E_OK)
        return st;
    if (len) {
        st = map_frame(f, ROOT_SLOT_VSPACE, scratch_page, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT);
        if (st == E_OK) {
            memcpy((char *)scratch_page + offset, src, len);
            st = frame_unmap(f);
        }
    }
    if (st == E_OK)
        st = map_frame(f, l->proc->vspace, vaddr, rights, attrs);
    if (st == E_OK)
        st = store(l, &f);
    if (st != E_OK)
        slot_drop(&f);
    return st;
}

/* A copy of the root task's frame cap `frame` mapped at vaddr in the process's space. */
static word_t map_copy(struct loader *l, cptr_t frame, word_t vaddr, word_t rights, word_t attrs)
{
    cptr_t copy = slot_alloc();
    if (!copy)
        return E_NOT_ENOUGH_MEMORY;
    word_t st = cnode_copy(ROOT_SLOT_CNODE, copy, ROOT_DEPTH, ROOT_SLOT_CNODE, frame, ROOT_DEPTH,
                           RIGHTS_ALL);
    if (st == E_OK)
        st = map_frame(copy, l->proc->vspace, vaddr, rights, attrs);
    if (st == E_OK)
        st = store(l, &copy);
    if (st != E_OK)
        slot_drop(&copy);
    return st;
}

static word_t load_segments(struct loader *l)
{
    for (word_t i = 0; i < l->eh.e_phnum; i++) {
        struct elf_phdr ph = phdr(l, i);
        if (ph.p_type != PT_LOAD)
            continue;
        word_t rights = RIGHT_READ | (ph.p_flags & PF_W ? RIGHT_WRITE : 0);
        word_t attrs = ph.p_flags & PF_X ? VM_DEFAULT : VM_EXECUTE_NEVER;
        word_t start, end, file_end = (word_t)ph.p_vaddr + (word_t)ph.p_filesz;
        segment_pages(&ph, &start, &end);
        for (word_t v = start; v < end; v += PAGE_SIZE) {
            /* The file's bytes of this page: [lo, hi) of [p_vaddr, file_end). */
            word_t lo = v > ph.p_vaddr ? v : (word_t)ph.p_vaddr;
            word_t hi = v + PAGE_SIZE < file_end ? v + PAGE_SIZE : file_end;
            word_t len = hi > lo ? hi - lo : 0;
            const char *src = l->image + ph.p_offset + (lo - ph.p_vaddr);
            word_t st = map_fresh(l, OBJ_FRAME, v, src, lo - v, len, rights, attrs);
            if (st != E_OK)
                return st;
        }
    }
    return E_OK;
}

/*
 * Where the program headers are in the process: inside the segment whose
 * file bytes hold them (a static executable's first segment), else 0 and
 * the start layout carries a copy.
 */
static word_t phdr_vaddr(const struct loader *l)
{
    word_t bytes = (word_t)l->eh.e_phnum * sizeof(struct elf_phdr);
    for (word_t i = 0; i < l->eh.e_phnum; i++) {
        struct elf_phdr ph = phdr(l, i);
        if (ph.p_type == PT_LOAD && l->eh.e_phoff >= ph.p_offset &&
            l->eh.e_phoff - ph.p_offset <= ph.p_filesz && ph.p_filesz - (l->eh.e_phoff - ph.p_offset) >= bytes)
            return ph.p_vaddr + (l->eh.e_phoff - ph.p_offset);
    }
    return 0;
}

/* The start layout as it is built: the top START_AREA_SIZE bytes of the stack. */
struct start_area {
    char bytes[START_AREA_SIZE];
    word_t pos;                     /* the lowest address used so far, growing down */
};

static char *area_at(struct start_area *a, word_t vaddr)
{
    return a->bytes + (vaddr - (POSIX_STACK_TOP - START_AREA_SIZE));
}

/* Put n bytes below what the area holds, aligned to `align`; their address, 0 if full. */
static word_t area_push(struct start_area *a, const void *src, word_t n, word_t align)
{
    word_t room = a->pos - (POSIX_STACK_TOP - START_AREA_SIZE);
    if (n > room)
        return 0;
    word_t v = (a->pos - n) & ~(align - 1);
    if (v < POSIX_STACK_TOP - START_AREA_SIZE)
        return 0;
    memcpy(area_at(a, v), src, n);
    a->pos = v;
    return v;
}

static word_t count_strings(const char *const *v)
{
    word_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

/* Push the strings of v (NULL-terminated) and put their addresses into out[]; false if full. */
static bool push_strings(struct start_area *a, const char *const *v, word_t n, word_t *out)
{
    for (word_t i = 0; i < n; i++)
        if (!(out[i] = area_push(a, v[i], strlen(v[i]) + 1, 1)))
            return false;
    return true;
}

/*
 * The Linux start layout (what musl's _start and __libc_start_main read):
 * at sp argc, then argv[], NULL, envp[], NULL, the auxiliary vector's
 * pairs up to AT_NULL; above them AT_RANDOM's 16 bytes and the strings.
 * sp is aligned as the port's ABI wants at process entry.
 */
static word_t build_start_area(struct loader *l, const struct posix_process_opts *o, struct start_area *a,
                               word_t *sp)
{
    memset(a, 0, sizeof(*a));
    a->pos = POSIX_STACK_TOP;
    word_t argc = count_strings(o->argv), envc = count_strings(o->envp);
    if (argc == 0 || argc > POSIX_MAX_ARGS || envc > POSIX_MAX_ARGS) {
        printf("posix: argv needs 1 to %u strings and envp at most %u\n", POSIX_MAX_ARGS, POSIX_MAX_ARGS);
        return E_INVALID_ARGUMENT;
    }
    word_t argv[POSIX_MAX_ARGS], envp[POSIX_MAX_ARGS];
    bool fits = push_strings(a, o->argv, argc, argv) && push_strings(a, o->envp, envc, envp);

    uint64_t seed = arch_cycles() ^ ((uint64_t)l->proc->index << 32) ^ 0x9e3779b97f4a7c15ULL;
    uint8_t random[RANDOM_BYTES];
    for (word_t i = 0; i < RANDOM_BYTES; i += sizeof(uint64_t)) {
        uint64_t r = xorshift64(&seed);
        memcpy(random + i, &r, sizeof(r));
    }
    word_t random_at = fits ? area_push(a, random, RANDOM_BYTES, 16) : 0;

    word_t phdrs = phdr_vaddr(l);
    if (!phdrs && random_at)
        phdrs = area_push(a, l->image + l->eh.e_phoff, (word_t)l->eh.e_phnum * sizeof(struct elf_phdr),
                          sizeof(word_t));
    const word_t auxv[AUXV_PAIRS][2] = {
        { AT_PHDR, phdrs }, { AT_PHENT, sizeof(struct elf_phdr) }, { AT_PHNUM, l->eh.e_phnum },
        { AT_PAGESZ, PAGE_SIZE }, { AT_ENTRY, l->eh.e_entry }, { AT_RANDOM, random_at },
        { AT_UID, 0 }, { AT_EUID, 0 }, { AT_GID, 0 }, { AT_EGID, 0 }, { AT_SECURE, 0 },
        { AT_HWCAP, arch_posix_hwcap() }, { AT_HWCAP2, arch_posix_hwcap2() }, { AT_NULL, 0 },
    };
    word_t words = 1 + argc + 1 + envc + 1 + 2 * AUXV_PAIRS;
    word_t vectors = a->pos - words * sizeof(word_t);
    vectors &= ~((word_t)ARCH_ENTRY_SP_ALIGN - 1);
    if (!phdrs || vectors < POSIX_STACK_TOP - START_AREA_SIZE || vectors > a->pos) {
        printf("posix: argv and envp do not fit the %lu bytes of the start layout\n",
               (unsigned long)START_AREA_SIZE);
        return E_INVALID_ARGUMENT;
    }
    word_t *w = (word_t *)area_at(a, vectors);
    *w++ = argc;
    for (word_t i = 0; i < argc; i++)
        *w++ = argv[i];
    *w++ = 0;
    for (word_t i = 0; i < envc; i++)
        *w++ = envp[i];
    *w++ = 0;
    memcpy(w, auxv, sizeof(auxv));
    *sp = vectors;
    return E_OK;
}

/* The stack: POSIX_STACK_SIZE of fresh frames below POSIX_STACK_TOP, the start area at its top. */
static word_t map_stack(struct loader *l, const struct start_area *a)
{
    word_t area_base = POSIX_STACK_TOP - START_AREA_SIZE;
    for (word_t v = POSIX_STACK_TOP - POSIX_STACK_SIZE; v < POSIX_STACK_TOP; v += PAGE_SIZE) {
        bool in_area = v >= area_base;
        word_t st = map_fresh(l, OBJ_FRAME, v, in_area ? a->bytes + (v - area_base) : NULL, 0,
                              in_area ? PAGE_SIZE : 0, RIGHT_READ | RIGHT_WRITE, VM_EXECUTE_NEVER);
        if (st != E_OK)
            return st;
    }
    return E_OK;
}

/* The heap's frames: large ones while a whole aligned one fits, then small ones. */
static word_t heap_frames(word_t size, word_t *large, word_t *small)
{
    _Static_assert(POSIX_HEAP_VADDR % ARCH_LARGE_PAGE_SIZE == 0, "the heap starts on a large page");
    word_t bytes = PAGE_UP(size);
    *large = bytes / ARCH_LARGE_PAGE_SIZE;
    *small = (bytes % ARCH_LARGE_PAGE_SIZE) / PAGE_SIZE;
    return bytes;
}

static word_t map_heap(struct loader *l, word_t size)
{
    word_t large, small;
    heap_frames(size, &large, &small);
    word_t v = POSIX_HEAP_VADDR;
    for (word_t i = 0; i < large; i++, v += ARCH_LARGE_PAGE_SIZE) {
        word_t st = map_fresh(l, OBJ_LARGE_FRAME, v, NULL, 0, 0, RIGHT_READ | RIGHT_WRITE, VM_EXECUTE_NEVER);
        if (st != E_OK)
            return st;
    }
    for (word_t i = 0; i < small; i++, v += PAGE_SIZE) {
        word_t st = map_fresh(l, OBJ_FRAME, v, NULL, 0, 0, RIGHT_READ | RIGHT_WRITE, VM_EXECUTE_NEVER);
        if (st != E_OK)
            return st;
    }
    return E_OK;
}

/* Thread k of the pool: TCB, wait notification, IPC buffer, configured in the process's space. */
static word_t make_thread(struct loader *l, const struct posix_process_opts *o, word_t k)
{
    struct posix_process *p = l->proc;
    struct posix_thread_slot *t = &p->start.threads[k];
    t->ipcbuf_vaddr = POSIX_IPCBUF_VADDR + k * PAGE_SIZE;
    cptr_t fault_ep = posix_fault_attach(p, k);
    if (!fault_ep)
        return E_NOT_ENOUGH_MEMORY;
    word_t st = obj_alloc(OBJ_TCB, 0, &t->tcb);
    if (st == E_OK)
        st = obj_alloc(OBJ_NOTIFICATION, 0, &t->wait);
    cptr_t ipc_frame = 0;
    if (st == E_OK)
        st = obj_alloc(OBJ_FRAME, 0, &ipc_frame);
    if (st == E_OK)
        st = map_frame(ipc_frame, p->vspace, t->ipcbuf_vaddr, RIGHT_READ | RIGHT_WRITE, VM_EXECUTE_NEVER);
    if (st == E_OK)
        st = tcb_configure(t->tcb, fault_ep, ROOT_SLOT_CNODE, 0, p->vspace, t->ipcbuf_vaddr, ipc_frame);
    if (st == E_OK)
        st = store(l, &ipc_frame);
    if (st == E_OK)
        st = tcb_set_priority(t->tcb, o->prio ? o->prio : DEFAULT_PRIO);
    if (st == E_OK)
        st = tcb_set_affinity(t->tcb, o->core);
    return st;
}

/* The slots of the storage CNode: one per frame mapped (posix_process_create's steps). */
static word_t storage_bits_for(word_t segment_pages, word_t heap_size)
{
    word_t large, small;
    heap_frames(heap_size, &large, &small);
    word_t frames = segment_pages + POSIX_STACK_SIZE / PAGE_SIZE + large + small + POSIX_MAX_THREADS +
                    5; /* the boot info page, the start page, the clock page, the channel, the link */
    word_t bits = 4;
    while (((word_t)1 << bits) < frames)
        bits++;
    return bits;
}

/*
 * The boot command line's realtime_ms=, in decimal: 64 bits, which arg_word
 * cannot give on a 32-bit port.  0 (unknown) when absent or not a number.
 */
static uint64_t realtime_ms_arg(void)
{
    char digits[24];
    if (!arg_str("realtime_ms", digits, sizeof digits) || !digits[0])
        return 0;
    uint64_t ms = 0;
    for (const char *d = digits; *d; d++) {
        if (*d < '0' || *d > '9' || ms > (UINT64_MAX - 9) / 10)
            return 0;
        ms = ms * 10 + (uint64_t)(*d - '0');
    }
    return ms;
}

static word_t start_main_thread(const struct posix_process *p)
{
    word_t regs[ARCH_USER_REGS] = { 0 };
    regs[ARCH_REG_IP] = p->entry;
    regs[ARCH_REG_SP] = p->sp;
    regs[ARCH_REG_FLAGS] = ARCH_INITIAL_FLAGS;
    return tcb_write_registers(p->start.threads[0].tcb, 1, ARCH_USER_REGS, regs);
}

static word_t create(struct loader *l, const struct posix_process_opts *o, struct start_area *area)
{
    struct posix_process *p = l->proc;
    word_t st = obj_alloc(OBJ_VSPACE, 0, &p->vspace);
    if (st == E_OK)
        st = obj_alloc(OBJ_CNODE, l->storage_bits, &p->storage);
    if (st == E_OK)
        st = load_segments(l);
    if (st == E_OK)
        st = build_start_area(l, o, area, &p->sp);
    if (st == E_OK)
        st = map_stack(l, area);
    if (st == E_OK)
        st = map_heap(l, o->heap_size);
    if (st == E_OK)
        st = map_copy(l, ROOT_SLOT_BOOTINFO_FRAME, BOOTINFO_VADDR, RIGHT_READ, VM_EXECUTE_NEVER);
    if (st == E_OK && arch_posix_clock_frame()) {
        st = map_copy(l, arch_posix_clock_frame(), POSIX_CLOCK_VADDR, RIGHT_READ,
                      VM_UNCACHED | VM_EXECUTE_NEVER);
        p->start.clock_vaddr = POSIX_CLOCK_VADDR;
    }
    if (st == E_OK && o->channel)
        st = map_copy(l, o->channel_frame, (word_t)o->channel, RIGHT_READ | RIGHT_WRITE, VM_EXECUTE_NEVER);
    if (st == E_OK && o->link)
        st = map_copy(l, o->link_frame, (word_t)o->link, RIGHT_READ | RIGHT_WRITE, VM_EXECUTE_NEVER);
    for (word_t k = 0; st == E_OK && k < POSIX_MAX_THREADS; k++) {
        st = make_thread(l, o, k);
        p->start.nthreads = k + 1;
    }
    if (st == E_OK)
        st = map_fresh(l, OBJ_FRAME, POSIX_START_VADDR, &p->start, 0, sizeof(p->start), RIGHT_READ,
                       VM_EXECUTE_NEVER);
    return st;
}

word_t posix_process_create(const struct posix_process_opts *o, struct posix_process *p)
{
    _Static_assert(sizeof(struct posix_start) <= PAGE_SIZE, "the start page is one page");
    _Static_assert(POSIX_START_VADDR >= POSIX_RESERVED_START && POSIX_START_VADDR < POSIX_CLOCK_VADDR &&
                   POSIX_IPCBUF_VADDR + POSIX_MAX_THREADS * PAGE_SIZE <= POSIX_RESERVED_END,
                   "the fixed pages lie in the reserved range without overlapping");
    static struct start_area area;
    struct loader l = { .image = posix_program_start,
                        .size = program_size(), .proc = p };
    memset(p, 0, sizeof(*p));
    if (o->heap_size > ARCH_POSIX_USER_TOP - POSIX_HEAP_VADDR) {
        printf("posix: a heap of %lu bytes does not fit user space above 0x%lx\n",
               (unsigned long)o->heap_size, (unsigned long)POSIX_HEAP_VADDR);
        return E_INVALID_ARGUMENT;
    }
    if (o->channel && overlaps((word_t)o->channel, (word_t)o->channel + ARCH_LARGE_PAGE_SIZE,
                               POSIX_HEAP_VADDR, POSIX_HEAP_VADDR + PAGE_UP(o->heap_size))) {
        printf("posix: the channel at 0x%lx lies in the heap\n", (unsigned long)o->channel);
        return E_INVALID_ARGUMENT;
    }
    if (o->link && overlaps((word_t)o->link, (word_t)o->link + ARCH_LARGE_PAGE_SIZE,
                            POSIX_HEAP_VADDR, POSIX_HEAP_VADDR + PAGE_UP(o->heap_size))) {
        printf("posix: the socket link at 0x%lx lies in the heap\n", (unsigned long)o->link);
        return E_INVALID_ARGUMENT;
    }
    if (o->core >= bootinfo->ncores) {
        printf("posix: core %lu is not online (%lu cores)\n", (unsigned long)o->core,
               (unsigned long)bootinfo->ncores);
        return E_INVALID_ARGUMENT;
    }
    word_t pages = 0;
    word_t st = check_elf(&l, o, &pages);
    if (st != E_OK)
        return st;
    p->index = posix_fault_free_index();
    if (p->index == POSIX_MAX_PROCESSES) {
        printf("posix: already %u processes\n", POSIX_MAX_PROCESSES);
        return E_NOT_ENOUGH_MEMORY;
    }
    if (!scratch_page)
        scratch_page = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);

    p->entry = l.eh.e_entry;
    p->state = POSIX_RUNNING;
    p->start = (struct posix_start){
        .magic = POSIX_START_MAGIC, .core = o->core, .cycle_hz = bootinfo->cycle_hz,
        .realtime_ms = realtime_ms_arg(),
        .heap_vaddr = POSIX_HEAP_VADDR, .heap_size = PAGE_UP(o->heap_size), .channel = o->channel,
        .link = o->link,
    };
    l.storage_bits = storage_bits_for(pages, o->heap_size);
    st = create(&l, o, &area);
    if (st != E_OK) {
        printf("posix: the process could not be made (%s)\n", status_name(st));
        return st;
    }
    posix_fault_watch(p, o->ended_signal);
    return start_main_thread(p);
}
