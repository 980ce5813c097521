/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* The identity mark: how the overlay program (overlay.c, from_overlay)
 * hands the source identity it read from a packet's VXLAN VNI to the
 * destination endpoint's to_container, through skb->mark, as Cilium's
 * MARK_MAGIC_IDENTITY does.
 *
 * Layout (the same bits as Cilium's): bits 8-11 hold the magic 0xF; the
 * identity's low 16 bits are in bits 16-31, its bits 16-23 in bits 0-7.
 * kube-proxy's marks (0x4000, 0x8000) and other users of bits 12-15 do not
 * overlap the magic.
 *
 * A packet cannot bring a forged mark from an endpoint: crossing the veth
 * from the endpoint's network namespace into the node's scrubs skb->mark
 * (the kernel's skb_scrub_packet across namespaces), and to_container
 * reads the identity mark only in tunnel mode. The loopback mark is set
 * only by an endpoint's from_container on the packet it sends straight
 * to that endpoint's to_container (bpf_redirect, no stack in between). */
#ifndef APIARY_MARK_H
#define APIARY_MARK_H

#include "common.h"

#define MARK_MAGIC_IDENTITY 0x0F00
#define MARK_MAGIC_MASK 0x0F00
/* The loopback mark: from_container sends a hairpinned packet (lib/lb.h)
 * back to its own endpoint with this mark, so that to_container lets it
 * in as already decided. The whole mark is compared. */
#define MARK_MAGIC_LOOPBACK 0x0E00

/* identity_mark returns the mark carrying identity id. */
static __always_inline __u32 identity_mark(__u32 id)
{
	return ((id & 0xFFFF) << 16) | MARK_MAGIC_IDENTITY | ((id >> 16) & 0xFF);
}

/* mark_identity returns the identity a mark carries, or 0 when the mark
 * is no identity mark. */
static __always_inline __u32 mark_identity(__u32 mark)
{
	if ((mark & MARK_MAGIC_MASK) != MARK_MAGIC_IDENTITY)
		return 0;
	return (mark >> 16) | ((mark & 0xFF) << 16);
}

#endif /* APIARY_MARK_H */
