/*
 * The console lock and per-core line buffers.
 *
 * Lines from different cores must not mix (docs/console.md), even under
 * LOCK=none where several cores run the kernel at once, so the console has
 * its own lock, independent of the kernel lock: a test-and-test-and-set
 * spinlock held only while one line is written out.  Each core fills its
 * own buffer without any lock (interrupts are off in the kernel, so nothing
 * else on the core can write to it meanwhile).
 *
 * A line also holds one writer's bytes only.  A user thread may leave a
 * partial line between two SYS_DEBUG_PUTS calls and be switched out; when
 * the kernel itself or another thread then writes on that core, the
 * partial line is ended first, so its bytes never prefix someone else's
 * record.
 */
#include "printf.h"
#include <arch.h>
#include <cpu_relax.h>
#include <abi/msginfo.h>

/*
 * Long enough for the longest record any writer prints (a user program's
 * start record, the kernel's lockstats and invariant records), so that a
 * line goes out whole; only a longer line is written in pieces.
 */
#define LINE_MAX 2048

/* One SYS_DEBUG_PUTS call's bytes fit one line. */
_Static_assert(LINE_MAX > (MSG_MAX_LENGTH - 1) * sizeof(word_t),
               "a SYS_DEBUG_PUTS call must fit one line buffer");

struct line_buffer {
    char text[LINE_MAX];
    unsigned len;
    const void *writer;     /* whose partial line: a thread, or NULL for the kernel */
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

/* End this core's partial line, if any, and write it out. */
static void line_end(struct line_buffer *b)
{
    if (b->len) {
        b->text[b->len++] = '\n';
        line_flush(b);
    }
}

/*
 * Add one character from writer to this core's line; the line goes out at
 * '\n' or when full.  Another writer's partial line is ended first.
 */
void console_put_from(const void *writer, char c)
{
    struct line_buffer *b = &lines[arch_core_id() % NCPUS];
    if (b->writer != writer)
        line_end(b);
    b->writer = writer;
    b->text[b->len++] = c;
    if (c == '\n' || b->len == LINE_MAX - 1)
        line_flush(b);
}

void console_put(char c)
{
    console_put_from(NULL, c);
}

void kflush(void)
{
    line_end(&lines[arch_core_id() % NCPUS]);
}
