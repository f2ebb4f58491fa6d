package dashboard

import (
	"cmp"
	"slices"
)

// Pool is one warm pool as the records show it: the pooled sandboxes kept
// for Group ("" is the system's default pool), how many wait to be claimed,
// how many were claimed and still run, and the size the group asks for on
// each worker.
type Pool struct {
	Group   string
	Size    int
	Waiting int
	Claimed int
	Workers []string
}

// Pools gathers the pooled sandboxes of st by pool, with the size each
// group's spec asks for; a group with a pool and no pooled sandbox yet is
// listed too.
func (st State) Pools() []Pool {
	byGroup := map[string]*Pool{}
	pool := func(group string) *Pool {
		p, ok := byGroup[group]
		if !ok {
			p = &Pool{Group: group}
			byGroup[group] = p
		}
		return p
	}
	for _, g := range st.Groups {
		if g.Spec.Pool != nil && g.Spec.Pool.Size > 0 {
			pool(g.ID).Size = g.Spec.Pool.Size
		}
	}
	for _, sb := range st.Sandboxes {
		if !sb.Pooled {
			continue
		}
		p := pool(sb.PoolGroup)
		if sb.ClaimedBy != "" {
			p.Claimed++
		} else {
			p.Waiting++
		}
		if sb.PoolWorker != "" && !slices.Contains(p.Workers, sb.PoolWorker) {
			p.Workers = append(p.Workers, sb.PoolWorker)
		}
	}
	out := make([]Pool, 0, len(byGroup))
	for _, p := range byGroup {
		slices.Sort(p.Workers)
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b Pool) int { return cmp.Compare(a.Group, b.Group) })
	return out
}
