/*
 * The POSIX loader's test program (docs/posix-loader.md,
 * tests/test_posix_loader.py): a freestanding static ELF that looks at
 * what the loader promises a process and reports it in one record,
 * `@@ {"posix_start_check": {...}}`, for the host to check field by field:
 * the start stack (argc, argv, envp, the auxiliary vector, the alignment
 * of sp), the start page, the boot info page, the heap (zero and writable at both ends), .bss
 * zero and .data initialised, the core it runs on, on a port with a
 * clock page that the clock advances, and the network channel's port when
 * it has a channel.  It then ends with Linux's
 * exit_group (status 0, or N with the word `exit=N` in argv).  With the
 * word `fault` in argv it instead writes to its read-only data, with
 * `exec` it calls into its .data, which is execute-never, and with
 * `read=ADDR` it reads an address where nothing is mapped: each must
 * fault (the root task's fault server reports it).
 *
 * It has no C library and no personality: it uses the kernel's ABI
 * directly (abi/, the port's syscall_arch.h).  sys.h is no use here: its
 * ipcbuf() finds thread data by masking the stack pointer, which a Linux
 * start stack does not have.  Console output goes through SYS_DEBUG_PUTS
 * with the message continued in the IPC buffer the start page names.
 */
#include <abi/bootinfo.h>
#include <abi/errors.h>
#include <abi/ipc_buffer.h>
#include <abi/syscalls.h>
#include <posix_start.h>
#include <stdbool.h>
#include <stddef.h>
#include <syscall_arch.h>

void posix_check_main(word_t *sp);
_Noreturn void posix_check_exit(word_t status);

/* The entry point, and the ELF header of the program as loaded (program.ld). */
extern char _start[];
extern const unsigned char __ehdr_start[];

/* The arm-imx6 global timer's counter, at this offset in the clock page. */
#define CLOCK_COUNTER_OFFSET 0x200

/* .data and .bss the loader must have set up: 5 pages of .bss, so most of it is past .data's pages. */
#define DATA_WORDS 64
static word_t data_block[DATA_WORDS] = {
    [0] = 0x11, [1] = 0x2222, [DATA_WORDS / 2] = 0x333333, [DATA_WORDS - 1] = 0x44444444,
};
static unsigned char bss_block[5 * 4096 + 123];
/* What a write must not change: in the read-only segment (a const volatile object would not be). */
__attribute__((section(".rodata.check"), used)) static const word_t rodata_word = 0x5a5a5a5a;

/* ---- output: one buffer, printed in as few SYS_DEBUG_PUTS calls as the message allows */

static char out[6144];
static size_t out_len;

static void put(const char *s)
{
    while (*s && out_len < sizeof(out) - 1)
        out[out_len++] = *s++;
}

static void put_num(word_t v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n && out_len < sizeof(out) - 1)
        out[out_len++] = digits[--n];
}

static void put_bool(bool b)
{
    put(b ? "true" : "false");
}

/* A JSON string: printable ASCII, with " and \ escaped and everything else as \u00XX. */
static void put_str(const char *s)
{
    static const char hex[] = "0123456789abcdef";
    put("\"");
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        char esc[7] = { '\\', (char)c, 0 };
        if (c < 0x20 || c > 0x7e) {
            esc[1] = 'u';
            esc[2] = '0';
            esc[3] = '0';
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            esc[6] = 0;
            put(esc);
        } else if (c == '"' || c == '\\') {
            put(esc);
        } else {
            esc[0] = (char)c;
            esc[1] = 0;
            put(esc);
        }
    }
    put("\"");
}

static void put_field(const char *name, word_t v)
{
    put("\"");
    put(name);
    put("\": ");
    put_num(v);
}

/*
 * SYS_DEBUG_PUTS: the length in MR0, the bytes packed little-endian from
 * MR1.  Registers beyond ARCH_MSG_REGS are in the IPC buffer, when there is
 * one; without (ipc NULL) each call carries what the registers hold.
 */
static void print(const char *s, size_t len, struct ipc_buffer *ipc)
{
    size_t per_call = (ipc ? MSG_MAX_LENGTH - 1 : ARCH_MSG_REGS - 1) * sizeof(word_t);
    while (len) {
        size_t n = len < per_call ? len : per_call;
        word_t mr[ARCH_MSG_REGS] = { n };
        size_t words = (n + sizeof(word_t) - 1) / sizeof(word_t);
        for (size_t i = 0; i < words; i++) {
            word_t w = 0;
            for (size_t b = 0; b < sizeof(word_t) && i * sizeof(word_t) + b < n; b++)
                w |= (word_t)(unsigned char)s[i * sizeof(word_t) + b] << (8 * b);
            if (1 + i < ARCH_MSG_REGS)
                mr[1 + i] = w;
            else
                ipc->msg[1 + i] = w;
        }
        word_t cptr = 0, info = msginfo_new(0, 0, 0, 1 + words);
        arch_syscall(SYS_DEBUG_PUTS, &cptr, &info, mr);
        s += n;
        len -= n;
    }
}

static void flush(struct ipc_buffer *ipc)
{
    print(out, out_len, ipc);
    out_len = 0;
}

/* ---- the kernel calls the checks make (none needs an IPC buffer) */

static word_t current_core(void)
{
    word_t cptr = 0, info = 0, mr[ARCH_MSG_REGS] = { 0 };
    arch_syscall(SYS_DEBUG_CORE, &cptr, &info, mr);
    return mr[0];
}

/* Poll (NBRecv) a notification: the status says whether the cap names one. */
static word_t poll_status(cptr_t notification)
{
    word_t cptr = notification, info = 0, mr[ARCH_MSG_REGS] = { 0 };
    return arch_syscall(SYS_NBRECV, &cptr, &info, mr);
}

/* ---- the checks */

static bool streq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

static bool starts_with(const char *s, const char *prefix)
{
    while (*prefix)
        if (*s++ != *prefix++)
            return false;
    return true;
}

/* A number in decimal, or in hex after 0x. */
static word_t parse_num(const char *s)
{
    word_t v = 0, base = 10;
    if (s[0] == '0' && s[1] == 'x') {
        base = 16;
        s += 2;
    }
    for (;; s++) {
        word_t d = *s >= '0' && *s <= '9' ? (word_t)(*s - '0')
                 : base == 16 && *s >= 'a' && *s <= 'f' ? (word_t)(*s - 'a' + 10) : base;
        if (d >= base)
            return v;
        v = v * base + d;
    }
}

static bool all_zero(const volatile unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static bool data_initialised(void)
{
    for (word_t i = 0; i < DATA_WORDS; i++) {
        word_t want = i == 0 ? 0x11 : i == 1 ? 0x2222 : i == DATA_WORDS / 2 ? 0x333333
                    : i == DATA_WORDS - 1 ? 0x44444444 : 0;
        if (((volatile word_t *)data_block)[i] != want)
            return false;
    }
    return true;
}

/* The heap: zero everywhere, then a write at each end reads back. */
static void check_heap(const struct posix_start *ps)
{
    volatile word_t *first = (volatile word_t *)ps->heap_vaddr;
    volatile word_t *last = (volatile word_t *)(ps->heap_vaddr + ps->heap_size) - 1;
    bool zero = ps->heap_size && all_zero((const volatile unsigned char *)first, ps->heap_size);
    bool writable = false;
    if (ps->heap_size) {
        *first = 0xfeedf00d;
        *last = 0xdeadbeef;
        writable = *first == 0xfeedf00d && *last == 0xdeadbeef;
    }
    put("\"heap\": {\"zero\": ");
    put_bool(zero);
    put(", \"writable\": ");
    put_bool(writable);
    put("}");
}

static void check_clock(const struct posix_start *ps)
{
    put("\"clock_advances\": ");
    if (!ps->clock_vaddr) {
        put("null");
        return;
    }
    volatile const uint32_t *counter = (volatile const uint32_t *)(ps->clock_vaddr + CLOCK_COUNTER_OFFSET);
    uint32_t before = counter[0];
    bool advanced = false;
    for (int i = 0; i < 1000000 && !advanced; i++)
        advanced = counter[0] != before;
    put_bool(advanced);
}

static void put_strings(const char *name, char **v, word_t n)
{
    put("\"");
    put(name);
    put("\": [");
    for (word_t i = 0; i < n; i++) {
        put(i ? ", " : "");
        put_str(v[i]);
    }
    put("]");
}

struct field {
    const char *name;
    word_t value;
};

/* "name": value pairs, separated by commas. */
static void put_fields(const struct field *f, word_t n)
{
    for (word_t i = 0; i < n; i++) {
        put(i ? ", " : "");
        put_field(f[i].name, f[i].value);
    }
}

static void put_start_page(const struct posix_start *ps)
{
    const struct field fields[] = {
        { "magic", ps->magic }, { "core", ps->core }, { "cycle_hz", ps->cycle_hz },
        { "clock_vaddr", ps->clock_vaddr }, { "heap_vaddr", ps->heap_vaddr },
        { "heap_size", ps->heap_size }, { "channel", (word_t)ps->channel }, { "nthreads", ps->nthreads },
    };
    put("\"start\": {");
    put_fields(fields, sizeof(fields) / sizeof(fields[0]));
    put(", \"threads\": [");
    for (word_t k = 0; k < ps->nthreads && k < POSIX_MAX_THREADS; k++) {
        const struct field thread[] = {
            { "tcb", ps->threads[k].tcb }, { "wait", ps->threads[k].wait },
            { "ipcbuf_vaddr", ps->threads[k].ipcbuf_vaddr },
            { "wait_poll", poll_status(ps->threads[k].wait) },
        };
        put(k ? ", {" : "{");
        put_fields(thread, sizeof(thread) / sizeof(thread[0]));
        put("}");
    }
    put("]}");
}

/* The ELF header's e_phoff and e_phnum, read in memory: Elf32 and Elf64 differ only by the word size. */
static void put_own_headers(void)
{
    word_t phoff;
    uint16_t phnum;
    const unsigned char *eh = __ehdr_start;
    __builtin_memcpy(&phoff, eh + 24 + sizeof(word_t), sizeof(phoff));
    __builtin_memcpy(&phnum, eh + 24 + 3 * sizeof(word_t) + 8, sizeof(phnum));
    const struct field fields[] = {
        { "entry", (word_t)_start }, { "phdr", (word_t)eh + phoff }, { "phnum", phnum },
        { "rodata_word", (word_t)&rodata_word }, { "data_block", (word_t)data_block },
    };
    put("\"self\": {");
    put_fields(fields, sizeof(fields) / sizeof(fields[0]));
    put("}");
}

void posix_check_main(word_t *sp)
{
    const struct posix_start *ps = (const struct posix_start *)POSIX_START_VADDR;
    struct ipc_buffer *ipc = ps->magic == POSIX_START_MAGIC && ps->nthreads
                             ? (struct ipc_buffer *)ps->threads[0].ipcbuf_vaddr : NULL;
    word_t argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    word_t envc = 0;
    while (envp[envc])
        envc++;
    word_t *auxv = (word_t *)(envp + envc + 1);

    bool fault = false, exec = false;
    word_t status = 0, read_at = 0;
    for (word_t i = 1; i < argc; i++) {
        if (streq(argv[i], "fault"))
            fault = true;
        else if (streq(argv[i], "exec"))
            exec = true;
        else if (starts_with(argv[i], "exit="))
            status = parse_num(argv[i] + 5);
        else if (starts_with(argv[i], "read="))
            read_at = parse_num(argv[i] + 5);
    }

    put("@@ {\"posix_start_check\": {");
    put_field("sp", (word_t)sp);
    put(", ");
    put_field("argc", argc);
    put(", ");
    put_strings("argv", argv, argc);
    put(", ");
    put_strings("envp", envp, envc);
    put(", \"auxv\": [");
    word_t random_at = 0;
    for (word_t i = 0; auxv[2 * i] != 0; i++) {
        put(i ? ", [" : "[");
        put_num(auxv[2 * i]);
        put(", ");
        put_num(auxv[2 * i + 1]);
        put("]");
        if (auxv[2 * i] == 25)     /* AT_RANDOM */
            random_at = auxv[2 * i + 1];
    }
    put("], \"random\": [");
    for (word_t i = 0; random_at && i < 16; i++) {
        put(i ? ", " : "");
        put_num(((const unsigned char *)random_at)[i]);
    }
    put("], ");
    put_start_page(ps);
    put(", ");
    put_own_headers();
    put(", ");
    put_field("core", current_core());
    put(", ");
    check_heap(ps);
    put(", \"bss_zero\": ");
    put_bool(all_zero(bss_block, sizeof(bss_block)));
    put(", \"data_initialised\": ");
    put_bool(data_initialised());
    put(", ");
    check_clock(ps);
    put(", \"ipc_buffer\": ");
    put_bool(ipc != NULL);
    const struct bootinfo *bi = (const struct bootinfo *)BOOTINFO_VADDR;
    put(", \"bootinfo\": {");
    put_field("ncores", bi->ncores);
    put(", \"arch\": ");
    put_str(bi->arch);
    put("}");
    /* The channel's second word is its port (struct net_channel begins with index, port). */
    put(", \"channel_port\": ");
    if (ps->channel)
        put_num(((const volatile word_t *)ps->channel)[1]);
    else
        put("null");
    put("}}\n");
    flush(ipc);

    if (fault) {
        put("posix_check: writing to read-only data, which must fault\n");
        flush(ipc);
        *(volatile word_t *)&rodata_word = 1;
        put("@@ {\"posix_check_fault_missed\": true}\n");
        flush(ipc);
        status = 1;
    }
    if (read_at) {
        put("posix_check: reading an address the loader promised nothing at, which must fault\n");
        flush(ipc);
        status = *(volatile word_t *)read_at;
        put("@@ {\"posix_check_fault_missed\": true}\n");
        flush(ipc);
        status = 1;
    }
    if (exec) {
        put("posix_check: calling into .data, which is execute-never\n");
        flush(ipc);
        ((void (*)(void))(word_t)data_block)();
        put("@@ {\"posix_check_fault_missed\": true}\n");
        flush(ipc);
        status = 1;
    }
    posix_check_exit(status);
}
