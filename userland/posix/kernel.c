/*
 * The kernel calls the personality makes (docs/abi.md), on the port's
 * arch_syscall().  userland/include/sys.h finds a thread's IPC buffer by
 * masking its stack pointer, which a musl thread's stack does not allow; so
 * every message longer than the machine registers goes through
 * px_ipcbuf(), the calling thread's buffer from the start page.
 */
#include <abi/errors.h>
#include <abi/msginfo.h>
#include <abi/syscalls.h>
#include <sys/syscall.h>
#include <syscall_arch.h>
#include "personality.h"

static word_t call(word_t sysno, cptr_t cap, word_t info, word_t *mr, word_t *badge)
{
    word_t c = cap;
    word_t st = arch_syscall(sysno, &c, &info, mr);
    if (badge)
        *badge = c;
    return st;
}

/* A message of `count` words: the first ARCH_MSG_REGS in registers, the rest in the IPC buffer. */
static void put_words(word_t *mr, word_t count, const word_t *words)
{
    for (word_t i = 0; i < count; i++) {
        if (i < ARCH_MSG_REGS)
            mr[i] = words[i];
        else
            px_ipcbuf()->msg[i] = words[i];
    }
}

word_t px_invoke(cptr_t cap, word_t label, word_t count, const word_t *args)
{
    word_t mr[ARCH_MSG_REGS] = { 0 };
    put_words(mr, count, args);
    return call(SYS_CALL, cap, msginfo_new(label, 0, 0, count), mr, NULL);
}

#define PUTS_MAX ((MSG_MAX_LENGTH - 1) * sizeof(word_t))

/* SYS_DEBUG_PUTS: the byte count in MR0, the bytes packed little-endian from MR1. */
void px_console_write(const char *s, size_t len)
{
    while (len) {
        size_t n = len < PUTS_MAX ? len : PUTS_MAX;
        word_t words[MSG_MAX_LENGTH] = { n };
        for (size_t i = 0; i < n; i++)
            words[1 + i / sizeof(word_t)] |= (word_t)(unsigned char)s[i] << (8 * (i % sizeof(word_t)));
        word_t count = 1 + (n + sizeof(word_t) - 1) / sizeof(word_t);
        word_t mr[ARCH_MSG_REGS] = { 0 };
        put_words(mr, count, words);
        call(SYS_DEBUG_PUTS, 0, msginfo_new(0, 0, 0, count), mr, NULL);
        s += n;
        len -= n;
    }
}

/*
 * Only the root task may end the run, so a process ends through its fault
 * handler, the root task's fault server (docs/posix-loader.md): Linux's own
 * exit_group, made with the machine's instruction, is a system call the
 * kernel does not know, and the server takes it as the process's exit with
 * that status.  arch_syscall() puts the number and the first word where
 * Linux's convention has them on both ports.
 */
_Noreturn void px_linux_exit_group(int status)
{
    for (;;) {
        word_t status_word = (word_t)(unsigned)status, info = 0;
        word_t mr[ARCH_MSG_REGS] = { 0 };
        arch_syscall(SYS_exit_group, &status_word, &info, mr);
    }
}

void px_wait(cptr_t ntfn)
{
    word_t mr[ARCH_MSG_REGS] = { 0 };
    call(SYS_RECV, ntfn, 0, mr, NULL);
}

void px_signal(cptr_t ntfn)
{
    word_t mr[ARCH_MSG_REGS] = { 0 };
    call(SYS_SEND, ntfn, 0, mr, NULL);
}

void px_yield(void)
{
    word_t mr[ARCH_MSG_REGS] = { 0 };
    call(SYS_YIELD, 0, 0, mr, NULL);
}
