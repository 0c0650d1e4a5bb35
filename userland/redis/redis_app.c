/*
 * The app `redis` (docs/network.md): the POSIX program embedded in the
 * image, Debian's Redis built for the port (docs/posix.md), served over
 * lwIP and the NIC in the layout `layout=` names: `percore` (the default)
 * or `processes` (redis_layouts.h).
 */
#include <apps.h>
#include <root.h>
#include "redis_layouts.h"

int app_redis(void)
{
    char layout[16];

    if (!arg_str("layout", layout, sizeof(layout)) || !strcmp(layout, "percore"))
        return redis_serve_percore();
    if (!strcmp(layout, "processes"))
        return redis_serve_processes();
    printf("redis: unknown layout '%s'; known: percore processes\n", layout);
    return 2;
}
