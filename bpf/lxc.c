//go:build ignore

/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* apiary's endpoint programs, attached to the host side of an endpoint's
 * veth pair:
 *   from_container: tc/tcx ingress of the host-side veth, i.e. packets the
 *                   endpoint sends (its egress);
 *   to_container:   tc/tcx egress of the host-side veth, i.e. packets sent
 *                   to the endpoint (its ingress).
 * Per packet: parse -> conntrack -> (from_container, a packet of no
 * tracked flow) service translation, lib/lb.h, and conntrack of the
 * translated flow -> (established and reply packets, and ICMP
 * errors about tracked flows, pass, unless the endpoint's policy or the
 * ipcache changed since the flow was allowed: then it is looked up again) ->
 * for a new flow: ipcache (peer identity) -> policy map -> allowed: create
 * the conntrack entry; denied: drop. Drops go to the events ring buffer,
 * verdicts of new flows too while a monitor listens; every packet is
 * counted in the metrics map; forwarded packets are traced while an
 * observer listens (lib/trace.h). */

#include "lib/common.h"
#include "lib/maps.h"
#include "lib/parse.h"
#include "lib/conntrack.h"
#include "lib/frag.h"
#include "lib/events.h"
#include "lib/policy.h"
#include "lib/encap.h" /* tunnel routing */
#include "lib/trace.h" /* hubble: trace events of forwarded packets */
#include "lib/lb.h"    /* services */
#include "lib/reject.h" /* services without backends refuse */

char __license[] SEC("license") = "Dual BSD/GPL";

/* Per-endpoint constants, set by the loader before the load (no compiler
 * on the node). enforce_*: ENFORCE_ON when policy is enforced in that
 * direction; ENFORCE_OFF lets every new flow in that direction through
 * without a policy lookup; ENFORCE_AUDIT (--policy-audit-mode) looks the
 * policy up and reports its verdict, but lets a denied flow through. */
#define ENFORCE_OFF 0
#define ENFORCE_ON 1
#define ENFORCE_AUDIT 2
volatile const __u32 endpoint_id = 0;
volatile const __u32 endpoint_identity = 0;
volatile const __u8 enforce_ingress = 1;
volatile const __u8 enforce_egress = 1;

/* verdict_of is a policy-verdict event's verdict: VERDICT_AUDIT for a flow
 * the policy denies that audit mode lets through. */
static __always_inline __u8 verdict_of(struct policy_verdict pv, __u8 enforce)
{
	if (pv.allowed)
		return VERDICT_ALLOW;
	return enforce == ENFORCE_AUDIT ? VERDICT_AUDIT : VERDICT_DENY;
}

static __always_inline int drop(const struct flow *f, __u8 reason, __u8 dir, __u32 src_id,
				__u32 dst_id)
{
	metrics_count(reason, dir, f->len);
	event_emit(f, EVENT_DROP, reason, 0, MATCH_NONE, dir, endpoint_id, src_id, dst_id);
	return CTX_ACT_DROP;
}

static __always_inline int pass(const struct flow *f, __u8 dir)
{
	metrics_count(REASON_FORWARDED, dir, f->len);
	return CTX_ACT_OK;
}

/* current_revs returns the endpoint's policy revision and the ipcache
 * revision. */
static __always_inline struct revs current_revs(void)
{
	__u32 key = endpoint_id, zero = 0;
	struct endpoint_state *es = map_lookup_elem(&endpoints, &key);
	struct config_value *c = map_lookup_elem(&config, &zero);
	struct revs r = {};

	if (es)
		r.policy = es->policy_rev;
	if (c)
		r.ipcache = c->ipcache_rev;
	return r;
}

/* handle_new_flow decides the first packet of a flow and records an allowed
 * flow in conntrack under the revisions rev, read before the ipcache and
 * policy lookups (the agent bumps them after writing those maps, so a
 * verdict from a map older than rev cannot be recorded under rev). */
static __always_inline int handle_new_flow(const struct flow *f, __u8 dir, struct revs rev,
					   __u64 now, __u32 tunnel_src)
{
	const __u32 *peer_addr = dir == DIR_EGRESS ? f->daddr : f->saddr;
	/* Tunnel routing hook: the VNI's identity, else the ipcache's. */
	__u32 peer = tunnel_src ?: ipcache_lookup(f, peer_addr);
	__u32 src_id = dir == DIR_EGRESS ? endpoint_identity : peer;
	__u32 dst_id = dir == DIR_EGRESS ? peer : endpoint_identity;
	__u8 enforce = dir == DIR_EGRESS ? enforce_egress : enforce_ingress;
	__u8 traced = TRACE_FORWARDED; /* hubble */

	if (enforce) {
		struct policy_verdict pv = policy_check(peer, dir, f);

		if (verdict_events_on())
			event_emit(f, EVENT_POLICY_VERDICT, pv.reason, verdict_of(pv, enforce),
				   pv.match_type, dir, endpoint_id, src_id, dst_id);
		if (!pv.allowed && enforce != ENFORCE_AUDIT)
			return drop(f, pv.reason, dir, src_id, dst_id);
		if (!pv.allowed)
			traced = TRACE_AUDITED; /* hubble */
	}
	ct_create(f, dir, peer, endpoint_id, rev, now);
	trace_verdict(f, dir, CT_NEW, endpoint_id, endpoint_identity, peer, traced); /* hubble */
	return pass(f, dir);
}

/* ct_revalidate decides a packet of a tracked flow whose entry v was
 * allowed under older revisions than rev (the endpoint's policy or the
 * ipcache changed since): the flow's opening packet is looked up again
 * (peer identity and policy, in the direction the flow was opened; reply
 * is true when the packet is a reply). Allowed: the entry takes rev and
 * the packet passes. Denied: the entry is expired, so that the flow's
 * later packets in either direction are new flows to the policy, and the
 * packet drops. Not inlined: the established path stays short. dir_reply
 * packs dir (bit 0) and reply (bit 1): a BPF function takes at most five
 * arguments; tunnel_src is the source identity from the tunnel (encap.h).
 */
static __attribute__((noinline)) int ct_revalidate(const struct flow *f, __u32 dir_reply,
						   struct ct_value *v, struct revs rev,
						   __u32 tunnel_src)
{
	__u8 dir = dir_reply & 1;
	int reply = dir_reply >> 1;
	__u8 flow_dir = reply ? !dir : dir;
	const __u32 *peer_addr = dir == DIR_EGRESS ? f->daddr : f->saddr;
	/* Tunnel routing hook: the VNI's identity, else the ipcache's. */
	__u32 peer = tunnel_src ?: ipcache_lookup(f, peer_addr);
	__u32 src_id = dir == DIR_EGRESS ? endpoint_identity : peer;
	__u32 dst_id = dir == DIR_EGRESS ? peer : endpoint_identity;
	__u8 enforce = flow_dir == DIR_EGRESS ? enforce_egress : enforce_ingress;
	struct flow o = *f;

	/* The opening packet's destination port and ICMP type. */
	if (reply) {
		o.sport = f->dport;
		o.dport = f->sport;
		if (f->icmp_type == ICMP_ECHO_REPLY && f->proto == IPPROTO_ICMP)
			o.icmp_type = ICMP_ECHO_REQUEST;
		else if (f->icmp_type == ICMPV6_ECHO_REPLY && f->proto == IPPROTO_ICMPV6_)
			o.icmp_type = ICMPV6_ECHO_REQUEST;
	}
	if (enforce) {
		struct policy_verdict pv = policy_check(peer, flow_dir, &o);

		if (verdict_events_on())
			event_emit(f, EVENT_POLICY_VERDICT, pv.reason, verdict_of(pv, enforce),
				   pv.match_type, dir, endpoint_id, src_id, dst_id);
		if (!pv.allowed && enforce != ENFORCE_AUDIT) {
			v->expires = 0;
			return drop(f, pv.reason, dir, src_id, dst_id);
		}
	}
	v->policy_rev = rev.policy;
	v->ipcache_rev = rev.ipcache;
	v->peer_identity = peer;
	trace_forwarded(f, dir, reply ? CT_REPLY : CT_ESTABLISHED, endpoint_id, endpoint_identity, peer); /* hubble */
	return pass(f, dir);
}

/* hairpin_send sends a hairpinned packet (lib/lb.h) from from_container
 * straight back into its endpoint, through the host side's egress (where
 * to_container lets it in by its mark): the Ethernet addresses are
 * swapped, so that the endpoint's own address is the destination. */
static __always_inline int hairpin_send(struct __sk_buff *ctx)
{
	void *data = (void *)(long)ctx->data;
	void *data_end = (void *)(long)ctx->data_end;
	struct ethhdr *eth = data;
	__u8 mac[ETH_ALEN];

	if ((void *)(eth + 1) > data_end)
		return CTX_ACT_DROP;
	__builtin_memcpy(mac, eth->h_dest, ETH_ALEN);
	__builtin_memcpy(eth->h_dest, eth->h_source, ETH_ALEN);
	__builtin_memcpy(eth->h_source, mac, ETH_ALEN);
	ctx->mark = MARK_MAGIC_LOOPBACK;
	return redirect(ctx->ifindex, 0);
}

/* hairpin_request handles a packet from_container translated to the
 * endpoint itself (f: the endpoint -> itself), whose source it rewrites
 * to the loopback address of its family. No policy
 * applies, as in Cilium: an endpoint reaching itself through a service
 * needs no rule. The flow is tracked as the endpoint's ingress flow (its
 * answers are replies of it), flagged CT_FLAG_LOOPBACK and carrying the
 * rev-NAT index. */
static __attribute__((noinline)) int hairpin_request(struct __sk_buff *ctx, struct flow *f,
						     __u64 now)
{
	struct ct_value *v;
	int state = CT_ESTABLISHED;

	/* From the service loopback address (lib/lb.h). */
	if (!lb_hairpin_source(f->family, f->saddr) ||
	    lb_hairpin_snat(ctx, f->l4_off, f->family, f->proto, f->frag) < 0)
		return drop(f, DROP_CSUM, DIR_EGRESS, endpoint_identity, endpoint_identity);
	v = ct_get_live(f, DIR_INGRESS, now);

	if (v && (v->flags & CT_FLAG_LOOPBACK) && v->rev_nat_index == f->lb_rev_nat) {
		ct_refresh(v, f, now);
		ct_count(v, f, 0);
	} else {
		struct ct_value nv = {
			.peer_identity = endpoint_identity,
			.endpoint_id = endpoint_id,
			.flags = CT_FLAG_LOOPBACK,
			.tx_packets = 1,
			.tx_bytes = f->len,
			.rev_nat_index = f->lb_rev_nat,
		};

		ct_refresh(&nv, f, now);
		ct_put(f, DIR_INGRESS, &nv);
		state = CT_NEW;
	}
	trace_forwarded(f, DIR_EGRESS, state, endpoint_id, endpoint_identity, endpoint_identity); /* hubble */
	pass(f, DIR_EGRESS);
	return hairpin_send(ctx);
}

/* hairpin_reply handles an answer of a hairpinned flow (entry v, flagged
 * CT_FLAG_LOOPBACK), which from_container sees as a reply (the endpoint
 * -> the loopback address): it comes from the frontend and goes to the
 * endpoint, back into it. Any other packet matching such an entry did not
 * come from the endpoint's own translation (to_container lets those in by
 * their mark before any lookup) and drops. */
static __attribute__((noinline)) int hairpin_reply(struct __sk_buff *ctx, struct flow *f,
						   struct ct_value *v, __u32 dir_state)
{
	__u8 dir = dir_state & 1;
	__u32 self[4];

	__builtin_memcpy(self, f->saddr, 16);
	if (dir != DIR_EGRESS || (dir_state >> 1) != CT_REPLY)
		return drop(f, DROP_INVALID, dir, 0, endpoint_identity);
	if (lb_rewrite(ctx, f, 1, self, f->dport) < 0)
		return drop(f, DROP_CSUM, dir, endpoint_identity, endpoint_identity);
	__builtin_memcpy(f->daddr, self, 16);
	lb_rev_nat(ctx, f, v->rev_nat_index);
	if (lb_addr_eq(f->saddr, self)) /* the service is gone */
		return drop(f, DROP_NO_SERVICE, dir, endpoint_identity, endpoint_identity);
	trace_forwarded(f, dir, CT_REPLY, endpoint_id, endpoint_identity, endpoint_identity); /* hubble */
	pass(f, dir);
	return hairpin_send(ctx);
}

/* reject_service answers a packet to a service without backends with the
 * ICMP error of lib/reject.h, sent back into the endpoint with the
 * loopback mark (to_container lets it in as a hairpinned packet); the
 * packet counts, and is reported, as dropped for that reason. */
static __always_inline int reject_service(struct __sk_buff *ctx, const struct flow *f, __u8 dir)
{
	drop(f, DROP_NO_SERVICE, dir, endpoint_identity, 0);
	return lb_reject_back(ctx, f, MARK_MAGIC_LOOPBACK);
}

/* handle decides the packet in ctx, parsed into *f (zeroed by the caller;
 * from_container reads it afterwards). */
static __always_inline int handle(struct __sk_buff *ctx, __u8 dir, struct flow *f)
{
	struct ct_value *v = 0;
	struct revs rev;
	__u32 tunnel_src;
	__u64 now;
	int state;

	switch (parse_packet(ctx, f)) {
	case PARSE_OK:
		frag_track(f);
		break;
	case PARSE_PASS:
		return pass(f, dir);
	case PARSE_UNKNOWN_L3:
		return drop(f, DROP_UNKNOWN_L3, dir, 0, 0);
	default:
		return drop(f, DROP_INVALID, dir, 0, 0);
	}
	/* A hairpinned packet from_container sent back (hairpin_send): it
	 * came in on this very device, where only the endpoint sends. */
	if (dir == DIR_INGRESS && unlikely(ctx->mark == MARK_MAGIC_LOOPBACK) &&
	    ctx->ingress_ifindex == ctx->ifindex) {
		ctx->mark = 0;
		return pass(f, dir);
	}
	rev = current_revs();
	now = ktime_get_coarse_ns();
	tunnel_src = tunnel_source_identity(ctx, dir);
	state = ct_lookup(f, dir, now, &v);
	/* lib/lb.h: a packet to a service frontend goes to its backend, and
	 * the translated flow is looked up, unless its backend was picked
	 * now (a new flow to the service: decided as new). Replies and
	 * answered flows skip the service lookup (lb_needs_lookup). */
	if (dir == DIR_EGRESS && lb_needs_lookup(state, v)) {
		int reason = lb_egress(ctx, f, endpoint_id, now);

		if (unlikely(reason == DROP_NO_SERVICE && service_no_backend_reject))
			return reject_service(ctx, f, dir);
		if (unlikely(reason))
			return drop(f, reason, dir, endpoint_identity, 0);
		if (unlikely(f->lb_loopback))
			return hairpin_request(ctx, f, now);
		if (f->lb_new)
			state = CT_NEW;
		else if (f->lb_rev_nat)
			state = ct_lookup(f, dir, now, &v);
	}
	if (state != CT_NEW && v) {
		int ret;

		if (unlikely(v->flags & CT_FLAG_LOOPBACK))
			return hairpin_reply(ctx, f, v, dir | state << 1);
		if (state == CT_REPLY && v->rev_nat_index) { /* events name the service it comes from */
			f->lb_rev_nat = v->rev_nat_index;
			f->lb_reply = 1;
		}
		if (unlikely(v->policy_rev != rev.policy || v->ipcache_rev != rev.ipcache))
			ret = ct_revalidate(f, dir | (state == CT_REPLY) << 1, v, rev, tunnel_src);
		else {
			trace_forwarded(f, dir, state, endpoint_id, endpoint_identity, v->peer_identity); /* hubble */
			ret = pass(f, dir);
		}
		/* lib/lb.h: a reply of a translated flow comes from the frontend. */
		if (state == CT_REPLY && v->rev_nat_index && ret == CTX_ACT_OK)
			lb_rev_nat(ctx, f, v->rev_nat_index);
		return ret;
	}
	if (unlikely(icmp_is_error(f)) && ct_lookup_related(ctx, f, dir, now) == CT_RELATED) {
		trace_forwarded(f, dir, CT_RELATED, endpoint_id, endpoint_identity,
				tunnel_src ?: ipcache_lookup(f, dir == DIR_EGRESS ? f->daddr : f->saddr)); /* hubble */
		/* lib/lb.h: an error about a translated flow names the frontend. */
		if (dir == DIR_INGRESS)
			lb_rev_nat_icmp(ctx, f, now);
		return pass(f, dir);
	}
	return handle_new_flow(f, dir, rev, now, tunnel_src);
}

SEC("tc")
int from_container(struct __sk_buff *ctx)
{
	struct flow f = {};
	int ret = handle(ctx, DIR_EGRESS, &f);

	/* Tunnel routing hook (lib/encap.h): an allowed packet to a node
	 * behind the tunnel is encapsulated. */
	if (ret == CTX_ACT_OK)
		ret = encap_egress(ctx, &f, endpoint_identity);
	return ret;
}

SEC("tc")
int to_container(struct __sk_buff *ctx)
{
	struct flow f = {};

	return handle(ctx, DIR_INGRESS, &f);
}
