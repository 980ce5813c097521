//go:build ignore

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* apiary's overlay programs, attached to the node's VXLAN device
 * (apiary_vxlan, collect-metadata mode) in tunnel routing (Cilium's
 * cil_from_overlay and cil_to_overlay do the same jobs):
 *   from_overlay (tc/tcx ingress): a packet the device decapsulated
 *     carries the source endpoint's security identity in its VNI
 *     (lib/encap.h set it on the sending node); the program puts it in
 *     skb->mark (lib/mark.h) for the destination endpoint's to_container,
 *     which enforces ingress policy on it instead of looking the source
 *     up in the ipcache. The host identity in a VNI is the sending node's:
 *     it becomes remote-node, as Cilium does. The inner frame's
 *     destination MAC is the sending node's, so the packet is marked as
 *     addressed to this host (PACKET_HOST) for the stack to route it to
 *     the endpoint. A packet without tunnel metadata is dropped.
 *   to_overlay (tc/tcx egress): a packet the node's stack routed into the
 *     device (the routes to other nodes' pod CIDRs go through it: the
 *     node's own traffic, or a pod's after the stack rewrote its
 *     destination) has no tunnel key yet; it gets one from the ipcache:
 *     remote = the destination's tunnel peer, VNI = the source address's
 *     identity (host for the node's own addresses). Without a tunnel peer
 *     it is dropped (the device could not send it). Packets from_container
 *     encapsulated already have their key and pass. */

#include "lib/common.h"
#include "lib/mark.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/policy.h"
#include "lib/encap.h"

char __license[] SEC("license") = "Dual BSD/GPL";

static long (*skb_change_type)(struct __sk_buff *skb, __u32 type) = (void *)BPF_FUNC_skb_change_type;

#define PACKET_HOST_ 0
#define PACKET_OTHERHOST_ 3
#define VNI_MASK 0xFFFFFF
#define HOST_ID 1
#define REMOTE_NODE_ID 6

SEC("tc")
int from_overlay(struct __sk_buff *ctx)
{
	struct bpf_tunnel_key key = {};
	__u32 id;

	if (skb_get_tunnel_key(ctx, &key, sizeof(key), 0) < 0 &&
	    skb_get_tunnel_key(ctx, &key, sizeof(key), BPF_F_TUNINFO_IPV6) < 0)
		return CTX_ACT_DROP;
	id = key.tunnel_id & VNI_MASK;
	if (id == HOST_ID)
		id = REMOTE_NODE_ID;
	/* VNI 0 names no identity: the ipcache decides at the endpoint. */
	ctx->mark = id ? identity_mark(id) : 0;
	if (ctx->pkt_type == PACKET_OTHERHOST_)
		skb_change_type(ctx, PACKET_HOST_);
	return CTX_ACT_OK;
}

SEC("tc")
int to_overlay(struct __sk_buff *ctx)
{
	struct flow f = {};

	if (has_tunnel_key(ctx))
		return CTX_ACT_OK;
	if (parse_packet(ctx, &f) == PARSE_INVALID || (f.family != 4 && f.family != 6))
		return CTX_ACT_DROP;
	return encap_set_key(ctx, &f, ipcache_lookup(&f, f.saddr)) == 0 ? CTX_ACT_OK : CTX_ACT_DROP;
}
