/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Connection tracking: look a packet up as its flow's opening direction
 * (established) or as a reply, refresh the entry's lifetime and count the
 * packet, create entries for flows the policy allowed. */
#ifndef APIARY_CONNTRACK_H
#define APIARY_CONNTRACK_H

#include "common.h"
#include "maps.h"
#include "parse.h"

#define NSEC_PER_SEC 1000000000ULL
/* Expiries are CLOCK_MONOTONIC_COARSE ns (ktime_get_coarse_ns). */
#define CT_LIFETIME_TCP (21600 * NSEC_PER_SEC)  /* established TCP */
#define CT_LIFETIME_SYN (60 * NSEC_PER_SEC)     /* TCP before the first ACK */
#define CT_LIFETIME_NONTCP (60 * NSEC_PER_SEC)  /* UDP, SCTP, ICMP */
#define CT_LIFETIME_CLOSE (10 * NSEC_PER_SEC)   /* TCP after FIN or RST */
#define CT_REFRESH_SLACK NSEC_PER_SEC           /* write expiry at most once a second */

#define CT_NEW 0
#define CT_ESTABLISHED 1
#define CT_REPLY 2
#define CT_RELATED 3 /* an ICMP error about a tracked flow */

/* ct_count adds packet f to the entry's counters of its direction (reply:
 * rx, else tx). Plain additions, not atomic ones: two CPUs handling
 * packets of the same flow in the same direction at the same instant can
 * lose a count, which a counter for display tolerates better than the
 * established path tolerates two locked instructions. */
static __always_inline void ct_count(struct ct_value *v, const struct flow *f, int reply)
{
	if (reply) {
		v->rx_packets++;
		v->rx_bytes += f->len;
	} else {
		v->tx_packets++;
		v->tx_bytes += f->len;
	}
}

/* ct_refresh extends the entry's lifetime for one more packet of f; FIN
 * and RST cut it to CT_LIFETIME_CLOSE. */
static __always_inline void ct_refresh(struct ct_value *v, const struct flow *f, __u64 now)
{
	__u64 lifetime = CT_LIFETIME_NONTCP, expires;
	int closing = 0;

	if (f->proto == IPPROTO_TCP) {
		if ((v->tcp_flags | f->tcp_flags) != v->tcp_flags)
			v->tcp_flags |= f->tcp_flags;
		if ((f->tcp_flags & (TCP_FLAG_FIN | TCP_FLAG_RST)) && !(v->flags & CT_FLAG_CLOSING)) {
			v->flags |= CT_FLAG_CLOSING;
			closing = 1;
		}
		if (v->flags & CT_FLAG_CLOSING)
			lifetime = CT_LIFETIME_CLOSE;
		else if (v->tcp_flags & TCP_FLAG_ACK)
			lifetime = CT_LIFETIME_TCP;
		else
			lifetime = CT_LIFETIME_SYN;
	}
	expires = now + lifetime;
	if (closing || expires > v->expires + CT_REFRESH_SLACK)
		v->expires = expires;
}

/* ct_live returns v when it is an unexpired entry. */
static __always_inline struct ct_value *ct_live(struct ct_value *v, __u64 now)
{
	if (v && v->expires > now)
		return v;
	return 0;
}

/* ct_cannot_be_reply is true for a TCP SYN without ACK: it opens a flow, so
 * the reply lookup is skipped (a simultaneous open is then decided by
 * policy like any new flow). */
static __always_inline int ct_cannot_be_reply(const struct flow *f)
{
	return f->proto == IPPROTO_TCP && (f->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_ACK)) == TCP_FLAG_SYN;
}

/* ct_lookup4 looks f up in ct4 for a program of direction dir: first as a
 * packet of a flow opened in dir, then as a reply to a flow opened in the
 * other direction. A live entry is refreshed, counted and stored in *vp. */
static __always_inline int ct_lookup4(const struct flow *f, __u8 dir, __u64 now,
				      struct ct_value **vp)
{
	struct ct4_key key = {
		.saddr = f->saddr[0],
		.daddr = f->daddr[0],
		.sport = f->sport,
		.dport = f->dport,
		.proto = f->proto,
		.direction = dir,
	};
	struct ct_value *v = ct_live(map_lookup_elem(&ct4, &key), now);

	if (v) {
		ct_refresh(v, f, now);
		ct_count(v, f, 0);
		*vp = v;
		return CT_ESTABLISHED;
	}
	if (ct_cannot_be_reply(f))
		return CT_NEW;
	key.saddr = f->daddr[0];
	key.daddr = f->saddr[0];
	key.sport = f->dport;
	key.dport = f->sport;
	key.direction = !dir;
	v = ct_live(map_lookup_elem(&ct4, &key), now);
	if (v) {
		ct_refresh(v, f, now);
		ct_count(v, f, 1);
		*vp = v;
		return CT_REPLY;
	}
	return CT_NEW;
}

static __always_inline int ct_lookup6(const struct flow *f, __u8 dir, __u64 now,
				      struct ct_value **vp)
{
	struct ct6_key key = {
		.sport = f->sport,
		.dport = f->dport,
		.proto = f->proto,
		.direction = dir,
	};
	struct ct_value *v;

	__builtin_memcpy(key.saddr, f->saddr, 16);
	__builtin_memcpy(key.daddr, f->daddr, 16);
	v = ct_live(map_lookup_elem(&ct6, &key), now);
	if (v) {
		ct_refresh(v, f, now);
		ct_count(v, f, 0);
		*vp = v;
		return CT_ESTABLISHED;
	}
	if (ct_cannot_be_reply(f))
		return CT_NEW;
	__builtin_memcpy(key.saddr, f->daddr, 16);
	__builtin_memcpy(key.daddr, f->saddr, 16);
	key.sport = f->dport;
	key.dport = f->sport;
	key.direction = !dir;
	v = ct_live(map_lookup_elem(&ct6, &key), now);
	if (v) {
		ct_refresh(v, f, now);
		ct_count(v, f, 1);
		*vp = v;
		return CT_REPLY;
	}
	return CT_NEW;
}

/* ct_lookup classifies f (CT_NEW, CT_ESTABLISHED or CT_REPLY); for the
 * last two *vp is the flow's entry. */
static __always_inline int ct_lookup(const struct flow *f, __u8 dir, __u64 now,
				     struct ct_value **vp)
{
	if (f->family == 4)
		return ct_lookup4(f, dir, now, vp);
	return ct_lookup6(f, dir, now, vp);
}

/* ct_get_live returns the live entry of the flow e opened in direction
 * dir (no refresh), or 0. */
static __always_inline struct ct_value *ct_get_live(const struct flow *e, __u8 dir, __u64 now)
{
	if (e->family == 4) {
		struct ct4_key key = {
			.saddr = e->saddr[0],
			.daddr = e->daddr[0],
			.sport = e->sport,
			.dport = e->dport,
			.proto = e->proto,
			.direction = dir,
		};
		return ct_live(map_lookup_elem(&ct4, &key), now);
	}
	{
		struct ct6_key key = {
			.sport = e->sport,
			.dport = e->dport,
			.proto = e->proto,
			.direction = dir,
		};
		__builtin_memcpy(key.saddr, e->saddr, 16);
		__builtin_memcpy(key.daddr, e->daddr, 16);
		return ct_live(map_lookup_elem(&ct6, &key), now);
	}
}

/* ct_exists reports whether the flow e, opened in direction dir, has a
 * live entry (no refresh). */
static __always_inline int ct_exists(const struct flow *e, __u8 dir, __u64 now)
{
	return ct_get_live(e, dir, now) != 0;
}

/* ct_lookup_related reports CT_RELATED when the ICMP error f, seen by the
 * program of direction dir, is about a tracked flow: the packet it embeds
 * was sent by one side of that flow, so the embedded tuple is the flow's
 * own (an error about the flow's opening direction) or its reverse (an
 * error about a reply). */
static __always_inline int ct_lookup_related(struct __sk_buff *ctx, const struct flow *f,
					     __u8 dir, __u64 now)
{
	struct flow e = {};
	struct flow r = {};

	if (parse_embedded(ctx, f, &e) != PARSE_OK)
		return CT_NEW;
	if (ct_exists(&e, !dir, now))
		return CT_RELATED;
	r.family = e.family;
	r.proto = e.proto;
	__builtin_memcpy(r.saddr, e.daddr, 16);
	__builtin_memcpy(r.daddr, e.saddr, 16);
	r.sport = e.dport;
	r.dport = e.sport;
	if (ct_exists(&r, dir, now))
		return CT_RELATED;
	return CT_NEW;
}

/* struct revs are the revisions a verdict was made under: the endpoint's
 * policy map and the ipcache. */
struct revs {
	__u32 policy;
	__u32 ipcache;
};

/* ct_put writes v as the entry of flow f in direction dir (a CT_DIR_*
 * value) of the family's conntrack map. */
static __always_inline void ct_put(const struct flow *f, __u8 dir, const struct ct_value *v)
{
	if (f->family == 4) {
		struct ct4_key key = {
			.saddr = f->saddr[0],
			.daddr = f->daddr[0],
			.sport = f->sport,
			.dport = f->dport,
			.proto = f->proto,
			.direction = dir,
		};
		map_update_elem(&ct4, &key, v, BPF_ANY);
	} else {
		struct ct6_key key = {
			.sport = f->sport,
			.dport = f->dport,
			.proto = f->proto,
			.direction = dir,
		};
		__builtin_memcpy(key.saddr, f->saddr, 16);
		__builtin_memcpy(key.daddr, f->daddr, 16);
		map_update_elem(&ct6, &key, v, BPF_ANY);
	}
}

/* ct_create records the new flow f, opened in direction dir and allowed
 * under the revisions rev. */
static __always_inline void ct_create(const struct flow *f, __u8 dir, __u32 peer_id,
				      __u16 ep_id, struct revs rev, __u64 now)
{
	struct ct_value v = {
		.peer_identity = peer_id,
		.endpoint_id = ep_id,
		.policy_rev = rev.policy,
		.ipcache_rev = rev.ipcache,
		.tx_packets = 1,
		.tx_bytes = f->len,
		.rev_nat_index = f->lb_rev_nat,
	};

	ct_refresh(&v, f, now);
	ct_put(f, dir, &v);
}

#endif /* APIARY_CONNTRACK_H */
