/*
 * The Intel 82540EM ("e1000", QEMU -device e1000), after Intel's PCI/PCI-X
 * Family of Gigabit Ethernet Controllers Software Developer's Manual
 * (8254x SDM): legacy descriptors, one receive and one transmit ring.
 *
 * Found on PCI (vendor 8086, device 100e); BAR 0 holds the registers
 * (128 KiB), mapped uncached from device memory.  The rings and buffers are
 * ordinary RAM frames: x86 DMA is cache-coherent, so only the order of the
 * descriptor writes and the tail-register write matters (arch_dma_barrier()).
 *
 * Interrupts: PCI INTA, which the firmware routed to the ISA IRQ in the
 * Interrupt Line register (QEMU's PIIX: 10 or 11, level-triggered per the
 * MADT).  The kernel masks the line when it delivers it; reading ICR
 * deasserts the line, and only then does nic_interrupt_done() ack the
 * handler, so a level line cannot fire again for the same cause.
 *
 * Receive ring: the NIC owns descriptors RDH .. RDT-1 and writes back DD
 * (descriptor done) into each it fills; software takes them in order from
 * rx_next and gives them back by moving RDT onto the last one taken, in
 * batches (below).  Transmit ring:
 * software fills at tx_tail and moves TDT past it; a descriptor is free
 * again when the NIC has set DD in it (RS asks for that write-back).
 * tx_clean follows behind, reclaiming them.  One slot stays empty, so that
 * head == tail means empty.
 *
 * Why the receive ring is large and refilled in batches: QEMU's e1000 model
 * (hw/net/e1000.c, QEMU 7.2) holds frames in its queue while RDH == RDT (no
 * buffer), and on the next RDT write that leaves any buffer free it flushes
 * the whole queue into the ring at once; every frame beyond the free buffers
 * is then dropped (a receiver overrun, ICR.RXO), not kept.  With a ring of 32
 * refilled one descriptor per RDT write, a burst while the driver's core was
 * not running (4 TCG vCPUs on a loaded host) filled the ring, and the flush
 * that followed dropped all but one of the queued frames: slirp resent them
 * 1.5 and 3 s later (docs/network.md, "The stalls").  So taken descriptors go back when the ring is found empty or
 * RX_RETURN_BATCH are waiting, so that a flush meets many free buffers; and
 * the ring has 512 descriptors: as many frames as slirp can have in flight
 * towards the guest for 64 busy connections (a window of 8 segments each,
 * lwipopts.h), more than the soak keeps open at once.  (1024 would cover all
 * of lwIP's 128 connections, but its 2 MiB of buffers, taken again by each
 * nic_open, do not fit twice in an in-guest test's 4 MiB.)  The descriptors
 * must be physically contiguous
 * (RDBAL, RDLEN): they are frames retyped one after another from an untyped
 * of their size, which is one contiguous block.
 */
#include <arch_user.h>
#include <device.h>
#include <nic_driver.h>
#include <pci.h>

#define E1000_VENDOR    0x8086
#define E1000_82540EM   0x100e
#define E1000_BAR_SIZE  0x20000

/* Registers (8254x SDM §13) */
#define REG_CTRL    0x0000
#define REG_STATUS  0x0008
#define REG_ICR     0x00c0      /* read to clear */
#define REG_ITR     0x00c4
#define REG_IMS     0x00d0
#define REG_IMC     0x00d8
#define REG_RCTL    0x0100
#define REG_TCTL    0x0400
#define REG_TIPG    0x0410
#define REG_RDBAL   0x2800
#define REG_RDBAH   0x2804
#define REG_RDLEN   0x2808
#define REG_RDH     0x2810
#define REG_RDT     0x2818
#define REG_RDTR    0x2820
#define REG_TDBAL   0x3800
#define REG_TDBAH   0x3804
#define REG_TDLEN   0x3808
#define REG_TDH     0x3810
#define REG_TDT     0x3818
#define REG_MTA     0x5200      /* 128 words of multicast hash */
#define REG_RAL0    0x5400
#define REG_RAH0    0x5404

#define CTRL_ASDE   (1u << 5)
#define CTRL_SLU    (1u << 6)
#define CTRL_RST    (1u << 26)
#define STATUS_LU   (1u << 1)
#define RAH_AV      (1u << 31)

#define ICR_TXDW    (1u << 0)
#define ICR_LSC     (1u << 2)
#define ICR_RXDMT0  (1u << 4)
#define ICR_RXO     (1u << 6)
#define ICR_RXT0    (1u << 7)

#define RCTL_EN     (1u << 1)
#define RCTL_BAM    (1u << 15)  /* accept broadcast (ARP replies may come as broadcast) */
#define RCTL_SECRC  (1u << 26)  /* strip the CRC */
/* BSIZE 00 with BSEX 0: 2048-byte buffers. */

#define TCTL_EN     (1u << 1)
#define TCTL_PSP    (1u << 3)   /* pad short frames to 64 bytes */
#define TCTL_CT     (0x0fu << 4)
#define TCTL_COLD   (0x40u << 12)   /* full duplex */
#define TIPG_82540  (10u | 8u << 10 | 6u << 20)

#define TX_CMD_EOP  (1u << 0)
#define TX_CMD_IFCS (1u << 1)
#define TX_CMD_RS   (1u << 3)
#define DESC_DD     (1u << 0)
#define RX_EOP      (1u << 1)

/* Descriptors per ring; a ring's bytes are a multiple of 128, as RDLEN and TDLEN need. */
#define RX_RING_SIZE 512        /* 8 KiB: RX_RING_PAGES pages, physically contiguous */
#define RX_RING_PAGES (RX_RING_SIZE * 16 / PAGE_SIZE)
#define RX_RING_BITS 13         /* log2 of the ring's bytes: the untyped it is retyped from */
#define TX_RING_SIZE 32
/* Taken receive descriptors handed back to the NIC with one RDT write, at most. */
#define RX_RETURN_BATCH 32
#define BUF_SIZE    2048
#define BUFS_PER_PAGE (PAGE_SIZE / BUF_SIZE)
#define RX_BUF_PAGES (RX_RING_SIZE / BUFS_PER_PAGE)
#define TX_BUF_PAGES (TX_RING_SIZE / BUFS_PER_PAGE)

/* Resetting takes about a microsecond; polls with a yield between, bounded. */
#define RESET_POLLS 100000

struct rx_desc {
    uint64_t addr;
    uint16_t length;
    uint16_t checksum;
    uint8_t status;
    uint8_t errors;
    uint16_t special;
};

struct tx_desc {
    uint64_t addr;
    uint16_t length;
    uint8_t cso;
    uint8_t cmd;
    uint8_t status;
    uint8_t css;
    uint16_t special;
};

_Static_assert(sizeof(struct rx_desc) == 16 && sizeof(struct tx_desc) == 16, "descriptor layout");
_Static_assert(RX_RING_SIZE * sizeof(struct rx_desc) == (1UL << RX_RING_BITS) &&
               TX_RING_SIZE * sizeof(struct tx_desc) <= PAGE_SIZE, "each ring fits its memory");
_Static_assert((RX_RING_SIZE * sizeof(struct rx_desc)) % 128 == 0 &&
               (TX_RING_SIZE * sizeof(struct tx_desc)) % 128 == 0, "ring lengths as RDLEN/TDLEN need");

struct buffers {
    cptr_t frames[RX_BUF_PAGES];
    unsigned pages;
    uint8_t *vaddr;                 /* `pages` pages, contiguous in our space */
    uint64_t paddr[RX_RING_SIZE];   /* each buffer's physical address */
};

struct e1000 {
    const struct nic_driver *ops;   /* first: nic.c dispatches through it */
    struct pci_address pci;
    struct device_mapping regs;
    cptr_t irq_handler;
    cptr_t irq_badged;              /* nic->irq_notification minted with NIC_IRQ_BADGE */
    cptr_t rx_ring_untyped;         /* the receive ring's memory, retyped into rx_ring_frames */
    cptr_t rx_ring_frames[RX_RING_PAGES];
    cptr_t tx_ring_frame;
    volatile struct rx_desc *rx;
    volatile struct tx_desc *tx;
    struct buffers rx_buf, tx_buf;
    unsigned rx_next;               /* next descriptor to take from the NIC */
    unsigned rx_taken;              /* descriptors taken and not yet handed back (RDT) */
    unsigned tx_tail;               /* next descriptor to fill */
    unsigned tx_clean;              /* oldest descriptor not yet known to be sent */
    uint64_t rx_overruns;           /* interrupts whose causes had RXO: frames dropped, no buffer */
};

static uint32_t reg_read(struct e1000 *e, unsigned reg)
{
    return *(volatile uint32_t *)((uint8_t *)e->regs.vaddr + reg);
}

static void reg_write(struct e1000 *e, unsigned reg, uint32_t v)
{
    *(volatile uint32_t *)((uint8_t *)e->regs.vaddr + reg) = v;
}

/*
 * Descriptor writes before the tail register write that hands them over,
 * and the NIC's DD write-back before the descriptor fields read after it.
 */
static word_t buffers_new(struct buffers *b, unsigned pages)
{
    b->pages = pages;
    b->vaddr = (uint8_t *)vaddr_alloc(pages * PAGE_SIZE, PAGE_SIZE);
    for (unsigned p = 0; p < pages; p++) {
        word_t st = obj_alloc(OBJ_FRAME, 0, &b->frames[p]);
        word_t paddr = 0;
        if (st == E_OK)
            st = map_frame(b->frames[p], ROOT_SLOT_VSPACE, (word_t)b->vaddr + p * PAGE_SIZE,
                           RIGHT_READ | RIGHT_WRITE, VM_EXECUTE_NEVER);
        if (st == E_OK)
            st = frame_get_address(b->frames[p], &paddr);
        if (st != E_OK)
            return st;
        for (unsigned i = 0; i < BUFS_PER_PAGE; i++)
            b->paddr[p * BUFS_PER_PAGE + i] = paddr + i * BUF_SIZE;
    }
    return E_OK;
}

static void buffers_free(struct buffers *b)
{
    for (unsigned p = 0; p < b->pages; p++)
        slot_drop(&b->frames[p]);
}

/* Everything the NIC must not touch any more: reset it and stop its DMA. */
static void device_stop(struct e1000 *e)
{
    reg_write(e, REG_IMC, 0xffffffffu);
    reg_write(e, REG_CTRL, reg_read(e, REG_CTRL) | CTRL_RST);
    for (unsigned i = 0; i < RESET_POLLS && (reg_read(e, REG_CTRL) & CTRL_RST); i++)
        sys_yield();
    reg_write(e, REG_IMC, 0xffffffffu);
    (void)reg_read(e, REG_ICR);
}

static void e1000_free(struct nic *nic, struct e1000 *e)
{
    if (e->regs.vaddr) {
        device_stop(e);
        uint32_t cmd;
        if (pci_read32(e->pci, PCI_COMMAND, &cmd) == E_OK)
            pci_write32(e->pci, PCI_COMMAND, cmd & ~PCI_COMMAND_MASTER & 0xffff);
        device_unmap(&e->regs);
    }
    slot_drop(&e->irq_handler);
    slot_drop(&e->irq_badged);
    slot_drop(&nic->irq_notification);
    buffers_free(&e->rx_buf);
    buffers_free(&e->tx_buf);
    for (unsigned p = 0; p < RX_RING_PAGES; p++)
        slot_drop(&e->rx_ring_frames[p]);
    slot_drop(&e->rx_ring_untyped);
    slot_drop(&e->tx_ring_frame);
    free(e);
    nic->driver = NULL;
}

/* The PCI function: memory decoding and bus mastering on, INTx enabled; the BAR mapped. */
static word_t pci_setup(struct e1000 *e, unsigned *irq)
{
    uint32_t cmd, line;
    word_t bar, size;
    word_t st = pci_read32(e->pci, PCI_COMMAND, &cmd);
    if (st == E_OK)
        st = pci_write32(e->pci, PCI_COMMAND,
                         ((cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER) & ~PCI_COMMAND_INTX_OFF) & 0xffff);
    if (st == E_OK)
        st = pci_read32(e->pci, PCI_INTERRUPT_LINE, &line);
    if (st == E_OK)
        st = pci_memory_bar(e->pci, 0, &bar, &size);
    if (st != E_OK)
        return st;
    *irq = line & 0xff;
    /* 0xff: the firmware routed no IRQ; a BAR of another size is not an 82540EM's. */
    if (*irq == 0xff || size != E1000_BAR_SIZE)
        return E_INVALID_ARGUMENT;
    return device_map(bar, size, &e->regs);
}

static word_t irq_setup(struct nic *nic, struct e1000 *e, unsigned irq)
{
    word_t st = obj_alloc(OBJ_NOTIFICATION, 0, &nic->irq_notification);
    if (st != E_OK)
        return st;
    e->irq_handler = slot_alloc();
    if (!e->irq_handler)
        return E_NOT_ENOUGH_MEMORY;
    st = irq_control_get(ROOT_SLOT_IRQ_CONTROL, irq, ROOT_SLOT_CNODE, e->irq_handler, ROOT_DEPTH);
    if (st != E_OK) {
        slot_free(e->irq_handler);
        e->irq_handler = 0;
        return st;
    }
    /* The handler signals through a badged copy, so the word says who signalled. */
    e->irq_badged = slot_alloc();
    if (!e->irq_badged)
        return E_NOT_ENOUGH_MEMORY;
    st = cnode_mint(ROOT_SLOT_CNODE, e->irq_badged, ROOT_DEPTH, ROOT_SLOT_CNODE,
                    nic->irq_notification, ROOT_DEPTH, RIGHT_WRITE, NIC_IRQ_BADGE);
    if (st != E_OK) {
        slot_free(e->irq_badged);
        e->irq_badged = 0;
        return st;
    }
    return irq_handler_set_notification(e->irq_handler, e->irq_badged);
}

/* A page of RAM for a descriptor ring, mapped here; *paddr gets its physical address. */
static word_t ring_page_new(cptr_t *frame, void **vaddr, word_t *paddr)
{
    word_t st = obj_alloc(OBJ_FRAME, 0, frame);
    *vaddr = (void *)vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    if (st == E_OK)
        st = map_frame(*frame, ROOT_SLOT_VSPACE, (word_t)*vaddr, RIGHT_READ | RIGHT_WRITE,
                       VM_EXECUTE_NEVER);
    if (st == E_OK)
        st = frame_get_address(*frame, paddr);
    return st;
}

/*
 * The receive ring: RX_RING_PAGES frames retyped in turn from one untyped of
 * the ring's size, so physically contiguous (checked), mapped contiguously.
 */
static word_t rx_ring_new(struct e1000 *e, void **vaddr, word_t *paddr)
{
    word_t st = obj_alloc(OBJ_UNTYPED, RX_RING_BITS, &e->rx_ring_untyped);
    *vaddr = (void *)vaddr_alloc(RX_RING_PAGES * PAGE_SIZE, PAGE_SIZE);
    for (unsigned p = 0; st == E_OK && p < RX_RING_PAGES; p++) {
        word_t page_paddr = 0;
        cptr_t slot = slot_alloc();
        if (!slot)
            return E_NOT_ENOUGH_MEMORY;
        st = untyped_retype(e->rx_ring_untyped, OBJ_FRAME, 0, ROOT_SLOT_CNODE, 0, 0, slot, 1);
        if (st != E_OK) {
            slot_free(slot);
            return st;
        }
        e->rx_ring_frames[p] = slot;
        st = map_frame(slot, ROOT_SLOT_VSPACE, (word_t)*vaddr + p * PAGE_SIZE,
                       RIGHT_READ | RIGHT_WRITE, VM_EXECUTE_NEVER);
        if (st == E_OK)
            st = frame_get_address(slot, &page_paddr);
        if (st == E_OK && p == 0)
            *paddr = page_paddr;
        if (st == E_OK && page_paddr != *paddr + p * PAGE_SIZE)
            st = E_INVALID_ARGUMENT;    /* not contiguous: the ring would not be one block */
    }
    return st;
}

static word_t rings_setup(struct e1000 *e)
{
    word_t rx_paddr = 0, tx_paddr;
    void *rx_ring, *tx_ring;
    word_t st = rx_ring_new(e, &rx_ring, &rx_paddr);
    if (st == E_OK)
        st = ring_page_new(&e->tx_ring_frame, &tx_ring, &tx_paddr);
    if (st == E_OK)
        st = buffers_new(&e->rx_buf, RX_BUF_PAGES);
    if (st == E_OK)
        st = buffers_new(&e->tx_buf, TX_BUF_PAGES);
    if (st != E_OK)
        return st;
    e->rx = rx_ring;
    e->tx = tx_ring;
    for (unsigned i = 0; i < RX_RING_SIZE; i++)
        e->rx[i] = (struct rx_desc){ .addr = e->rx_buf.paddr[i] };
    /* A free TX descriptor reads as done. */
    for (unsigned i = 0; i < TX_RING_SIZE; i++)
        e->tx[i] = (struct tx_desc){ .addr = e->tx_buf.paddr[i], .status = DESC_DD };
    arch_dma_barrier();

    reg_write(e, REG_RDBAL, (uint32_t)rx_paddr);
    reg_write(e, REG_RDBAH, (uint32_t)((uint64_t)rx_paddr >> 32));
    reg_write(e, REG_RDLEN, RX_RING_SIZE * sizeof(struct rx_desc));
    reg_write(e, REG_RDH, 0);
    reg_write(e, REG_RDT, RX_RING_SIZE - 1);
    reg_write(e, REG_RDTR, 0);
    e->rx_next = 0;
    e->rx_taken = 0;

    reg_write(e, REG_TDBAL, (uint32_t)tx_paddr);
    reg_write(e, REG_TDBAH, (uint32_t)((uint64_t)tx_paddr >> 32));
    reg_write(e, REG_TDLEN, TX_RING_SIZE * sizeof(struct tx_desc));
    reg_write(e, REG_TDH, 0);
    reg_write(e, REG_TDT, 0);
    e->tx_tail = e->tx_clean = 0;
    return E_OK;
}

static word_t e1000_open(struct nic *nic)
{
    struct e1000 *e = calloc(1, sizeof(*e));
    if (!e)
        return E_NOT_ENOUGH_MEMORY;
    e->ops = &e1000_driver;
    nic->driver = e;
    nic->irq_notification = 0;

    unsigned irq = 0;
    word_t st = pci_find(E1000_VENDOR, E1000_82540EM, &e->pci);
    if (st == E_OK)
        st = pci_setup(e, &irq);
    if (st != E_OK) {
        e1000_free(nic, e);
        return st;
    }
    device_stop(e);

    uint32_t ral = reg_read(e, REG_RAL0), rah = reg_read(e, REG_RAH0);
    if (!(rah & RAH_AV)) {
        /* The NIC loads RAL0/RAH0 from its EEPROM at reset; without that we have no address. */
        e1000_free(nic, e);
        return E_INVALID_ARGUMENT;
    }
    for (unsigned i = 0; i < 4; i++)
        nic->mac[i] = (uint8_t)(ral >> (8 * i));
    nic->mac[4] = (uint8_t)rah;
    nic->mac[5] = (uint8_t)(rah >> 8);

    st = rings_setup(e);
    if (st == E_OK)
        st = irq_setup(nic, e, irq);
    if (st != E_OK) {
        e1000_free(nic, e);
        return st;
    }
    for (unsigned i = 0; i < 128; i++)
        reg_write(e, REG_MTA + 4 * i, 0);
    reg_write(e, REG_CTRL, reg_read(e, REG_CTRL) | CTRL_SLU | CTRL_ASDE);
    reg_write(e, REG_TIPG, TIPG_82540);
    reg_write(e, REG_TCTL, TCTL_EN | TCTL_PSP | TCTL_CT | TCTL_COLD);
    reg_write(e, REG_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);
    reg_write(e, REG_ITR, 0);
    reg_write(e, REG_IMS, ICR_RXT0 | ICR_RXO | ICR_RXDMT0 | ICR_LSC);
    /* The link comes up by itself (auto-negotiation); wait for it, boundedly. */
    for (unsigned i = 0; i < RESET_POLLS && !(reg_read(e, REG_STATUS) & STATUS_LU); i++)
        sys_yield();
    return E_OK;
}

/* Free the TX descriptors the NIC has finished with. */
static void tx_reclaim(struct e1000 *e)
{
    while (e->tx_clean != e->tx_tail && (e->tx[e->tx_clean].status & DESC_DD))
        e->tx_clean = (e->tx_clean + 1) % TX_RING_SIZE;
}

static bool e1000_send(struct nic *nic, const void *frame, size_t len)
{
    struct e1000 *e = nic->driver;
    if (len == 0 || len > NIC_FRAME_MAX)
        return false;
    tx_reclaim(e);
    unsigned next = (e->tx_tail + 1) % TX_RING_SIZE;
    if (next == e->tx_clean)
        return false;
    unsigned i = e->tx_tail;
    memcpy(e->tx_buf.vaddr + i * BUF_SIZE, frame, len);
    e->tx[i].length = (uint16_t)len;
    e->tx[i].cmd = TX_CMD_EOP | TX_CMD_IFCS | TX_CMD_RS;
    e->tx[i].status = 0;
    arch_dma_barrier();
    e->tx_tail = next;
    reg_write(e, REG_TDT, next);
    return true;
}

/*
 * Hand the taken descriptors back: RDT onto the last one taken (the NIC owns
 * RDH .. RDT-1, so that one stays out as the ring's empty slot).
 */
static void rx_return(struct e1000 *e)
{
    if (!e->rx_taken)
        return;
    arch_dma_barrier();
    reg_write(e, REG_RDT, (e->rx_next + RX_RING_SIZE - 1) % RX_RING_SIZE);
    e->rx_taken = 0;
}

static size_t e1000_receive(struct nic *nic, void *buf, size_t size)
{
    struct e1000 *e = nic->driver;
    for (;;) {
        unsigned i = e->rx_next;
        volatile struct rx_desc *d = &e->rx[i];
        if (!(d->status & DESC_DD)) {
            /* Drained: every buffer goes back before the caller waits for the next interrupt. */
            rx_return(e);
            return 0;
        }
        arch_dma_barrier();
        /* 2048-byte buffers hold any frame we accept, so each is one descriptor (EOP). */
        bool good = (d->status & RX_EOP) && d->errors == 0 && d->length <= size;
        size_t len = good ? d->length : 0;
        if (good)
            memcpy(buf, e->rx_buf.vaddr + i * BUF_SIZE, len);
        d->status = 0;
        e->rx_next = (i + 1) % RX_RING_SIZE;
        if (++e->rx_taken >= RX_RETURN_BATCH)
            rx_return(e);
        if (good && len)
            return len;
    }
}

static void e1000_interrupt_done(struct nic *nic)
{
    struct e1000 *e = nic->driver;
    /* Reading ICR clears the causes and deasserts INTA; only then may the line be unmasked. */
    uint32_t causes = reg_read(e, REG_ICR);
    irq_handler_ack(e->irq_handler);
    if (causes & ICR_RXO)
        e->rx_overruns++;
}

static uint64_t e1000_rx_overruns(struct nic *nic)
{
    return ((struct e1000 *)nic->driver)->rx_overruns;
}

static void e1000_close(struct nic *nic)
{
    e1000_free(nic, nic->driver);
}

const struct nic_driver e1000_driver = {
    .name = "e1000",
    .open = e1000_open,
    .send = e1000_send,
    .receive = e1000_receive,
    .interrupt_done = e1000_interrupt_done,
    .rx_overruns = e1000_rx_overruns,
    .close = e1000_close,
};
