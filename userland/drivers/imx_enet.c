/*
 * The i.MX6 10/100/1000 Ethernet controller (ENET), after the i.MX 6Dual/6Quad
 * Applications Processor Reference Manual, chapter "10/100/1000-Mbps Ethernet
 * MAC (ENET)": legacy 8-byte buffer descriptors, one receive and one
 * transmit ring.  QEMU's `sabrelite` models it (imx.enet) and attaches it to
 * `-nic user`.
 *
 * The controller is at a fixed address (0x02188000, 16 KiB, handed to the
 * root task as device untyped) and interrupts on GIC SPI 118 (ID 150),
 * level-sensitive: it stays asserted while EIR & EIMR is nonzero, and EIR
 * bits are cleared by writing ones.
 *
 * The ENET is not cache-coherent, so the rings and buffers are RAM frames
 * mapped uncached (normal non-cacheable), and arch_dma_barrier() orders them
 * against the register writes that hand them over.
 *
 * Receive: descriptors with E (empty) set belong to the controller; it
 * clears E when it has filled one, and stops (RDAR reads 0) when it meets
 * one without E; writing RDAR starts it again.  Transmit: the driver fills a
 * descriptor, sets R (ready) and writes TDAR; the controller clears R once
 * the frame is out.  The last descriptor of each ring has W (wrap) set.
 *
 * Not done for a real board: the PHY (the Sabre Lite's KSZ9021 over RGMII)
 * is neither reset nor configured through MDIO, the MAC is taken from
 * PALR/PAUR as the boot loader left them, and uncached writes may still sit
 * in the PL310's store buffer when TDAR is written (Linux's wmb() also
 * syncs the outer cache).  Under QEMU none of that matters.
 */
#include <arch_user.h>
#include <device.h>
#include <nic_driver.h>

#define ENET_PADDR  0x02188000
#define ENET_SIZE   0x4000
#define ENET_IRQ    150         /* GIC SPI 118: the MAC's interrupt */

/* Registers */
#define REG_EIR     0x004       /* interrupt events, write 1 to clear */
#define REG_EIMR    0x008
#define REG_RDAR    0x010
#define REG_TDAR    0x014
#define REG_ECR     0x024
#define REG_MSCR    0x044
#define REG_RCR     0x084
#define REG_TCR     0x0c4
#define REG_PALR    0x0e4
#define REG_PAUR    0x0e8
#define REG_IAUR    0x118
#define REG_IALR    0x11c
#define REG_GAUR    0x120
#define REG_GALR    0x124
#define REG_TFWR    0x144
#define REG_RDSR    0x180
#define REG_TDSR    0x184
#define REG_MRBR    0x188

#define ECR_RESET   (1u << 0)
#define ECR_ETHEREN (1u << 1)
#define ECR_SPEED   (1u << 5)   /* 1000 Mbit/s */
#define ECR_DBSWP   (1u << 8)   /* descriptors little-endian, as this driver lays them out */
#define RCR_MII_MODE (1u << 2)  /* must be set */
#define RCR_RGMII_EN (1u << 6)
#define RCR_MAX_FL(n) ((uint32_t)(n) << 16)
#define TCR_FDEN    (1u << 2)
#define TFWR_STRFWD (1u << 8)   /* store and forward */
#define RDAR_ACTIVE (1u << 24)
#define TDAR_ACTIVE (1u << 24)

#define EIR_RXF     (1u << 25)  /* a frame received */
#define EIR_TXF     (1u << 27)  /* a frame sent */
#define EIR_EBERR   (1u << 22)  /* a DMA bus error: the controller stopped */
#define EIR_ALL     0xffffffffu

#define BD_E        (1u << 15)  /* receive: empty, the controller's */
#define BD_R        (1u << 15)  /* transmit: ready, the controller's */
#define BD_W        (1u << 13)  /* the ring's last descriptor */
#define BD_L        (1u << 11)  /* the frame's last buffer */
#define BD_TC       (1u << 10)  /* transmit: append the CRC */
#define BD_RX_ERRORS 0x37u      /* LG, NO, CR, OV, TR (and bit 5 LG) */

#define RING_SIZE   32
#define BUF_SIZE    2048        /* MRBR: a multiple of 16; any frame fits one */
#define BUFS_PER_PAGE (PAGE_SIZE / BUF_SIZE)
#define BUF_PAGES   (RING_SIZE / BUFS_PER_PAGE)
#define MAX_FRAME   1518        /* with the CRC */
#define CRC_LEN     4
#define RESET_POLLS 100000

struct buffer_desc {
    uint16_t length;
    uint16_t flags;
    uint32_t data;              /* physical address of the buffer */
};

_Static_assert(sizeof(struct buffer_desc) == 8, "legacy descriptor layout");

#define RING_OFFSET_TX 2048

struct enet {
    const struct nic_driver *ops;   /* first: nic.c dispatches through it */
    struct device_mapping regs;
    cptr_t irq_handler;
    cptr_t irq_badged;
    cptr_t ring_frame;
    cptr_t buf_frames[2 * BUF_PAGES];
    volatile struct buffer_desc *rx, *tx;
    uint8_t *rx_buf, *tx_buf;       /* RING_SIZE buffers each */
    unsigned rx_next;               /* next descriptor to take from the controller */
    unsigned tx_tail;               /* next descriptor to fill */
    unsigned tx_clean;              /* oldest descriptor not yet known to be sent */
};

static uint32_t reg_read(struct enet *e, unsigned reg)
{
    return *(volatile uint32_t *)((uint8_t *)e->regs.vaddr + reg);
}

static void reg_write(struct enet *e, unsigned reg, uint32_t v)
{
    *(volatile uint32_t *)((uint8_t *)e->regs.vaddr + reg) = v;
}

/* A RAM frame mapped uncached at va; its physical address in *paddr. */
static word_t dma_frame(cptr_t *slot, word_t va, word_t *paddr)
{
    word_t st = obj_alloc(OBJ_FRAME, 0, slot);
    if (st == E_OK)
        st = map_frame(*slot, ROOT_SLOT_VSPACE, va, RIGHT_READ | RIGHT_WRITE,
                       VM_UNCACHED | VM_EXECUTE_NEVER);
    if (st == E_OK)
        st = frame_get_address(*slot, paddr);
    return st;
}

static void controller_stop(struct enet *e)
{
    reg_write(e, REG_EIMR, 0);
    reg_write(e, REG_ECR, ECR_RESET);
    for (unsigned i = 0; i < RESET_POLLS && (reg_read(e, REG_ECR) & ECR_RESET); i++)
        sys_yield();
    reg_write(e, REG_EIR, EIR_ALL);
}

static void enet_free(struct nic *nic, struct enet *e)
{
    if (e->regs.vaddr) {
        controller_stop(e);
        device_unmap(&e->regs);
    }
    slot_drop(&e->irq_handler);
    slot_drop(&e->irq_badged);
    slot_drop(&nic->irq_notification);
    for (unsigned i = 0; i < 2 * BUF_PAGES; i++)
        slot_drop(&e->buf_frames[i]);
    slot_drop(&e->ring_frame);
    free(e);
    nic->driver = NULL;
}

static word_t rings_setup(struct enet *e, word_t *ring_paddr)
{
    word_t ring_va = vaddr_alloc(PAGE_SIZE, PAGE_SIZE);
    word_t st = dma_frame(&e->ring_frame, ring_va, ring_paddr);
    if (st != E_OK)
        return st;
    e->rx = (volatile struct buffer_desc *)ring_va;
    e->tx = (volatile struct buffer_desc *)(ring_va + RING_OFFSET_TX);
    word_t bufs_va = vaddr_alloc(2 * BUF_PAGES * PAGE_SIZE, PAGE_SIZE);
    e->rx_buf = (uint8_t *)bufs_va;
    e->tx_buf = (uint8_t *)bufs_va + BUF_PAGES * PAGE_SIZE;
    for (unsigned p = 0; p < 2 * BUF_PAGES; p++) {
        word_t paddr;
        st = dma_frame(&e->buf_frames[p], bufs_va + p * PAGE_SIZE, &paddr);
        if (st != E_OK)
            return st;
        for (unsigned b = 0; b < BUFS_PER_PAGE; b++) {
            unsigned i = (p % BUF_PAGES) * BUFS_PER_PAGE + b;
            uint32_t data = (uint32_t)(paddr + b * BUF_SIZE);
            uint16_t wrap = i == RING_SIZE - 1 ? BD_W : 0;
            if (p < BUF_PAGES)
                e->rx[i] = (struct buffer_desc){ .flags = BD_E | wrap, .data = data };
            else
                e->tx[i] = (struct buffer_desc){ .flags = wrap, .data = data };
        }
    }
    e->rx_next = e->tx_tail = e->tx_clean = 0;
    return E_OK;
}

static word_t irq_setup(struct nic *nic, struct enet *e)
{
    word_t st = obj_alloc(OBJ_NOTIFICATION, 0, &nic->irq_notification);
    if (st != E_OK)
        return st;
    e->irq_handler = slot_alloc();
    e->irq_badged = slot_alloc();
    if (!e->irq_handler || !e->irq_badged)
        return E_NOT_ENOUGH_MEMORY;
    st = irq_control_get(ROOT_SLOT_IRQ_CONTROL, ENET_IRQ, ROOT_SLOT_CNODE, e->irq_handler, ROOT_DEPTH);
    if (st == E_OK)
        st = cnode_mint(ROOT_SLOT_CNODE, e->irq_badged, ROOT_DEPTH, ROOT_SLOT_CNODE,
                        nic->irq_notification, ROOT_DEPTH, RIGHT_WRITE, NIC_IRQ_BADGE);
    if (st == E_OK)
        st = irq_handler_set_notification(e->irq_handler, e->irq_badged);
    return st;
}

static word_t enet_open(struct nic *nic)
{
    struct enet *e = calloc(1, sizeof(*e));
    if (!e)
        return E_NOT_ENOUGH_MEMORY;
    e->ops = &imx_enet_driver;
    nic->driver = e;
    nic->irq_notification = 0;

    /* No device untyped there: this is not an i.MX6. */
    word_t st = device_map(ENET_PADDR, ENET_SIZE, &e->regs);
    if (st == E_FAILED_LOOKUP)
        st = NIC_ABSENT;
    if (st != E_OK) {
        enet_free(nic, e);
        return st;
    }
    /* The address as firmware (or QEMU) left it: a reset keeps PALR/PAUR on QEMU, not on every board. */
    uint32_t palr = reg_read(e, REG_PALR), paur = reg_read(e, REG_PAUR);
    controller_stop(e);
    for (unsigned i = 0; i < 4; i++)
        nic->mac[i] = (uint8_t)(palr >> (24 - 8 * i));
    nic->mac[4] = (uint8_t)(paur >> 24);
    nic->mac[5] = (uint8_t)(paur >> 16);
    if (!(palr | (paur >> 16)) || (nic->mac[0] & 1)) {
        enet_free(nic, e);
        return E_INVALID_ARGUMENT;
    }

    word_t ring_paddr = 0;
    st = rings_setup(e, &ring_paddr);
    if (st == E_OK)
        st = irq_setup(nic, e);
    if (st != E_OK) {
        enet_free(nic, e);
        return st;
    }
    arch_dma_barrier();
    reg_write(e, REG_PALR, palr);
    reg_write(e, REG_PAUR, paur);
    reg_write(e, REG_IAUR, 0);
    reg_write(e, REG_IALR, 0);
    reg_write(e, REG_GAUR, 0);
    reg_write(e, REG_GALR, 0);
    reg_write(e, REG_RCR, RCR_MAX_FL(MAX_FRAME) | RCR_MII_MODE | RCR_RGMII_EN);
    reg_write(e, REG_TCR, TCR_FDEN);
    reg_write(e, REG_TFWR, TFWR_STRFWD);
    reg_write(e, REG_MRBR, BUF_SIZE);
    reg_write(e, REG_RDSR, (uint32_t)ring_paddr);
    reg_write(e, REG_TDSR, (uint32_t)(ring_paddr + RING_OFFSET_TX));
    reg_write(e, REG_EIR, EIR_ALL);
    reg_write(e, REG_EIMR, EIR_RXF | EIR_EBERR);
    reg_write(e, REG_ECR, ECR_ETHEREN | ECR_SPEED | ECR_DBSWP);
    reg_write(e, REG_RDAR, RDAR_ACTIVE);
    return E_OK;
}

static void tx_reclaim(struct enet *e)
{
    while (e->tx_clean != e->tx_tail && !(e->tx[e->tx_clean].flags & BD_R))
        e->tx_clean = (e->tx_clean + 1) % RING_SIZE;
}

static bool enet_send(struct nic *nic, const void *frame, size_t len)
{
    struct enet *e = nic->driver;
    if (len == 0 || len > NIC_FRAME_MAX)
        return false;
    tx_reclaim(e);
    unsigned next = (e->tx_tail + 1) % RING_SIZE;
    if (next == e->tx_clean)
        return false;
    unsigned i = e->tx_tail;
    memcpy(e->tx_buf + i * BUF_SIZE, frame, len);
    e->tx[i].length = (uint16_t)len;
    arch_dma_barrier();     /* the buffer and length before R hands them over */
    e->tx[i].flags = (uint16_t)(BD_R | BD_L | BD_TC | (i == RING_SIZE - 1 ? BD_W : 0));
    arch_dma_barrier();
    e->tx_tail = next;
    reg_write(e, REG_TDAR, TDAR_ACTIVE);
    return true;
}

static size_t enet_receive(struct nic *nic, void *buf, size_t size)
{
    struct enet *e = nic->driver;
    for (;;) {
        unsigned i = e->rx_next;
        volatile struct buffer_desc *d = &e->rx[i];
        uint16_t flags = d->flags;
        if (flags & BD_E)
            return 0;
        arch_dma_barrier();
        /* The length counts the CRC, which stays in the buffer. */
        size_t len = d->length >= CRC_LEN ? d->length - CRC_LEN : 0;
        bool good = (flags & BD_L) && !(flags & BD_RX_ERRORS) && len && len <= size;
        if (good)
            memcpy(buf, e->rx_buf + i * BUF_SIZE, len);
        arch_dma_barrier();     /* the copy before the buffer goes back */
        d->flags = (uint16_t)(BD_E | (i == RING_SIZE - 1 ? BD_W : 0));
        arch_dma_barrier();
        e->rx_next = (i + 1) % RING_SIZE;
        /* The controller stops at a full ring: start it again now there is room. */
        reg_write(e, REG_RDAR, RDAR_ACTIVE);
        if (good)
            return len;
    }
}

static void enet_interrupt_done(struct nic *nic)
{
    struct enet *e = nic->driver;
    /* Clearing the events deasserts the line; only then may it be unmasked. */
    reg_write(e, REG_EIR, reg_read(e, REG_EIR));
    irq_handler_ack(e->irq_handler);
}

/*
 * The ENET has no event for a frame it had no descriptor for: it stops
 * (RDAR reads 0) until one is given back, and QEMU's model keeps the frame
 * queued meanwhile.
 */
static uint64_t enet_rx_overruns(struct nic *nic)
{
    (void)nic;
    return 0;
}

static void enet_close(struct nic *nic)
{
    enet_free(nic, nic->driver);
}

const struct nic_driver imx_enet_driver = {
    .name = "imx-enet",
    .open = enet_open,
    .send = enet_send,
    .receive = enet_receive,
    .interrupt_done = enet_interrupt_done,
    .rx_overruns = enet_rx_overruns,
    .close = enet_close,
};
