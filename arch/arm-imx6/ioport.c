/*
 * ARM has no I/O port space: devices are memory-mapped, so the root task gets
 * no I/O port cap and no IO_PORT invocation can reach this port.
 */
#include <kernel.h>
#include <invocation.h>

bool arch_root_io_ports(word_t *first, word_t *last)
{
    *first = 0;
    *last = 0;
    return false;
}

enum status arch_decode_io_port_invocation(struct invocation *inv)
{
    return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
}
