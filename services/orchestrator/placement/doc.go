// Package placement chooses the host of each new sandbox among the live
// hosts of the cluster: a dry run of admission on each host's ledger, then
// the group's policy (spread or pack) and the free room, with the choice
// recorded in the group's record under compare-and-set so that two
// placements of one group never both miss the other (Placer).
//
// It also keeps the hosts themselves (Hosts): each worker's heartbeat of
// its host's record, and the sweep that marks lost a host not heard from
// for a while, judged on the sweeping worker's own clock.
package placement
