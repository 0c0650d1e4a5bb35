/*
 * The app `redis` (docs/network.md): the Redis-protocol server on lwIP over
 * the NIC, in the layout `layout=` names: `single` (the default),
 * `percore` or `processes`; or, with `impl=posix`, the POSIX program
 * embedded in the image as every instance of layout=percore, or beside a
 * stack process in layout=processes.
 */
#include <apps.h>
#include <nic.h>
#include <root.h>
#include "redis_layouts.h"

bool redis_open_nic(struct nic *nic)
{
    word_t st = nic_open(nic);
    if (st != E_OK)
        printf("redis: no NIC (%s)%s\n", status_name(st),
               st == NIC_ABSENT ? ": boot with NET=1 (tools/qemu_run.py --net)" : "");
    return st == E_OK;
}

int app_redis(void)
{
    char layout[16], impl[16];
    bool has_layout = arg_str("layout", layout, sizeof(layout));
    if (arg_str("impl", impl, sizeof(impl)) && strcmp(impl, "builtin")) {
        if (strcmp(impl, "posix")) {
            printf("redis: unknown impl '%s'; known: builtin posix\n", impl);
            return 2;
        }
        if (!has_layout || !strcmp(layout, "percore"))
            return redis_serve_posix();
        if (!strcmp(layout, "processes"))
            return redis_serve_posix_processes();
        printf("redis: impl=posix serves layout=percore or layout=processes, not '%s'\n", layout);
        return 2;
    }
    if (!has_layout || !strcmp(layout, "single"))
        return redis_serve_single();
    if (!strcmp(layout, "percore"))
        return redis_serve_percore();
    if (!strcmp(layout, "processes"))
        return redis_serve_processes();
    printf("redis: unknown layout '%s'; known: single percore processes\n", layout);
    return 2;
}
