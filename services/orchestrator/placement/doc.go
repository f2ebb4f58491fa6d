// Package placement chooses the host of each new sandbox among the live
// hosts of the cluster: a dry run of admission on each host's ledger, then
// the group's policy (spread or pack) and the free room, with the choice
// recorded in the group's record under compare-and-set so that two
// placements of one group never both miss the other.
package placement
