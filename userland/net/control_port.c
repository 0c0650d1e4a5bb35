/*
 * The NIC driver's control port (control_port.h): parse a request, do it,
 * build the reply frame.  It runs on the driver's thread, between two
 * batches of frames, so a mark is taken while the instances keep their
 * frames queued in the rings, as a Redis command's would be on their own
 * cores.
 */
#include <abi/types.h>
#include <libc.h>
#include <stdbool.h>
#include <sys.h>
#include "control_port.h"

#define IP_TTL          64

/*
 * The tag of the last mark taken, so that a resent request is answered but
 * not taken twice.  Every word is a valid tag, so whether a mark was taken
 * at all needs the flag beside it.
 */
static bool marked;
static word_t last_tag;

/* The Internet checksum (RFC 1071) of an IPv4 header of `len` bytes, its checksum field zero. */
static unsigned ipv4_checksum(const uint8_t *header, size_t len)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < len; i += 2)
        sum += be16(header + i);
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return ~sum & 0xffff;
}

/* A decimal tag of 1 to 20 digits that fits the kernel's word (its kstats records print a word). */
static bool parse_tag(const char *text, size_t len, word_t *tag)
{
    if (len == 0 || len > 20)
        return false;
    uint64_t value = 0;
    for (size_t i = 0; i < len; i++) {
        if (text[i] < '0' || text[i] > '9')
            return false;
        unsigned digit = (unsigned)(text[i] - '0');
        if (value > (UINT64_MAX - digit) / 10)
            return false;
        value = value * 10 + digit;
    }
    if (value > (word_t)-1)
        return false;
    *tag = (word_t)value;
    return true;
}

/*
 * A measured window's mark: the kernel prints a `kstats` record per core
 * with the tag and keeps timing on, so the window between two marks has
 * kernel and user time as well as idle time; then a `lockstats` record per
 * core, reset, so that the records after a window's end mark cover that
 * window alone (zero without LOCKSTATS=1).
 */
static bool kernel_mark_window(word_t tag)
{
    word_t values[KSTATS_VALUES];

    if (sys_debug_kstats(0, KSTATS_PRINT | KSTATS_TIME_ON, tag, values) != E_OK)
        return false;
    return sys_debug_lockstats(1) == E_OK;
}

/* Do the request `text` of `len` bytes; its reply text in `out` (of `size` bytes). */
static void do_request(const char *text, size_t len, char *out, size_t size)
{
    static const char kstats[] = "kstats ";
    word_t tag;

    if (len && text[len - 1] == '\n')
        len -= 1 + (len > 1 && text[len - 2] == '\r');
    if (len == 0) {
        snprintf(out, size, "ERR empty request");
    } else if (len == 5 && memcmp(text, "check", 5) == 0) {
        snprintf(out, size, sys_debug_check() == E_OK ? "OK check" : "ERR check failed");
    } else if (len < sizeof(kstats) - 1 || memcmp(text, kstats, sizeof(kstats) - 1) != 0) {
        snprintf(out, size, "ERR unknown request (kstats <tag> or check)");
    } else if (!parse_tag(text + sizeof(kstats) - 1, len - (sizeof(kstats) - 1), &tag)) {
        snprintf(out, size, "ERR bad tag (a decimal number of at most a word)");
    } else if (marked && tag == last_tag) {
        snprintf(out, size, "OK kstats %lu", (unsigned long)tag);
    } else if (!kernel_mark_window(tag)) {
        snprintf(out, size, "ERR kstats failed");
    } else {
        marked = true;
        last_tag = tag;
        snprintf(out, size, "OK kstats %lu", (unsigned long)tag);
    }
}

size_t control_port_serve(const uint8_t *frame, size_t len, uint8_t reply[CONTROL_REPLY_FRAME_MAX])
{
    if (len < ETH_HEADER + IPV4_HEADER + UDP_HEADER)
        return 0;
    const uint8_t *ip = frame + ETH_HEADER;
    size_t ip_header = (size_t)(ip[0] & 0xf) * 4;
    size_t ip_total = be16(ip + 2);
    if (ip[0] >> 4 != 4 || ip[9] != IP_PROTO_UDP || ip_header < IPV4_HEADER
        || ip_total < ip_header + UDP_HEADER || ETH_HEADER + ip_total > len)
        return 0;
    const uint8_t *udp = ip + ip_header;
    size_t udp_len = be16(udp + 4);
    if (udp_len < UDP_HEADER)
        return 0;

    char text[CONTROL_REQUEST_MAX];
    if (be16(ip + 6) & IP_FLAG_MF) {
        /* The first fragment of a datagram longer than a frame: far too long for a request. */
        snprintf(text, sizeof(text), "ERR request too long");
    } else if (udp_len > ip_total - ip_header) {
        return 0;
    } else if (udp_len - UDP_HEADER > CONTROL_REQUEST_MAX) {
        snprintf(text, sizeof(text), "ERR request too long");
    } else {
        do_request((const char *)udp + UDP_HEADER, udp_len - UDP_HEADER, text, sizeof(text));
    }
    size_t text_len = strlen(text);

    uint8_t *eth_out = reply, *ip_out = reply + ETH_HEADER, *udp_out = ip_out + IPV4_HEADER;
    memcpy(eth_out, frame + 6, 6);
    memcpy(eth_out + 6, frame, 6);
    memcpy(eth_out + 12, frame + 12, 2);
    memset(ip_out, 0, IPV4_HEADER);
    ip_out[0] = 0x45;
    put_be16(ip_out + 2, IPV4_HEADER + UDP_HEADER + text_len);
    ip_out[8] = IP_TTL;
    ip_out[9] = IP_PROTO_UDP;
    memcpy(ip_out + 12, ip + 16, 4);
    memcpy(ip_out + 16, ip + 12, 4);
    put_be16(ip_out + 10, ipv4_checksum(ip_out, IPV4_HEADER));
    put_be16(udp_out, be16(udp + 2));
    put_be16(udp_out + 2, be16(udp));
    put_be16(udp_out + 4, UDP_HEADER + text_len);
    /* A zero UDP checksum says "none", which IPv4 allows (RFC 768). */
    put_be16(udp_out + 6, 0);
    memcpy(udp_out + UDP_HEADER, text, text_len);
    return ETH_HEADER + IPV4_HEADER + UDP_HEADER + text_len;
}
