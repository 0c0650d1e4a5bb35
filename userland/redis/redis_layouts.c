/*
 * The layouts of the app `redis` (docs/network.md): the POSIX program
 * embedded in the root task's image (the real Redis on the personality,
 * docs/posix-loader.md) served over lwIP and the NIC.
 *
 * layout=percore is the papers' layout of the Redis benchmark.  The root
 * task's main thread is the NIC driver, on core 0; on every further core
 * runs one Redis process (on one core, one beside the driver on core 0),
 * serving port 6379 + k with an lwIP instance of its own in its
 * personality.  The driver demultiplexes received frames to the instances
 * by TCP port and sends what they put into their tx rings (net_driver.h);
 * lwIP's timers run in each instance on the ticks the driver forwards.
 *
 * layout=processes is the papers' one-core layout made from the same
 * parts: the driver, a stack process (socket_server.h) and Redis as three
 * processes on core 0; the stack serves Redis's sockets over a socket link
 * (socket_link.h).
 *
 * The driver blocks on one notification, which the NIC's interrupt, the
 * user-level timer and the instances all signal, under different badges.
 * It runs at the root task's priority, above the instances, so that on one
 * core an instance that fills its tx ring and wakes the driver is
 * preempted by it at once.  The driver also answers the host's control
 * port itself (control_port.h: the window's marks and the kernel's check),
 * which no instance sees.  The run never ends by itself: the host stops
 * QEMU when its clients are done.
 */
#include <arch_user.h>
#include <nic.h>
#include <posix_process.h>
#include <root.h>
#include <sys.h>
#include <thread.h>
#include "control_port.h"
#include "net_driver.h"
#include "redis_layouts.h"
#include "socket_link.h"
#include "socket_server.h"
#include "user_timer.h"

/* Each Redis process's heap: YCSB's 32,000 records of 1 KB and the connections' buffers. */
#define DEFAULT_HEAP_MB 64

/* Open the board's NIC; false (and the reason printed) when there is none. */
static bool open_nic(struct nic *nic)
{
    word_t st = nic_open(nic);
    if (st != E_OK)
        printf("redis: no NIC (%s)%s\n", status_name(st),
               st == NIC_ABSENT ? ": boot with NET=1 (tools/qemu_run.py --net)" : "");
    return st == E_OK;
}

/* A cap to `notification` that signals `badge`; 0 on failure. */
static cptr_t mint_signal(cptr_t notification, word_t badge)
{
    cptr_t slot = slot_alloc();
    if (slot && cnode_mint(ROOT_SLOT_CNODE, slot, ROOT_DEPTH, ROOT_SLOT_CNODE, notification,
                           ROOT_DEPTH, RIGHT_WRITE, badge) != E_OK)
        slot_drop(&slot);
    return slot;
}

/* A zeroed large frame mapped in the root task's space, to share with a process at the same
 * address (space_map_copy); its address, with the cap in *frame, or 0. */
static word_t shared_frame_create(cptr_t *frame)
{
    if (obj_alloc(OBJ_LARGE_FRAME, 0, frame) != E_OK)
        return 0;
    word_t v = vaddr_alloc(ARCH_LARGE_PAGE_SIZE, ARCH_LARGE_PAGE_SIZE);
    if (map_frame(*frame, ROOT_SLOT_VSPACE, v, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT) != E_OK)
        return 0;
    memset((void *)v, 0, ARCH_LARGE_PAGE_SIZE);
    return v;
}

/*
 * Make a space with private globals for a process at `prio` on `core`, and
 * map the shared frame at its address v and the boot info page.
 */
static word_t process_create(struct thread *t, word_t prio, word_t core, cptr_t frame, word_t v)
{
    struct thread_opts o = { .prio = prio, .core = core, .private_data = true };
    word_t st = thread_create_space(t, &o);
    if (st == E_OK)
        st = space_map_copy(frame, t->vspace, v, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT);
    if (st == E_OK)
        st = space_map_copy(ROOT_SLOT_BOOTINFO_FRAME, t->vspace, BOOTINFO_VADDR, RIGHT_READ, VM_DEFAULT);
    return st;
}

/*
 * Make instance k's channel: a large frame mapped here (and, by the caller,
 * in the instance's space at the same address) with the instance's
 * configuration, and its notification.  *frame gets the frame's cap; E_OK
 * or the status of the step that failed.
 */
static word_t channel_create(const struct nic *nic, cptr_t driver_signal, word_t k, word_t core,
                             cptr_t *frame, struct net_channel **out)
{
    _Static_assert(sizeof(struct net_channel) <= ARCH_LARGE_PAGE_SIZE, "a channel fits a large frame");
    struct net_channel *ch = (struct net_channel *)shared_frame_create(frame);
    if (!ch)
        return E_NOT_ENOUGH_MEMORY;
    ch->index = k;
    ch->port = REDIS_PORT_BASE + k;
    ch->core = core;
    memcpy(ch->mac, nic->mac, sizeof(ch->mac));
    ch->driver = driver_signal;
    ch->state = CHANNEL_STARTING;
    *out = ch;
    word_t st = obj_alloc(OBJ_NOTIFICATION, 0, &ch->wake);
    if (st == E_OK && !(ch->wake_signal = mint_signal(ch->wake, CHANNEL_WAKE_BADGE)))
        st = E_NOT_ENOUGH_MEMORY;
    return st;
}

/* The Redis processes, in the order of the driver's channels. */
static struct posix_process posix_instances[NET_MAX_INSTANCES];

/*
 * The argv of every POSIX instance (the real redis-server), in one place:
 * its port, no persistence, and a memory limit of half its heap, which
 * leaves the rest to the allocator's overhead and the connections' buffers.
 */
struct redis_argv {
    char port[16];
    char maxmemory[24];
    const char *argv[20];
};

static void redis_argv_make(struct redis_argv *a, word_t port, word_t heap_bytes)
{
    snprintf(a->port, sizeof(a->port), "%lu", (unsigned long)port);
    snprintf(a->maxmemory, sizeof(a->maxmemory), "%lub", (unsigned long)(heap_bytes / 2));
    const char *const words[] = {
        "redis-server", "--port", a->port, "--bind", "0.0.0.0", "--save", "", "--appendonly", "no",
        "--protected-mode", "no", "--maxmemory", a->maxmemory, "--maxmemory-policy", "noeviction",
        "--daemonize", "no", NULL, NULL, NULL,
    };
    _Static_assert(sizeof(words) == sizeof(a->argv), "argv holds every word and the NULLs");
    memcpy(a->argv, words, sizeof(words));
    /* redis_debug=1: Redis's DEBUG command, which the tests use to make an instance fault. */
    if (arg_word("redis_debug", 0)) {
        a->argv[17] = "--enable-debug-command";
        a->argv[18] = "yes";
    }
}

/*
 * Make instance k as a POSIX process of the embedded program: its channel
 * (mapped in its space at the same address), a heap of heap_bytes, the
 * argv above; the process tells the driver it serves through its channel's
 * state, and its end wakes the driver (driver_signal).  *out gets the
 * channel; E_OK or the status of the step that failed.
 */
static word_t posix_instance_create(const struct nic *nic, cptr_t driver_signal, word_t k, word_t core,
                                    word_t heap_bytes, struct net_channel **out)
{
    cptr_t frame;
    struct net_channel *ch = NULL;
    word_t st = channel_create(nic, driver_signal, k, core, &frame, &ch);
    if (st != E_OK)
        return st;
    struct redis_argv a;
    redis_argv_make(&a, ch->port, heap_bytes);
    struct posix_process_opts o = {
        .core = core, .prio = DEFAULT_PRIO, .argv = a.argv, .heap_size = heap_bytes, .channel = ch,
        .channel_frame = frame, .ended_signal = driver_signal,
    };
    st = posix_process_create(&o, &posix_instances[k]);
    if (st == E_OK)
        *out = ch;
    return st;
}

/*
 * layout=processes: on core 0, the stack process (the
 * driver's instance 0, on its channel) and the POSIX program, which share a
 * socket link (socket_link.h) and signal each other's notifications.  The
 * stack runs above the program, as the driver runs above both, so that what
 * the program asks of it is done as soon as it asks.  The stack keeps no
 * database, so it has no heap: lwIP's memory is its globals.  *out gets the
 * stack's channel; E_OK or the status of the step that failed.
 */
static word_t posix_processes_create(const struct nic *nic, cptr_t driver_signal, word_t heap_bytes,
                                     struct net_channel **out)
{
    _Static_assert(sizeof(struct socket_link) <= ARCH_LARGE_PAGE_SIZE, "a link fits a large frame");
    cptr_t frame, link_frame;
    struct net_channel *ch = NULL;
    word_t st = channel_create(nic, driver_signal, 0, 0, &frame, &ch);
    if (st != E_OK)
        return st;
    struct socket_link *link = (struct socket_link *)shared_frame_create(&link_frame);
    if (!link)
        return E_NOT_ENOUGH_MEMORY;
    st = obj_alloc(OBJ_NOTIFICATION, 0, &link->program_wake);
    if (st == E_OK && (!(link->stack_signal = mint_signal(ch->wake, LINK_PROGRAM_BADGE)) ||
                       !(ch->program_signal = mint_signal(link->program_wake, CHANNEL_WAKE_BADGE))))
        st = E_NOT_ENOUGH_MEMORY;
    ch->socket_link = link;
    struct thread t;
    if (st == E_OK)
        st = process_create(&t, DEFAULT_PRIO + 1, 0, frame, (word_t)ch);
    if (st == E_OK)
        st = space_map_copy(link_frame, t.vspace, (word_t)link, RIGHT_READ | RIGHT_WRITE, VM_DEFAULT);
    if (st == E_OK)
        st = thread_start(&t, socket_server_main, ch);
    if (st != E_OK)
        return st;
    struct redis_argv a;
    redis_argv_make(&a, ch->port, heap_bytes);
    struct posix_process_opts o = {
        .core = 0, .prio = DEFAULT_PRIO, .argv = a.argv, .heap_size = heap_bytes, .link = link,
        .link_frame = link_frame, .ended_signal = driver_signal,
    };
    st = posix_process_create(&o, &posix_instances[0]);
    if (st == E_OK)
        *out = ch;
    return st;
}

/* The first POSIX instance that has ended and was not reported yet, or NET_MAX_INSTANCES. */
static word_t posix_instance_ended(word_t ninstances, const bool *reported)
{
    for (word_t k = 0; k < ninstances; k++)
        if (!reported[k] && posix_process_state(&posix_instances[k]) != POSIX_RUNNING)
            return k;
    return NET_MAX_INSTANCES;
}

/*
 * An instance that ended while the others serve: say so, with the kernel
 * invariant checker's verdict, since a process's end (a fault, or the
 * program's own exit) must leave the kernel and the other instances whole.
 */
static void report_instance_end(const struct net_driver *d, word_t k)
{
    word_t failed_so_far;
    bool held = sys_debug_check_counted(&failed_so_far) == E_OK;
    printf("@@ {\"redis_instance_end\": {\"port\": %lu, \"status\": %lu, \"invariants_hold\": %s}}\n",
           (unsigned long)d->channels[k]->port, (unsigned long)posix_instances[k].status,
           held ? "true" : "false");
}

/*
 * Print the ports served, as text and as the `redis` record the host reads
 * (docs/console.md), with the driver's control port (control_port.h).
 */
static void announce(const struct net_driver *d, bool processes)
{
    static const char *const layout[] = { "percore", "processes" };
    printf("redis: serving on 10.0.2.15 ports %lu..%lu: %lu instance%s%s, NIC driver on core 0 (%lu core%s online)\n",
           (unsigned long)d->channels[0]->port, (unsigned long)d->channels[d->ninstances - 1]->port,
           (unsigned long)d->ninstances, d->ninstances == 1 ? "" : "s",
           processes ? " (lwIP and Redis in processes of their own)" : "",
           (unsigned long)bootinfo->ncores, bootinfo->ncores == 1 ? "" : "s");
    printf("@@ {\"redis\": {\"ports\": [");
    for (word_t k = 0; k < d->ninstances; k++)
        printf("%s%lu", k ? ", " : "", (unsigned long)d->channels[k]->port);
    printf("], \"instances\": [");
    for (word_t k = 0; k < d->ninstances; k++)
        printf("%s{\"port\": %lu, \"core\": %lu}", k ? ", " : "", (unsigned long)d->channels[k]->port,
               (unsigned long)d->channels[k]->core);
    printf("], \"driver_core\": 0, \"control\": %d, \"layout\": \"%s\"}}\n",
           CONTROL_PORT, layout[processes]);
}

/* CHANNEL_SERVING when every instance serves, CHANNEL_FAILED when one gave up, else STARTING. */
static word_t instances_state(const struct net_driver *d)
{
    word_t all = CHANNEL_SERVING;
    for (word_t k = 0; k < d->ninstances; k++) {
        word_t s = __atomic_load_n(&d->channels[k]->state, __ATOMIC_ACQUIRE);
        if (s == CHANNEL_FAILED)
            return CHANNEL_FAILED;
        if (s != CHANNEL_SERVING)
            all = CHANNEL_STARTING;
    }
    return all;
}

/*
 * Serve layout=percore, or with processes layout=processes.  A Redis
 * process that ends before every instance serves ends the run with status
 * 2; one that ends later leaves the others serving, unless `posix_halt=1`
 * asks to end the run with its status.
 */
static int serve(bool processes)
{
    static struct nic nic;
    static struct net_driver driver = { .nic = &nic };

    if (!posix_program_present()) {
        printf("redis: this image embeds no program: build it with "
               "POSIX_PROGRAM=path/to/redis-server (docs/posix-loader.md)\n");
        return 2;
    }
    if (!open_nic(&nic))
        return 2;
    cptr_t timer = user_timer_attach(nic.irq_notification, CHANNEL_TIMER_BADGE);
    cptr_t driver_signal = mint_signal(nic.irq_notification, CHANNEL_TX_BADGE);
    if (!timer || !driver_signal) {
        printf("redis: the user-level timer IRQ could not be attached\n");
        return 2;
    }

    word_t ninstances = bootinfo->ncores > 1 && !processes ? bootinfo->ncores - 1 : 1;
    if (ninstances > NET_MAX_INSTANCES)
        ninstances = NET_MAX_INSTANCES;
    word_t heap_bytes = arg_word("heap_mb", DEFAULT_HEAP_MB) << 20;
    for (word_t k = 0; k < ninstances; k++) {
        word_t core = bootinfo->ncores > 1 && !processes ? k + 1 : 0;
        word_t st = processes
                    ? posix_processes_create(&nic, driver_signal, heap_bytes, &driver.channels[k])
                    : posix_instance_create(&nic, driver_signal, k, core, heap_bytes, &driver.channels[k]);
        if (st != E_OK) {
            printf("redis: instance %lu could not be made (%s)\n", (unsigned long)k, status_name(st));
            return 2;
        }
        driver.ninstances = k + 1;
    }

    bool serving = false, halt_on_end = arg_word("posix_halt", 0) != 0;
    bool reported[NET_MAX_INSTANCES] = { false };
    for (;;) {
        word_t w = 0;
        if (sys_wait(nic.irq_notification, &w) != E_OK) {
            printf("redis: waiting on the driver's notification failed\n");
            return 1;
        }
        if (w & NIC_IRQ_BADGE)
            nic_interrupt_done(&nic);
        if (w & CHANNEL_TIMER_BADGE) {
            irq_handler_ack(timer);
            net_driver_tick(&driver);
        }
        net_driver_receive(&driver);
        net_driver_transmit(&driver);
        word_t ended = posix_instance_ended(driver.ninstances, reported);
        if (ended != NET_MAX_INSTANCES && serving && !halt_on_end) {
            reported[ended] = true;
            report_instance_end(&driver, ended);
        } else if (ended != NET_MAX_INSTANCES) {
            printf("redis: POSIX instance %lu (port %lu) ended with status %lu%s\n", (unsigned long)ended,
                   (unsigned long)driver.channels[ended]->port, (unsigned long)posix_instances[ended].status,
                   serving ? "" : " before serving");
            return serving ? (int)posix_instances[ended].status : 2;
        }
        if (!serving) {
            word_t state = instances_state(&driver);
            if (state == CHANNEL_FAILED)
                return 2;
            if (state == CHANNEL_SERVING) {
                announce(&driver, processes);
                serving = true;
            }
        }
    }
}

int redis_serve_percore(void)
{
    return serve(false);
}

int redis_serve_processes(void)
{
    return serve(true);
}
