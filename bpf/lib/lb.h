/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Services in the datapath: per-packet load balancing in from_container
 * and the reverse translation of replies in to_container (as Cilium's
 * bpf_lxc does with lb4_local / lb6_local).
 *
 * A packet the endpoint sends to a service frontend (address, port and
 * protocol in lb4_services / lb6_services) has its destination rewritten
 * to a backend (DNAT, with the IP and TCP/UDP checksums updated) before
 * the translated flow's conntrack lookup and policy, so policy is judged
 * against the backend's identity. from_container looks a packet up in
 * conntrack first and the services only when lb_needs_lookup says so, so
 * that established flows and replies to no service pay no service
 * lookup. The backend of a flow is remembered in a service conntrack
 * entry (the ct4/ct6 maps, direction CT_DIR_SERVICE, keyed by the
 * untranslated tuple: client -> frontend) holding the backend id and the
 * rev-NAT index; every later packet of the flow goes to that backend while
 * its backend entry exists, whatever became of the service. When the
 * backend entry was deleted, the flow is balanced again (as Cilium: a TCP
 * flow then ends with the new backend's reset). The translated flow's
 * conntrack entry carries the rev-NAT index, so that its replies, seen by
 * to_container, get their source rewritten back to the frontend.
 *
 * Backend selection is random among the active backends (slots 1..count),
 * as Cilium's default --bpf-lb-algorithm=random; with sessionAffinity
 * ClientIP a client's new flows go to the backend it used last while that
 * backend is still an active backend of the service and the timeout has
 * not passed since the last new flow.
 *
 * Hairpin (as Cilium's loopback LB, and for IPv6 too): when the backend
 * picked is the client itself, the source is rewritten too, to the
 * service loopback address of its family (service_loopback_ipv4,
 * --ipv4-service-loopback-address; service_loopback_ipv6,
 * --ipv6-service-loopback-address), so that the endpoint's answer leaves
 * it instead of going to the client socket through its own loopback.
 * lxc.c sends such packets straight back into the endpoint (lb_loopback
 * set on f) and rewrites the answers. */
#ifndef APIARY_LB_H
#define APIARY_LB_H

#include "common.h"
#include "maps.h"
#include "lbmaps.h"
#include "parse.h"
#include "conntrack.h"
#include "sctp.h"

static long (*skb_load_bytes)(const struct __sk_buff *skb, __u32 offset, void *to,
			      __u32 len) = (void *)BPF_FUNC_skb_load_bytes;
static long (*skb_store_bytes)(struct __sk_buff *skb, __u32 offset, const void *from, __u32 len,
			       __u64 flags) = (void *)BPF_FUNC_skb_store_bytes;
static long (*l3_csum_replace)(struct __sk_buff *skb, __u32 offset, __u64 from, __u64 to,
			       __u64 size) = (void *)BPF_FUNC_l3_csum_replace;
static long (*l4_csum_replace)(struct __sk_buff *skb, __u32 offset, __u64 from, __u64 to,
			       __u64 flags) = (void *)BPF_FUNC_l4_csum_replace;
static __s64 (*csum_diff)(__be32 *from, __u32 from_size, __be32 *to, __u32 to_size,
			  __u32 seed) = (void *)BPF_FUNC_csum_diff;
static __u32 (*get_prandom_u32)(void) = (void *)BPF_FUNC_get_prandom_u32;

#define CT_DIR_SERVICE 2 /* a service conntrack entry: client -> frontend */
#define DROP_NO_SERVICE 158 /* a service without an active backend (Cilium's number) */
#define DROP_CSUM 153       /* the translation failed to rewrite the packet (Cilium's CSUM_L4 number) */
#define DROP_NAT_NO_MAPPING 167 /* NodePort's SNAT: no free port, or the mapping not recorded (Cilium's number) */

/* service_loopback_ipv4 and service_loopback_ipv6 are the sources of a
 * hairpinned flow (network byte order), set by the loader; 0: no hairpin
 * translation in that family. */
volatile const __u32 service_loopback_ipv4 = 0;
volatile const __u32 service_loopback_ipv6[4] = {};

/* lb_hairpin_source writes the hairpin source of family fam into loop and
 * reports whether the family has hairpin translation. */
static __always_inline int lb_hairpin_source(__u8 fam, __u32 *loop)
{
	if (fam == 4) {
		loop[0] = service_loopback_ipv4;
		return loop[0] != 0;
	}
	loop[0] = service_loopback_ipv6[0];
	loop[1] = service_loopback_ipv6[1];
	loop[2] = service_loopback_ipv6[2];
	loop[3] = service_loopback_ipv6[3];
	return (loop[0] | loop[1] | loop[2] | loop[3]) != 0;
}

/* lb_hairpin_on reports whether family fam has hairpin translation. */
static __always_inline int lb_hairpin_on(__u8 fam)
{
	__u32 loop[4];

	return lb_hairpin_source(fam, loop);
}

/* lb_addr_eq reports whether two addresses of a flow (IPv4 in the first
 * word, the others zero) are the same. */
static __always_inline int lb_addr_eq(const __u32 *a, const __u32 *b)
{
	return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2]) | (a[3] ^ b[3])) == 0;
}

#define LB_IP4_CSUM_OFF (sizeof(struct ethhdr) + 10)
#define LB_IP4_SADDR_OFF (sizeof(struct ethhdr) + 12)
#define LB_IP4_DADDR_OFF (sizeof(struct ethhdr) + 16)
#define LB_IP6_SADDR_OFF (sizeof(struct ethhdr) + 8)
#define LB_IP6_DADDR_OFF (sizeof(struct ethhdr) + 24)

/* struct lb_backend is a backend in host-neutral form. */
struct lb_backend {
	__u32 address[4];
	__be16 port;
	__u8 ok;
	__u8 state;
};

/* lb_l4_csum_off returns the offset of f's L4 checksum, 0 when the packet
 * has no L4 header to rewrite (a later fragment) or an unknown protocol. */
static __always_inline __u32 lb_l4_csum_off(const struct flow *f)
{
	if (f->frag == FRAG_LATER)
		return 0;
	if (f->proto == IPPROTO_TCP)
		return f->l4_off + 16;
	if (f->proto == IPPROTO_UDP)
		return f->l4_off + 6;
	return 0;
}

/* lb_sctp_csum updates the CRC32c of an SCTP packet (IPv4: family 4,
 * else IPv6; the common header at l4_off) for a change by diff (old xor
 * new) of the port at offset off (0: source, 2: destination) of its
 * common header (lib/sctp.h); the SCTP length is the IP header's. Returns
 * 0, or -1 for a packet too short. A global function: the verifier walks
 * it once, not once per path of each caller. */
__attribute__((noinline)) int lb_sctp_csum(struct __sk_buff *ctx, __u32 l4_off, __u32 off, __u32 diff,
					   __u32 family)
{
	__u32 end = sizeof(struct ethhdr), crc;
	__be16 iplen;

	/* IPv4: total length at 2; IPv6: payload length at 4, after 40. */
	if (skb_load_bytes(ctx, sizeof(struct ethhdr) + (family == 4 ? 2 : 4), &iplen, sizeof(iplen)) < 0)
		return -1;
	end += bpf_ntohs(iplen) + (family == 4 ? 0 : sizeof(struct ipv6hdr));
	if (l4_off > 0xffff || off > 2 || end < l4_off + 12)
		return -1;
	if (skb_load_bytes(ctx, l4_off + 8, &crc, sizeof(crc)) < 0)
		return -1;
	crc ^= sctp_crc_delta(diff, end - l4_off - off - 2);
	return skb_store_bytes(ctx, l4_off + 8, &crc, sizeof(crc), 0) < 0 ? -1 : 0;
}

/* lb_rewrite replaces the packet's destination (dst) or source address and
 * port by addr and port, with the IPv4 header checksum and the L4
 * checksum (its pseudo header included) updated. Returns 0 or a negative
 * error. */
static __always_inline int lb_rewrite(struct __sk_buff *ctx, const struct flow *f, int dst,
				      const __u32 *addr, __be16 port)
{
	__u32 csum_off = lb_l4_csum_off(f);
	__u64 mangled = f->proto == IPPROTO_UDP ? BPF_F_MARK_MANGLED_0 : 0;
	__be16 old_port = dst ? f->dport : f->sport;

	if (f->family == 4) {
		__be32 old = dst ? f->daddr[0] : f->saddr[0];
		__be32 new = addr[0];

		if (csum_off && l4_csum_replace(ctx, csum_off, old, new,
						BPF_F_PSEUDO_HDR | mangled | sizeof(new)) < 0)
			return -1;
		if (l3_csum_replace(ctx, LB_IP4_CSUM_OFF, old, new, sizeof(new)) < 0)
			return -1;
		if (skb_store_bytes(ctx, dst ? LB_IP4_DADDR_OFF : LB_IP4_SADDR_OFF, &new,
				    sizeof(new), 0) < 0)
			return -1;
	} else {
		__u32 old[4], new[4];
		__s64 diff;

		__builtin_memcpy(old, dst ? f->daddr : f->saddr, 16);
		__builtin_memcpy(new, addr, 16);
		diff = csum_diff(old, 16, new, 16, 0);
		if (diff < 0)
			return -1;
		if (csum_off &&
		    l4_csum_replace(ctx, csum_off, 0, diff, BPF_F_PSEUDO_HDR | mangled) < 0)
			return -1;
		if (skb_store_bytes(ctx, dst ? LB_IP6_DADDR_OFF : LB_IP6_SADDR_OFF, new, 16, 0) < 0)
			return -1;
	}
	if (old_port == port)
		return 0;
	if (csum_off) {
		if (l4_csum_replace(ctx, csum_off, old_port, port, mangled | sizeof(port)) < 0)
			return -1;
	} else if (f->proto != IPPROTO_SCTP || f->frag == FRAG_LATER) {
		return 0; /* no ports in the packet */
	} else if (f->frag != FRAG_NONE ||
		   lb_sctp_csum(ctx, f->l4_off, dst ? 2 : 0, old_port ^ port, f->family) < 0) {
		/* A first fragment: the checksum covers the fragments that
		 * follow too. */
		return -1;
	}
	return skb_store_bytes(ctx, f->l4_off + (dst ? 2 : 0), &port, sizeof(port), 0) < 0 ? -1 : 0;
}

/* lb_hairpin_snat rewrites the source of a hairpinned packet (family,
 * protocol, fragment state and L4 offset of its flow; its source the
 * endpoint itself, read from the packet) to the service loopback address
 * of its family, its port kept. A global function, verified once:
 * inlined, the rewrite's paths of both families multiplied
 * from_container's verified states. Returns 0 or -1. */
__attribute__((noinline)) int lb_hairpin_snat(struct __sk_buff *ctx, __u32 l4_off, __u32 family,
					      __u32 proto, __u32 frag)
{
	struct flow f = { .family = family, .proto = proto, .frag = frag, .l4_off = l4_off };
	__u32 loop[4] = {};

	if (!lb_hairpin_source(f.family, loop))
		return -1;
	if (family == 4) {
		if (skb_load_bytes(ctx, LB_IP4_SADDR_OFF, f.saddr, 4) < 0)
			return -1;
	} else if (skb_load_bytes(ctx, LB_IP6_SADDR_OFF, f.saddr, 16) < 0) {
		return -1;
	}
	return lb_rewrite(ctx, &f, 0, loop, f.sport); /* the port kept: f's 0 for both */
}

/* lb_backend_get reads backend id of family fam. */
static __always_inline struct lb_backend lb_backend_get(__u8 fam, __u32 id)
{
	struct lb_backend b = {};

	if (!id)
		return b;
	if (fam == 4) {
		struct lb4_backend *v = map_lookup_elem(&lb4_backends, &id);

		if (v) {
			b.address[0] = v->address;
			b.port = v->port;
			b.state = v->state;
			b.ok = 1;
		}
	} else {
		struct lb6_backend *v = map_lookup_elem(&lb6_backends, &id);

		if (v) {
			__builtin_memcpy(b.address, v->address, 16);
			b.port = v->port;
			b.state = v->state;
			b.ok = 1;
		}
	}
	return b;
}

/* lb_service_get looks the frontend of f up in scope (LB_SCOPE_*): slot 0
 * is the master entry, 1..count the backends. */
static __always_inline struct lb_service *lb_service_get(const struct flow *f, __u16 slot, __u8 scope)
{
	if (f->family == 4) {
		struct lb4_key key = {
			.address = f->daddr[0],
			.dport = f->dport,
			.backend_slot = slot,
			.proto = f->proto,
			.scope = scope,
		};
		return map_lookup_elem(&lb4_services, &key);
	}
	{
		struct lb6_key key = {
			.dport = f->dport,
			.backend_slot = slot,
			.proto = f->proto,
			.scope = scope,
		};
		__builtin_memcpy(key.address, f->daddr, 16);
		return map_lookup_elem(&lb6_services, &key);
	}
}

/* lb_src_range_ok reports whether the client of f (a packet to a frontend
 * of rev-NAT index rev_nat flagged LB_SVC_FLAG_SOURCE_RANGE) is in one of
 * the frontend's source ranges. */
static __always_inline int lb_src_range_ok(const struct flow *f, __u16 rev_nat)
{
	if (f->family == 4) {
		struct lb4_src_range_key k = { .prefixlen = 32 + 32, .rev_nat_index = rev_nat, .address = f->saddr[0] };

		return map_lookup_elem(&lb4_source_range, &k) != 0;
	}
	{
		struct lb6_src_range_key k = { .prefixlen = 32 + 128, .rev_nat_index = rev_nat };

		__builtin_memcpy(k.address, f->saddr, 16);
		return map_lookup_elem(&lb6_source_range, &k) != 0;
	}
}

/* lb_svc_ct_get returns the live service conntrack entry of f (client ->
 * frontend), if any. */
static __always_inline struct ct_value *lb_svc_ct_get(const struct flow *f, __u64 now)
{
	return ct_get_live(f, CT_DIR_SERVICE, now);
}

/* lb_svc_ct_put records that f (client -> frontend) goes to backend_id. */
static __always_inline void lb_svc_ct_put(const struct flow *f, __u32 backend_id,
					  __u16 rev_nat, __u16 ep_id, __u64 now)
{
	struct ct_value v = {
		.endpoint_id = ep_id,
		.backend_id = backend_id,
		.rev_nat_index = rev_nat,
		.tx_packets = 1,
		.tx_bytes = f->len,
	};

	ct_refresh(&v, f, now);
	ct_put(f, CT_DIR_SERVICE, &v);
}

/* lb_affinity_get returns the backend the client of f last used for the
 * service, when that is still one of its active backends and the timeout
 * has not passed; 0 otherwise. */
static __always_inline __u32 lb_affinity_get(const struct flow *f, const struct lb_service *svc,
					     __u64 now)
{
	struct lb_affinity_key key = { .rev_nat_index = svc->rev_nat_index, .family = f->family };
	struct lb_affinity_match_key mkey = { .rev_nat_index = svc->rev_nat_index };
	struct lb_affinity_value *v;
	struct lb_backend b;

	__builtin_memcpy(key.client, f->saddr, 16);
	v = map_lookup_elem(&lb_affinity, &key);
	if (!v || v->last_used + (__u64)svc->affinity_timeout * NSEC_PER_SEC < now)
		return 0;
	mkey.backend_id = v->backend_id;
	if (!map_lookup_elem(&lb_affinity_match, &mkey))
		return 0;
	b = lb_backend_get(f->family, v->backend_id);
	if (!b.ok || b.state != LB_BACKEND_ACTIVE)
		return 0;
	return v->backend_id;
}

static __always_inline void lb_affinity_put(const struct flow *f, const struct lb_service *svc,
					    __u32 backend_id, __u64 now)
{
	struct lb_affinity_key key = { .rev_nat_index = svc->rev_nat_index, .family = f->family };
	struct lb_affinity_value v = { .last_used = now, .backend_id = backend_id };

	__builtin_memcpy(key.client, f->saddr, 16);
	map_update_elem(&lb_affinity, &key, &v, BPF_ANY);
}

/* lb_select picks the backend of a new flow to svc: the affinity backend,
 * else a random slot. Returns 0 when the service has no active backend. */
static __always_inline __u32 lb_select(const struct flow *f, const struct lb_service *svc,
				       __u64 now, __u8 scope)
{
	struct lb_service *slot;
	__u32 id = 0;

	if (svc->count == 0)
		return 0;
	if (svc->flags & LB_SVC_FLAG_AFFINITY)
		id = lb_affinity_get(f, svc, now);
	if (!id) {
		slot = lb_service_get(f, (get_prandom_u32() % svc->count) + 1, scope);
		if (!slot)
			return 0;
		id = slot->backend_id;
	}
	if (svc->flags & LB_SVC_FLAG_AFFINITY)
		lb_affinity_put(f, svc, id, now);
	return id;
}

/* lb_translate translates a packet to the service svc (f's destination
 * is its frontend): the flow's backend (remembered, else selected), DNAT,
 * and f updated to the translated tuple with the service's rev-NAT index
 * (and lb_new set when the backend was picked now). ep_id is the client
 * endpoint's id, 0 for traffic from outside the cluster (the NodePort
 * programs). Returns 0 or a drop reason. Not inlined: packets to no
 * service skip it after one lookup (lb_egress). */
static __attribute__((noinline)) int lb_translate(struct __sk_buff *ctx, struct flow *f,
						  struct lb_service *svc, __u16 ep_id, __u64 now)
{
	struct ct_value *sv;
	struct lb_backend b = {};
	__u32 id = 0;
	__u16 rev = 0;

	sv = lb_svc_ct_get(f, now);
	if (sv) {
		b = lb_backend_get(f->family, sv->backend_id);
		if (b.ok) {
			id = sv->backend_id;
			rev = sv->rev_nat_index; /* of the entry that picked it */
			ct_refresh(sv, f, now);
			ct_count(sv, f, 0);
		}
	}
	if (!id) {
		struct lb_service pick = *svc;

		/* From inside the cluster (an endpoint's programs: ep_id
		 * set), a frontend with two scopes balances with its internal
		 * entry, the external one's until that is written. The entry
		 * is copied and its scope read from it (not set as a
		 * constant), so that the verifier's states after the choice
		 * are the same: it checks the rest once, not per scope. */
		if (ep_id && (pick.flags & LB_SVC_FLAG_TWO_SCOPES)) {
			struct lb_service *in = lb_service_get(f, 0, LB_SCOPE_INT);

			if (in)
				pick = *in;
		}
		id = lb_select(f, &pick, now, pick.scope);
		b = lb_backend_get(f->family, id);
		if (!b.ok)
			return DROP_NO_SERVICE;
		rev = pick.rev_nat_index;
		lb_svc_ct_put(f, id, rev, ep_id, now);
		f->lb_new = 1;
	}
	f->lb_rev_nat = rev;
	if (lb_rewrite(ctx, f, 1, b.address, b.port) < 0)
		return DROP_CSUM;
	__builtin_memcpy(f->daddr, b.address, 16);
	f->dport = b.port;
	/* Hairpin: an endpoint is its own backend. lxc.c's hairpin_request
	 * rewrites the source (lb_hairpin_snat). */
	if (ep_id && lb_addr_eq(b.address, f->saddr) && lb_hairpin_on(f->family))
		f->lb_loopback = 1;
	return 0;
}

/* lb_needs_lookup reports whether from_container must look a packet up in
 * the services, given its conntrack lookup (state, entry v): when its
 * tuple is not tracked (a translated flow's never is: conntrack holds it
 * under the backend), and when it is a tracked flow's opening direction
 * that was never answered (no reply counted, no TCP ACK seen), such as a
 * client retrying to a frontend before its service was written: once it
 * is, the client's next packet goes to a backend. A reply, or a flow the
 * address itself answered, is no service's. */
static __always_inline int lb_needs_lookup(int state, const struct ct_value *v)
{
	if (state == CT_NEW || !v)
		return 1;
	return state == CT_ESTABLISHED && !v->rx_packets && !(v->tcp_flags & TCP_FLAG_ACK);
}

/* lb_egress translates a packet the endpoint sends to a service frontend
 * (lb_translate). Returns 0 (the packet goes on, translated or not a
 * service's) or a drop reason. */
static __always_inline int lb_egress(struct __sk_buff *ctx, struct flow *f, __u16 ep_id,
				     __u64 now)
{
	struct lb_service *svc;

	if (f->proto != IPPROTO_TCP && f->proto != IPPROTO_UDP && f->proto != IPPROTO_SCTP)
		return 0;
	svc = lb_service_get(f, 0, LB_SCOPE_EXT);
	if (!svc)
		return 0;
	return lb_translate(ctx, f, svc, ep_id, now);
}

/* lb_rev_nat rewrites the source of a reply of a translated flow (its
 * conntrack entry has rev-NAT index idx) back to the service frontend. */
static __always_inline void lb_rev_nat(struct __sk_buff *ctx, struct flow *f, __u16 idx)
{
	__u32 addr[4] = {};
	__be16 port;

	if (f->family == 4) {
		struct lb4_rev_nat *r = map_lookup_elem(&lb4_reverse_nat, &idx);

		if (!r)
			return;
		addr[0] = r->address;
		port = r->port;
	} else {
		struct lb6_rev_nat *r = map_lookup_elem(&lb6_reverse_nat, &idx);

		if (!r)
			return;
		__builtin_memcpy(addr, r->address, 16);
		port = r->port;
	}
	if (lb_rewrite(ctx, f, 0, addr, port) == 0) {
		__builtin_memcpy(f->saddr, addr, 16);
		f->sport = port;
	}
}

/* lb_icmp_csum_word reflects in the ICMP checksum at csum_off that the 16
 * bits at off changed from old to the value now there. */
static __always_inline int lb_icmp_csum_word(struct __sk_buff *ctx, __u32 csum_off, __u32 off,
					     __be16 old)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	__be16 *p;

	if (off > 1024)
		return -1;
	p = data + off;
	if ((void *)(p + 1) > data_end)
		return -1;
	return l4_csum_replace(ctx, csum_off, old, *p, sizeof(__be16));
}

/* lb_rev_nat_icmp rewrites an ICMP error f, which a backend sent about a
 * packet of a translated flow (client -> backend), as if the frontend had
 * sent it: the outer source and the embedded packet's destination address
 * and port become the frontend's, with the ICMP checksum and the embedded
 * IPv4 header checksum updated, so that the client's socket, connected to
 * the frontend, gets the error. The embedded L4 checksum is left (no stack
 * checks it). */
static __attribute__((noinline, unused)) void lb_rev_nat_icmp(struct __sk_buff *ctx, const struct flow *f,
						      __u64 now)
{
	struct flow e = {};
	struct ct_value *v = 0;
	__u32 addr[4] = {};
	__u32 csum_off = f->l4_off + 2, inner = f->l4_off + 8, inner_l4, inner_daddr;
	__be16 port, old_port;

	if (parse_embedded(ctx, f, &e) != PARSE_OK)
		return;
	if (e.proto != IPPROTO_TCP && e.proto != IPPROTO_UDP && e.proto != IPPROTO_SCTP)
		return;
	/* The embedded packet is the flow's own (client -> backend). */
	if (ct_lookup(&e, DIR_EGRESS, now, &v) != CT_ESTABLISHED || !v || !v->rev_nat_index)
		return;
	if (f->family == 4) {
		struct lb4_rev_nat *r = map_lookup_elem(&lb4_reverse_nat, &v->rev_nat_index);

		if (!r)
			return;
		addr[0] = r->address;
		port = r->port;
		inner_l4 = inner + sizeof(struct iphdr);
		inner_daddr = inner + 16;
	} else {
		struct lb6_rev_nat *r = map_lookup_elem(&lb6_reverse_nat, &v->rev_nat_index);

		if (!r)
			return;
		__builtin_memcpy(addr, r->address, 16);
		port = r->port;
		inner_l4 = inner + sizeof(struct ipv6hdr);
		inner_daddr = inner + 24;
	}
	old_port = e.dport;
	if (f->family == 4) {
		__be32 old = e.daddr[0];
		__be16 old_csum;
		void *data = (void *)(long)ctx->data;
		void *data_end = (void *)(long)ctx->data_end;
		__be16 *ic;

		if (inner > 512)
			return;
		ic = data + inner + 10;
		if ((void *)(ic + 1) > data_end)
			return;
		old_csum = *ic;
		/* The embedded destination, its header checksum, both in the
		 * ICMP checksum (which has no pseudo header). */
		if (l3_csum_replace(ctx, inner + 10, old, addr[0], sizeof(old)) < 0 ||
		    lb_icmp_csum_word(ctx, csum_off, inner + 10, old_csum) < 0 ||
		    l4_csum_replace(ctx, csum_off, old, addr[0], sizeof(old)) < 0 ||
		    skb_store_bytes(ctx, inner_daddr, &addr[0], sizeof(addr[0]), 0) < 0)
			return;
	} else {
		__u32 old[4];
		__s64 diff;

		__builtin_memcpy(old, e.daddr, 16);
		diff = csum_diff(old, 16, addr, 16, 0);
		if (diff < 0 || l4_csum_replace(ctx, csum_off, 0, diff, 0) < 0 ||
		    skb_store_bytes(ctx, inner_daddr, addr, 16, 0) < 0)
			return;
	}
	if (old_port != port &&
	    (l4_csum_replace(ctx, csum_off, old_port, port, sizeof(port)) < 0 ||
	     skb_store_bytes(ctx, inner_l4 + 2, &port, sizeof(port), 0) < 0))
		return;
	/* The outer source: the IPv4 header checksum; ICMPv6's checksum
	 * covers the pseudo header. */
	if (f->family == 4) {
		if (l3_csum_replace(ctx, LB_IP4_CSUM_OFF, f->saddr[0], addr[0], sizeof(__be32)) < 0)
			return;
		skb_store_bytes(ctx, LB_IP4_SADDR_OFF, &addr[0], sizeof(addr[0]), 0);
	} else {
		__u32 old[4];
		__s64 diff;

		__builtin_memcpy(old, f->saddr, 16);
		diff = csum_diff(old, 16, addr, 16, 0);
		if (diff < 0 || l4_csum_replace(ctx, csum_off, 0, diff, BPF_F_PSEUDO_HDR) < 0)
			return;
		skb_store_bytes(ctx, LB_IP6_SADDR_OFF, addr, 16, 0);
	}
}

#endif /* APIARY_LB_H */
