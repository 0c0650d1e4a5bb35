/*
 * Measured windows for tools/insn_profile.py.  A benchmark brackets the
 * code it wants profiled with bench_window_begin() and bench_window_end();
 * the tool finds the first instruction of each in QEMU's execution trace and
 * attributes every instruction between them to a function.
 *
 * Both read the counter at the same distance from their first instruction
 * (the two bodies are the same code), so under -icount the difference of
 * their readings is exactly the number of instructions from the entry of
 * begin to the entry of end: the figure the tool's table must add up to.
 * noipa keeps each an out-of-line function of its own: GCC would otherwise
 * fold the two identical bodies into one symbol, or inline them.
 */
#include <apps.h>
#include "bench.h"

__attribute__((noipa)) uint64_t bench_window_begin(void)
{
    return arch_cycles();
}

__attribute__((noipa)) uint64_t bench_window_end(void)
{
    return arch_cycles();
}

void bench_window_record(const char *bench, const char *config_json, uint64_t begin, uint64_t end,
                         uint64_t operations)
{
    printf("@@ {\"window\": {\"bench\": \"%s\", \"config\": %s, \"unit\": \"%s\", \"counter\": %llu, "
           "\"operations\": %llu}}\n", bench, config_json, bench_icount() ? "instructions" : "cycles",
           (unsigned long long)(end - begin), (unsigned long long)operations);
}
