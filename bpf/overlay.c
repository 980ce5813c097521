//go:build ignore

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* apiary's overlay program, attached to the tc/tcx ingress of the node's
 * VXLAN device (apiary_vxlan, collect-metadata mode) in tunnel routing
 * (Cilium's cil_from_overlay does the same job):
 *   from_overlay: a packet the device decapsulated carries the source
 *                 endpoint's security identity in its VNI (lib/encap.h
 *                 set it on the sending node). The program puts it in
 *                 skb->mark (lib/mark.h) for the destination endpoint's
 *                 to_container, which enforces ingress policy on it
 *                 instead of looking the source up in the ipcache. The
 *                 inner frame's destination MAC is the sending node's
 *                 veth, so the packet is marked as addressed to this host
 *                 (PACKET_HOST) for the stack to route it to the
 *                 endpoint. A packet without tunnel metadata is dropped. */

#include "lib/common.h"
#include "lib/mark.h"

char __license[] SEC("license") = "Dual BSD/GPL";

static long (*skb_get_tunnel_key)(struct __sk_buff *skb, struct bpf_tunnel_key *key, __u32 size,
				  __u64 flags) = (void *)BPF_FUNC_skb_get_tunnel_key;
static long (*skb_change_type)(struct __sk_buff *skb, __u32 type) = (void *)BPF_FUNC_skb_change_type;

#define PACKET_HOST_ 0
#define PACKET_OTHERHOST_ 3
#define VNI_MASK 0xFFFFFF

SEC("tc")
int from_overlay(struct __sk_buff *ctx)
{
	struct bpf_tunnel_key key = {};
	__u32 id;

	if (skb_get_tunnel_key(ctx, &key, sizeof(key), 0) < 0 &&
	    skb_get_tunnel_key(ctx, &key, sizeof(key), BPF_F_TUNINFO_IPV6) < 0)
		return CTX_ACT_DROP;
	id = key.tunnel_id & VNI_MASK;
	/* VNI 0 names no identity: the ipcache decides at the endpoint. */
	ctx->mark = id ? identity_mark(id) : 0;
	if (ctx->pkt_type == PACKET_OTHERHOST_)
		skb_change_type(ctx, PACKET_HOST_);
	return CTX_ACT_OK;
}
