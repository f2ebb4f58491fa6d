package metrics

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
)

// TestSandboxUsage records running sandboxes of two groups, a paused one
// and an unclaimed pooled one, answers the stats request
// (schemas.SandboxStatsSubject) as the orchestrator does for all but one
// (which answers past the wait, Options.UsageWait), and checks the sums
// by group, the counts read and not read, the series by sandbox only with
// Options.UsageBySandbox, and that nothing is asked with Options.NoUsage.
func TestSandboxUsage(t *testing.T) {
	s := startSystem(t)
	running := func(id, group string) schemas.SandboxStatus {
		return schemas.SandboxStatus{ID: id, GroupID: group, State: schemas.StateRunning, Host: "host-a"}
	}
	s.put(t, schemas.SandboxBucket, "sb-1", running("sb-1", "research"))
	s.put(t, schemas.SandboxBucket, "sb-2", running("sb-2", "research"))
	s.put(t, schemas.SandboxBucket, "sb-3", running("sb-3", "build"))
	s.put(t, schemas.SandboxBucket, "sb-slow", running("sb-slow", "build"))
	paused := running("sb-paused", "build")
	paused.State = schemas.StatePaused
	s.put(t, schemas.SandboxBucket, "sb-paused", paused)
	pooled := running("sb-pooled", "build")
	pooled.Pooled = true
	s.put(t, schemas.SandboxBucket, "sb-pooled", pooled)

	use := map[string]schemas.SandboxUsage{
		"sb-slow": {CPUPercent: 1000},
		"sb-1":    {CPUPercent: 12.5, MemoryBytes: 100 << 20, DiskBytes: 1 << 20, PIDs: 3},
		"sb-2":    {CPUPercent: 50, MemoryBytes: 28 << 20, DiskBytes: 3 << 20, PIDs: 5},
		"sb-3":    {CPUPercent: 200, MemoryBytes: 1 << 30, DiskBytes: 0, PIDs: 40},
	}
	var mu sync.Mutex
	asked := map[string]bool{}
	sub, err := s.nc.Subscribe(schemas.SandboxStatsSubject("*"), func(m *nats.Msg) {
		id := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
		mu.Lock()
		asked[id] = true
		mu.Unlock()
		var reply schemas.StatusReply
		if u, ok := use[id]; ok {
			u.SandboxID = id
			reply.Stats = &u
		} else {
			reply.Error = schemas.Errorf(schemas.CodeConflict, "sandbox %q is not running", id)
		}
		data, _ := json.Marshal(reply)
		if id != "sb-slow" {
			_ = m.Respond(data)
			return
		}
		time.AfterFunc(time.Second, func() { _ = m.Respond(data) }) // past the exporter's wait
	})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	require.NoError(t, s.nc.Flush())

	exp, err := New(s.nc, Options{UsageWait: 500 * time.Millisecond})
	require.NoError(t, err)
	g := exp.Gatherer()
	start := time.Now()
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"sandox_group_cpu_percent", []string{"group", "research"}, 62.5},
		{"sandox_group_memory_bytes", []string{"group", "research"}, 128 << 20},
		{"sandox_group_disk_bytes", []string{"group", "research"}, 4 << 20},
		{"sandox_group_processes", []string{"group", "research"}, 8},
		{"sandox_group_cpu_percent", []string{"group", "build"}, 200},
		{"sandox_group_processes", []string{"group", "build"}, 40},
		{"sandox_usage_sandboxes", []string{"read", "yes"}, 3},
		{"sandox_usage_sandboxes", []string{"read", "no"}, 1},
	} {
		got := gather(t, g, c.name, c.labels...)
		require.True(t, got.found, "%s%v is exported", c.name, c.labels)
		assert.Equal(t, c.want, got.value, "%s%v", c.name, c.labels)
	}
	assert.Less(t, time.Since(start), 8*time.Second, "each gathering waits 500 ms at most for the slow sandbox")
	assert.False(t, gather(t, g, "sandox_sandbox_cpu_percent", "group", "research", "sandbox", "sb-1").found, "no series by sandbox unless asked")

	mu.Lock()
	assert.True(t, asked["sb-1"])
	assert.False(t, asked["sb-paused"], "a paused sandbox is not asked")
	assert.False(t, asked["sb-pooled"], "an unclaimed pooled sandbox is not asked")
	mu.Unlock()

	t.Run("not asked with NoUsage", func(t *testing.T) {
		mu.Lock()
		clear(asked)
		mu.Unlock()
		exp, err := New(s.nc, Options{NoUsage: true})
		require.NoError(t, err)
		g := exp.Gatherer()
		assert.False(t, gather(t, g, "sandox_usage_sandboxes", "read", "no").found)
		assert.False(t, gather(t, g, "sandox_group_memory_bytes", "group", "research").found)
		require.NoError(t, s.nc.Flush())
		mu.Lock()
		assert.Empty(t, asked, "no stats request was sent")
		mu.Unlock()
	})

	t.Run("by sandbox", func(t *testing.T) {
		exp, err := New(s.nc, Options{UsageWait: 500 * time.Millisecond, UsageBySandbox: true})
		require.NoError(t, err)
		got := gather(t, exp.Gatherer(), "sandox_sandbox_memory_bytes", "group", "research", "sandbox", "sb-2")
		require.True(t, got.found)
		assert.Equal(t, float64(28<<20), got.value)
	})
}
