/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/* Fragments: the first fragment of a packet records its ports under the
 * fragment id; later fragments, which carry no L4 header, take them from
 * there. A later fragment whose first was not seen keeps ports 0. */
#ifndef APIARY_FRAG_H
#define APIARY_FRAG_H

#include "common.h"
#include "maps.h"
#include "parse.h"

static __always_inline void frag_track(struct flow *f)
{
	struct frag_key key = {
		.id = f->frag_id,
		.proto = f->proto,
		.family = f->family,
	};
	struct frag_value *v;

	if (likely(f->frag == FRAG_NONE))
		return;
	__builtin_memcpy(key.saddr, f->saddr, 16);
	__builtin_memcpy(key.daddr, f->daddr, 16);
	if (f->frag == FRAG_FIRST) {
		struct frag_value nv = {
			.sport = f->sport,
			.dport = f->dport,
			.icmp_type = f->icmp_type,
		};
		map_update_elem(&frags, &key, &nv, BPF_ANY);
		return;
	}
	v = map_lookup_elem(&frags, &key);
	if (v) {
		f->sport = v->sport;
		f->dport = v->dport;
		f->icmp_type = v->icmp_type;
	}
}

#endif /* APIARY_FRAG_H */
