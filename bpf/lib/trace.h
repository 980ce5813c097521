/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Trace events: forwarded packets on the events ring buffer, for Hubble's
 * flows. Written only while an observer listens (the config map's
 * CONFIG_TRACE_EVENTS, set by the agent's monitor), so they cost one array
 * lookup per packet otherwise. How many are written follows Cilium's
 * --monitor-aggregation:
 *   none, low:        every forwarded packet (the endpoint programs have no
 *                     receive-side observation points for "low" to hide);
 *   medium, maximum:  new flows, ICMP errors about tracked flows, and
 *                     established TCP packets carrying SYN, FIN or RST.
 * A trace record is a struct event of type EVENT_TRACE whose reason is the
 * conntrack state (Cilium's TRACE_REASON_*: 0 new flow, 1 established,
 * 2 reply, 3 related); its direction gives the observation point (egress:
 * to the stack, ingress: to the endpoint); its verdict is TRACE_FORWARDED,
 * or TRACE_AUDITED for a flow the policy denies that --policy-audit-mode
 * lets through. */
#ifndef APIARY_TRACE_H
#define APIARY_TRACE_H

#include "common.h"
#include "maps.h"
#include "parse.h"
#include "conntrack.h"
#include "events.h"

#define EVENT_TRACE 3

#define CONFIG_TRACE_EVENTS 0x2 /* an observer listens: trace forwarded packets */
#define CONFIG_TRACE_ALL 0x4    /* aggregation none or low: trace every one */

#define TRACE_FORWARDED 1
#define TRACE_AUDITED 2

/* trace_wanted reports whether a forwarded packet of conntrack state
 * state (CT_*) is traced. */
static __always_inline int trace_wanted(const struct flow *f, int state)
{
	__u32 key = 0;
	struct config_value *c = map_lookup_elem(&config, &key);

	if (!c || !(c->flags & CONFIG_TRACE_EVENTS))
		return 0;
	if (state == CT_NEW || state == CT_RELATED || (c->flags & CONFIG_TRACE_ALL))
		return 1;
	return f->proto == IPPROTO_TCP &&
	       (f->tcp_flags & (TCP_FLAG_SYN | TCP_FLAG_FIN | TCP_FLAG_RST));
}

/* trace_verdict writes the trace event of a packet about to be
 * forwarded, if wanted, with verdict TRACE_*. peer is the remote identity,
 * self the endpoint's; the source and destination follow the packet's
 * direction dir. */
static __always_inline void trace_verdict(const struct flow *f, __u8 dir, int state, __u16 ep_id,
					  __u32 self, __u32 peer, __u8 verdict)
{
	if (!trace_wanted(f, state))
		return;
	event_emit(f, EVENT_TRACE, (__u8)state, verdict, MATCH_NONE, dir, ep_id,
		   dir == DIR_EGRESS ? self : peer, dir == DIR_EGRESS ? peer : self);
}

/* trace_forwarded is trace_verdict of a packet the policy allows. */
static __always_inline void trace_forwarded(const struct flow *f, __u8 dir, int state, __u16 ep_id,
					    __u32 self, __u32 peer)
{
	trace_verdict(f, dir, state, ep_id, self, peer, TRACE_FORWARDED);
}

#endif /* APIARY_TRACE_H */
