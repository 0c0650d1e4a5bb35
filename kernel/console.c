/*
 * The console lock and per-core line buffers.
 *
 * Lines from different cores must not mix (docs/console.md), even under
 * LOCK=none where several cores run the kernel at once, so the console has
 * its own lock, independent of the kernel lock: a test-and-test-and-set
 * spinlock held only while one line is written out.  Each core fills its
 * own buffer without any lock (interrupts are off in the kernel, so nothing
 * else on the core can write to it meanwhile).
 */
#include "printf.h"
#include <arch.h>
#include <cpu_relax.h>

#define LINE_MAX 256

struct line_buffer {
    char text[LINE_MAX];
    unsigned len;
} CACHE_ALIGNED;

static struct line_buffer lines[NCPUS];
static uint32_t console_word;   /* 0 free, 1 held */

void console_lock(void)
{
    for (;;) {
        /* Acquire pairs with the release store in console_unlock(): the
         * previous holder's characters are out before ours start. */
        if (__atomic_exchange_n(&console_word, 1, __ATOMIC_ACQUIRE) == 0)
            return;
        /* Spin on a plain read so the line is shared, not bounced, while held. */
        while (__atomic_load_n(&console_word, __ATOMIC_RELAXED))
            cpu_relax();
    }
}

void console_unlock(void)
{
    __atomic_store_n(&console_word, 0, __ATOMIC_RELEASE);
}

static void line_flush(struct line_buffer *b)
{
    if (b->len == 0)
        return;
    console_lock();
    for (unsigned i = 0; i < b->len; i++)
        arch_console_putc(b->text[i]);
    console_unlock();
    b->len = 0;
}

/* Add one character to this core's line; the line goes out at '\n' or when full. */
void console_put(char c);
void console_put(char c)
{
    struct line_buffer *b = &lines[arch_core_id() % NCPUS];
    b->text[b->len++] = c;
    if (c == '\n' || b->len == LINE_MAX)
        line_flush(b);
}

void kflush(void)
{
    line_flush(&lines[arch_core_id() % NCPUS]);
}
