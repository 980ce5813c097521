/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Tunnel routing (--routing-mode=tunnel --tunnel-protocol=vxlan), the
 * endpoint programs' side:
 *   from_container: a packet the policy let out whose destination's
 *     ipcache entry names a tunnel peer (the node hosting it) gets the
 *     tunnel key (remote = the peer, VNI = the endpoint's security
 *     identity, as Cilium carries it) and is redirected to the node's
 *     VXLAN device (apiary_vxlan, collect-metadata mode), which
 *     encapsulates it.
 *   to_container: the source identity of a packet that came through the
 *     tunnel is the one the overlay program (overlay.c) read from the VNI
 *     and left in skb->mark (lib/mark.h), not the ipcache's guess.
 * tunnel_ifindex is a per-node constant the loader sets; 0 is native
 * routing, where the verifier drops all of this as dead code.
 * encap_set_key also serves overlay.c's to_overlay (the node's own
 * traffic routed into the device). */
#ifndef APIARY_ENCAP_H
#define APIARY_ENCAP_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "mark.h"

/* The ifindex of the node's VXLAN device; 0: native routing. */
volatile const __u32 tunnel_ifindex = 0;

static long (*skb_set_tunnel_key)(struct __sk_buff *skb, struct bpf_tunnel_key *key, __u32 size,
				  __u64 flags) = (void *)BPF_FUNC_skb_set_tunnel_key;
static long (*skb_get_tunnel_key)(struct __sk_buff *skb, struct bpf_tunnel_key *key, __u32 size,
				  __u64 flags) = (void *)BPF_FUNC_skb_get_tunnel_key;

#define TUNNEL_TTL 64

/* tunnel_peer_of returns the ipcache entry of f's destination when it has
 * a tunnel peer, else 0. */
static __always_inline struct ipcache_value *tunnel_peer_of(const struct flow *f)
{
	struct ipcache_key key = { .family = f->family };
	struct ipcache_value *v;

	if (f->family == 4) {
		key.prefixlen = IPCACHE_STATIC_PREFIX + 32;
		key.addr[0] = f->daddr[0];
	} else {
		key.prefixlen = IPCACHE_STATIC_PREFIX + 128;
		__builtin_memcpy(key.addr, f->daddr, 16);
	}
	v = map_lookup_elem(&ipcache, &key);
	if (!v || (v->tunnel_family != 4 && v->tunnel_family != 6))
		return 0;
	return v;
}

/* has_tunnel_key reports whether the packet carries tunnel metadata
 * (IPv4 or IPv6 underlay). */
static __always_inline int has_tunnel_key(struct __sk_buff *ctx)
{
	struct bpf_tunnel_key key = {};

	return skb_get_tunnel_key(ctx, &key, sizeof(key), 0) == 0 ||
	       skb_get_tunnel_key(ctx, &key, sizeof(key), BPF_F_TUNINFO_IPV6) == 0;
}

#define ENCAP_NO_PEER 1

/* encap_set_key sets the tunnel key of a packet to f's destination: the
 * remote is its tunnel peer, the VNI src_identity. It returns 0, or
 * ENCAP_NO_PEER when the destination has no tunnel peer, or -1 when the
 * key cannot be set. */
static __always_inline int encap_set_key(struct __sk_buff *ctx, const struct flow *f,
					 __u32 src_identity)
{
	struct bpf_tunnel_key key = {};
	struct ipcache_value *v = tunnel_peer_of(f);
	__u64 flags = 0;

	if (!v)
		return ENCAP_NO_PEER;
	key.tunnel_id = src_identity;
	key.tunnel_ttl = TUNNEL_TTL;
	if (v->tunnel_family == 4) {
		key.remote_ipv4 = __builtin_bswap32(v->tunnel_peer[0]); /* host byte order */
	} else {
		__builtin_memcpy(key.remote_ipv6, v->tunnel_peer, 16);
		flags = BPF_F_TUNINFO_IPV6;
	}
	return skb_set_tunnel_key(ctx, &key, sizeof(key), flags) < 0 ? -1 : 0;
}

/* encap_egress runs on a packet from_container passed (ret CTX_ACT_OK):
 * in tunnel mode, a parsed IP packet to a prefix with a tunnel peer is
 * encapsulated to the peer with src_identity as the VNI. Neighbour
 * discovery and ARP (family 0) stay on the link. */
static __always_inline int encap_egress(struct __sk_buff *ctx, const struct flow *f,
					__u32 src_identity)
{
	if (!tunnel_ifindex || (f->family != 4 && f->family != 6))
		return CTX_ACT_OK;
	if (f->proto == IPPROTO_ICMPV6_ && f->icmp_type >= ICMPV6_ND_FIRST &&
	    f->icmp_type <= ICMPV6_ND_LAST)
		return CTX_ACT_OK;
	switch (encap_set_key(ctx, f, src_identity)) {
	case 0:
		return redirect(tunnel_ifindex, 0);
	case ENCAP_NO_PEER:
		return CTX_ACT_OK;
	default:
		return CTX_ACT_DROP;
	}
}

/* tunnel_source_identity returns, for a packet to_container sees (dir
 * DIR_INGRESS) in tunnel mode, the source identity the overlay program
 * read from the VNI; 0 when the packet did not come through the tunnel
 * (the ipcache then decides). */
static __always_inline __u32 tunnel_source_identity(const struct __sk_buff *ctx, __u8 dir)
{
	if (!tunnel_ifindex || dir != DIR_INGRESS)
		return 0;
	return mark_identity(ctx->mark);
}

#endif /* APIARY_ENCAP_H */
