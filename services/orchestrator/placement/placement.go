package placement

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Placer chooses the host of each new sandbox among the live hosts, from
// their records and ledgers in the store. It is safe for concurrent use.
type Placer struct {
	store *state.Store
	host  string
	age   time.Duration
}

// New returns the placer of a worker on host, which counts as live the
// hosts heard from within age.
func New(store *state.Store, host string, age time.Duration) *Placer {
	return &Placer{store: store, host: host, age: age}
}

// candidate is a live host a create could go to, as placement sees it.
type candidate struct {
	name string
	// free is the share of the host's CPU and memory the ledger leaves
	// free, from 0 to 2 (one for each).
	free float64
	// group counts the group's sandboxes on the host.
	group int
	// refusal says why the sandbox does not fit there; nil when it does.
	refusal error
}

// On chooses the host for sandbox spec of group g: of the live hosts
// whose admission (a dry run on the host's ledger, against its recorded
// capacity) takes it, the first by the group's placement policy. With
// spread (the default), the host with the fewest of the group's
// sandboxes, then the most free capacity; with pack, the most of the
// group's sandboxes, then the most free capacity. When no host fits, the
// error is CodeResourceExhausted naming each host's reason.
//
// The choice is made inside a compare-and-set of the group's record and
// written there (GroupStatus.Placing), so that two placements of the
// group, on any workers, never both count without the other.
func (p *Placer) On(ctx context.Context, hosts map[string]schemas.HostStatus, g schemas.GroupStatus, spec schemas.SandboxSpec) (string, error) {
	var host string
	_, err := p.store.UpdateGroup(ctx, g.ID, func(cur *schemas.GroupStatus) error {
		prunePlacing(cur, time.Now())
		var err error
		if host, err = p.choose(ctx, hosts, *cur, spec); err != nil {
			return err
		}
		if cur.Placing == nil {
			cur.Placing = map[string]schemas.Placed{}
		}
		cur.Placing[spec.ID] = schemas.Placed{Host: host, At: time.Now().UTC()}
		return nil
	})
	return host, err
}

// placingFor is how long a placement counts while its create is under way:
// longer than a create takes, a forward to another host included.
const placingFor = 2 * time.Minute

// prunePlacing forgets the placements of g whose sandboxes g lists (their
// creates finished) or that are older than placingFor (failed creates).
func prunePlacing(g *schemas.GroupStatus, now time.Time) {
	for id, p := range g.Placing {
		if slices.Contains(g.Sandboxes, id) || now.Sub(p.At) > placingFor {
			delete(g.Placing, id)
		}
	}
}

// choose is On's choice among hosts for spec in g as recorded.
func (p *Placer) choose(ctx context.Context, hosts map[string]schemas.HostStatus, g schemas.GroupStatus, spec schemas.SandboxSpec) (string, error) {
	req, err := resources.Parse(resources.Merge(g.Spec.Compute, spec.Compute))
	if err != nil {
		return "", err
	}
	onHost := p.groupPerHost(ctx, g, spec.ID)
	var cands []candidate
	for name, h := range hosts {
		c := candidate{name: name, group: onHost[name]}
		capacity := resources.Host{CPUs: h.CPUs, MemoryBytes: h.MemoryBytes, DiskBytes: h.DiskBytes}
		l, err := p.store.ReadLedger(ctx, state.LedgerKey(h.EngineID))
		if err != nil {
			return "", err
		}
		c.free = share(capacity.MemoryBytes, l.Used().MemoryBytes) + share(int64(capacity.CPUs)*1_000_000_000, l.Used().NanoCPUs)
		r, err := resources.Resolve(req, capacity)
		if err == nil {
			err = l.Admit(spec.ID, r, capacity, g.Spec.Overcommit)
		}
		c.refusal = err
		cands = append(cands, c)
	}
	pack := g.Spec.Placement == schemas.PlacementPack
	slices.SortFunc(cands, func(a, b candidate) int {
		byGroup := cmp.Compare(a.group, b.group)
		if pack {
			byGroup = -byGroup
		}
		return cmp.Or(byGroup, cmp.Compare(b.free, a.free), cmp.Compare(a.name, b.name))
	})
	var reasons []string
	for _, c := range cands {
		if c.refusal == nil {
			return c.name, nil
		}
		var se *schemas.Error
		if !errors.As(c.refusal, &se) || se.Code != schemas.CodeResourceExhausted {
			return "", c.refusal
		}
		reasons = append(reasons, fmt.Sprintf("host %s: %s", c.name, se.Message))
	}
	if len(reasons) == 0 {
		return "", schemas.Errorf(schemas.CodeUnavailable, "sandbox %s: no orchestrator host is up", spec.ID)
	}
	return "", schemas.Errorf(schemas.CodeResourceExhausted, "sandbox %s fits on no host: %s", spec.ID, strings.Join(reasons, "; "))
}

// share is the part of capacity that used leaves free, 1 when the
// capacity is unknown.
func share(capacity, used int64) float64 {
	if capacity <= 0 {
		return 1
	}
	return float64(max(capacity-used, 0)) / float64(capacity)
}

// groupPerHost counts group g's sandboxes on each host: those it lists,
// and those being created (g.Placing, pruned by On) but placing, the
// one being placed.
func (p *Placer) groupPerHost(ctx context.Context, g schemas.GroupStatus, placing string) map[string]int {
	n := map[string]int{}
	for id, p := range g.Placing {
		if id != placing {
			n[p.Host]++
		}
	}
	for _, id := range g.Sandboxes {
		st, _, err := p.store.Sandbox(ctx, id)
		if err != nil {
			continue
		}
		host := st.Host
		if host == "" {
			host = p.host
		}
		n[host]++
	}
	return n
}

// here reports whether this worker's host is the only live one (or
// none is recorded), so that a create is placed here without a dry run.
func (p *Placer) here(hosts map[string]schemas.HostStatus) bool {
	_, mine := hosts[p.host]
	return len(hosts) == 0 || len(hosts) == 1 && mine
}

// LiveHosts lists the hosts a new sandbox can be placed on, by name: up
// and heard from within the placer's age.
func (p *Placer) LiveHosts(ctx context.Context) (map[string]schemas.HostStatus, error) {
	return p.store.LiveHosts(ctx, p.age)
}

// Place chooses the host of a new sandbox spec in group g: this worker's
// own when it is the only live host, else by On.
func (p *Placer) Place(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec) (string, error) {
	hosts, err := p.LiveHosts(ctx)
	if err != nil {
		return "", err
	}
	if p.here(hosts) {
		return p.host, nil
	}
	return p.On(ctx, hosts, g, spec)
}
