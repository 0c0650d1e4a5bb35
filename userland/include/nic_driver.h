/*
 * What a NIC driver gives nic.c: the operations of nic.h.  A board lists its
 * drivers in board_nic_drivers[] (arch/<port>/user/board_nic.c); nic_open
 * tries them in order.  A driver's private state (nic->driver) starts with a
 * pointer to its struct nic_driver, so nic.c can dispatch.
 */
#ifndef NIC_DRIVER_H
#define NIC_DRIVER_H

#include <nic.h>

struct nic_driver {
    const char *name;
    /* NIC_ABSENT when its device is not there, so that the next driver is tried. */
    word_t (*open)(struct nic *nic);
    bool (*send)(struct nic *nic, const void *frame, size_t len);
    size_t (*receive)(struct nic *nic, void *buf, size_t size);
    void (*interrupt_done)(struct nic *nic);
    uint64_t (*rx_overruns)(struct nic *nic);
    void (*close)(struct nic *nic);
};

/* The board's drivers, ended by NULL. */
extern const struct nic_driver *const board_nic_drivers[];

extern const struct nic_driver e1000_driver;       /* x86_64: Intel 82540EM on PCI */
extern const struct nic_driver imx_enet_driver;    /* arm-imx6: the i.MX6 ENET */

#endif
