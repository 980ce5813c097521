// Package models holds the JSON documents of the agent's REST API: what
// the api-server and status cells write and what package client and the
// apiary CLI read. It has no behaviour beyond encoding, so the CLI can
// import it without pulling in the agent.
package models
