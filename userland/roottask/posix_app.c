/*
 * The app `posix` (docs/posix-loader.md): the embedded POSIX program as one
 * process, without a network, on `core=` with a heap of `heap_mb=` MiB,
 * its argv from `argv=` and its environment from `env=`: words separated
 * by commas (the boot command line separates its own words by spaces), so
 * `argv=redis-server,--port,6379` is three strings and `argv=a,,b` has an
 * empty one between a and b.  The run ends when the process does: with
 * the status it gave exit_group, or 128 + the signal Linux would send when
 * it faulted (posix_fault.c).  A kernel that a process could corrupt would
 * show it: the invariant checker runs before the run ends.
 */
#include <apps.h>
#include <posix_process.h>
#include <sys.h>

#define DEFAULT_HEAP_MB 8
#define DEFAULT_ARGV0 "program"

/* Split s in place at commas into v[] (NULL-terminated); the word count, or max + 1 if more. */
static word_t split_commas(char *s, const char **v, word_t max)
{
    word_t n = 0;
    while (*s) {
        if (n == max)
            return max + 1;
        v[n++] = s;
        while (*s && *s != ',')
            s++;
        if (*s)
            *s++ = 0;
        else
            break;
    }
    v[n] = NULL;
    return n;
}

int app_posix(void)
{
    static char argv_words[BOOTINFO_CMDLINE_MAX], env_words[BOOTINFO_CMDLINE_MAX];
    static const char *argv[POSIX_MAX_ARGS + 1], *envp[POSIX_MAX_ARGS + 1];
    static struct posix_process proc;

    if (!posix_program_present()) {
        printf("posix: this image embeds no program: build it with POSIX_PROGRAM=path/to/static.elf "
               "(docs/posix-loader.md)\n");
        return 2;
    }
    if (!arg_str("argv", argv_words, sizeof(argv_words)) || !argv_words[0])
        strncpy_z(argv_words, DEFAULT_ARGV0, sizeof(argv_words));
    if (!arg_str("env", env_words, sizeof(env_words)))
        env_words[0] = 0;
    if (split_commas(argv_words, argv, POSIX_MAX_ARGS) > POSIX_MAX_ARGS ||
        split_commas(env_words, envp, POSIX_MAX_ARGS) > POSIX_MAX_ARGS) {
        printf("posix: argv= and env= take at most %u words each\n", POSIX_MAX_ARGS);
        return 2;
    }

    word_t heap_mb = arg_word("heap_mb", DEFAULT_HEAP_MB);
    if (heap_mb >= (word_t)1 << (WORD_BITS - 20)) {
        printf("posix: heap_mb=%lu is more than an address space\n", (unsigned long)heap_mb);
        return 2;
    }
    cptr_t ended = obj_new(OBJ_NOTIFICATION, 0);
    if (!ended) {
        printf("posix: no memory for a notification\n");
        return 2;
    }
    struct posix_process_opts o = {
        .core = arg_word("core", 0),
        .argv = argv,
        .envp = envp,
        .heap_size = heap_mb << 20,
        .ended_signal = ended,
    };
    /* Said before the process runs: once it runs on another core, its own console output
     * (written in several pieces when long) could be cut by this line. */
    printf("posix: starting %s on core %lu, heap %lu MiB at 0x%lx\n", argv[0], (unsigned long)o.core,
           (unsigned long)heap_mb, (unsigned long)POSIX_HEAP_VADDR);
    if (posix_process_create(&o, &proc) != E_OK)
        return 2;

    while (posix_process_state(&proc) == POSIX_RUNNING)
        sys_wait(ended, NULL);

    word_t failed_so_far = 0;
    word_t check = sys_debug_check_counted(&failed_so_far);
    printf("posix: the process ended (%s, status %lu); kernel invariants %s\n",
           posix_process_state(&proc) == POSIX_EXITED ? "exit" : "fault", (unsigned long)proc.status,
           check == E_OK ? "hold" : "FAILED");
    return check == E_OK ? (int)proc.status : 1;
}
