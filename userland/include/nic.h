/*
 * The network interface a board gives its TCP/IP stack (docs/drivers.md).
 * One interface, one driver per board: the e1000 on x86_64 (PCI), the
 * i.MX6 ENET on arm-imx6.
 *
 * A thread waits for the NIC's interrupts with sys_wait(nic.irq_notification),
 * then calls nic_interrupt_done() and drains nic_receive().  nic_send may run
 * at the same time as nic_receive or nic_interrupt_done (another thread or
 * core): they touch different rings and registers.  Otherwise the calls on
 * one nic must not overlap (two sends, two receives); nic_open and nic_close
 * use the root task's allocators, so the main thread makes them, with no
 * other call running.
 */
#ifndef NIC_H
#define NIC_H

#include <abi/errors.h>
#include <abi/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nic {
    uint8_t mac[6];
    cptr_t irq_notification;   /* signalled when the NIC interrupts */
    void *driver;              /* the driver's private state */
};

/* nic_open's status when this machine has no NIC the board's drivers know. */
#define NIC_ABSENT E_FAILED_LOOKUP

/*
 * The bit the NIC's interrupts set in the notification's word.  Mint other
 * badges of irq_notification to wake the same waiter for other reasons.
 */
#define NIC_IRQ_BADGE 1

/* The largest frame nic_send takes and nic_receive returns (Ethernet header, no FCS). */
#define NIC_FRAME_MAX 1514

word_t nic_open(struct nic *nic);   /* find, map and start this board's NIC; E_OK or an error */
bool nic_send(struct nic *nic, const void *frame, size_t len);   /* false when the TX ring is full */
size_t nic_receive(struct nic *nic, void *buf, size_t size);     /* one frame; 0 when none waits */
/*
 * (nic_receive drops frames longer than size, and frames the NIC saw errors in.  Call it until it
 * returns 0 before waiting for the next interrupt: a driver may keep the buffers it took until then.)
 */
void nic_interrupt_done(struct nic *nic);   /* after an interrupt: read/clear the cause, ack the IRQ handler */
/* Interrupts since nic_open that said the NIC dropped received frames for want of a buffer. */
uint64_t nic_rx_overruns(struct nic *nic);

/*
 * Stop the NIC (no more DMA, no more interrupts) and delete the caps
 * nic_open made.  Memory it retyped is not returned (revoke the untyped it
 * came from for that).  A NIC left running keeps writing received frames
 * into its buffers, so close it before that memory is reused.
 */
void nic_close(struct nic *nic);

#endif
