// Package agent composes the cells of apiary-agent. It is the only place
// that lists the whole agent: cmd/apiary-agent runs Agent, and tests
// populate it to catch missing providers.
//
// Infrastructure holds the cells every agent needs (state dir, REST API,
// metrics, status). Later subsystems (kvstore, ipcache, policy, datapath,
// clustermesh) join Agent after it.
package agent
