package kvstore

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiary-net/apiary/kvstore/layout"
)

// history notices that etcd went back in time: restored from an older
// snapshot, started again with an empty data directory, or replaced by
// another cluster behind the same endpoints. Revisions then start again
// below the ones the backend has seen, so a watch resuming from its last
// revision would skip every key written below it, and leases granted
// before may be unknown.
//
// The signs, each checked within one epoch (the time between two such
// events):
//   - a linearizable response (a read or a write) carries a revision lower
//     than one seen before the request was sent. etcd guarantees that such
//     a response reflects everything committed before the request, so a
//     lower revision cannot come from a healthy cluster, not even from a
//     lagging member;
//   - a response comes from a cluster with another id;
//   - a member's raft term or committed index, which it keeps on disk and
//     never lowers, is lower than before: it was restored, even if its new
//     revisions have meanwhile overtaken the old ones.
//
// When one is seen, a new epoch starts: watchers list their prefix again
// and emit the differences, session leases are replaced (their keys are
// reported as expired, so stores write them again) and the lock session is
// dropped.
type history struct {
	log     *slog.Logger
	metrics *Metrics
	onLost  func(reason string)

	mu       sync.Mutex
	epoch    uint64
	changed  chan struct{} // closed when epoch ends
	cluster  uint64
	revision int64 // the highest revision seen in this epoch
	members  map[uint64]raftPosition
}

// raftPosition is where a member's raft log was when it last answered.
type raftPosition struct{ term, index uint64 }

// historyMark is what was known before a request was sent.
type historyMark struct {
	epoch    uint64
	revision int64
}

func newHistory(log *slog.Logger, metrics *Metrics, onLost func(reason string)) *history {
	return &history{
		log: log, metrics: metrics, onLost: onLost,
		changed: make(chan struct{}),
		members: map[uint64]raftPosition{},
	}
}

// mark returns what is known now; take it before sending a request whose
// response is checked with linearizable or member.
func (h *history) mark() historyMark {
	h.mu.Lock()
	defer h.mu.Unlock()
	return historyMark{epoch: h.epoch, revision: h.revision}
}

// current returns the epoch and a channel closed when it ends.
func (h *history) current() (historyMark, <-chan struct{}) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return historyMark{epoch: h.epoch, revision: h.revision}, h.changed
}

// linearizable checks the header of a linearizable response to a request
// sent after m was taken.
func (h *history) linearizable(m historyMark, hdr *pb.ResponseHeader) {
	if hdr == nil {
		return
	}
	h.mu.Lock()
	reason := h.clusterChangedLocked(m, hdr)
	if reason == "" && m.epoch == h.epoch && hdr.Revision < m.revision {
		reason = fmt.Sprintf("revision %d is lower than revision %d seen before", hdr.Revision, m.revision)
	}
	h.recordLocked(m, hdr, reason)
	h.mu.Unlock()
	h.report(reason)
}

// seen records the header of a response that need not be linearizable
// (a watch response, served by whichever member the stream is on): its
// revision was committed, so later linearizable responses cannot be lower.
func (h *history) seen(m historyMark, hdr *pb.ResponseHeader) {
	if hdr == nil {
		return
	}
	h.mu.Lock()
	reason := h.clusterChangedLocked(m, hdr)
	h.recordLocked(m, hdr, reason)
	h.mu.Unlock()
	h.report(reason)
}

// member checks a member's status: its raft term and committed index
// never go down unless it was restored.
func (h *history) member(m historyMark, st *clientv3.StatusResponse) {
	if st == nil || st.Header == nil {
		return
	}
	id, now := st.Header.MemberId, raftPosition{term: st.RaftTerm, index: st.RaftIndex}
	h.mu.Lock()
	reason := h.clusterChangedLocked(m, st.Header)
	if before, ok := h.members[id]; reason == "" && ok && m.epoch == h.epoch && now.index > 0 &&
		(now.term < before.term || now.index < before.index) {
		reason = fmt.Sprintf("member %x is at raft term %d index %d, it was at term %d index %d",
			id, now.term, now.index, before.term, before.index)
	}
	// A status header carries the member's applied revision, which may
	// lag behind: record the cluster only.
	h.recordLocked(m, &pb.ResponseHeader{ClusterId: st.Header.ClusterId}, reason)
	if now.index > 0 && (reason != "" || m.epoch == h.epoch) {
		before := h.members[id]
		h.members[id] = raftPosition{term: max(before.term, now.term), index: max(before.index, now.index)}
	}
	h.mu.Unlock()
	h.report(reason)
}

// clusterChangedLocked compares the cluster of a response to a request
// sent in this epoch with the one seen before.
func (h *history) clusterChangedLocked(m historyMark, hdr *pb.ResponseHeader) string {
	if m.epoch == h.epoch && h.cluster != 0 && hdr.ClusterId != 0 && hdr.ClusterId != h.cluster {
		return fmt.Sprintf("cluster id changed from %x to %x", h.cluster, hdr.ClusterId)
	}
	return ""
}

// recordLocked records hdr; with a reason, it starts a new epoch from hdr.
func (h *history) recordLocked(m historyMark, hdr *pb.ResponseHeader, reason string) {
	switch {
	case reason != "":
		h.epoch++
		close(h.changed)
		h.changed = make(chan struct{})
		h.revision = hdr.Revision
		h.cluster = hdr.ClusterId
		h.members = map[uint64]raftPosition{}
	case m.epoch == h.epoch:
		if h.cluster == 0 {
			h.cluster = hdr.ClusterId
		}
		h.revision = max(h.revision, hdr.Revision)
	}
}

// report logs a new epoch and runs onLost.
func (h *history) report(reason string) {
	if reason == "" {
		return
	}
	h.metrics.historyLost()
	h.log.Warn("etcd went back in time: listing every watched prefix again and renewing the session leases",
		"reason", reason)
	h.onLost(reason)
}

// historyVerifyTimeout bounds the read that checks a suspicion.
const historyVerifyTimeout = 5 * time.Second

// historyVerifier runs one linearizable read at a time to check a
// suspicion (a watch reporting a revision below its own).
type historyVerifier struct{ running atomic.Bool }

// verifyHistory reads from etcd, linearizably, to check whether it went
// back in time; it returns at once and does nothing if a check runs.
func (e *etcdBackend) verifyHistory() {
	if !e.verifier.running.CompareAndSwap(false, true) {
		return
	}
	if !e.spawn(func() {
		defer e.verifier.running.Store(false)
		ctx, cancel := context.WithTimeout(e.ctx, historyVerifyTimeout)
		defer cancel()
		m := e.hist.mark()
		resp, err := e.client.Get(ctx, layout.HeartbeatKey, clientv3.WithCountOnly())
		if err == nil {
			e.hist.linearizable(m, resp.Header)
		}
	}) {
		e.verifier.running.Store(false)
	}
}
