/*
 * PCI configuration space through configuration mechanism #1: CONFIG_ADDRESS
 * (0xCF8) selects bus, device, function and register; CONFIG_DATA (0xCFC)
 * reads or writes it.  The root task's I/O port cap (ROOT_SLOT_IO_PORT)
 * covers both.  An access is two invocations, so one thread at a time may
 * use these (the root task's main thread, while drivers open).
 */
#ifndef PCI_H
#define PCI_H

#include <abi/types.h>
#include <stdbool.h>
#include <stdint.h>

struct pci_address {
    uint8_t bus, device, function;
};

#define PCI_VENDOR_ID       0x00    /* 16 bits; 0xffff: nothing there */
#define PCI_DEVICE_ID       0x02
#define PCI_COMMAND         0x04
#define PCI_COMMAND_MEMORY      (1u << 1)
#define PCI_COMMAND_MASTER      (1u << 2)
#define PCI_COMMAND_INTX_OFF    (1u << 10)
#define PCI_HEADER_TYPE     0x0e    /* bit 7: a multi-function device */
#define PCI_BAR0            0x10
#define PCI_INTERRUPT_LINE  0x3c    /* the firmware's ISA IRQ for INTx */

/* The register at `offset` (4-aligned) as 32 bits; E_OK or the invocation's error. */
word_t pci_read32(struct pci_address a, unsigned offset, uint32_t *value);
word_t pci_write32(struct pci_address a, unsigned offset, uint32_t value);

/*
 * Find the first function with this vendor and device id on any bus.
 * E_OK and *found; E_FAILED_LOOKUP when there is none; the I/O port
 * invocation's error when configuration space cannot be reached (no I/O
 * port cap: E_FAILED_LOOKUP too, so a port without PCI reads as "absent").
 */
word_t pci_find(uint16_t vendor, uint16_t device, struct pci_address *found);

/*
 * A memory BAR's address and size (size found by writing all ones and
 * reading back, then restoring).  E_INVALID_ARGUMENT for an I/O BAR or a
 * 64-bit BAR above 4 GiB.
 */
word_t pci_memory_bar(struct pci_address a, unsigned bar, word_t *paddr, word_t *size);

#endif
