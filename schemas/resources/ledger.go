package resources

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// Ledger is what has been handed out on one host, for admission control:
// the resolved limits of each admitted sandbox, by sandbox id. It is a plain
// value that encodes to JSON, so that orchestrator workers can share it in a
// key-value entry updated with compare-and-set. It is not safe for
// concurrent use.
type Ledger struct {
	Allocations map[string]schemas.ResolvedResources `json:"allocations"`
}

// Admit records r as the allocation of sandbox id if it fits in what the
// other sandboxes leave free of host, and refuses it otherwise. Admitting an
// id again replaces its allocation, so a retried update is harmless.
//
// CPU and memory may be granted up to overcommit times the host's capacity
// (an overcommit of 1 or less, or NaN, means none); disk and memory
// bandwidth never exceed the host's. A limit of 0 (unlimited) counts as 0,
// so an unlimited sandbox always fits and reserves nothing; so does any
// resource whose host capacity is 0 (unknown). Only enforced memory
// bandwidth counts. The cpuset and PIDs are not checked: pinning shares
// cores rather than reserving them.
//
// A sandbox that does not fit is refused with a *schemas.Error with
// CodeResourceExhausted naming, for each resource that does not fit, what
// was asked, what is free and the capacity:
//
//	memory: asked 16.0 GiB, 3.2 GiB free of 23.4 GiB (overcommit 1.0)
func (l *Ledger) Admit(id string, r schemas.ResolvedResources, host Host, overcommit float64) error {
	if !(overcommit > 1) {
		overcommit = 1
	}
	used := l.used(id, true)
	checks := []struct {
		name                  string
		asked, used, capacity int64
		overcommit            float64
		format                func(int64) string
	}{
		{"cpu", r.NanoCPUs, used.NanoCPUs, int64(host.CPUs) * 1_000_000_000, overcommit, formatNanoCPUs},
		{"memory", r.MemoryBytes, used.MemoryBytes, host.MemoryBytes, overcommit, FormatBytes},
		{"disk", r.DiskBytes, used.DiskBytes, host.DiskBytes, 1, FormatBytes},
		{"memory bandwidth", enforcedBandwidth(r), used.MemoryBandwidthBytes, host.MemoryBandwidthBytes, 1, formatBandwidth},
	}
	var problems []string
	for _, c := range checks {
		if c.asked <= 0 || c.capacity <= 0 {
			continue
		}
		limit := scale(c.capacity, c.overcommit)
		free := max(limit-c.used, 0)
		if c.asked <= free {
			continue
		}
		p := fmt.Sprintf("%s: asked %s, %s free of %s", c.name, c.format(c.asked), c.format(free), c.format(limit))
		if c.name == "cpu" || c.name == "memory" {
			p += " (overcommit " + formatOvercommit(overcommit) + ")"
		}
		problems = append(problems, p)
	}
	if len(problems) > 0 {
		return schemas.Errorf(schemas.CodeResourceExhausted, "sandbox %q does not fit: %s", id, strings.Join(problems, "; "))
	}
	if l.Allocations == nil {
		l.Allocations = make(map[string]schemas.ResolvedResources)
	}
	l.Allocations[id] = r
	return nil
}

// Release forgets the allocation of sandbox id, if there is one.
func (l *Ledger) Release(id string) { delete(l.Allocations, id) }

// Used returns the sums of the allocations: NanoCPUs, MemoryBytes,
// DiskBytes, PIDs, and MemoryBandwidthBytes of the enforced bandwidths
// only. CPUSet and MemoryBandwidthEnforced are left empty.
func (l Ledger) Used() schemas.ResolvedResources { return l.used("", false) }

// used sums the allocations, skipping that of sandbox except if skip.
func (l Ledger) used(except string, skip bool) schemas.ResolvedResources {
	var u schemas.ResolvedResources
	for id, r := range l.Allocations {
		if skip && id == except {
			continue
		}
		u.NanoCPUs = add(u.NanoCPUs, r.NanoCPUs)
		u.MemoryBytes = add(u.MemoryBytes, r.MemoryBytes)
		u.DiskBytes = add(u.DiskBytes, r.DiskBytes)
		u.MemoryBandwidthBytes = add(u.MemoryBandwidthBytes, enforcedBandwidth(r))
		u.PIDs = add(u.PIDs, r.PIDs)
	}
	return u
}

func enforcedBandwidth(r schemas.ResolvedResources) int64 {
	if !r.MemoryBandwidthEnforced {
		return 0
	}
	return r.MemoryBandwidthBytes
}

// add adds non-negative amounts (a negative one counts as 0), saturating
// at math.MaxInt64.
func add(a, b int64) int64 {
	b = max(b, 0)
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// scale returns capacity * overcommit, saturating at math.MaxInt64.
func scale(capacity int64, overcommit float64) int64 {
	if overcommit == 1 {
		return capacity
	}
	f := float64(capacity) * overcommit
	if f >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(f)
}

func formatNanoCPUs(n int64) string { return cores((n + 500_000) / 1_000_000) }

func formatOvercommit(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.Contains(s, ".") && !strings.ContainsAny(s, "eI") {
		s += ".0"
	}
	return s
}
