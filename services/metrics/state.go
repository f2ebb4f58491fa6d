package metrics

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sandox/sandox/services/audit"
)

// stateCollector reads the buckets of hosts, groups and sandboxes at each
// scrape into gauges, and reports whether the exporter can read its
// sources (sandox_up). It is safe for concurrent use.
type stateCollector struct {
	js      jetstream.JetStream
	timeout time.Duration
	follow  *audit.Follower

	up, sandboxes, groups, poolSandboxes, poolSize, hosts *prometheus.Desc
	hostCPUs, hostMemory, hostAllocCPUs, hostAllocMemory  *prometheus.Desc
	hostSandboxes, streamSeq                              *prometheus.Desc
}

func newStateCollector(js jetstream.JetStream, timeout time.Duration, f *audit.Follower) *stateCollector {
	d := prometheus.NewDesc
	return &stateCollector{js: js, timeout: timeout, follow: f,
		up:              d("sandox_up", "Whether the exporter reads its source now (source audit_stream or buckets): 1 yes, 0 no.", []string{"source"}, nil),
		sandboxes:       d("sandox_sandboxes", "Recorded sandboxes, without the warm pools' unclaimed ones, by state and host.", []string{"state", "host"}, nil),
		groups:          d("sandox_groups", "Recorded groups, by state.", []string{"state"}, nil),
		poolSandboxes:   d("sandox_pool_sandboxes", "Pooled sandboxes, by pool (the group; empty for the system's default pool) and status (waiting to be claimed, or claimed).", []string{"group", "status"}, nil),
		poolSize:        d("sandox_pool_size", "The warm pool size a group's spec asks for on each worker, by group.", []string{"group"}, nil),
		hosts:           d("sandox_hosts", "Orchestrator hosts, by state (up, lost).", []string{"state"}, nil),
		hostCPUs:        d("sandox_host_cpus", "CPUs of a host's machine.", []string{"host"}, nil),
		hostMemory:      d("sandox_host_memory_bytes", "Memory of a host's machine.", []string{"host"}, nil),
		hostAllocCPUs:   d("sandox_host_allocated_cpus", "CPUs the admission ledger granted to a host's sandboxes.", []string{"host"}, nil),
		hostAllocMemory: d("sandox_host_allocated_memory_bytes", "Memory the admission ledger granted to a host's sandboxes.", []string{"host"}, nil),
		hostSandboxes:   d("sandox_host_sandboxes", "Sandboxes in a host's admission ledger.", []string{"host"}, nil),
		streamSeq:       d("sandox_audit_stream_sequence", "The stream sequence of the newest audit entry counted.", nil, nil),
	}
}

// Describe sends every metric's description.
func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.up, c.sandboxes, c.groups, c.poolSandboxes, c.poolSize, c.hosts,
		c.hostCPUs, c.hostMemory, c.hostAllocCPUs, c.hostAllocMemory, c.hostSandboxes, c.streamSeq} {
		ch <- d
	}
}

// Collect reads the buckets and sends the gauges. When they cannot be
// read it sends sandox_up{source="buckets"} 0 and no gauge of them.
func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	seq, err := c.follow.Status()
	gauge(c.up, boolValue(err == nil), "audit_stream")
	gauge(c.streamSeq, float64(seq))

	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := audit.ReadState(ctx, c.js)
	gauge(c.up, boolValue(err == nil), "buckets")
	if err != nil {
		return
	}
	counts := map[[2]string]int{}
	pools := map[[2]string]int{}
	for _, sb := range st.Sandboxes {
		switch {
		case !sb.Pooled:
			counts[[2]string{string(sb.State), sb.Host}]++
		case sb.ClaimedBy != "":
			pools[[2]string{sb.PoolGroup, "claimed"}]++
		default:
			pools[[2]string{sb.PoolGroup, "waiting"}]++
		}
	}
	for k, n := range counts {
		gauge(c.sandboxes, float64(n), k[0], k[1])
	}
	for k, n := range pools {
		gauge(c.poolSandboxes, float64(n), k[0], k[1])
	}
	groups := map[string]int{}
	for _, g := range st.Groups {
		groups[string(g.State)]++
		if g.Spec.Pool != nil && g.Spec.Pool.Size > 0 {
			gauge(c.poolSize, float64(g.Spec.Pool.Size), g.ID)
		}
	}
	for s, n := range groups {
		gauge(c.groups, float64(n), s)
	}
	hosts := map[string]int{}
	for _, h := range st.Hosts {
		hosts[string(h.State)]++
		gauge(c.hostCPUs, float64(h.CPUs), h.Name)
		gauge(c.hostMemory, float64(h.MemoryBytes), h.Name)
		gauge(c.hostAllocCPUs, float64(h.Allocated.NanoCPUs)/1e9, h.Name)
		gauge(c.hostAllocMemory, float64(h.Allocated.MemoryBytes), h.Name)
		gauge(c.hostSandboxes, float64(h.Sandboxes), h.Name)
	}
	for s, n := range hosts {
		gauge(c.hosts, float64(n), s)
	}
}

// boolValue is 1 for true, 0 for false.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
