// Package monitor fans the datapath's events (drops, policy verdicts and
// traces of forwarded packets from the events ring buffer, package
// datapath/maps/eventsmap) out to any number of subscribers (apiary
// monitor's streams, the Hubble observer of datapath/hubble), each event
// enriched with both identities' labels. One goroutine reads the ring buffer (Run); every subscriber
// has a bounded buffer, and a subscriber that falls behind loses events
// and is told how many (Subscription.TakeLost), so a slow reader never
// slows the ring buffer's reader nor the other subscribers.
//
// The monitorcell package serves the subscriptions as GET /v1/monitor,
// which `apiary monitor` prints (docs/design.md, Flow 3: pod -> endpoint
// -> identity: the drops of the
// endpoint programs become visible to the operator).
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package monitor
