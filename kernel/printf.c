/*
 * kprintf and panic.  Characters go to this core's line buffer
 * (kernel/console.c); whole lines go out under the console lock.
 */
#include "printf.h"
#include "core.h"
#include <arch.h>
#include <lock.h>

typedef void (*put_fn)(void *arg, char c);

static void put_console(void *arg, char c)
{
    (void)arg;
    console_put(c);
}

static void put_number(put_fn put, void *arg, word_t v, unsigned base, bool neg,
                       unsigned width, char pad)
{
    char digits[24];
    unsigned n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    if (neg)
        digits[n++] = '-';
    while (width > n) {
        put(arg, pad);
        width--;
    }
    while (n)
        put(arg, digits[--n]);
}

static void vformat(put_fn put, void *arg, const char *fmt, va_list ap)
{
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(arg, *fmt);
            continue;
        }
        fmt++;
        char pad = ' ';
        unsigned width = 0;
        bool is_long = false;
        if (*fmt == '0') {
            pad = '0';
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (unsigned)(*fmt++ - '0');
        while (*fmt == 'l' || *fmt == 'z') {
            is_long = true;
            fmt++;
        }
        switch (*fmt) {
        case 'd': {
            long v = is_long ? va_arg(ap, long) : va_arg(ap, int);
            put_number(put, arg, v < 0 ? (word_t)-v : (word_t)v, 10, v < 0, width, pad);
            break;
        }
        case 'u':
            put_number(put, arg, is_long ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 10,
                       false, width, pad);
            break;
        case 'x':
            put_number(put, arg, is_long ? va_arg(ap, unsigned long) : va_arg(ap, unsigned), 16,
                       false, width, pad);
            break;
        case 'p':
            put(arg, '0');
            put(arg, 'x');
            put_number(put, arg, (word_t)va_arg(ap, void *), 16, false, width, pad);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            while (*s)
                put(arg, *s++);
            break;
        }
        case 'c':
            put(arg, (char)va_arg(ap, int));
            break;
        case '%':
            put(arg, '%');
            break;
        case '\0':
            return;
        default:
            put(arg, '%');
            put(arg, *fmt);
            break;
        }
    }
}

void kvprintf(const char *fmt, va_list ap)
{
    vformat(put_console, NULL, fmt, ap);
}

void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvprintf(fmt, ap);
    va_end(ap);
}

void kputs_n(const void *writer, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        console_put_from(writer, s[i]);
}

void kprint_json_string(const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i]; i++) {
        char c = s[i];
        if (c == '"' || c == '\\') {
            console_put('\\');
            console_put(c);
        } else if ((unsigned char)c < 0x20 || (unsigned char)c >= 0x7f) {
            kprintf("\\u%04x", (unsigned)(unsigned char)c);
        } else {
            console_put(c);
        }
    }
}

struct string_sink {
    char *buf;
    size_t len;
    size_t size;
};

static void put_string(void *arg, char c)
{
    struct string_sink *s = arg;
    if (s->len + 1 < s->size)
        s->buf[s->len++] = c;
}

static bool panicking[NCPUS];

_Noreturn void panic(const char *fmt, ...)
{
    char reason[160];
    struct string_sink sink = { reason, 0, sizeof(reason) };
    va_list ap;
    unsigned core = arch_core_id() % NCPUS;

    va_start(ap, fmt);
    vformat(put_string, &sink, fmt, ap);
    va_end(ap);
    reason[sink.len] = '\0';

    /* A panic while panicking (the console itself broken) just stops. */
    if (!panicking[core]) {
        panicking[core] = true;
        kflush();
        kprintf("@@ {\"panic\": {\"core\": %u, \"reason\": \"", core);
        kprint_json_string(reason, sink.len);
        kprintf("\"}}\n");
        kflush();
        arch_panic_backtrace();
    }
    arch_halt_core();
}
