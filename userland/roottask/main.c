/*
 * The root task: the first and only user program the kernel starts.  It
 * reads `app=NAME` from the boot command line, runs that program and ends
 * the run with its status through SYS_DEBUG_HALT.
 */
#include <apps.h>
#include <thread.h>

struct app {
    const char *name;
    int (*run)(void);
};

static const struct app apps[] = {
    { "hello", app_hello },
    { "tests", app_tests },
    { "fuzz", app_fuzz },
    { "pingpong", app_pingpong },
    { "mcpingpong", app_mcpingpong },
    { "redis", app_redis },
    { "posix", app_posix },
};

int app_hello(void)
{
    printf("hello from the root task: %lu core%s online, lock %s, arch %s\n",
           (unsigned long)bootinfo->ncores, bootinfo->ncores == 1 ? "" : "s", bootinfo->lock,
           bootinfo->arch);
    return 0;
}

void root_entry(void);

_Noreturn void root_entry(void)
{
    struct thread_local *t = tls();
    t->ipcbuf = (struct ipc_buffer *)IPC_BUFFER_VADDR;
    t->self = ROOT_SLOT_TCB;
    t->guard = TLS_GUARD;

    /* A TCB that keeps the highest priority, as the authority for every later priority change. */
    cptr_t auth = obj_new(OBJ_TCB, 0);
    if (auth && tcb_set_priority(auth, 255) == E_OK)
        prio_authority = auth;

    char name[32];
    if (!arg_str("app", name, sizeof(name)))
        strncpy_z(name, "hello", sizeof(name));

    int status = 2;
    const struct app *app = NULL;
    for (unsigned i = 0; i < ARRAY_SIZE(apps); i++)
        if (!strcmp(apps[i].name, name))
            app = &apps[i];
    if (app) {
        status = app->run();
    } else {
        char known[128] = "";
        size_t n = 0;
        for (unsigned i = 0; i < ARRAY_SIZE(apps); i++)
            n += snprintf(known + n, sizeof(known) - n, " %s", apps[i].name);
        printf("root task: unknown app '%s'; known:%s\n", name, known);
    }
    sys_debug_halt((word_t)status);
}
