// Package api serves the agent's REST API: HTTP with JSON bodies on a
// unix socket (--socket-path), which the apiary CLI and package client
// talk to.
//
// The api-server cell owns the socket and the HTTP server. Other cells add
// endpoints by providing a Handler into the "api-handlers" value group
// (see HandlerOut); patterns are those of net/http.ServeMux ("GET
// /v1/endpoint/{id}"). Built in are GET /v1/healthz, /v1/hive,
// /v1/controllers and /v1/version. Every error, including unknown paths
// and wrong methods, is a JSON body {"error": "..."} with a fitting status
// code; WriteJSON and WriteError help handler authors do the same.
//
// Lists are paged (?limit=, ?continue=): ParseListQuery, ContinueToken
// and WriteList, which encodes a page item by item, so a list costs a
// page of memory per request. The server bounds every connection:
// --api-read-header-timeout, --api-read-body-timeout, --api-write-timeout
// (Handler.Streaming exempts endpoints that stream), --api-idle-timeout,
// and --api-max-connections, at which the connection waiting longest on
// its client is closed, or a new one refused with 503 when all are
// busy. docs/api.md describes both for users.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package api
