/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Identity and policy lookups for a new flow: the peer's identity from the
 * ipcache, then the verdict from the endpoint's policy map. */
#ifndef APIARY_POLICY_H
#define APIARY_POLICY_H

#include "common.h"
#include "events.h"
#include "maps.h"
#include "parse.h"

/* ipcache_lookup returns the identity of addr (family of f); when no prefix
 * covers it, the world identity of its family (world-ipv4 or world-ipv6, as
 * Cilium does with both families enabled), so that a 0.0.0.0/0 rule never
 * admits IPv6 peers nor a ::/0 rule IPv4 peers. */
static __always_inline __u32 ipcache_lookup(const struct flow *f, const __u32 *addr)
{
	struct ipcache_key key = { .family = f->family };
	struct ipcache_value *v;

	if (f->family == 4) {
		key.prefixlen = IPCACHE_STATIC_PREFIX + 32;
		key.addr[0] = addr[0];
	} else {
		key.prefixlen = IPCACHE_STATIC_PREFIX + 128;
		__builtin_memcpy(key.addr, addr, 16);
	}
	v = map_lookup_elem(&ipcache, &key);
	if (v)
		return v->identity;
	return f->family == 4 ? WORLD_IPV4_ID : WORLD_IPV6_ID;
}

/* struct policy_verdict is the outcome of policy_check. */
struct policy_verdict {
	__u8 allowed;
	__u8 reason;     /* drop reason when denied */
	__u8 match_type; /* MATCH_* */
};

static __always_inline __u8 match_type_of(int any_peer, const struct policy_value *v)
{
	if (any_peer)
		return v->l4_prefixlen ? MATCH_L4_ONLY : MATCH_ALL;
	return v->l4_prefixlen ? MATCH_L3_L4 : MATCH_L3_ONLY;
}

static __always_inline void policy_account(struct policy_value *v, const struct flow *f)
{
	__sync_fetch_and_add(&v->packets, 1);
	__sync_fetch_and_add(&v->bytes, f->len);
}

/* policy_check computes the verdict for a new flow f with peer identity
 * peer in direction dir. Two longest-prefix lookups, one for the peer's
 * identity and one for any peer (identity 0), each matching protocol and
 * port by prefix (a key of any protocol, a protocol with any port, a port
 * range, one port). A deny result from either wins; otherwise the longer
 * L4 match allows, the peer's own on a tie. The agent writes the map so that
 * every allow key covered by a deny key is itself a deny key, which makes
 * "deny on either longest match" equal to "deny if any covering key
 * denies" (see docs/datapath.md). */
static __always_inline struct policy_verdict policy_check(__u32 peer, __u8 dir,
							   const struct flow *f)
{
	struct policy_verdict pv = { .allowed = 0, .reason = DROP_POLICY };
	struct policy_key key = {
		.prefixlen = POLICY_FULL_PREFIX,
		.identity = peer,
		.direction = dir,
		.proto = f->proto,
		.port = f->dport,
	};
	struct policy_value *l3, *any, *hit;
	int hit_any;

	if (f->proto == IPPROTO_ICMP || f->proto == IPPROTO_ICMPV6_)
		key.port = bpf_htons(f->icmp_type);
	l3 = map_lookup_elem(&policy, &key);
	key.identity = 0;
	any = map_lookup_elem(&policy, &key);

	if (l3 && (l3->flags & POLICY_FLAG_DENY)) {
		hit = l3;
		hit_any = 0;
	} else if (any && (any->flags & POLICY_FLAG_DENY)) {
		hit = any;
		hit_any = 1;
	} else if (l3 && (!any || l3->l4_prefixlen >= any->l4_prefixlen)) {
		hit = l3;
		hit_any = 0;
	} else if (any) {
		hit = any;
		hit_any = 1;
	} else {
		return pv;
	}
	policy_account(hit, f);
	pv.match_type = match_type_of(hit_any, hit);
	if (hit->flags & POLICY_FLAG_DENY) {
		pv.reason = DROP_POLICY_DENY;
		return pv;
	}
	pv.allowed = 1;
	pv.reason = REASON_FORWARDED;
	return pv;
}

#endif /* APIARY_POLICY_H */
