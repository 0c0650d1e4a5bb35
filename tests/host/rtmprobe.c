/*
 * Says whether RTM works on this machine, for tests/test_locks.py: exit 0
 * and "rtm: usable", or exit HOST_SKIP_EXIT and the reason.
 */
#include "env.h"

#include <stdio.h>

int main(void)
{
    const char *why;

    if (!host_rtm_usable(&why)) {
        printf("rtm: unusable: %s\n", why);
        return HOST_SKIP_EXIT;
    }
    printf("rtm: usable\n");
    return 0;
}
