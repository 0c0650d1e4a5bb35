/*
 * The NIC (nic.h) and the kernel support under it: I/O port caps and their
 * errors, and on a machine with a NIC (x86_64: boot with qemu_run.py --net,
 * QEMU user networking) the driver's open, interrupt-driven receive and
 * rings.  Without a NIC, or on a port without I/O ports, the tests that need
 * them SKIP with the reason.
 *
 * The traffic is with QEMU's slirp: it answers ARP for its gateway 10.0.2.2
 * and ICMP echo sent to it; the guest is 10.0.2.15.  Waits block on the
 * NIC's notification, which the user-level timer IRQ also signals (another
 * badge), so that every wait ends after a bounded number of ticks even when
 * the NIC stays silent.
 */
#include <device.h>
#include <nic.h>
#include <pci.h>
#include "test.h"

#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA    0xcfc
#define PCI_CONFIG_LAST    0xcff

#define TIMER_BADGE     2
#define WAIT_TICKS      2000   /* 20 s of the 100 Hz timer: a hung NIC, not a slow host */

static const uint8_t qemu_default_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t guest_ip[4] = { 10, 0, 2, 15 };
static const uint8_t gateway_ip[4] = { 10, 0, 2, 2 };

/* ---- I/O port caps */

static bool have_io_ports(void)
{
    uint32_t v;
    return io_port_in(ROOT_SLOT_IO_PORT, PCI_CONFIG_DATA, 4, &v) != E_FAILED_LOOKUP;
}

TEST(io_port_errors)
{
    if (!have_io_ports())
        SKIP("this port has no I/O ports (no I/O port cap in the root task)");
    cptr_t io = ROOT_SLOT_IO_PORT;
    uint32_t v;
    /* Outside the cap (COM1, the kernel's console): E_RANGE with the cap's range. */
    CHECK_ST(io_port_in(io, 0x3f8, 1, &v), E_RANGE);
    CHECK_EQ(invoke_last_detail(0), PCI_CONFIG_ADDRESS);
    CHECK_EQ(invoke_last_detail(1), PCI_CONFIG_LAST);
    CHECK_ST(io_port_out(io, 0xcf7, 1, 0), E_RANGE);
    CHECK_ST(io_port_out(io, 0x10000, 1, 0), E_RANGE);
    /* An access that starts inside but runs past the end. */
    CHECK_ST(io_port_in(io, 0xcfd, 4, &v), E_RANGE);
    CHECK_EQ(invoke_last_detail(1), PCI_CONFIG_LAST - 3);
    CHECK_ST(io_port_in(io, 0xcff, 2, &v), E_RANGE);
    /* A value wider than the access. */
    CHECK_ST(io_port_out(io, PCI_CONFIG_DATA, 1, 0x100), E_INVALID_ARGUMENT);
    CHECK_EQ(invoke_last_detail(0), 1);
    CHECK_ST(io_port_out(io, PCI_CONFIG_DATA, 2, 0x10000), E_INVALID_ARGUMENT);
    word_t above_32_bits = (word_t)0xffffffffu + 1;    /* 0 where a word has 32 bits */
    if (above_32_bits)
        CHECK_ST(io_port_out(io, PCI_CONFIG_DATA, 4, above_32_bits), E_INVALID_ARGUMENT);
    /* Too few arguments. */
    CHECK_ST(invoke(io, IO_PORT_IN8, 0, NULL, 0, NULL, NULL), E_TRUNCATED_MESSAGE);
    word_t port = PCI_CONFIG_DATA;
    CHECK_ST(invoke(io, IO_PORT_OUT32, 1, &port, 0, NULL, NULL), E_TRUNCATED_MESSAGE);
    /* Labels of other objects, and a width that has no label. */
    CHECK_ST(invoke(io, TCB_SUSPEND, 0, NULL, 0, NULL, NULL), E_ILLEGAL_OPERATION);
    CHECK_ST(io_port_in(io, PCI_CONFIG_DATA, 3, &v), E_ILLEGAL_OPERATION);
    /* Rights: In needs READ, Out needs WRITE. */
    cptr_t read_only = copy_cap(io, RIGHT_READ), write_only = copy_cap(io, RIGHT_WRITE);
    CHECK(read_only && write_only);
    CHECK_ST(io_port_out(read_only, PCI_CONFIG_ADDRESS, 4, 0x80000000u), E_INVALID_CAPABILITY);
    CHECK_ST(io_port_in(write_only, PCI_CONFIG_DATA, 4, &v), E_INVALID_CAPABILITY);
    /* It takes no badge, like every cap but endpoints, notifications and CNodes. */
    cptr_t s = slot_alloc();
    CHECK(s);
    CHECK_ST(cnode_mint(ROOT_SLOT_CNODE, s, ROOT_DEPTH, ROOT_SLOT_CNODE, io, ROOT_DEPTH, RIGHTS_ALL, 7),
             E_INVALID_ARGUMENT);
    /* An I/O port cap is no other object. */
    CHECK_ST(io_port_in(ROOT_SLOT_TCB, PCI_CONFIG_DATA, 4, &v), E_ILLEGAL_OPERATION);
}

TEST(io_port_pci_config_widths)
{
    if (!have_io_ports())
        SKIP("this port has no I/O ports (no I/O port cap in the root task)");
    cptr_t io = copy_cap(ROOT_SLOT_IO_PORT, RIGHTS_ALL);
    CHECK(io);
    /* Bus 0, device 0, function 0 is the host bridge on every PC: a real vendor id. */
    uint32_t id, lo, hi, b0;
    CHECK_OK(io_port_out(io, PCI_CONFIG_ADDRESS, 4, 0x80000000u));
    CHECK_OK(io_port_in(io, PCI_CONFIG_DATA, 4, &id));
    CHECK((id & 0xffff) != 0xffff && (id & 0xffff) != 0);
    /* The same register read as two 16-bit and one 8-bit access. */
    CHECK_OK(io_port_in(io, PCI_CONFIG_DATA, 2, &lo));
    CHECK_OK(io_port_in(io, PCI_CONFIG_DATA + 2, 2, &hi));
    CHECK_OK(io_port_in(io, PCI_CONFIG_DATA, 1, &b0));
    CHECK_EQ(lo | hi << 16, id);
    CHECK_EQ(b0, id & 0xff);
    /* CONFIG_ADDRESS reads back what was written (bits 31, 23..2). */
    CHECK_OK(io_port_in(io, PCI_CONFIG_ADDRESS, 4, &lo));
    CHECK_EQ(lo, 0x80000000u);
    test_note("host bridge %04x:%04x", (unsigned)(id & 0xffff), (unsigned)(id >> 16));
}

/* ---- frames */

struct eth_arp {
    uint8_t dst[6], src[6];
    uint8_t type[2];
    uint8_t htype[2], ptype[2];
    uint8_t hlen, plen;
    uint8_t oper[2];
    uint8_t sha[6], spa[4], tha[6], tpa[4];
};

struct eth_icmp {
    uint8_t dst[6], src[6];
    uint8_t type[2];
    uint8_t ver_ihl, tos;
    uint8_t total_len[2], id[2], frag[2];
    uint8_t ttl, proto;
    uint8_t ip_sum[2];
    uint8_t src_ip[4], dst_ip[4];
    uint8_t icmp_type, icmp_code;
    uint8_t icmp_sum[2], icmp_id[2], icmp_seq[2];
    uint8_t payload[32];
};

_Static_assert(sizeof(struct eth_arp) == 42 && sizeof(struct eth_icmp) == 74, "frame layouts");

#define ICMP_ID 0x4e49

static void put16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static unsigned get16(const uint8_t *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

/* The Internet checksum (RFC 1071) of len bytes. */
static unsigned inet_sum(const uint8_t *p, size_t len)
{
    uint32_t s = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        s += get16(p + i);
    if (len & 1)
        s += (uint32_t)p[len - 1] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return ~s & 0xffff;
}

static void arp_frame(struct eth_arp *f, const uint8_t *mac, unsigned oper, const uint8_t *dst_mac,
                      const uint8_t *target_ip)
{
    memset(f, 0, sizeof(*f));
    memcpy(f->dst, dst_mac, 6);
    memcpy(f->src, mac, 6);
    put16(f->type, 0x0806);
    put16(f->htype, 1);
    put16(f->ptype, 0x0800);
    f->hlen = 6;
    f->plen = 4;
    put16(f->oper, oper);
    memcpy(f->sha, mac, 6);
    memcpy(f->spa, guest_ip, 4);
    if (oper == 2)
        memcpy(f->tha, dst_mac, 6);
    memcpy(f->tpa, target_ip, 4);
}

static void echo_frame(struct eth_icmp *f, const uint8_t *mac, const uint8_t *gw_mac, unsigned seq)
{
    memset(f, 0, sizeof(*f));
    memcpy(f->dst, gw_mac, 6);
    memcpy(f->src, mac, 6);
    put16(f->type, 0x0800);
    f->ver_ihl = 0x45;
    put16(f->total_len, sizeof(*f) - 14);
    put16(f->id, seq);
    f->ttl = 64;
    f->proto = 1;
    memcpy(f->src_ip, guest_ip, 4);
    memcpy(f->dst_ip, gateway_ip, 4);
    put16(f->ip_sum, inet_sum(&f->ver_ihl, 20));
    f->icmp_type = 8;
    put16(f->icmp_id, ICMP_ID);
    put16(f->icmp_seq, seq);
    for (unsigned i = 0; i < sizeof(f->payload); i++)
        f->payload[i] = (uint8_t)(seq + i);
    put16(f->icmp_sum, inet_sum(&f->icmp_type, sizeof(*f) - 34));
}

/* ---- a NIC with a bounded, blocking wait */

struct nic_run {
    struct nic nic;
    cptr_t timer;           /* the user timer's IRQ handler, signalling TIMER_BADGE */
    uint8_t gw_mac[6];
    bool gw_known;
    unsigned interrupts;    /* waits that returned with the NIC's bit */
    unsigned answered_arp;  /* ARP requests for our address we answered */
};

/* Open the NIC (false: the test was skipped or failed) and attach the timer to its notification. */
static bool run_open(struct nic_run *r)
{
    memset(r, 0, sizeof(*r));
    word_t st = nic_open(&r->nic);
    if (st == NIC_ABSENT) {
        test_skip("no NIC on this machine (x86_64: boot with tools/qemu_run.py --net)");
        return false;
    }
    if (st != E_OK) {
        test_fail(__FILE__, __LINE__, "nic_open: %s", status_name(st));
        return false;
    }
    r->timer = slot_alloc();
    cptr_t badged = mint(r->nic.irq_notification, RIGHT_WRITE, TIMER_BADGE);
    if (!badged || bootinfo->timer_irq == ~0UL ||
        irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, r->timer,
                        ROOT_DEPTH) != E_OK ||
        irq_handler_set_notification(r->timer, badged) != E_OK) {
        test_fail(__FILE__, __LINE__, "the timer IRQ for bounded waits");
        nic_close(&r->nic);
        return false;
    }
    return true;
}

static void run_close(struct nic_run *r)
{
    cnode_delete(ROOT_SLOT_CNODE, r->timer, ROOT_DEPTH);
    nic_close(&r->nic);
}

/* Block until the NIC interrupts (true) or WAIT_TICKS timer ticks pass (false). */
static bool wait_interrupt(struct nic_run *r)
{
    for (unsigned ticks = 0; ticks < WAIT_TICKS;) {
        word_t w = 0;
        if (sys_wait(r->nic.irq_notification, &w) != E_OK)
            return false;
        if (w & TIMER_BADGE) {
            ticks++;
            irq_handler_ack(r->timer);
        }
        if (w & NIC_IRQ_BADGE) {
            r->interrupts++;
            nic_interrupt_done(&r->nic);
            return true;
        }
    }
    return false;
}

/* Answer slirp's ARP requests for our address (it asks before it sends to us); true if f was one. */
static bool answer_arp(struct nic_run *r, const uint8_t *f, size_t len)
{
    const struct eth_arp *a = (const void *)f;
    if (len < sizeof(*a) || get16(a->type) != 0x0806 || get16(a->oper) != 1 ||
        memcmp(a->tpa, guest_ip, 4))
        return false;
    struct eth_arp reply;
    arp_frame(&reply, r->nic.mac, 2, a->sha, a->spa);
    r->answered_arp += nic_send(&r->nic, &reply, sizeof(reply));
    return true;
}

static bool is_gateway_arp_reply(struct nic_run *r, const uint8_t *f, size_t len)
{
    const struct eth_arp *a = (const void *)f;
    return len >= sizeof(*a) && get16(a->type) == 0x0806 && get16(a->oper) == 2 &&
           !memcmp(a->spa, gateway_ip, 4) && !memcmp(a->tpa, guest_ip, 4) &&
           !memcmp(a->tha, r->nic.mac, 6) && !memcmp(a->dst, r->nic.mac, 6);
}

/* ARP for the gateway until it answers: its MAC in r->gw_mac. */
static bool resolve_gateway(struct nic_run *r)
{
    static const uint8_t broadcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static uint8_t frame[2048];
    struct eth_arp req;
    arp_frame(&req, r->nic.mac, 1, broadcast, gateway_ip);
    for (unsigned tries = 0; tries < 3 && !r->gw_known; tries++) {
        if (!nic_send(&r->nic, &req, sizeof(req)))
            return false;
        while (!r->gw_known && wait_interrupt(r)) {
            size_t len;
            while ((len = nic_receive(&r->nic, frame, sizeof(frame))) != 0) {
                if (is_gateway_arp_reply(r, frame, len)) {
                    memcpy(r->gw_mac, ((struct eth_arp *)frame)->sha, 6);
                    r->gw_known = true;
                } else {
                    answer_arp(r, frame, len);
                }
            }
        }
    }
    return r->gw_known;
}

TEST(nic_open_reads_mac)
{
    struct nic_run r;
    if (!run_open(&r))
        return;
    bool mac_ok = !memcmp(r.nic.mac, qemu_default_mac, 6);
    test_note("mac %02x:%02x:%02x:%02x:%02x:%02x", r.nic.mac[0], r.nic.mac[1], r.nic.mac[2],
              r.nic.mac[3], r.nic.mac[4], r.nic.mac[5]);
    run_close(&r);
    CHECK(mac_ok);
    /* Closing gave back the IRQ and the device memory: it opens again. */
    struct nic again;
    CHECK_OK(nic_open(&again));
    bool again_ok = !memcmp(again.mac, qemu_default_mac, 6);
    nic_close(&again);
    CHECK(again_ok);
}

TEST(nic_arp_gateway)
{
    struct nic_run r;
    if (!run_open(&r))
        return;
    bool ok = resolve_gateway(&r);
    run_close(&r);
    CHECK(ok);
    /* Slirp's gateway has a MAC of its own, unicast. */
    CHECK(memcmp(r.gw_mac, r.nic.mac, 6) != 0 && !(r.gw_mac[0] & 1));
    CHECK(r.interrupts >= 1);
    test_note("gateway %02x:%02x:%02x:%02x:%02x:%02x after %u interrupts", r.gw_mac[0], r.gw_mac[1],
              r.gw_mac[2], r.gw_mac[3], r.gw_mac[4], r.gw_mac[5], r.interrupts);
}

#define PINGS       256     /* 8 times round each 32-slot transmit ring */
#define BURST_MAX   24      /* fits either ring (the smallest has 31 free slots) */
#define OVERFLOW    1024    /* twice the e1000's receive ring (512), 32 times the ENET's (32) */
#define RX_FREE_MIN 31      /* free receive slots a ring has at least (the ENET's 32 - 1) */
#define MARKERS     8
#define SEQS        (OVERFLOW + MARKERS)    /* sequence numbers in use, at most */

/* What came back from the gateway's echo replies. */
struct echo_tally {
    uint8_t seen[SEQS];
    unsigned received, duplicates, bad;
};

/* Send echo requests first .. first+count-1 (seq < SEQS); false if the TX ring stays full. */
static bool send_echoes(struct nic_run *r, unsigned first, unsigned count, unsigned *full)
{
    for (unsigned seq = first; seq < first + count;) {
        struct eth_icmp req;
        echo_frame(&req, r->nic.mac, r->gw_mac, seq);
        if (nic_send(&r->nic, &req, sizeof(req))) {
            seq++;
        } else if (++*full > 100000) {
            return false;
        } else {
            sys_yield();    /* the TX ring is full: let the NIC catch up */
        }
    }
    return true;
}

/* Take one frame: an echo reply is tallied, an ARP request for us answered if `answer`. */
static void take_frame(struct nic_run *r, const uint8_t *f, size_t len, struct echo_tally *t,
                       bool answer)
{
    const struct eth_icmp *e = (const void *)f;
    if (answer && answer_arp(r, f, len))
        return;
    if (len < sizeof(*e) || get16(e->type) != 0x0800 || e->proto != 1 || e->icmp_type != 0 ||
        get16(e->icmp_id) != ICMP_ID)
        return;
    unsigned seq = get16(e->icmp_seq);
    bool payload_ok = true;
    for (unsigned i = 0; i < sizeof(e->payload); i++)
        payload_ok &= e->payload[i] == (uint8_t)(seq + i);
    if (seq >= SEQS || !payload_ok || memcmp(e->dst, r->nic.mac, 6)) {
        t->bad++;
        return;
    }
    t->duplicates += t->seen[seq] != 0;
    if (!t->seen[seq]++)
        t->received++;
}

/*
 * Interrupt-driven receive: wait for the NIC's interrupt, acknowledge it,
 * drain the ring; until seqs first .. first+count-1 have all come back
 * (true), or a wait ends without an interrupt (false).
 */
static bool receive_echoes(struct nic_run *r, unsigned first, unsigned count, struct echo_tally *t)
{
    static uint8_t frame[2048];
    for (;;) {
        unsigned missing = 0;
        for (unsigned seq = first; seq < first + count; seq++)
            missing += !t->seen[seq];
        if (!missing)
            return true;
        if (!wait_interrupt(r))
            return false;
        size_t len;
        while ((len = nic_receive(&r->nic, frame, sizeof(frame))) != 0)
            take_frame(r, frame, len, t, true);
    }
}

/*
 * ICMP echo to the gateway in bursts of 1, 2, 4 .. BURST_MAX, each sent
 * before its replies are read, PINGS in all (transmit rings wrap 8 times): every
 * reply comes back, once, intact, each burst after an interrupt.
 */
TEST(nic_many_frames)
{
    static struct echo_tally t;
    struct nic_run r;
    if (!run_open(&r))
        return;
    memset(&t, 0, sizeof(t));
    unsigned sent = 0, bursts = 0, full = 0;
    bool ok = resolve_gateway(&r);
    for (unsigned burst = 1; ok && sent < PINGS; burst = burst * 2 > BURST_MAX ? BURST_MAX : burst * 2) {
        unsigned n = sent + burst > PINGS ? PINGS - sent : burst;
        unsigned before = r.interrupts;
        ok = send_echoes(&r, sent, n, &full) && receive_echoes(&r, sent, n, &t) &&
             r.interrupts > before;
        sent += n;
        bursts++;
    }
    run_close(&r);
    test_note("%u echo requests in %u bursts, %u replies, %u interrupts, %u tx-full retries", sent,
              bursts, t.received, r.interrupts, full);
    CHECK(r.gw_known);
    CHECK(ok);
    CHECK_EQ(t.received, PINGS);
    CHECK_EQ(t.duplicates, 0);
    CHECK_EQ(t.bad, 0);
}

/*
 * More echo requests at once than the receive ring holds: the NIC drops
 * what does not fit (an overrun, as on the wire; QEMU's slirp keeps a few),
 * but no slot is lost: what fits comes back intact, and a later burst comes
 * back whole.
 */
TEST(nic_rx_overflow_recovers)
{
    static struct echo_tally t;
    struct nic_run r;
    if (!run_open(&r))
        return;
    memset(&t, 0, sizeof(t));
    unsigned full = 0;
    bool ok = resolve_gateway(&r) && send_echoes(&r, 0, OVERFLOW, &full);
    /* A ring's worth at least: RX_FREE_MIN descriptors were free. */
    while (ok && t.received < RX_FREE_MIN) {
        ok = wait_interrupt(&r);
        static uint8_t frame[2048];
        size_t len;
        while (ok && (len = nic_receive(&r.nic, frame, sizeof(frame))) != 0)
            take_frame(&r, frame, len, &t, true);
    }
    unsigned after_overflow = t.received;
    bool markers = ok && send_echoes(&r, OVERFLOW, MARKERS, &full) &&
                   receive_echoes(&r, OVERFLOW, MARKERS, &t);
    unsigned long overruns = (unsigned long)nic_rx_overruns(&r.nic);
    run_close(&r);
    test_note("%u of %u replies came back from the overflowing burst; %lu overrun interrupts",
              after_overflow, OVERFLOW, overruns);
    CHECK(ok);
    CHECK(markers);
    CHECK(t.received - MARKERS <= OVERFLOW);
    CHECK_EQ(t.duplicates, 0);
    CHECK_EQ(t.bad, 0);
}

/* ---- receiving on another core while this one sends */

struct receiver {
    struct nic_run *r;
    struct echo_tally *t;
    volatile word_t received;   /* t->received as the receiver last published it */
    volatile word_t stop;
    volatile word_t done;
    volatile word_t stalled;    /* WAIT_TICKS passed without an interrupt */
    volatile word_t core;
};

/*
 * The interrupt loop of docs/drivers.md on its own thread: wait, acknowledge,
 * drain.  It sends nothing (slirp learnt our MAC from the ARP request), so
 * the sending thread is the only one calling nic_send.
 */
static void receiver_loop(void *arg)
{
    static uint8_t frame[2048];
    struct receiver *rc = arg;
    rc->core = sys_debug_core();
    unsigned quiet_ticks = 0;
    while (!rc->stop && quiet_ticks < WAIT_TICKS) {
        /* STOP_BADGE only ends the wait; rc->stop says why. */
        word_t w = 0;
        if (sys_wait(rc->r->nic.irq_notification, &w) != E_OK)
            break;
        if (w & TIMER_BADGE) {
            quiet_ticks++;
            irq_handler_ack(rc->r->timer);
        }
        if (w & NIC_IRQ_BADGE) {
            quiet_ticks = 0;
            rc->r->interrupts++;
            nic_interrupt_done(&rc->r->nic);
            size_t len;
            while ((len = nic_receive(&rc->r->nic, frame, sizeof(frame))) != 0)
                take_frame(rc->r, frame, len, rc->t, false);
            __atomic_store_n(&rc->received, rc->t->received, __ATOMIC_RELEASE);
        }
    }
    rc->stalled = quiet_ticks >= WAIT_TICKS;
    __atomic_store_n(&rc->done, 1, __ATOMIC_RELEASE);
}

#define SPLIT_BURSTS 8
#define STOP_BADGE   4

#define SPLIT_BURST  16

/*
 * nic_send on this core while another core's thread takes the interrupts
 * and receives (the driver-core layout of the Redis benchmark): every reply
 * arrives.  The IRQ is delivered to the boot core and reaches the waiter as
 * a notification signal across cores.
 */
TEST(nic_receive_on_another_core)
{
    static struct echo_tally t;
    static struct receiver rc;
    struct nic_run r;
    if (!run_open(&r))
        return;
    memset(&t, 0, sizeof(t));
    memset(&rc, 0, sizeof(rc));
    rc.r = &r;
    rc.t = &t;
    bool resolved = resolve_gateway(&r);
    cptr_t stop_signal = mint(r.nic.irq_notification, RIGHT_WRITE, STOP_BADGE);
    struct thread *th = resolved && stop_signal ? spawn(receiver_loop, &rc, TEST_PRIO, ncores() - 1, 0)
                                                : NULL;
    unsigned full = 0, sent = 0;
    bool ok = th != NULL;
    for (unsigned b = 0; ok && b < SPLIT_BURSTS; b++) {
        ok = send_echoes(&r, sent, SPLIT_BURST, &full);
        sent += SPLIT_BURST;
        /* The receiver ends by itself after WAIT_TICKS without an interrupt. */
        while (ok && __atomic_load_n(&rc.received, __ATOMIC_ACQUIRE) < sent && !rc.done)
            sys_yield();
        ok = ok && !rc.done;
    }
    /* Wake it now (a timer tick would too, but its core may be slow to run it). */
    rc.stop = 1;
    bool ended = th && sys_signal(stop_signal) == E_OK && wait_ge(&rc.done, 1, 2 * WAIT_MS);
    /* A receiver that did not end is stopped before the NIC goes: close it in any case,
     * or it would keep writing into memory the test's arena is about to give back. */
    if (th && !ended)
        tcb_suspend(th->tcb);
    run_close(&r);
    test_note("receiver on core %lu: %u replies of %u, %u interrupts", (unsigned long)rc.core,
              t.received, sent, r.interrupts);
    CHECK(resolved);
    CHECK(ended);
    CHECK(ok && !rc.stalled);
    CHECK_EQ(t.received, SPLIT_BURSTS * SPLIT_BURST);
    CHECK_EQ(t.duplicates, 0);
    CHECK_EQ(t.bad, 0);
    CHECK(r.interrupts >= 1);
}

/* ---- a NIC's interrupt line, driven by hand */

#define E1000_ICR 0x00c0    /* read to clear: deasserts INTA */
#define E1000_ICS 0x00c8    /* write to set causes: asserts INTA when a set cause is enabled */
#define E1000_IMS 0x00d0
#define E1000_IMC 0x00d8
#define E1000_CAUSE_TXQE (1u << 1)

#define ENET_PADDR 0x02188000
#define ENET_SIZE  0x4000
#define ENET_IRQ   150
#define ENET_EIR   0x004    /* write 1 to clear */
#define ENET_EIMR  0x008
#define ENET_MMFR  0x040    /* an MDIO frame: when it is done, EIR.MII is set */
#define ENET_EIR_MII (1u << 23)
#define ENET_MMFR_READ_PHY0_REG1 (0x1u << 30 | 0x2u << 28 | 0x1u << 18 | 0x2u << 16)

/* Wait for a signal on n with at most `ticks` timer ticks; the word's NIC bit, or 0. */
static word_t wait_bits(cptr_t n, cptr_t timer, unsigned ticks)
{
    for (unsigned t = 0; t < ticks;) {
        word_t w = 0;
        if (sys_wait(n, &w) != E_OK)
            return 0;
        if (w & TIMER_BADGE) {
            t++;
            irq_handler_ack(timer);
        }
        if (w & NIC_IRQ_BADGE)
            return NIC_IRQ_BADGE;
    }
    return 0;
}

/* A device whose interrupt line the test raises and lowers through its registers. */
struct line_driver {
    volatile uint32_t *regs;
    void (*quiet)(volatile uint32_t *regs);     /* nothing enabled, nothing pending */
    void (*assert_line)(volatile uint32_t *regs);
    bool (*deassert_line)(volatile uint32_t *regs);  /* true if the cause was still set */
};

/*
 * The line is level-triggered and the kernel's rule holds for it: a
 * delivery masks the line, Ack unmasks it, and a line still asserted at
 * Ack is delivered again; once the device deasserts it, nothing more
 * comes.  (Programmed edge-triggered, the second delivery would never
 * come: the interrupt controller takes no new edge while the line stays
 * high.)
 */
static void check_level_redelivery(const struct line_driver *d, unsigned irq)
{
    cptr_t n = ntfn_new(), handler = slot_alloc(), timer = slot_alloc();
    cptr_t nic_badged = mint(n, RIGHT_WRITE, NIC_IRQ_BADGE), timer_badged = mint(n, RIGHT_WRITE, TIMER_BADGE);
    CHECK(n && handler && timer && nic_badged && timer_badged);
    CHECK_OK(irq_control_get(ROOT_SLOT_IRQ_CONTROL, irq, ROOT_SLOT_CNODE, handler, ROOT_DEPTH));
    CHECK_OK(irq_control_get(ROOT_SLOT_IRQ_CONTROL, bootinfo->timer_irq, ROOT_SLOT_CNODE, timer, ROOT_DEPTH));
    CHECK_OK(irq_handler_set_notification(timer, timer_badged));
    d->quiet(d->regs);
    CHECK_OK(irq_handler_set_notification(handler, nic_badged));

    d->assert_line(d->regs);
    word_t first = wait_bits(n, timer, WAIT_TICKS);
    /* Ack without clearing the cause: still asserted, so it must come again, and again. */
    CHECK_OK(irq_handler_ack(handler));
    word_t second = wait_bits(n, timer, WAIT_TICKS);
    CHECK_OK(irq_handler_ack(handler));
    word_t third = wait_bits(n, timer, WAIT_TICKS);
    bool was_set = d->deassert_line(d->regs);
    CHECK_OK(irq_handler_ack(handler));
    word_t after_clear = wait_bits(n, timer, 20);
    d->quiet(d->regs);
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, handler, ROOT_DEPTH));
    test_note("IRQ %u", irq);
    CHECK_EQ(first, NIC_IRQ_BADGE);
    CHECK_EQ(second, NIC_IRQ_BADGE);
    CHECK_EQ(third, NIC_IRQ_BADGE);
    CHECK(was_set);
    CHECK_EQ(after_clear, 0);
}

/* ---- acknowledged on another core while the delivering core is still leaving the kernel */

/*
 * The test delivers ACK_RACE_ROUNDS interrupts, or as many as ACK_RACE_MS of
 * the guest's time allows.  Under TCG the guest's time is the host's, so a
 * host busy with other work gives fewer deliveries per guest second; the
 * time limit is therefore generous and the goal a count, which an idle host
 * reaches in a few seconds.  A stuck line shows at once (a delivery that is
 * not answered within WAIT_MS); fewer than ACK_RACE_MIN_ROUNDS by the time
 * limit is a host too busy to exercise the race, which fails too.
 */
#define ACK_RACE_ROUNDS     1200
#define ACK_RACE_MS         150000
#define ACK_RACE_MIN_ROUNDS 1000

struct acker {
    const struct line_driver *d;
    cptr_t n, handler;
    volatile word_t acks;       /* deliveries answered */
    volatile word_t stop;
    volatile word_t done;
};

/* Poll (not wait), so the signal is seen the moment the delivering core releases the lock. */
static void acker_loop(void *arg)
{
    struct acker *a = arg;
    while (!a->stop) {
        word_t w = 0;
        word_t st = sys_poll(a->n, &w);
        if (st != E_OK && st != E_WOULD_BLOCK)
            break;
        if (st == E_OK && (w & NIC_IRQ_BADGE)) {
            a->d->deassert_line(a->d->regs);
            if (irq_handler_ack(a->handler) != E_OK)
                break;
            __atomic_store_n(&a->acks, a->acks + 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
}

/*
 * The interrupt is delivered on the boot core (this thread's) and answered
 * on the last core: the driver there clears the device and calls Ack while
 * the delivering core may still be on its way out of the kernel, with its
 * own mask of the line not yet written to the controller.  Every delivery
 * must be followed by the next: the line must end unmasked whichever core
 * writes the controller last.  (Each core once applied its own decision, and
 * a delivery's late mask left the line masked for good: the receiver of
 * nic_receive_on_another_core once went 20 s without an interrupt.)
 */
static void check_ack_on_another_core(const struct line_driver *d, unsigned irq)
{
    if (ncores() < 2)
        SKIP("needs 2 cores: the Ack must come from another core than the delivery");
    static struct acker a;
    memset(&a, 0, sizeof(a));
    a.d = d;
    a.n = ntfn_new();
    a.handler = slot_alloc();
    cptr_t badged = mint(a.n, RIGHT_WRITE, NIC_IRQ_BADGE);
    CHECK(a.n && a.handler && badged);
    CHECK_OK(irq_control_get(ROOT_SLOT_IRQ_CONTROL, irq, ROOT_SLOT_CNODE, a.handler, ROOT_DEPTH));
    d->quiet(d->regs);
    CHECK_OK(irq_handler_set_notification(a.handler, badged));
    struct thread *th = spawn(acker_loop, &a, TEST_PRIO, ncores() - 1, 0);
    CHECK(th != NULL);
    unsigned rounds = 0;
    bool answered = true;
    for (uint64_t until = deadline_in(ACK_RACE_MS);
         answered && rounds < ACK_RACE_ROUNDS && !deadline_passed(until); rounds++) {
        d->assert_line(d->regs);
        answered = wait_ge(&a.acks, rounds + 1, WAIT_MS);
    }
    a.stop = 1;
    bool ended = wait_ge(&a.done, 1, WAIT_MS);
    if (!ended)
        tcb_suspend(th->tcb);
    d->quiet(d->regs);
    CHECK_OK(cnode_delete(ROOT_SLOT_CNODE, a.handler, ROOT_DEPTH));
    test_note("IRQ %u: %lu of %u deliveries acknowledged on core %lu", irq, (unsigned long)a.acks,
              rounds, (unsigned long)(ncores() - 1));
    CHECK(ended);
    CHECK(answered);
    CHECK_EQ(a.acks, rounds);
    CHECK(rounds >= ACK_RACE_MIN_ROUNDS);
}

static void e1000_quiet(volatile uint32_t *r)
{
    r[E1000_IMC / 4] = 0xffffffffu;
    (void)r[E1000_ICR / 4];
}

static void e1000_assert(volatile uint32_t *r)
{
    r[E1000_IMS / 4] = E1000_CAUSE_TXQE;
    r[E1000_ICS / 4] = E1000_CAUSE_TXQE;
}

static bool e1000_deassert(volatile uint32_t *r)
{
    return r[E1000_ICR / 4] & E1000_CAUSE_TXQE;
}

/* x86_64: the e1000's PCI INTx, routed to a level-triggered I/O APIC input; the cause set through ICS. */
static void on_e1000_line(void (*check)(const struct line_driver *d, unsigned irq))
{
    struct pci_address a;
    word_t st = pci_find(0x8086, 0x100e, &a);
    if (st == E_FAILED_LOOKUP)
        SKIP("no e1000 on this machine (x86_64: boot with tools/qemu_run.py --net)");
    CHECK_OK(st);
    uint32_t cmd, line;
    word_t bar, size;
    CHECK_OK(pci_read32(a, PCI_COMMAND, &cmd));
    CHECK_OK(pci_write32(a, PCI_COMMAND, ((cmd | PCI_COMMAND_MEMORY) & ~PCI_COMMAND_INTX_OFF) & 0xffff));
    CHECK_OK(pci_read32(a, PCI_INTERRUPT_LINE, &line));
    CHECK_OK(pci_memory_bar(a, 0, &bar, &size));
    static struct device_mapping regs;
    CHECK_OK(device_map(bar, size, &regs));
    const struct line_driver d = { regs.vaddr, e1000_quiet, e1000_assert, e1000_deassert };
    check(&d, line & 0xff);
    e1000_quiet(d.regs);
    device_unmap(&regs);
}

TEST(nic_level_irq_redelivered_until_cleared)
{
    on_e1000_line(check_level_redelivery);
}

TEST(nic_irq_ack_on_another_core)
{
    on_e1000_line(check_ack_on_another_core);
}

static void enet_quiet(volatile uint32_t *r)
{
    r[ENET_EIMR / 4] = 0;
    r[ENET_EIR / 4] = 0xffffffffu;
}

static void enet_assert(volatile uint32_t *r)
{
    r[ENET_EIMR / 4] = ENET_EIR_MII;
    r[ENET_MMFR / 4] = ENET_MMFR_READ_PHY0_REG1;
}

static bool enet_deassert(volatile uint32_t *r)
{
    bool set = r[ENET_EIR / 4] & ENET_EIR_MII;
    r[ENET_EIR / 4] = ENET_EIR_MII;
    return set;
}

/*
 * arm-imx6: the ENET's interrupt, a level-sensitive GIC SPI; the cause is
 * "MDIO frame done" (EIR.MII), raised by reading a PHY register.  With the
 * controller disabled (ECR.ETHEREN clear) its MDIO still works; the test
 * assumes the MII clock (MSCR) the boot loader or QEMU left, which QEMU does
 * not need.
 */
static void on_enet_line(void (*check)(const struct line_driver *d, unsigned irq))
{
    static struct device_mapping regs;
    /* Elsewhere that address may be anything (on x86_64 it is RAM): look only on the i.MX6. */
    if (strcmp(bootinfo->arch, "arm-imx6"))
        SKIP("no i.MX6 ENET on this machine (it is arm-imx6's)");
    word_t st = device_map(ENET_PADDR, ENET_SIZE, &regs);
    CHECK_OK(st);
    const struct line_driver d = { regs.vaddr, enet_quiet, enet_assert, enet_deassert };
    check(&d, ENET_IRQ);
    enet_quiet(d.regs);
    device_unmap(&regs);
}

TEST(nic_enet_level_irq_redelivered_until_cleared)
{
    on_enet_line(check_level_redelivery);
}

TEST(nic_enet_irq_ack_on_another_core)
{
    on_enet_line(check_ack_on_another_core);
}
