// Package egressnet isolates sandboxes by their egress policy: no network,
// an allowlist proxy, or a bridge of open egress with inter-container
// traffic off (Isolation), and spreads the sandboxes with open egress over
// as many bridges as they fill (Shards), on an engine that can plan
// networks (runtime.EgressRuntime).
package egressnet
