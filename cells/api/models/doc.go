// Package models holds the JSON documents of the agent's REST API: what
// the api-server and status cells write and what package client and the
// apiary CLI read. It has no behaviour beyond encoding, so the CLI can
// import it without pulling in the agent.
//
// Imports: the standard library only. It is a leaf (hack/check-layers.sh):
// it may import only other leaves, never the policy packages, which is why
// it keeps NamedPort, the API's wire form (lower-case keys) of
// policyapi.NamedPort.
package models
