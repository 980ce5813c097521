package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apiary-net/apiary/policy/simulate"
)

// etcdRound kills the etcd of a cluster other than the scenario's
// (SIGKILL, as a crash), runs the cross-cluster queries (one side a pod
// of another cluster than the other) while it is down, starts it again
// on the same data, then measures, from the kill: when every agent has every remote
// cluster ready again, and when every cross-cluster query gives
// simulate's verdict again. A wrong verdict at any point is an error. It is what `demo --bench` prints after the lab's up time.
func (l *lab) etcdRound(ctx context.Context) error {
	if len(l.p.clusters) < 2 {
		return errors.New("the scenario has one cluster: no mesh to restart an etcd under")
	}
	c := l.p.clusters[1]
	cross := l.crossClusterQueries()
	if len(cross) == 0 {
		return errors.New("the scenario has no cross-cluster query")
	}
	fmt.Fprintf(l.out, "\nBench: etcd of %s killed and started again; %d cross-cluster queries\n", c.name, len(cross))
	start := time.Now()
	p := l.etcds[c]
	_ = p.cmd.Process.Kill()
	<-p.done
	downRight := allRight(cross)
	fmt.Fprintf(l.out, "  while it was down (%s): cross-cluster verdicts right: %v\n", time.Since(start).Round(time.Millisecond), downRight)
	if err := l.startEtcd(c); err != nil {
		return err
	}
	if err := l.waitEtcd(ctx, c); err != nil {
		return err
	}
	fmt.Fprintf(l.out, "  etcd of %s listening again after %s\n", c.name, time.Since(start).Round(time.Millisecond))
	var meshAt, verdictsAt time.Duration
	rounds, wrongRounds := 0, 0
	err := poll(ctx, 3*time.Minute, "the mesh and the cross-cluster verdicts after the etcd restart", func() (bool, error) {
		if meshAt == 0 && l.meshReady(ctx) {
			meshAt = time.Since(start)
		}
		if verdictsAt == 0 {
			rounds++
			if allRight(cross) {
				verdictsAt = time.Since(start)
			} else {
				wrongRounds++
			}
		}
		return meshAt > 0 && verdictsAt > 0, nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(l.out, "  every agent's mesh ready again: %s after the kill\n", meshAt.Round(time.Millisecond))
	fmt.Fprintf(l.out, "  cross-cluster verdicts right: %s after the kill (%d rounds, %d with a wrong verdict)\n",
		verdictsAt.Round(time.Millisecond), rounds, wrongRounds)
	if !downRight || wrongRounds > 0 {
		return errors.New("a cross-cluster verdict was wrong around the etcd restart")
	}
	return nil
}

// crossClusterQueries returns the queries between pods of two clusters.
func (l *lab) crossClusterQueries() []*query {
	var out []*query
	for _, q := range l.p.queries {
		if q.from.pod != nil && q.to.pod != nil && q.from.pod.cluster != q.to.pod.cluster {
			out = append(out, q)
		}
	}
	return out
}

// allRight runs the queries and reports whether each gave simulate's
// verdict.
func allRight(queries []*query) bool {
	for i, s := range runAll(queries) {
		if s.answered != (queries[i].result.Verdict == simulate.Allowed) {
			return false
		}
	}
	return true
}

// meshReady reports whether every agent has every remote cluster ready.
func (l *lab) meshReady(ctx context.Context) bool {
	for _, c := range l.p.clusters {
		for _, n := range c.nodes {
			cm, err := l.client[n].ClusterMesh(ctx)
			if err != nil {
				return false
			}
			for _, r := range cm.Clusters {
				if !r.Ready {
					return false
				}
			}
		}
	}
	return true
}
