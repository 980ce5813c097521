package main

import (
	"context"
	"fmt"
	"strings"
)

// stepGlobal: calls reach both clusters' rebel-bases.
func (w *walkthrough) stepGlobal(context.Context) error {
	fmt.Fprintf(w.l.out, "1. global: %d calls from %s/x-wing-0 to %s (curl rebel-base)\n", gsvcCalls, gsvcNamespace, w.frontend())
	t := w.calls(gsvcCalls)
	if t.sample != "" {
		fmt.Fprintf(w.l.out, "  an answer: %s\n", t.sample)
	}
	return w.check("global", t, w.local, w.remote)
}

// stepAffinity: with affinity local, only the local cluster answers.
func (w *walkthrough) stepAffinity(ctx context.Context) error {
	w.affinity = "local"
	fmt.Fprintf(w.l.out, "2. affinity local: %s's Service annotated service.cilium.io/affinity: local; %d calls\n", w.local.name, gsvcStepCalls)
	if err := w.writeService(w.local); err != nil {
		return err
	}
	if err := w.waitBackends(ctx, w.ips(w.local)); err != nil {
		return fmt.Errorf("affinity local: %w", err)
	}
	return w.check("affinity local", w.calls(gsvcStepCalls), w.local)
}

// stepFailover: the local rebel-bases deleted, the remote ones answer.
func (w *walkthrough) stepFailover(ctx context.Context) error {
	fmt.Fprintf(w.l.out, "3. failover: %s's rebel-base pods deleted (servers stopped, endpoints deleted, the EndpointSlice emptied); %d calls\n", w.local.name, gsvcStepCalls)
	if err := w.deleteBases(ctx, w.local); err != nil {
		return err
	}
	if err := w.writeService(w.local); err != nil {
		return err
	}
	if err := w.waitBackends(ctx, w.ips(w.remote)); err != nil {
		return fmt.Errorf("failover: %w", err)
	}
	n := w.xwing.node
	if out, err := w.l.cli(n, "service", "list"); err == nil {
		fmt.Fprintf(w.l.out, "$ apiary --socket %s service list\n%s", dir(n.name, "apiary.sock"), out)
	}
	return w.check("failover", w.calls(gsvcStepCalls), w.remote)
}

// stepBack: new local rebel-bases (the Deployment's new pods), affinity
// local keeps to them again.
func (w *walkthrough) stepBack(ctx context.Context) error {
	if err := w.addBases(ctx, w.local); err != nil {
		return err
	}
	var pods []string
	for _, po := range w.bases[w.local] {
		pods = append(pods, po.String())
	}
	fmt.Fprintf(w.l.out, "4. back: new rebel-base pods in %s (%s) in the EndpointSlice; %d calls\n", w.local.name, strings.Join(pods, ", "), gsvcStepCalls)
	if err := w.writeService(w.local); err != nil {
		return err
	}
	if err := w.waitBackends(ctx, w.ips(w.local)); err != nil {
		return fmt.Errorf("back: %w", err)
	}
	return w.check("back", w.calls(gsvcStepCalls), w.local)
}
