// Package state keeps what every orchestrator worker shares in JetStream:
// the group, sandbox and host records and each engine's resource ledger
// (Store), the streams and buckets they live in (Setup), and the clock on
// which a worker judges other hosts' silence. A Store is safe for
// concurrent use.
package state
