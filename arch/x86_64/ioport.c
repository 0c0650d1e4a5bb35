/*
 * I/O port capabilities, as seL4's IOPort caps: a cap covers the ports
 * io_port_first..io_port_last and its invocations read or write one of them
 * with IN or OUT (8, 16 or 32 bits).  User level never gets IOPL or an I/O
 * permission bitmap: every access is a kernel invocation, so a driver can
 * touch exactly the ports its cap names and nothing the kernel drives itself
 * (COM1, the 8259s, the PIT, the exit device).
 *
 * The root task gets one cap at boot, for PCI configuration mechanism #1:
 * CONFIG_ADDRESS at 0xCF8 and CONFIG_DATA at 0xCFC..0xCFF.  That is all a
 * PCI driver needs to find its device and its memory BARs; device registers
 * themselves are reached through device frames mapped uncached.
 *
 *   IO_PORT_IN8/16/32    MR0 port                  -> MR0 value   (needs RIGHT_READ)
 *   IO_PORT_OUT8/16/32   MR0 port, MR1 value                      (needs RIGHT_WRITE)
 *
 * IN and OUT abort every RTM transaction, so under LOCK=rtm the invoke step
 * asks for the real lock first (kernel_lock_require_exclusive(), as console
 * output does) instead of letting the CPU find out.
 */
#include <kernel.h>
#include <invocation.h>
#include <lock.h>

#define PCI_CONFIG_FIRST 0xcf8
#define PCI_CONFIG_LAST  0xcff

bool arch_root_io_ports(word_t *first, word_t *last)
{
    *first = PCI_CONFIG_FIRST;
    *last = PCI_CONFIG_LAST;
    return true;
}

static uint32_t port_in(uint16_t port, unsigned bytes)
{
    uint32_t v;
    if (bytes == 1) {
        uint8_t b;
        __asm__ volatile("inb %1, %0" : "=a"(b) : "Nd"(port));
        v = b;
    } else if (bytes == 2) {
        uint16_t w;
        __asm__ volatile("inw %1, %0" : "=a"(w) : "Nd"(port));
        v = w;
    } else {
        __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    }
    return v;
}

static void port_out(uint16_t port, unsigned bytes, uint32_t v)
{
    if (bytes == 1)
        __asm__ volatile("outb %0, %1" : : "a"((uint8_t)v), "Nd"(port));
    else if (bytes == 2)
        __asm__ volatile("outw %0, %1" : : "a"((uint16_t)v), "Nd"(port));
    else
        __asm__ volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static void invoke_io_port_in(struct invocation *inv, uint16_t port, unsigned bytes)
{
    kernel_lock_require_exclusive();
    inv_result(inv, 0, port_in(port, bytes));
}

static void invoke_io_port_out(uint16_t port, unsigned bytes, uint32_t value)
{
    kernel_lock_require_exclusive();
    port_out(port, bytes, value);
}

enum status arch_decode_io_port_invocation(struct invocation *inv)
{
    bool out;
    unsigned bytes;

    switch (inv->label) {
    case IO_PORT_IN8:   out = false; bytes = 1; break;
    case IO_PORT_IN16:  out = false; bytes = 2; break;
    case IO_PORT_IN32:  out = false; bytes = 4; break;
    case IO_PORT_OUT8:  out = true;  bytes = 1; break;
    case IO_PORT_OUT16: out = true;  bytes = 2; break;
    case IO_PORT_OUT32: out = true;  bytes = 4; break;
    default:
        return inv_error(inv, E_ILLEGAL_OPERATION, 0, 0);
    }
    if (!(inv->cap.rights & (out ? RIGHT_WRITE : RIGHT_READ)))
        return inv_error(inv, E_INVALID_CAPABILITY, 0, 0);
    if (inv->length < (out ? 2u : 1u))
        return E_TRUNCATED_MESSAGE;
    word_t port = inv_mr(inv, 0);
    word_t first = inv->cap.io_port_first, last = inv->cap.io_port_last;
    /* The whole access, port .. port + bytes - 1, must lie inside the cap. */
    if (port < first || port > last || last - port < bytes - 1)
        return inv_error(inv, E_RANGE, first, last - (bytes - 1));
    word_t value = 0;
    if (out) {
        value = inv_mr(inv, 1);
        if (bytes < 4 ? value >> (8 * bytes) != 0 : value > 0xffffffffu)
            return inv_error(inv, E_INVALID_ARGUMENT, 1, 0);
        invoke_io_port_out((uint16_t)port, bytes, (uint32_t)value);
    } else {
        invoke_io_port_in(inv, (uint16_t)port, bytes);
    }
    return E_OK;
}
