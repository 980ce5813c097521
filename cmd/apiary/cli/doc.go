// Package cli is the apiary command line: it talks to apiary-agent over
// the REST API socket (--socket, default $APIARY_SOCK or
// /var/run/apiary/apiary.sock) through package client.
//
// `apiary status` shows one aligned line per subsystem, like `cilium
// status`; `apiary hive` shows the health of every module; `apiary
// version` shows the client's and the agent's versions. When the agent
// cannot be reached, a command prints one line saying so and exits 1.
//
// Imports: the API client and models, policy/policyapi and policy/simulate
// (simulate runs in the CLI), datapath/bpfsim (--datapath=bpf) and cobra;
// never etcd or the hive framework (hack/check-layers.sh: the CLI is a
// thin client of the API).
package cli
