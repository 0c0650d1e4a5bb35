/*
 * One replayed kernel entry (entry.h).
 */
#include "entry.h"

/*
 * Every footprint line costs a load, an add and a store; the count costs a
 * load, an add and a store; the rest of the section's instructions are a
 * loop of two (dec, jnz) whose count is fixed by its bound, so the section
 * runs the kernel's instruction count whatever the compiler does around it.
 * Relaxed atomics compile to plain moves on x86_64 and keep the `none`
 * variant's overlapping sections from being undefined behaviour.
 */
#define INSNS_PER_LINE 3
#define INSNS_FOR_COUNT 3
#define INSNS_PER_LOOP 2

uint64_t entry_fixed_instructions(unsigned lines)
{
    return (uint64_t)lines * INSNS_PER_LINE + INSNS_FOR_COUNT;
}

static inline void burn(uint64_t iterations)
{
    if (iterations == 0) {
        return;
    }
    __asm__ volatile("1:\n\tdec %0\n\tjnz 1b" : "+r"(iterations) : : "cc");
}

static inline void section(struct entry_object *o, const struct entry_shape *shape)
{
    uint64_t seen = __atomic_load_n(&o->sections, __ATOMIC_RELAXED);
    uint64_t fixed = entry_fixed_instructions(shape->lines);

    for (unsigned i = 0; i < shape->lines; i++) {
        uint64_t *w = &o->lines[i].word;

        __atomic_store_n(w, __atomic_load_n(w, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    }
    burn(shape->instructions > fixed ? (shape->instructions - fixed) / INSNS_PER_LOOP : 0);
    __atomic_store_n(&o->sections, seen + 1, __ATOMIC_RELAXED);
}

void entry_section(struct entry_object *o, const struct entry_shape *shape)
{
    section(o, shape);
}

uint64_t entry_run(struct entry_object *o, const struct entry_shape *shape, bool force_abort)
{
    uint64_t start = lock_env_cycles();

    kernel_lock_acquire(ENTRY_IPC);
    object_lock_acquire(&o->lock);
    if (force_abort) {
        kernel_lock_require_exclusive();
    }
    section(o, shape);
    object_lock_release(&o->lock);
    kernel_lock_release();
    return lock_env_cycles() - start;
}

void entry_think(uint64_t cycles)
{
    uint64_t start = lock_env_cycles();

    while (lock_env_cycles() - start < cycles) {
        __asm__ volatile("" ::: "memory");
    }
}
