/*
 * The lwIP tests of userland/tests/test_lwip.c in a build without lwIP
 * (tools/ensure_deps.sh could not fetch it, so the Makefile builds this file
 * instead): each reports skip with the reason, so that the suite still
 * prints a record for every test it knows.  The names follow test_lwip.c.
 */
#include "../test.h"

#define LWIP_ABSENT "this build has no lwIP (.deps/lwip is missing: tools/ensure_deps.sh says why)"

TEST(lwip_tcp_echo_backpressure) { SKIP(LWIP_ABSENT); }
TEST(lwip_tcp_protocol_close) { SKIP(LWIP_ABSENT); }
TEST(lwip_tcp_abrupt_disconnect) { SKIP(LWIP_ABSENT); }
TEST(lwip_tcp_open_waits_for_memory) { SKIP(LWIP_ABSENT); }
TEST(lwip_tcp_idle_connection_evicted) { SKIP(LWIP_ABSENT); }
TEST(lwip_tcp_connection_flood) { SKIP(LWIP_ABSENT); }
