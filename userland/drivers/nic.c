/* nic.h on top of the board's drivers (nic_driver.h). */
#include <nic_driver.h>

static const struct nic_driver *driver_of(struct nic *nic)
{
    return *(const struct nic_driver *const *)nic->driver;
}

word_t nic_open(struct nic *nic)
{
    nic->driver = NULL;
    for (const struct nic_driver *const *d = board_nic_drivers; *d; d++) {
        word_t st = (*d)->open(nic);
        if (st != NIC_ABSENT)
            return st;
    }
    return NIC_ABSENT;
}

bool nic_send(struct nic *nic, const void *frame, size_t len)
{
    return driver_of(nic)->send(nic, frame, len);
}

size_t nic_receive(struct nic *nic, void *buf, size_t size)
{
    return driver_of(nic)->receive(nic, buf, size);
}

void nic_interrupt_done(struct nic *nic)
{
    driver_of(nic)->interrupt_done(nic);
}

uint64_t nic_rx_overruns(struct nic *nic)
{
    return driver_of(nic)->rx_overruns(nic);
}

void nic_close(struct nic *nic)
{
    if (nic->driver)
        driver_of(nic)->close(nic);
    nic->driver = NULL;
}
