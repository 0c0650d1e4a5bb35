/*
 * A SYN that reopens a connection lwIP still holds in TIME-WAIT.
 *
 * lwIP 2.1.3 answers every segment that matches a TIME-WAIT pcb, a new SYN
 * included, with that old connection's ACK and drops it (tcp_timewait_input);
 * the pcb stays for 2 MSL (TCP_MSL 60 s: two minutes).  QEMU's user network
 * opens each guest connection from the host client's own port (10.0.2.2:port),
 * and the host kernel hands a closed port to a new client of the same forward
 * within seconds when thousands of connections come and go.  So when the
 * server closed first (QUIT, a protocol error), the next client the host
 * gives that port reaches a guest still in TIME-WAIT for it: slirp answers
 * the old ACK with a reset, which TIME-WAIT ignores, and sends its SYN again
 * about 6 s and 18 s later, to the same answer, while the host client, whose
 * own handshake with QEMU succeeded, waits for its first reply until the
 * old TIME-WAIT runs out (docs/network.md, "TIME-WAIT and reused ports").
 *
 * RFC 1122 4.2.2.13 lets a connection in TIME-WAIT accept a new SYN whose
 * sequence number is beyond the end of the old connection (the rule Linux and
 * the BSDs follow): an old duplicate segment of the closed connection can then
 * not be taken for the new one's.  This hook applies that rule before lwIP's
 * TCP sees the packet: for a SYN (no ACK, RST or FIN) that matches a TIME-WAIT
 * pcb and whose sequence number is after that pcb's rcv_nxt, it frees the pcb
 * (tcp_abort of a TIME-WAIT pcb sends nothing), and the SYN goes on to the
 * listener as a new connection.  Any other packet, and a SYN whose sequence
 * number is not beyond the old connection, goes on as lwIP would take it.
 *
 * ip4_input calls the hook before it checks the header, so the lengths are
 * checked here; a packet too short to hold both headers is left alone.
 */
#include "lwip/ip.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/tcp.h"
#include "tcp_timewait_reuse.h"

/* The TIME-WAIT pcb of the connection a segment from src:sport to dst:dport belongs to, or NULL. */
static struct tcp_pcb *timewait_pcb(const ip4_addr_t *src, u16_t sport, const ip4_addr_t *dst,
                                    u16_t dport)
{
    for (struct tcp_pcb *pcb = tcp_tw_pcbs; pcb != NULL; pcb = pcb->next) {
        if (pcb->remote_port == sport && pcb->local_port == dport &&
            ip4_addr_cmp(ip_2_ip4(&pcb->remote_ip), src) &&
            ip4_addr_cmp(ip_2_ip4(&pcb->local_ip), dst))
            return pcb;
    }
    return NULL;
}

int tcp_timewait_reuse(struct pbuf *p, struct netif *inp)
{
    (void)inp;
    if (p->len < IP_HLEN)
        return 0;
    const struct ip_hdr *ip = p->payload;
    u16_t ip_len = IPH_HL_BYTES(ip);
    if (IPH_PROTO(ip) != IP_PROTO_TCP || ip_len < IP_HLEN || p->len < ip_len + TCP_HLEN)
        return 0;
    const struct tcp_hdr *tcp = (const struct tcp_hdr *)((const u8_t *)p->payload + ip_len);
    if ((TCPH_FLAGS(tcp) & (TCP_SYN | TCP_ACK | TCP_RST | TCP_FIN)) != TCP_SYN)
        return 0;

    ip4_addr_t src, dst;
    ip4_addr_copy(src, ip->src);
    ip4_addr_copy(dst, ip->dest);
    struct tcp_pcb *old = timewait_pcb(&src, lwip_ntohs(tcp->src), &dst, lwip_ntohs(tcp->dest));
    if (old != NULL && TCP_SEQ_GT(lwip_ntohl(tcp->seqno), old->rcv_nxt))
        tcp_abort(old);
    return 0;
}
