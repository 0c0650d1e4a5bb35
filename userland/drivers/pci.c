/* PCI configuration space over the root task's I/O port cap (pci.h). */
#include <pci.h>
#include <root.h>

#define CONFIG_ADDRESS 0xcf8
#define CONFIG_DATA    0xcfc
#define CONFIG_ENABLE  (1u << 31)

#define BAR_IO          (1u << 0)
#define BAR_TYPE_MASK   (3u << 1)
#define BAR_TYPE_64     (2u << 1)
#define BAR_MEMORY_MASK 0xfffffff0u

static uint32_t config_address(struct pci_address a, unsigned offset)
{
    return CONFIG_ENABLE | (uint32_t)a.bus << 16 | (uint32_t)a.device << 11 |
           (uint32_t)a.function << 8 | (offset & 0xfc);
}

word_t pci_read32(struct pci_address a, unsigned offset, uint32_t *value)
{
    word_t st = io_port_out(ROOT_SLOT_IO_PORT, CONFIG_ADDRESS, 4, config_address(a, offset));
    if (st != E_OK)
        return st;
    return io_port_in(ROOT_SLOT_IO_PORT, CONFIG_DATA, 4, value);
}

word_t pci_write32(struct pci_address a, unsigned offset, uint32_t value)
{
    word_t st = io_port_out(ROOT_SLOT_IO_PORT, CONFIG_ADDRESS, 4, config_address(a, offset));
    if (st != E_OK)
        return st;
    return io_port_out(ROOT_SLOT_IO_PORT, CONFIG_DATA, 4, value);
}

word_t pci_find(uint16_t vendor, uint16_t device, struct pci_address *found)
{
    /* Every bus, by brute force: simpler than following bridges, and only done at open. */
    for (unsigned bus = 0; bus < 256; bus++) {
        for (unsigned dev = 0; dev < 32; dev++) {
            for (unsigned fn = 0; fn < 8; fn++) {
                struct pci_address a = { (uint8_t)bus, (uint8_t)dev, (uint8_t)fn };
                uint32_t id, header;
                word_t st = pci_read32(a, PCI_VENDOR_ID, &id);
                if (st == E_FAILED_LOOKUP || st == E_INVALID_CAPABILITY)
                    return E_FAILED_LOOKUP;     /* no I/O port cap: this port has no PCI */
                if (st != E_OK)
                    return st;
                if ((id & 0xffff) == 0xffff) {
                    if (fn == 0)
                        break;  /* no function 0: no device */
                    continue;
                }
                if ((id & 0xffff) == vendor && id >> 16 == device) {
                    *found = a;
                    return E_OK;
                }
                if (fn == 0) {
                    if ((st = pci_read32(a, PCI_HEADER_TYPE & ~3u, &header)) != E_OK)
                        return st;
                    if (!(header >> 16 & 0x80))
                        break;  /* single-function device */
                }
            }
        }
    }
    return E_FAILED_LOOKUP;
}

word_t pci_memory_bar(struct pci_address a, unsigned bar, word_t *paddr, word_t *size)
{
    unsigned offset = PCI_BAR0 + 4 * bar;
    uint32_t value, high = 0, mask;
    word_t st = pci_read32(a, offset, &value);
    if (st != E_OK)
        return st;
    if (value & BAR_IO)
        return E_INVALID_ARGUMENT;
    if ((value & BAR_TYPE_MASK) == BAR_TYPE_64 && (st = pci_read32(a, offset + 4, &high)) != E_OK)
        return st;
    if (high)
        return E_INVALID_ARGUMENT;
    /* Decoding stays on while the BAR reads all ones for a moment: nothing accesses it meanwhile. */
    if ((st = pci_write32(a, offset, 0xffffffffu)) != E_OK || (st = pci_read32(a, offset, &mask)) != E_OK ||
        (st = pci_write32(a, offset, value)) != E_OK)
        return st;
    *paddr = value & BAR_MEMORY_MASK;
    *size = (word_t)(~(mask & BAR_MEMORY_MASK) + 1u);
    return E_OK;
}
