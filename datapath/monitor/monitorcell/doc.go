// Package monitorcell wires the datapath monitor (package
// datapath/monitor) into the agent: at start it opens the events ring
// buffer pinned under the loader's --bpf-root and reads it in one
// goroutine, with identity labels from the identity cache; GET
// /v1/monitor streams the events to each client as JSON lines
// (`apiary monitor`). Stopping the cell ends every stream.
//
// It may import packages of cells, kvstore, policy and datapath and
// package bpf, nothing of clustermesh (docs/design.md, Layers).
package monitorcell
