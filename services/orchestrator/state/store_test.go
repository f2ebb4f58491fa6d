package state

import (
	"errors"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

func codeOf(err error) schemas.ErrorCode {
	var se *schemas.Error
	if errors.As(err, &se) {
		return se.Code
	}
	return ""
}

// TestStoreGroupsAndSandboxes walks a group and a sandbox through their
// records: created once, read, changed with compare-and-set, listed,
// joined and forgotten.
func TestStoreGroupsAndSandboxes(t *testing.T) {
	s := testStore(t)
	ctx := t.Context()

	_, _, err := s.Group(ctx, "g1")
	assert.Equal(t, schemas.CodeNotFound, codeOf(err))
	_, _, err = s.Sandbox(ctx, "sb1")
	assert.Equal(t, schemas.CodeNotFound, codeOf(err))
	_, err = s.UpdateGroup(ctx, "g1", func(*schemas.GroupStatus) error { return nil })
	assert.Equal(t, schemas.CodeNotFound, codeOf(err))
	_, err = s.UpdateSandbox(ctx, "sb1", func(*schemas.SandboxStatus) error { return nil })
	assert.Equal(t, schemas.CodeNotFound, codeOf(err))

	g := schemas.GroupStatus{ID: "g1", State: schemas.GroupRunning, Placing: map[string]schemas.Placed{"sb1": {Host: "host-a", At: time.Now()}}}
	require.NoError(t, s.CreateGroup(ctx, &g))
	assert.False(t, g.UpdatedAt.IsZero())
	assert.Equal(t, schemas.CodeAlreadyExists, codeOf(s.CreateGroup(ctx, &g)))
	rev, err := s.CreateSandbox(ctx, schemas.SandboxStatus{ID: "sb1", GroupID: "g1", State: schemas.StateCreated})
	require.NoError(t, err)
	assert.NotZero(t, rev)
	_, err = s.CreateSandbox(ctx, schemas.SandboxStatus{ID: "sb1"})
	assert.Equal(t, schemas.CodeAlreadyExists, codeOf(err))

	require.NoError(t, s.JoinGroup(ctx, "g1", "sb1"))
	require.NoError(t, s.JoinGroup(ctx, "g1", "sb1"), "joining twice lists once")
	got, _, err := s.Group(ctx, "g1")
	require.NoError(t, err)
	assert.Equal(t, []string{"sb1"}, got.Sandboxes)
	assert.Empty(t, got.Placing, "a joined sandbox is no longer being placed")

	st, err := s.UpdateSandbox(ctx, "sb1", func(sb *schemas.SandboxStatus) error { sb.State = schemas.StateRunning; return nil })
	require.NoError(t, err)
	assert.Equal(t, schemas.StateRunning, st.State)
	before := st.UpdatedAt
	st, err = s.UpdateSandbox(ctx, "sb1", func(*schemas.SandboxStatus) error { return ErrUnchanged })
	require.NoError(t, err)
	assert.Equal(t, before, st.UpdatedAt, "an unchanged record is not written")
	_, err = s.UpdateSandbox(ctx, "sb1", func(*schemas.SandboxStatus) error { return schemas.Errorf(schemas.CodeConflict, "no") })
	assert.Equal(t, schemas.CodeConflict, codeOf(err), "change's error comes back")

	st.Reason = "put"
	require.NoError(t, s.PutSandbox(ctx, &st))
	read, _, err := s.Sandbox(ctx, "sb1")
	require.NoError(t, err)
	assert.Equal(t, "put", read.Reason)

	groups, err := s.GroupIDs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"g1"}, groups)
	sandboxes, err := s.SandboxIDs(ctx)
	require.NoError(t, err)
	assert.Equal(t, []string{"sb1"}, sandboxes)

	require.NoError(t, s.DeleteSandbox(ctx, "sb1"))
	require.NoError(t, s.DeleteSandbox(ctx, "sb1"), "a missing sandbox is no error")
	require.NoError(t, s.DeleteGroup(ctx, "g1"))
	require.NoError(t, s.DeleteGroup(ctx, "g1"), "a missing group is no error")
	sandboxes, err = s.SandboxIDs(ctx)
	require.NoError(t, err)
	assert.Empty(t, sandboxes)
}

// TestStoreWatchGroups sees a group created after the watch began.
func TestStoreWatchGroups(t *testing.T) {
	s := testStore(t)
	ctx := t.Context()
	w, err := s.WatchGroups(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Stop() })
	require.NoError(t, s.CreateGroup(ctx, &schemas.GroupStatus{ID: "g1"}))
	timeout := time.After(5 * time.Second)
	for {
		select {
		case e := <-w.Updates():
			if e != nil && e.Key() == "g1" && e.Operation() == jetstream.KeyValuePut {
				return
			}
		case <-timeout:
			t.Fatal("no update for g1")
		}
	}
}

// TestStoreHosts records hosts and lists the live ones: up and heard from
// within lostAfter on this store's clock.
func TestStoreHosts(t *testing.T) {
	s := testStore(t)
	ctx := t.Context()
	_, err := s.Host(ctx, "a")
	assert.ErrorIs(t, err, jetstream.ErrKeyNotFound)
	_, _, err = s.HostSilence(ctx, "a")
	assert.ErrorIs(t, err, jetstream.ErrKeyNotFound)
	_, err = s.UpdateHost(ctx, "a", errors.New("absent"), func(*schemas.HostStatus) error { return nil })
	assert.EqualError(t, err, "absent")

	for _, h := range []schemas.HostStatus{{Name: "a", State: schemas.HostUp}, {Name: "b", State: schemas.HostLost}} {
		_, err := s.UpdateHost(ctx, h.Name, nil, func(hs *schemas.HostStatus) error { *hs = h; return nil })
		require.NoError(t, err)
	}
	names, err := s.HostNames(ctx)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"a", "b"}, names)
	h, err := s.Host(ctx, "a")
	require.NoError(t, err)
	assert.Equal(t, schemas.HostUp, h.State)

	live, err := s.LiveHosts(ctx, time.Minute)
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, keysOf(live), "a lost host is not live")
	time.Sleep(20 * time.Millisecond)
	live, err = s.LiveHosts(ctx, 10*time.Millisecond)
	require.NoError(t, err)
	assert.Empty(t, live, "a host silent for longer than lostAfter is not live")
}

func keysOf(m map[string]schemas.HostStatus) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestStoreLedger reads an absent ledger as empty and releases only what
// it holds.
func TestStoreLedger(t *testing.T) {
	s := testStore(t)
	ctx := t.Context()
	key := LedgerKey("")
	assert.Equal(t, schemas.LedgerKey, key)
	l, err := s.ReadLedger(ctx, key)
	require.NoError(t, err)
	assert.Empty(t, l.Allocations)
	host := resources.Host{CPUs: 2, MemoryBytes: 4 << 30}
	require.NoError(t, s.UpdateLedger(ctx, key, func(l *resources.Ledger) error {
		return l.Admit("sb1", schemas.ResolvedResources{NanoCPUs: 1e9, MemoryBytes: 1 << 30}, host, 1)
	}))
	require.NoError(t, s.ReleaseLedger(ctx, key, "other"), "an id the ledger does not hold is no change")
	require.NoError(t, s.ReleaseLedger(ctx, key, "sb1"))
	l, err = s.ReadLedger(ctx, key)
	require.NoError(t, err)
	assert.Empty(t, l.Allocations)
}

func TestSubjectToken(t *testing.T) {
	assert.Equal(t, "a_b-c_d", SubjectToken("a.b-c:d"))
}
