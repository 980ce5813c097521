// Package eventsmap reads the programs' events ring buffer: drop and
// policy-verdict records decoded into Event values, which the monitor
// streams to `apiary monitor`.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package eventsmap
