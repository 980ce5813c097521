// Package celltest starts one cell, or a few, in a test: a hive with a
// test logger, started before the test body and stopped in t.Cleanup.
//
//	var srv api.Server
//	celltest.Start(t, api.Cell, celltest.Capture(&srv))
//
// Packages using it should run goleak.VerifyTestMain: the hive's stop
// waits for every goroutine the cells started.
//
// It may import the standard library, third-party modules and other
// packages of cells, nothing of a later layer (docs/design.md, Layers).
package celltest
