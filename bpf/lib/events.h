/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Events (drop and policy-verdict records on the ring buffer) and the
 * per-CPU metrics counters. */
#ifndef APIARY_EVENTS_H
#define APIARY_EVENTS_H

#include "common.h"
#include "maps.h"
#include "parse.h"

/* Event types. */
#define EVENT_DROP 1
#define EVENT_POLICY_VERDICT 2

/* Reasons: 0 is forwarded; drop reasons use Cilium's numbers where Cilium
 * has one for the same cause. */
#define REASON_FORWARDED 0
#define DROP_POLICY 133     /* no policy entry allows the flow */
#define DROP_INVALID 134    /* truncated or malformed packet */
#define DROP_UNKNOWN_L3 139 /* neither IPv4, IPv6 nor ARP */
#define DROP_POLICY_DENY 181 /* a deny entry matched */
/* hubble: not a packet reason. The metrics map counts under it the event
 * records the ring buffer had no room for (packets: records lost). */
#define REASON_EVENTS_LOST 255

/* Policy verdicts of EVENT_POLICY_VERDICT: VERDICT_AUDIT is a flow the
 * policy denies, let through by --policy-audit-mode (Cilium's "audit"). */
#define VERDICT_DENY 0
#define VERDICT_ALLOW 1
#define VERDICT_AUDIT 2

/* Policy match types, as in Cilium's policy-verdict notifications. */
#define MATCH_NONE 0
#define MATCH_L3_ONLY 1 /* peer identity, any protocol */
#define MATCH_L3_L4 2   /* peer identity and protocol (and port) */
#define MATCH_L4_ONLY 3 /* any peer, protocol (and port) */
#define MATCH_ALL 4     /* any peer, any protocol */

/* struct event is one ring-buffer record, 64 bytes.
 * type: EVENT_*; reason: the drop reason (drops) or 0; verdict: VERDICT_*
 * (policy verdicts); match_type: MATCH_*; direction: DIR_*;
 * family: 4 or 6; proto: IP protocol; icmp_type: for ICMP; endpoint_id;
 * sport, dport: network byte order; tcp_flags: the packet's TCP flags
 * (byte 13 of the TCP header); src_identity, dst_identity: identities of
 * the packet's source and destination; len: packet length;
 * saddr, daddr: the packet's addresses; rev_nat: the service (its
 * rev-NAT index) of a translated packet, or 0, which is the packet's
 * destination, or with lb_reply 1 its source (a reply of the service's
 * flow, before its source is rewritten back to the frontend). */
struct event {
	__u8 type;
	__u8 reason;
	__u8 verdict;
	__u8 match_type;
	__u8 direction;
	__u8 family;
	__u8 proto;
	__u8 icmp_type;
	__u16 endpoint_id;
	__be16 sport;
	__be16 dport;
	__u8 tcp_flags;
	__u8 pad;
	__u32 src_identity;
	__u32 dst_identity;
	__u32 len;
	__u32 saddr[4];
	__u32 daddr[4];
	__u16 rev_nat;
	__u8 lb_reply;
	__u8 pad2;
};

/* Puts struct event into BTF (it lives only on the stack otherwise), so
 * bpf2go generates its Go type. Lives in .rodata, never read. */
volatile const struct event event_btf_anchor __attribute__((unused));

static __always_inline void metrics_count(__u8 reason, __u8 dir, __u32 len)
{
	__u32 idx = ((__u32)reason << 1) | (dir & 1);
	struct metrics_value *m = map_lookup_elem(&metrics, &idx);

	if (m) {
		m->packets++;
		m->bytes += len;
	}
}

/* verdict_events_on reports whether policy verdicts of allowed flows are
 * wanted: a monitor client is listening (the config map's flag, set by
 * the agent's monitor). */
static __always_inline int verdict_events_on(void)
{
	__u32 key = 0;
	struct config_value *c = map_lookup_elem(&config, &key);

	return c && (c->flags & CONFIG_VERDICT_EVENTS);
}

static __always_inline void event_emit(const struct flow *f, __u8 type, __u8 reason,
				       __u8 verdict, __u8 match_type, __u8 dir, __u16 ep_id,
				       __u32 src_id, __u32 dst_id)
{
	struct event ev = {
		.type = type,
		.reason = reason,
		.verdict = verdict,
		.match_type = match_type,
		.direction = dir,
		.family = f->family,
		.proto = f->proto,
		.icmp_type = f->icmp_type,
		.endpoint_id = ep_id,
		.sport = f->sport,
		.dport = f->dport,
		.tcp_flags = f->tcp_flags,
		.src_identity = src_id,
		.dst_identity = dst_id,
		.len = f->len,
		.rev_nat = f->lb_rev_nat,
		.lb_reply = f->lb_reply,
	};

	__builtin_memcpy(ev.saddr, f->saddr, 16);
	__builtin_memcpy(ev.daddr, f->daddr, 16);
	if (ringbuf_output(&events, &ev, sizeof(ev), 0)) /* hubble: count what is lost */
		metrics_count(REASON_EVENTS_LOST, dir, 0);
}

#endif /* APIARY_EVENTS_H */
