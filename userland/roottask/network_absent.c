/*
 * The app `redis` when the build had no lwIP: tools/ensure_deps.sh could not
 * fetch Debian's source package, so the Makefile left the network programs
 * out (docs/network.md).  The run says so and fails.
 */
#include <apps.h>
#include <libc.h>

int app_redis(void)
{
    printf("redis: this build has no lwIP (.deps/lwip was missing: run tools/ensure_deps.sh)\n");
    return 2;
}
