// Package multihost holds sandox's multi-host chaos test (issue 14): two
// Docker engines on one machine play two hosts (the machine's engine and a
// second dockerd that build/scripts/engine2.sh starts), a three-node NATS
// cluster in operator mode carries the bus, and one orchestrator worker per
// host runs as its own process. While sandboxes are created and used, the
// test SIGKILLs one NATS node and one worker, restarts the worker, and then
// checks that every sandbox exists once, on one host, that every batch got
// its observations or a typed error, that ending the groups leaves nothing
// on either engine, and that the audit log shows every command once.
//
// It is its own package so that `go test ./...` runs it beside the large
// integration package. Without the second engine's socket it skips, unless
// CI is set, where it fails.
package multihost
