/* The Sabre Lite's NIC is the i.MX6 ENET, whose driver is not written yet: none. */
#include <nic_driver.h>

const struct nic_driver *const board_nic_drivers[] = { NULL };
