package integration

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/internal/disks"
	"github.com/sandox/sandox/internal/poll"
	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// TestDiskLimit checks that a sandbox's disk limit bounds everything it can
// write: its workspace fills up with ENOSPC at the limit, the rest of its
// file system is read-only, and a neighbour is not harmed.
func TestDiskLimit(t *testing.T) {
	ctx := t.Context()
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-disk",
		ComputeResources: schemas.ComputeResources{Disk: "32MiB"},
		Sandboxes: []sdk.InitialSandbox{
			{ID: "it-disk-filler"},
			{ID: "it-disk-neighbour", SandboxOptions: sdk.SandboxOptions{
				ComputeResources: &schemas.ComputeResources{Disk: "64MiB"},
			}},
		},
	})
	filler, neighbour := group.Sandbox("it-disk-filler"), group.Sandbox("it-disk-neighbour")

	t.Run("the limit is resolved and recorded", func(t *testing.T) {
		require.Equal(t, int64(32<<20), filler.Status().Resources.DiskBytes, "disk bytes")
		require.NotEmpty(t, filler.Status().DiskDevice, "disk device in the status: want the loop device of the workspace")
	})

	t.Run("a relative disk resolves against the disks' file system", func(t *testing.T) {
		capacity, err := (&disks.Pool{Dir: env.disks}).Capacity()
		require.NoError(t, err)
		sb, err := group.CreateSandbox(ctx, "it-disk-relative", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{Disk: "0.5%"}})
		require.NoError(t, err)
		defer sb.End(ctx)
		require.Equal(t, int64(math.Round(float64(capacity)*0.005)), sb.Status().Resources.DiskBytes, "disk bytes, want 0.5%% of %d", capacity)
	})

	t.Run("a disk filler hits its limit with ENOSPC", func(t *testing.T) {
		obs := send(t, filler, `{"terminal_tools.run": {"args": {"command": "head -c 64M /dev/zero > /workspace/fill; echo size=$(stat -c %s /workspace/fill)", "timeout_seconds": 60}}}`)
		out := obs[0].Stdout
		require.Contains(t, out, "No space left on device", "want dd to stop with ENOSPC")
		require.NotNil(t, obs[0].ExitCode, "%q, want dd to stop with ENOSPC", out)
		require.Equal(t, 0, *obs[0].ExitCode, "%q, want dd to stop with ENOSPC", out)
		var size int64
		_, err := fmt.Sscanf(out[strings.LastIndex(out, "size="):], "size=%d", &size)
		require.NoError(t, err, "output %q", out)
		require.GreaterOrEqual(t, size, int64(30<<20), "file size, want nearly but not more than 32 MiB")
		require.LessOrEqual(t, size, int64(32<<20), "file size, want nearly but not more than 32 MiB")
		assert.True(t, hasLimitHit(obs[0], schemas.LimitDisk), "limits hit %+v after %q, want the full disk reported", obs[0].LimitsHit, out)
		u, err := filler.Stats(ctx)
		require.NoError(t, err)
		require.Equal(t, int64(32<<20), u.Limits.DiskBytes, "disk limit")
		require.GreaterOrEqual(t, u.DiskBytes, int64(30<<20), "disk use, want nearly 32 MiB")
		require.LessOrEqual(t, u.DiskBytes, int64(32<<20), "disk use, want nearly 32 MiB")
		obs = send(t, filler, `{"filesystem_tools.write_file": {"args": {"path": "more.txt", "content": "more"}}}`)
		require.NotNil(t, obs[0].Error, "%+v, want the write refused for space", obs[0])
		require.Contains(t, obs[0].Error.Message, "no space left on device")
	})

	t.Run("nothing outside the workspace is writable", func(t *testing.T) {
		obs := send(t, filler, `{"terminal_tools.run": {"args": {"command": "for p in / /etc /usr/local /home /var; do touch $p/x 2>&1; done; true"}}}`)
		require.Equal(t, 5, strings.Count(obs[0].Stdout, "Read-only file system"), "%q, want each of 5 writes refused as read-only", obs[0].Stdout)
	})

	t.Run("the neighbour is not harmed", func(t *testing.T) {
		obs := send(t, neighbour, `{"terminal_tools.run": {"args": {"command": "dd if=/dev/zero of=/workspace/f bs=1M count=16 status=none && echo wrote"}}}`)
		mustOK(t, obs[0])
		require.Contains(t, obs[0].Stdout, "wrote", "want 16 MiB written next to a full neighbour")
	})

	t.Run("freeing space lets the sandbox write again", func(t *testing.T) {
		obs := send(t, filler, `[
			{"tool": "filesystem_tools.delete_path", "args": {"path": "fill"}},
			{"tool": "filesystem_tools.write_file", "args": {"path": "again.txt", "content": "room again"}}
		]`)
		mustOK(t, obs[0])
		mustOK(t, obs[1])
	})
}

// TestOOMPolicies checks how a sandbox that runs out of memory is reported
// and handled under each OOM policy.
func TestOOMPolicies(t *testing.T) {
	ctx := t.Context()
	group := newGroup(t, sdk.GroupConfig{
		ID:               "it-oom",
		ComputeResources: schemas.ComputeResources{Memory: "128MiB"},
	})
	const hog = `python3 -c 'b=bytearray(512*1024*1024); print(len(b))'`

	t.Run("continue: the hog is killed and reported, the sandbox goes on", func(t *testing.T) {
		sb := startSandbox(t, group, "it-oom-continue", sdk.SandboxOptions{})
		events := subscribeEvents(t, sb.ID())
		obs := send(t, sb, fmt.Sprintf(`{"terminal_tools.run": {"args": {"command": %q, "timeout_seconds": 60}}}`, hog))
		require.NotNil(t, obs[0].ExitCode, "%+v, want the hog killed (exit 137)", obs[0])
		require.Equal(t, 137, *obs[0].ExitCode, "%+v, want the hog killed", obs[0])
		assert.True(t, hasLimitHit(obs[0], schemas.LimitMemory), "limits hit %+v, want the OOM kill in the hog's observation", obs[0].LimitsHit)
		answered := time.Now()
		ev := waitEvent(t, events, schemas.EventOOMKilled)
		t.Logf("oom_killed event %s after the hog's observation", time.Since(answered).Round(time.Millisecond))
		// The events stream keeps it, and the observation with the report.
		js, err := jetstream.New(env.nc)
		require.NoError(t, err)
		stream, err := js.Stream(ctx, schemas.EventStream)
		require.NoError(t, err)
		if m, err := stream.GetLastMsgForSubject(ctx, schemas.SandboxEventSubject(sb.ID())); assert.NoError(t, err) {
			assert.Contains(t, string(m.Data), `"kind":"oom_killed"`, "want the oom_killed event in %s", schemas.EventStream)
		}
		if m, err := stream.GetLastMsgForSubject(ctx, "sandox.obs."+sb.ID()+".*"); assert.NoError(t, err) {
			assert.Contains(t, string(m.Data), `"resource":"memory"`, "want the observation with the OOM report in %s", schemas.EventStream)
		}
		assert.Contains(t, ev.Message, "128.0 MiB", "event: want it to name the 128 MiB limit")
		st := waitStatus(t, sb, func(st schemas.SandboxStatus) bool { return st.OOMKills >= 1 })
		require.Equal(t, schemas.StateRunning, st.State, "%+v, want still running, never restarted", st)
		require.Zero(t, st.Restarts, "%+v, want never restarted", st)
		mustOK(t, send(t, sb, `{"terminal_tools.run": {"args": {"command": "echo alive"}}}`)[0])
	})

	t.Run("restart: the sandbox restarts and its next observation says why", func(t *testing.T) {
		sb := startSandbox(t, group, "it-oom-restart", sdk.SandboxOptions{
			ComputeResources: &schemas.ComputeResources{OnOOM: schemas.OnOOMRestart},
		})
		obs := send(t, sb, fmt.Sprintf(`[
			{"tool": "filesystem_tools.write_file", "args": {"path": "kept.txt", "content": "kept"}},
			{"tool": "terminal_tools.run", "args": {"command": "export MARK=before; (sleep 1; %s) > /dev/null 2>&1 &"}}
		]`, hog))
		mustOK(t, obs[1])
		events := subscribeEvents(t, sb.ID())
		killed := waitEvent(t, events, schemas.EventOOMKilled)
		st := waitStatus(t, sb, func(st schemas.SandboxStatus) bool { return st.Restarts >= 1 && st.State == schemas.StateRunning })
		t.Logf("restarted and answering %s after the OOM kill", st.UpdatedAt.Sub(killed.Time).Round(time.Millisecond))
		assert.GreaterOrEqual(t, st.OOMKills, int64(1), "OOM kills recorded, want at least 1")
		obs = send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"command": "echo mark=$MARK"}},
			{"tool": "filesystem_tools.read_file", "args": {"path": "kept.txt"}}
		]`)
		mustOK(t, obs[0])
		if assert.True(t, hasLimitHit(obs[0], schemas.LimitMemory), "limits hit %+v, want the restart reported in the next observation", obs[0].LimitsHit) {
			assert.Contains(t, obs[0].LimitsHit[0].Message, "restarted")
		}
		assert.NotContains(t, obs[0].Stdout, "before", "want a fresh shell after the restart")
		mustOK(t, obs[1])
		assert.Contains(t, obs[1].Stdout, "kept", "want the workspace kept across the restart")
	})

	t.Run("fail: the sandbox is stopped and marked failed", func(t *testing.T) {
		sb := startSandbox(t, group, "it-oom-fail", sdk.SandboxOptions{
			ComputeResources: &schemas.ComputeResources{OnOOM: schemas.OnOOMFail},
		})
		mustOK(t, send(t, sb, fmt.Sprintf(`{"terminal_tools.run": {"args": {"command": "(sleep 1; %s) > /dev/null 2>&1 &"}}}`, hog))[0])
		st := waitStatus(t, sb, func(st schemas.SandboxStatus) bool { return st.State == schemas.StateFailed })
		require.Contains(t, st.Reason, "out of memory", "reason")
		_, err := sb.SendActionsJSON(ctx, []byte(`{"terminal_tools.run": {"args": {"command": "echo hi"}}}`))
		require.True(t, errors.Is(err, sdk.ErrSandboxGone) || errors.Is(err, sdk.ErrTimeout), "got %v, want the failed sandbox to refuse actions", err)
	})
}

func hasLimitHit(o schemas.Observation, resource string) bool {
	for _, h := range o.LimitsHit {
		if h.Resource == resource && h.Message != "" {
			return true
		}
	}
	return false
}

// subscribeEvents collects the events of one sandbox from now on.
func subscribeEvents(t *testing.T, sandboxID string) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 64)
	sub, err := env.nc.ChanSubscribe(schemas.SandboxEventSubject(sandboxID), ch)
	require.NoError(t, err)
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return ch
}

// waitEvent returns the first event of the given kind, or fails after 30 s.
func waitEvent(t *testing.T, ch chan *nats.Msg, kind schemas.EventKind) schemas.Event {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case m := <-ch:
			var ev schemas.Event
			require.NoError(t, json.Unmarshal(m.Data, &ev))
			if ev.Kind == kind {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s event within 30 s", kind)
		}
	}
}

// waitStatus polls the sandbox's recorded state until ok, or fails after 60 s.
func waitStatus(t *testing.T, sb *sdk.Sandbox, ok func(schemas.SandboxStatus) bool) schemas.SandboxStatus {
	t.Helper()
	var st schemas.SandboxStatus
	poll.Until(t, 60*time.Second, "the awaited change of the sandbox status", func() bool {
		var err error
		st, err = sb.Refresh(t.Context())
		return err == nil && ok(st)
	})
	return st
}
