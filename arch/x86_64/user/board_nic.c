/* The NICs of an x86_64 PC this userland drives: the e1000 (QEMU -device e1000). */
#include <nic_driver.h>

const struct nic_driver *const board_nic_drivers[] = { &e1000_driver, NULL };
