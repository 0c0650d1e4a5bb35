/*
 * Kernel console output, panic and assertions.
 *
 * Output is buffered per core and a line is written whole under the
 * console lock (kernel/console.c), which is separate from the kernel lock:
 * under LOCK=none several cores may print, and lines must still not mix
 * (docs/console.md).  Code that may run inside an RTM transaction calls
 * kernel_lock_require_exclusive() before printing.
 */
#ifndef KERNEL_PRINTF_H
#define KERNEL_PRINTF_H

#include <stdarg.h>
#include "types.h"

/* Formats: %d %u %x %lx %lu %ld %p %s %c %%; 'l' and 'z' give word size; width and '0' pad. */
void kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void kvprintf(const char *fmt, va_list ap);

/*
 * Print n raw bytes of writer's text (a line ends at '\n'), for
 * SYS_DEBUG_PUTS: writer is the calling thread, so that its partial line
 * never shares a line with another writer's (kernel/console.c).
 */
void kputs_n(const void *writer, const char *s, size_t n);

/* Print a JSON string body, escaping quotes, backslashes and control characters. */
void kprint_json_string(const char *s, size_t n);

/* Add one character to this core's line, from the kernel or from writer (console.c). */
void console_put(char c);
void console_put_from(const void *writer, char c);

/* End this core's partial line, if any, and write it out. */
void kflush(void);

/* The console lock: held only while one whole line goes out. */
void console_lock(void);
void console_unlock(void);

_Noreturn void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#if DEBUG
#define assert(cond)                                                         \
    do {                                                                     \
        if (unlikely(!(cond)))                                               \
            panic("assertion '%s' failed at %s:%d", #cond, __FILE__, __LINE__); \
    } while (0)
#else
#define assert(cond) do { (void)sizeof(cond); } while (0)
#endif

#endif
