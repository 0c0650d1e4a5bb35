/*
 * Does this CPU really run Intel RTM transactions?  CPUID (leaf 7, EBX bit
 * 11) is not enough: inside the KVM guests of the build machines it
 * advertises RTM yet XBEGIN raises #GP, and microcode may leave RTM advertised but make it
 * always abort (leaf 7, EDX bit 11).  So the probe executes XBEGIN with this
 * core's exception fixup armed (idt.c): a #UD or #GP resumes at the recovery
 * label instead of panicking.  RTM counts as working when an XABORT reports
 * its code and at least one transaction commits.
 */
#include <arch/cpu.h>
#include <arch/x86.h>

#define PROBE_TRIES     32
#define ABORT_CODE      0x5a
#define XABORT_EXPLICIT (1u << 0)
#define PROBE_COMMITTED 1
#define PROBE_ABORTED   0
#define PROBE_FAULTED   2

/* One XBEGIN: commit (XEND) or abort (XABORT), reporting the abort status. */
static unsigned probe_once(bool abort, uint32_t *status)
{
    unsigned result = PROBE_FAULTED;
    uint32_t eax = 0;
    /* %gs:PERCORE_FIXUP_RIP is the fixup address; cleared on every path. */
    __asm__ volatile(
        "leaq 3f(%%rip), %%rcx\n\t"
        "movq %%rcx, %%gs:%c[fixup]\n\t"
        "xbegin 2f\n\t"
        "testl %[abort], %[abort]\n\t"
        "jz 1f\n\t"
        "xabort %[code]\n"
        "1:\n\t"
        "xend\n\t"
        "movl %[committed], %[res]\n\t"
        "jmp 3f\n"
        "2:\n\t"                        /* aborted: EAX holds the status */
        "movl %[aborted], %[res]\n"
        "3:\n\t"
        "movq $0, %%gs:%c[fixup]"
        : [res] "+r"(result), "+a"(eax)
        : [abort] "r"((unsigned)abort), [code] "i"(ABORT_CODE), [fixup] "i"(PERCORE_FIXUP_RIP),
          [committed] "i"(PROBE_COMMITTED), [aborted] "i"(PROBE_ABORTED)
        : "rcx", "memory", "cc");
    *status = eax;
    return result;
}

static void say(const char *what)
{
    x86_console_lock();
    x86_puts("x86_64: RTM ");
    x86_puts(what);
    x86_puts("\n");
    x86_console_unlock();
}

bool lock_rtm_probe(void)
{
    if (!x86_features.rtm_cpuid) {
        say("not advertised by CPUID");
        return false;
    }
    if ((cpuid(7, 0).edx >> 11) & 1) {
        say("advertised but disabled by microcode (RTM_ALWAYS_ABORT)");
        return false;
    }
    uint32_t status;
    unsigned r = probe_once(true, &status);
    if (r == PROBE_FAULTED) {
        say(this_core()->fixup_vector == 6 ? "advertised but XBEGIN raised #UD: using the plain lock"
                                           : "advertised but XBEGIN raised #GP: using the plain lock");
        return false;
    }
    bool explicit_seen = r == PROBE_ABORTED && (status & XABORT_EXPLICIT) &&
                         (status >> 24) == ABORT_CODE;
    bool committed = false;
    for (unsigned i = 0; i < PROBE_TRIES && !(committed && explicit_seen); i++) {
        if (!explicit_seen) {
            explicit_seen = probe_once(true, &status) == PROBE_ABORTED &&
                            (status & XABORT_EXPLICIT) && (status >> 24) == ABORT_CODE;
        }
        if (!committed)
            committed = probe_once(false, &status) == PROBE_COMMITTED;
    }
    if (!committed || !explicit_seen) {
        say("advertised but transactions never commit: using the plain lock");
        return false;
    }
    say("works (XBEGIN/XABORT/XEND probed)");
    return true;
}

/*
 * DEBUG builds check the fixup path itself at boot, since TCG never
 * advertises RTM: an armed UD2 must come back with vector 6.
 */
bool x86_fixup_selftest(void)
{
    struct x86_core *c = this_core();
    c->fixup_vector = ~0ul;
    __asm__ volatile(
        "leaq 1f(%%rip), %%rcx\n\t"
        "movq %%rcx, %%gs:%c[fixup]\n\t"
        "ud2\n"
        "1:\n\t"
        "movq $0, %%gs:%c[fixup]"
        :
        : [fixup] "i"(PERCORE_FIXUP_RIP)
        : "rcx", "memory");
    return c->fixup_vector == 6;
}
