// Package pool keeps a worker's warm pools (docs/pools.md): sandboxes
// created and started ahead of demand under pool ids, which a
// create_sandbox that fits claims instead of making a sandbox afresh.
//
// Each worker keeps a pool of the default shape (Config.Size) and one per
// group whose spec asks for one, following the group bucket. Pools refill
// in the background (Run), empty after their idle time, drain when their
// group ends, and the unclaimed pooled sandboxes of workers that died are
// reaped (Reap). The part decides which pooled sandbox a create gets
// (Claim); making, removing and handing over the sandboxes themselves is
// the orchestrator's, behind the Maker and Claimer interfaces.
package pool
