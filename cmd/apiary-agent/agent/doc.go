// Package agent composes the cells of apiary-agent. It is the only place
// that lists the whole agent: cmd/apiary-agent runs Agent, and tests
// populate it to catch missing providers.
//
// Infrastructure holds the cells every agent needs (state dir, REST API,
// metrics, status); ControlPlane, Datapath and ClusterMesh join Agent
// after it.
//
// It is a program: it may import any package of apiary (docs/design.md,
// Layers).
package agent
