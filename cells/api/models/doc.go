// Package models holds the JSON documents of the agent's REST API: what
// the api-server and status cells write and what package client and the
// apiary CLI read. It has no behaviour beyond encoding, so the CLI can
// import it without pulling in the agent.
//
// It is a leaf (docs/design.md, Layers): any package may import it, and it
// may import only the standard library, third-party modules and the other
// leaves (cells/localnode/cluster, cells/api/models, cells/api/client and
// cells/version).
//
// It keeps NamedPort, the API's wire form (lower-case keys) of
// policyapi.NamedPort, because a leaf may not import the policy packages.
package models
