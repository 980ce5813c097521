// Command identitybench measures identity allocation against a real
// (embedded) etcd server: an agent allocating N distinct label sets
// through identity.Cell (lock, reference lookup, CreateOnly of the
// master, reference on the session lease — every step of a real
// allocation), a second agent allocating the same label sets (the
// existing-identity path), and next to them N raw CreateOnly writes
// through the same kvstore backend, the floor of one write per id.
//
// Run it with:
//
//	cd hack/bench && go run ./cmd/identitybench [-sets 10000] [-workers 32]
//
// It is in a Go module of its own: it may import any package of apiary and
// the peers it is compared with (Cilium, go.uber.org/fx,
// github.com/cilium/hive, client-go), which apiary's own module never
// imports (docs/design.md, Layers).
package main
