/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* A service without backends refuses its clients, as kube-proxy's REJECT
 * rule and Cilium's --service-no-backend-response=reject do: the packet
 * that would open a flow to a frontend whose service has no active
 * backend is rewritten, in place, into the ICMP destination unreachable
 * (IPv4: type 3, code 3, port unreachable) or ICMPv6 one (type 1, code 4)
 * the frontend would send, carrying the packet's IP headers and its first
 * 8 bytes of L4 header, and the caller sends it back where the packet
 * came from. The client's TCP connect then fails at once with "connection
 * refused", and a connected UDP socket reads it, instead of waiting for
 * timeouts. With service_no_backend_reject 0 (--service-no-backend-
 * response=drop) such packets are dropped. */
#ifndef APIARY_REJECT_H
#define APIARY_REJECT_H

#include "common.h"
#include "lb.h"

static long (*skb_change_tail)(struct __sk_buff *skb, __u32 len,
			       __u64 flags) = (void *)BPF_FUNC_skb_change_tail;

/* service_no_backend_reject is set by the loader (1: reject, the
 * default; 0: drop). */
volatile const __u8 service_no_backend_reject = 0;

/* REJECT_MAX is how much of the refused packet the error carries at most:
 * its IP headers (IPv4 options or IPv6 extension headers included) and 8
 * bytes of L4 header. */
#define REJECT_MAX 128

struct reject_icmp {
	__u8 type;
	__u8 code;
	__u16 csum;
	__u32 unused;
};

/* reject_fold folds a 32-bit ones' complement sum into a checksum. */
static __always_inline __u16 reject_fold(__s64 sum)
{
	__u32 x = (__u32)sum;

	x = (x & 0xffff) + (x >> 16);
	x = (x & 0xffff) + (x >> 16);
	return (__u16)~x;
}

/* lb_reject rewrites the packet in ctx (family 4 or 6, its L4 header at
 * l4_off) into the ICMP error its destination refuses it with, from that
 * destination to its source, Ethernet addresses swapped; the caller
 * redirects it back to the device it came in by. Returns 0, or -1 when
 * the packet cannot be answered (too short, headers longer than
 * REJECT_MAX): the caller drops it. A global function: verified once. */
__attribute__((noinline)) int lb_reject(struct __sk_buff *ctx, __u32 l4_off, __u32 family)
{
	__u8 orig[REJECT_MAX] = {};
	__u8 mac[12];
	__u32 hlen = family == 4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct reject_icmp icmp = {};
	__u32 len, n;
	__s64 sum;

	if (l4_off < sizeof(struct ethhdr) + hlen || l4_off > sizeof(struct ethhdr) + REJECT_MAX)
		return -1;
	n = l4_off - sizeof(struct ethhdr) + 8; /* IP headers and 8 bytes of L4 */
	if (n < sizeof(struct iphdr) + 8 || n > REJECT_MAX || (n & 3))
		return -1;
	if (skb_load_bytes(ctx, 0, mac, sizeof(mac)) < 0 ||
	    skb_load_bytes(ctx, sizeof(struct ethhdr), orig, n) < 0)
		return -1;
	len = sizeof(struct ethhdr) + hlen + sizeof(icmp) + n;
	if (family == 4) {
		struct iphdr ip = {
			.version = 4,
			.ihl = 5,
			.tos = 0xc0, /* internetwork control, as Linux's ICMP errors */
			.tot_len = bpf_htons(sizeof(struct iphdr) + sizeof(icmp) + n),
			.ttl = 64,
			.protocol = IPPROTO_ICMP,
		};

		__builtin_memcpy(&ip.saddr, orig + 16, 4); /* the frontend */
		__builtin_memcpy(&ip.daddr, orig + 12, 4); /* the client */
		ip.check = reject_fold(csum_diff(0, 0, (__be32 *)&ip, sizeof(ip), 0));
		icmp.type = 3;
		icmp.code = 3;
		sum = csum_diff(0, 0, (__be32 *)&icmp, sizeof(icmp), 0);
		sum = csum_diff(0, 0, (__be32 *)orig, n, (__u32)sum);
		icmp.csum = reject_fold(sum);
		if (skb_change_tail(ctx, len, 0) < 0 ||
		    skb_store_bytes(ctx, sizeof(struct ethhdr), &ip, sizeof(ip), 0) < 0)
			return -1;
	} else {
		struct ipv6hdr ip = {
			.version = 6,
			.payload_len = bpf_htons(sizeof(icmp) + n),
			.nexthdr = IPPROTO_ICMPV6_,
			.hop_limit = 64,
		};
		__be32 pseudo[2] = { bpf_htonl(sizeof(icmp) + n), bpf_htonl(IPPROTO_ICMPV6_) };

		__builtin_memcpy(&ip.saddr, orig + 24, 16); /* the frontend */
		__builtin_memcpy(&ip.daddr, orig + 8, 16);  /* the client */
		icmp.type = 1;
		icmp.code = 4;
		sum = csum_diff(0, 0, (__be32 *)&ip.saddr, 32, 0);
		sum = csum_diff(0, 0, pseudo, sizeof(pseudo), (__u32)sum);
		sum = csum_diff(0, 0, (__be32 *)&icmp, sizeof(icmp), (__u32)sum);
		sum = csum_diff(0, 0, (__be32 *)orig, n, (__u32)sum);
		icmp.csum = reject_fold(sum);
		if (skb_change_tail(ctx, len, 0) < 0 ||
		    skb_store_bytes(ctx, sizeof(struct ethhdr), &ip, sizeof(ip), 0) < 0)
			return -1;
	}
	if (skb_store_bytes(ctx, sizeof(struct ethhdr) + hlen, &icmp, sizeof(icmp), 0) < 0 ||
	    skb_store_bytes(ctx, sizeof(struct ethhdr) + hlen + sizeof(icmp), orig, n, 0) < 0 ||
	    skb_store_bytes(ctx, 0, mac + 6, 6, 0) < 0 || skb_store_bytes(ctx, 6, mac, 6, 0) < 0)
		return -1;
	return 0;
}

/* lb_reject_back answers packet f (to a frontend without backends) with
 * lb_reject's error, sent back out of the device the packet came in by
 * (its egress); mark is the packet mark it leaves with. Returns the
 * redirect, or CTX_ACT_DROP when it cannot be answered. */
static __always_inline int lb_reject_back(struct __sk_buff *ctx, const struct flow *f, __u32 mark)
{
	if (f->frag == FRAG_LATER || lb_reject(ctx, f->l4_off, f->family) < 0)
		return CTX_ACT_DROP;
	ctx->mark = mark;
	return redirect(ctx->ifindex, 0);
}

#endif
