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

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/disks"
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
		if got := filler.Status().Resources.DiskBytes; got != 32<<20 {
			t.Fatalf("got %d disk bytes, want %d", got, 32<<20)
		}
		if filler.Status().DiskDevice == "" {
			t.Fatal("got no disk device in the status, want the loop device of the workspace")
		}
	})

	t.Run("a relative disk resolves against the disks' file system", func(t *testing.T) {
		capacity, err := (&disks.Pool{Dir: env.disks}).Capacity()
		if err != nil {
			t.Fatal(err)
		}
		sb, err := group.CreateSandbox(ctx, "it-disk-relative", sdk.SandboxOptions{ComputeResources: &schemas.ComputeResources{Disk: "0.5%"}})
		if err != nil {
			t.Fatal(err)
		}
		defer sb.End(ctx)
		if got, want := sb.Status().Resources.DiskBytes, int64(math.Round(float64(capacity)*0.005)); got != want {
			t.Fatalf("got %d disk bytes, want 0.5%% of %d = %d", got, capacity, want)
		}
	})

	t.Run("a disk filler hits its limit with ENOSPC", func(t *testing.T) {
		obs := send(t, filler, `{"terminal_tools.run": {"args": {"command": "head -c 64M /dev/zero > /workspace/fill; echo size=$(stat -c %s /workspace/fill)", "timeout_seconds": 60}}}`)
		out := obs[0].Stdout
		if !strings.Contains(out, "No space left on device") || obs[0].ExitCode == nil || *obs[0].ExitCode != 0 {
			t.Fatalf("got %q, want dd to stop with ENOSPC", out)
		}
		var size int64
		if _, err := fmt.Sscanf(out[strings.LastIndex(out, "size="):], "size=%d", &size); err != nil || size > 32<<20 || size < 30<<20 {
			t.Fatalf("got %q, want a file of nearly but not more than 32 MiB", out)
		}
		if !hasLimitHit(obs[0], schemas.LimitDisk) {
			t.Errorf("got limits hit %+v after %q, want the full disk reported", obs[0].LimitsHit, out)
		}
		u, err := filler.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if u.DiskBytes < 30<<20 || u.DiskBytes > 32<<20 || u.Limits.DiskBytes != 32<<20 {
			t.Fatalf("got disk use %d of limit %d, want nearly 32 MiB of 32 MiB", u.DiskBytes, u.Limits.DiskBytes)
		}
		obs = send(t, filler, `{"filesystem_tools.write_file": {"args": {"path": "more.txt", "content": "more"}}}`)
		if obs[0].Error == nil || !strings.Contains(obs[0].Error.Message, "no space left on device") {
			t.Fatalf("got %+v, want the write refused for space", obs[0])
		}
	})

	t.Run("nothing outside the workspace is writable", func(t *testing.T) {
		obs := send(t, filler, `{"terminal_tools.run": {"args": {"command": "for p in / /etc /usr/local /home /var; do touch $p/x 2>&1; done; true"}}}`)
		if got := strings.Count(obs[0].Stdout, "Read-only file system"); got != 5 {
			t.Fatalf("got %q, want each of 5 writes refused as read-only", obs[0].Stdout)
		}
	})

	t.Run("the neighbour is not harmed", func(t *testing.T) {
		obs := send(t, neighbour, `{"terminal_tools.run": {"args": {"command": "dd if=/dev/zero of=/workspace/f bs=1M count=16 status=none && echo wrote"}}}`)
		mustOK(t, obs[0])
		if !strings.Contains(obs[0].Stdout, "wrote") {
			t.Fatalf("got %+v, want 16 MiB written next to a full neighbour", obs[0])
		}
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
		if obs[0].ExitCode == nil || *obs[0].ExitCode != 137 {
			t.Fatalf("got %+v, want the hog killed (exit 137)", obs[0])
		}
		if !hasLimitHit(obs[0], schemas.LimitMemory) {
			t.Errorf("got limits hit %+v, want the OOM kill in the hog's observation", obs[0].LimitsHit)
		}
		answered := time.Now()
		ev := waitEvent(t, events, schemas.EventOOMKilled)
		t.Logf("oom_killed event %s after the hog's observation", time.Since(answered).Round(time.Millisecond))
		// The events stream keeps it, and the observation with the report.
		js, err := jetstream.New(env.nc)
		if err != nil {
			t.Fatal(err)
		}
		stream, err := js.Stream(ctx, schemas.EventStream)
		if err != nil {
			t.Fatal(err)
		}
		if m, err := stream.GetLastMsgForSubject(ctx, schemas.SandboxEventSubject(sb.ID())); err != nil || !strings.Contains(string(m.Data), `"kind":"oom_killed"`) {
			t.Errorf("got %v (err %v), want the oom_killed event in %s", m, err, schemas.EventStream)
		}
		if m, err := stream.GetLastMsgForSubject(ctx, "sandox.obs."+sb.ID()+".*"); err != nil || !strings.Contains(string(m.Data), `"resource":"memory"`) {
			t.Errorf("got %v (err %v), want the observation with the OOM report in %s", m, err, schemas.EventStream)
		}
		if !strings.Contains(ev.Message, "128.0 MiB") {
			t.Errorf("got event %q, want it to name the 128 MiB limit", ev.Message)
		}
		st := waitStatus(t, sb, func(st schemas.SandboxStatus) bool { return st.OOMKills >= 1 })
		if st.State != schemas.StateRunning || st.Restarts != 0 {
			t.Fatalf("got %+v, want still running, never restarted", st)
		}
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
		if st.OOMKills < 1 {
			t.Errorf("got %d OOM kills recorded, want at least 1", st.OOMKills)
		}
		obs = send(t, sb, `[
			{"tool": "terminal_tools.run", "args": {"command": "echo mark=$MARK"}},
			{"tool": "filesystem_tools.read_file", "args": {"path": "kept.txt"}}
		]`)
		mustOK(t, obs[0])
		if !hasLimitHit(obs[0], schemas.LimitMemory) || !strings.Contains(obs[0].LimitsHit[0].Message, "restarted") {
			t.Errorf("got limits hit %+v, want the restart reported in the next observation", obs[0].LimitsHit)
		}
		if strings.Contains(obs[0].Stdout, "before") {
			t.Errorf("got %q, want a fresh shell after the restart", obs[0].Stdout)
		}
		mustOK(t, obs[1])
		if !strings.Contains(obs[1].Stdout, "kept") {
			t.Errorf("got %+v, want the workspace kept across the restart", obs[1])
		}
	})

	t.Run("fail: the sandbox is stopped and marked failed", func(t *testing.T) {
		sb := startSandbox(t, group, "it-oom-fail", sdk.SandboxOptions{
			ComputeResources: &schemas.ComputeResources{OnOOM: schemas.OnOOMFail},
		})
		mustOK(t, send(t, sb, fmt.Sprintf(`{"terminal_tools.run": {"args": {"command": "(sleep 1; %s) > /dev/null 2>&1 &"}}}`, hog))[0])
		st := waitStatus(t, sb, func(st schemas.SandboxStatus) bool { return st.State == schemas.StateFailed })
		if !strings.Contains(st.Reason, "out of memory") {
			t.Fatalf("got reason %q, want it to say out of memory", st.Reason)
		}
		_, err := sb.SendActionsJSON(ctx, []byte(`{"terminal_tools.run": {"args": {"command": "echo hi"}}}`))
		if !errors.Is(err, sdk.ErrSandboxGone) && !errors.Is(err, sdk.ErrTimeout) {
			t.Fatalf("got %v, want the failed sandbox to refuse actions", err)
		}
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
	if err != nil {
		t.Fatal(err)
	}
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
			if err := json.Unmarshal(m.Data, &ev); err != nil {
				t.Fatal(err)
			}
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
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, err := sb.Refresh(t.Context())
		if err == nil && ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("got status %+v (err %v) after 60 s, want the awaited change", st, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
