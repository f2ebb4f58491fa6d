package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/audit"
)

// usageCollector reads, at each scrape, the live use of every running
// sandbox with the request `sandox stats` and the dashboard make
// (schemas.SandboxStatsSubject, answered by the orchestrator from the
// container and the sandbox's executor), all at once and within wait, and
// sends it summed by group and, when perSandbox is set, by sandbox too. A
// sandbox that does not answer in time is counted in
// sandox_usage_sandboxes{read="no"} and left out of the sums. It is safe
// for concurrent use.
type usageCollector struct {
	nc         *nats.Conn
	js         jetstream.JetStream
	timeout    time.Duration
	wait       time.Duration
	perSandbox bool

	read                            *prometheus.Desc
	cpu, memory, disk, pids         *prometheus.Desc
	sbCPU, sbMemory, sbDisk, sbPIDs *prometheus.Desc
}

func newUsageCollector(nc *nats.Conn, js jetstream.JetStream, timeout, wait time.Duration, perSandbox bool) *usageCollector {
	d := prometheus.NewDesc
	g, s := []string{"group"}, []string{"group", "sandbox"}
	return &usageCollector{nc: nc, js: js, timeout: timeout, wait: wait, perSandbox: perSandbox,
		read:     d("sandox_usage_sandboxes", "Running sandboxes whose live use the last scrape asked for, by whether it was read in time (read yes or no).", []string{"read"}, nil),
		cpu:      d("sandox_group_cpu_percent", "Live CPU use of a group's running sandboxes, summed, in percent of one CPU.", g, nil),
		memory:   d("sandox_group_memory_bytes", "Live memory use of a group's running sandboxes, summed.", g, nil),
		disk:     d("sandox_group_disk_bytes", "Workspace disk use of a group's running sandboxes, summed.", g, nil),
		pids:     d("sandox_group_processes", "Processes of a group's running sandboxes, summed.", g, nil),
		sbCPU:    d("sandox_sandbox_cpu_percent", "Live CPU use of a running sandbox, in percent of one CPU (Options.UsageBySandbox).", s, nil),
		sbMemory: d("sandox_sandbox_memory_bytes", "Live memory use of a running sandbox (Options.UsageBySandbox).", s, nil),
		sbDisk:   d("sandox_sandbox_disk_bytes", "Workspace disk use of a running sandbox (Options.UsageBySandbox).", s, nil),
		sbPIDs:   d("sandox_sandbox_processes", "Processes of a running sandbox (Options.UsageBySandbox).", s, nil),
	}
}

// Describe sends every metric's description.
func (c *usageCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.read, c.cpu, c.memory, c.disk, c.pids, c.sbCPU, c.sbMemory, c.sbDisk, c.sbPIDs} {
		ch <- d
	}
}

// Collect asks for the live use of the running sandboxes and sends the
// gauges. It sends nothing when the buckets cannot be read
// (sandox_up{source="buckets"} says so).
func (c *usageCollector) Collect(ch chan<- prometheus.Metric) {
	if !c.nc.IsConnected() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	st, err := audit.ReadState(ctx, c.js)
	cancel()
	if err != nil {
		return
	}
	var running []schemas.SandboxStatus
	for _, sb := range st.Sandboxes {
		if sb.State == schemas.StateRunning && (!sb.Pooled || sb.ClaimedBy != "") {
			running = append(running, sb)
		}
	}
	ctx, cancel = context.WithTimeout(context.Background(), c.wait)
	defer cancel()
	uses := make([]*schemas.SandboxUsage, len(running))
	var wg sync.WaitGroup
	for i, sb := range running {
		wg.Go(func() {
			if u, err := askUsage(ctx, c.nc, sb.ID); err == nil {
				uses[i] = &u
			}
		})
	}
	wg.Wait()

	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	type sum struct{ cpu, memory, disk, pids float64 }
	groups := map[string]*sum{}
	read := 0
	for i, u := range uses {
		if u == nil {
			continue
		}
		read++
		group := running[i].GroupID
		g := groups[group]
		if g == nil {
			g = &sum{}
			groups[group] = g
		}
		g.cpu += u.CPUPercent
		g.memory += float64(u.MemoryBytes)
		g.disk += float64(u.DiskBytes)
		g.pids += float64(u.PIDs)
		if c.perSandbox {
			id := running[i].ID
			gauge(c.sbCPU, u.CPUPercent, group, id)
			gauge(c.sbMemory, float64(u.MemoryBytes), group, id)
			gauge(c.sbDisk, float64(u.DiskBytes), group, id)
			gauge(c.sbPIDs, float64(u.PIDs), group, id)
		}
	}
	gauge(c.read, float64(read), "yes")
	gauge(c.read, float64(len(running)-read), "no")
	for group, g := range groups {
		gauge(c.cpu, g.cpu, group)
		gauge(c.memory, g.memory, group)
		gauge(c.disk, g.disk, group)
		gauge(c.pids, g.pids, group)
	}
}

// askUsage asks the orchestrator for sandbox id's live use
// (schemas.SandboxStatsSubject) and waits for the answer until ctx ends.
func askUsage(ctx context.Context, nc *nats.Conn, id string) (schemas.SandboxUsage, error) {
	msg, err := nc.RequestWithContext(ctx, schemas.SandboxStatsSubject(id), nil)
	if err != nil {
		return schemas.SandboxUsage{}, fmt.Errorf("live use of %s: %w", id, err)
	}
	var reply schemas.StatusReply
	if err := json.Unmarshal(msg.Data, &reply); err != nil {
		return schemas.SandboxUsage{}, fmt.Errorf("live use of %s: %w", id, err)
	}
	if reply.Error != nil {
		return schemas.SandboxUsage{}, fmt.Errorf("live use of %s: %w", id, reply.Error)
	}
	if reply.Stats == nil {
		return schemas.SandboxUsage{}, fmt.Errorf("live use of %s: the answer holds no stats", id)
	}
	return *reply.Stats, nil
}
