/* The Sabre Lite's NIC: the i.MX6's own ENET. */
#include <nic_driver.h>

const struct nic_driver *const board_nic_drivers[] = { &imx_enet_driver, NULL };
