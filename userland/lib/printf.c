/*
 * Formatted output.  printf formats into a buffer on the stack and prints it
 * with one SYS_DEBUG_PUTS, so a line printed by one call is never split
 * between threads (the kernel serialises console output per call).
 */
#include <libc.h>
#include <sys.h>

struct out {
    char *buf;
    size_t size;
    size_t len;     /* characters produced, even those beyond size */
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void put_padded(struct out *o, const char *s, size_t n, int width, bool left, char pad)
{
    int fill = width > (int)n ? width - (int)n : 0;
    if (!left && pad == '0' && n && (*s == '-')) {
        put(o, *s++);
        n--;
    }
    if (!left)
        while (fill-- > 0)
            put(o, pad);
    while (n--)
        put(o, *s++);
    if (left)
        while (fill-- > 0)
            put(o, ' ');
}

static size_t utoa(char *tmp, unsigned long long v, unsigned base, bool upper)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char rev[24];
    size_t n = 0, i = 0;
    do {
        rev[n++] = digits[v % base];
        v /= base;
    } while (v);
    while (n)
        tmp[i++] = rev[--n];
    return i;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = { buf, size, 0 };

    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            put(&o, *fmt);
            continue;
        }
        fmt++;
        bool left = false;
        char pad = ' ';
        for (;; fmt++) {
            if (*fmt == '-')
                left = true;
            else if (*fmt == '0')
                pad = '0';
            else
                break;
        }
        int width = 0, prec = -1;
        if (*fmt == '*') {
            width = va_arg(ap, int);
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9')
            width = width * 10 + (*fmt++ - '0');
        if (*fmt == '.') {
            fmt++;
            prec = 0;
            if (*fmt == '*') {
                prec = va_arg(ap, int);
                fmt++;
            }
            while (*fmt >= '0' && *fmt <= '9')
                prec = prec * 10 + (*fmt++ - '0');
        }
        int lng = 0;
        while (*fmt == 'l') {
            lng++;
            fmt++;
        }
        if (*fmt == 'z') {
            lng = 1;
            fmt++;
        }

        char tmp[32];
        size_t n;
        unsigned long long u;
        switch (*fmt) {
        case 'd':
        case 'i': {
            long long v = lng >= 2 ? va_arg(ap, long long) : lng ? va_arg(ap, long) : va_arg(ap, int);
            u = v < 0 ? -(unsigned long long)v : (unsigned long long)v;
            tmp[0] = '-';
            n = utoa(tmp + (v < 0), u, 10, false) + (v < 0);
            put_padded(&o, tmp, n, width, left, pad);
            break;
        }
        case 'u':
        case 'x':
        case 'X':
            u = lng >= 2 ? va_arg(ap, unsigned long long) : lng ? va_arg(ap, unsigned long)
                                                                 : va_arg(ap, unsigned int);
            n = utoa(tmp, u, *fmt == 'u' ? 10 : 16, *fmt == 'X');
            put_padded(&o, tmp, n, width, left, pad);
            break;
        case 'p':
            tmp[0] = '0';
            tmp[1] = 'x';
            n = 2 + utoa(tmp + 2, (uintptr_t)va_arg(ap, void *), 16, false);
            put_padded(&o, tmp, n, width, left, pad);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (!s)
                s = "(null)";
            n = strlen(s);
            if (prec >= 0 && (size_t)prec < n)
                n = prec;
            put_padded(&o, s, n, width, left, ' ');
            break;
        }
        case 'c':
            tmp[0] = (char)va_arg(ap, int);
            put_padded(&o, tmp, 1, width, left, ' ');
            break;
        case '%':
            put(&o, '%');
            break;
        case 0:
            fmt--;
            break;
        default:
            put(&o, '%');
            put(&o, *fmt);
            break;
        }
    }
    if (size)
        buf[o.len < size ? o.len : size - 1] = 0;
    return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

void puts_raw(const char *s, size_t len)
{
    sys_debug_puts(s, len);
}

int printf(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    size_t len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
    puts_raw(buf, len);
    return n;
}

void json_escape(char *buf, size_t size, const char *s)
{
    size_t j = 0;
    for (; *s && j + 7 < size; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            buf[j++] = '\\';
            buf[j++] = (char)c;
        } else if (c < 0x20) {
            j += snprintf(buf + j, size - j, "\\u%04x", c);
        } else {
            buf[j++] = (char)c;
        }
    }
    buf[j] = 0;
}
