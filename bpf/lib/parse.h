/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Packet parsing: Ethernet, then IPv4 or IPv6 (skipping IPv6 extension
 * headers), then the ports of TCP, UDP and SCTP or the type of ICMP and
 * ICMPv6. The result is a struct flow, the 5-tuple every later step uses. */
#ifndef APIARY_PARSE_H
#define APIARY_PARSE_H

#include "common.h"

#define IPPROTO_ICMPV6_ 58
#define NEXTHDR_HOP 0
#define NEXTHDR_ROUTING 43
#define NEXTHDR_FRAGMENT 44
#define NEXTHDR_DEST 60
#define IPV6_MAX_EXT_HEADERS 4

#define ICMP_ECHO_REPLY 0
#define ICMP_ECHO_REQUEST 8
#define ICMPV6_ECHO_REQUEST 128
#define ICMPV6_ECHO_REPLY 129
#define ICMP_DEST_UNREACH 3
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAMETERPROB 12
#define ICMPV6_DEST_UNREACH 1
#define ICMPV6_PARAMPROB 4 /* 1..4: unreachable, too big, time exceeded, parameter problem */
#define ICMPV6_ND_FIRST 133 /* router solicitation */
#define ICMPV6_ND_LAST 137  /* redirect */

/* Parse results besides a flow. */
#define PARSE_OK 0
#define PARSE_PASS 1    /* not IP but let through (ARP, IPv6 neighbour discovery) */
#define PARSE_INVALID 2 /* truncated or malformed */
#define PARSE_UNKNOWN_L3 3

/* struct flow is one packet's 5-tuple. Addresses and ports are in network
 * byte order; an IPv4 address fills the first 4 bytes of its field. For
 * ICMP and ICMPv6 the ports are 0 except for echo, whose identifier is the
 * source port of a request and the destination port of a reply (so that
 * conntrack pairs them); icmp_type is what the policy matches as the port. */
struct flow {
	__u32 saddr[4];
	__u32 daddr[4];
	__be16 sport;
	__be16 dport;
	__u8 proto;
	__u8 family; /* 4 or 6 */
	__u8 icmp_type;
	__u8 tcp_flags;
	__u32 len;     /* packet length in bytes, for metrics */
	__u16 l4_off;  /* offset of the L4 header (ICMP errors: the embedded packet follows 8 bytes later) */
	__u8 frag;     /* FRAG_*: whether the packet is a fragment */
	__u8 lb_loopback; /* lib/lb.h: 1 when the endpoint reaches itself through a service (hairpin) */
	__u32 frag_id; /* IPv4 identification or IPv6 fragment id, network byte order */
	__u16 lb_rev_nat; /* lib/lb.h: the service's rev-NAT index of a translated packet, else 0 */
	__u8 lb_new; /* lib/lb.h: 1 when the translated packet's backend was picked for it (a new flow to the service) */
	__u8 lb_reply; /* 1: lb_rev_nat is the service a reply comes from (events name it as the source) */
};

#define FRAG_NONE 0
#define FRAG_FIRST 1 /* offset 0, more fragments follow: carries the L4 header */
#define FRAG_LATER 2 /* offset > 0: no L4 header, ports come from lib/frag.h */

#define TCP_FLAG_FIN 0x01
#define TCP_FLAG_SYN 0x02
#define TCP_FLAG_RST 0x04
#define TCP_FLAG_ACK 0x10

/* parse_l4 reads the ports (or ICMP type) at off. A protocol without ports
 * keeps them 0. */
static __always_inline int parse_l4(struct __sk_buff *ctx, __u32 off, struct flow *f)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *l4 = data + off;

	f->l4_off = off;
	switch (f->proto) {
	case IPPROTO_TCP:
		if ((void *)(l4 + 14) > data_end)
			return PARSE_INVALID;
		f->sport = *(__be16 *)l4;
		f->dport = *(__be16 *)(l4 + 2);
		f->tcp_flags = l4[13];
		return PARSE_OK;
	case IPPROTO_UDP:
	case IPPROTO_SCTP:
		if ((void *)(l4 + 4) > data_end)
			return PARSE_INVALID;
		f->sport = *(__be16 *)l4;
		f->dport = *(__be16 *)(l4 + 2);
		return PARSE_OK;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6_:
		if ((void *)(l4 + 8) > data_end)
			return PARSE_INVALID;
		f->icmp_type = l4[0];
		if (f->icmp_type == ICMP_ECHO_REQUEST || f->icmp_type == ICMPV6_ECHO_REQUEST)
			f->sport = *(__be16 *)(l4 + 4);
		else if (f->icmp_type == ICMP_ECHO_REPLY || f->icmp_type == ICMPV6_ECHO_REPLY)
			f->dport = *(__be16 *)(l4 + 4);
		if (f->proto == IPPROTO_ICMPV6_ && f->icmp_type >= ICMPV6_ND_FIRST &&
		    f->icmp_type <= ICMPV6_ND_LAST)
			return PARSE_PASS;
		return PARSE_OK;
	}
	return PARSE_OK;
}

static __always_inline int parse_ipv4(struct __sk_buff *ctx, struct flow *f)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct iphdr *ip4 = data + sizeof(struct ethhdr);
	__u32 hlen;

	if ((void *)(ip4 + 1) > data_end)
		return PARSE_INVALID;
	hlen = ip4->ihl * 4;
	if (hlen < sizeof(*ip4))
		return PARSE_INVALID;
	f->family = 4;
	f->proto = ip4->protocol;
	f->saddr[0] = ip4->saddr;
	f->daddr[0] = ip4->daddr;
	if (ip4->frag_off & bpf_htons(0x3fff)) { /* more fragments, or an offset */
		f->frag_id = ip4->id;
		/* A fragment other than the first carries no L4 header. */
		if (ip4->frag_off & bpf_htons(0x1fff)) {
			f->frag = FRAG_LATER;
			return PARSE_OK;
		}
		f->frag = FRAG_FIRST;
	}
	return parse_l4(ctx, sizeof(struct ethhdr) + hlen, f);
}

/* ipv6_skip_ext walks up to IPV6_MAX_EXT_HEADERS extension headers and
 * returns the offset of the L4 header (0 when the packet is invalid). */
static __always_inline __u32 ipv6_skip_ext(struct __sk_buff *ctx, __u32 off, struct flow *f)
{
	void *data_end = (void *)(long)ctx->data_end;

#pragma unroll
	for (int i = 0; i < IPV6_MAX_EXT_HEADERS; i++) {
		void *data = (void *)(long)ctx->data;
		__u8 *ext;

		if (off > 512)
			return 0;
		ext = data + off;
		switch (f->proto) {
		case NEXTHDR_HOP:
		case NEXTHDR_ROUTING:
		case NEXTHDR_DEST:
			if ((void *)(ext + 2) > data_end)
				return 0;
			f->proto = ext[0];
			off += (ext[1] + 1) * 8;
			break;
		case NEXTHDR_FRAGMENT:
			if ((void *)(ext + 8) > data_end)
				return 0;
			f->proto = ext[0];
			f->frag_id = *(__u32 *)(ext + 4);
			/* bytes 2-3: the offset in the top 13 bits, M in bit 0 */
			if (*(__be16 *)(ext + 2) & bpf_htons(0xfff8))
				f->frag = FRAG_LATER;
			else if (*(__be16 *)(ext + 2) & bpf_htons(1))
				f->frag = FRAG_FIRST;
			off += 8;
			break;
		default:
			return off;
		}
	}
	return off;
}

static __always_inline int parse_ipv6(struct __sk_buff *ctx, struct flow *f)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
	__u32 off;

	if ((void *)(ip6 + 1) > data_end)
		return PARSE_INVALID;
	f->family = 6;
	f->proto = ip6->nexthdr;
	__builtin_memcpy(f->saddr, &ip6->saddr, 16);
	__builtin_memcpy(f->daddr, &ip6->daddr, 16);
	off = ipv6_skip_ext(ctx, sizeof(struct ethhdr) + sizeof(*ip6), f);
	if (!off)
		return PARSE_INVALID;
	if (f->frag == FRAG_LATER)
		return PARSE_OK;
	return parse_l4(ctx, off, f);
}

/* icmp_is_error reports whether f is an ICMP or ICMPv6 error message,
 * which carries the start of the packet it is about. */
static __always_inline int icmp_is_error(const struct flow *f)
{
	if (f->proto == IPPROTO_ICMP)
		return f->icmp_type == ICMP_DEST_UNREACH || f->icmp_type == ICMP_TIME_EXCEEDED ||
		       f->icmp_type == ICMP_PARAMETERPROB;
	if (f->proto == IPPROTO_ICMPV6_)
		return f->icmp_type >= ICMPV6_DEST_UNREACH && f->icmp_type <= ICMPV6_PARAMPROB;
	return 0;
}

/* parse_embedded_ports reads the ports of the embedded packet's L4 header
 * at off into e (ICMP echo: the identifier, as parse_l4 does). */
static __always_inline int parse_embedded_ports(struct __sk_buff *ctx, __u32 off, struct flow *e)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u8 *l4;

	if (off > 512)
		return PARSE_INVALID;
	l4 = data + off;
	if ((void *)(l4 + 8) > data_end)
		return PARSE_INVALID;
	switch (e->proto) {
	case IPPROTO_TCP:
	case IPPROTO_UDP:
	case IPPROTO_SCTP:
		e->sport = *(__be16 *)l4;
		e->dport = *(__be16 *)(l4 + 2);
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6_:
		if (l4[0] == ICMP_ECHO_REQUEST || l4[0] == ICMPV6_ECHO_REQUEST)
			e->sport = *(__be16 *)(l4 + 4);
		else if (l4[0] == ICMP_ECHO_REPLY || l4[0] == ICMPV6_ECHO_REPLY)
			e->dport = *(__be16 *)(l4 + 4);
		break;
	}
	return PARSE_OK;
}

/* parse_embedded fills e with the tuple of the packet an ICMP error f
 * embeds (IPv4 without options, IPv6 without extension headers). */
static __always_inline int parse_embedded(struct __sk_buff *ctx, const struct flow *f,
					  struct flow *e)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__u32 off = f->l4_off + 8;

	if (off > 512)
		return PARSE_INVALID;
	e->family = f->family;
	if (f->family == 4) {
		struct iphdr *ip4 = data + off;

		if ((void *)(ip4 + 1) > data_end || ip4->ihl != 5)
			return PARSE_INVALID;
		e->proto = ip4->protocol;
		e->saddr[0] = ip4->saddr;
		e->daddr[0] = ip4->daddr;
		return parse_embedded_ports(ctx, off + sizeof(*ip4), e);
	}
	{
		struct ipv6hdr *ip6 = data + off;

		if ((void *)(ip6 + 1) > data_end)
			return PARSE_INVALID;
		e->proto = ip6->nexthdr;
		__builtin_memcpy(e->saddr, &ip6->saddr, 16);
		__builtin_memcpy(e->daddr, &ip6->daddr, 16);
		return parse_embedded_ports(ctx, off + sizeof(*ip6), e);
	}
}

/* parse_packet fills f from the packet in ctx. */
static __always_inline int parse_packet(struct __sk_buff *ctx, struct flow *f)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;

	if ((void *)(eth + 1) > data_end)
		return PARSE_INVALID;
	f->len = ctx->len;
	switch (eth->h_proto) {
	case bpf_htons(ETH_P_IP):
		return parse_ipv4(ctx, f);
	case bpf_htons(ETH_P_IPV6):
		return parse_ipv6(ctx, f);
	case bpf_htons(ETH_P_ARP):
		return PARSE_PASS;
	}
	return PARSE_UNKNOWN_L3;
}

#endif /* APIARY_PARSE_H */
