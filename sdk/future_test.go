package sdk_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/sdk"
)

// TestAsyncBatch sends a batch with a future and collects it with Poll and
// Wait; the answer, once in, is kept.
func TestAsyncBatch(t *testing.T) {
	s := startSandox(t)
	_, sb := s.startedSandbox(t, "async", "async-a")
	f, err := sb.SendActionsAsync(t.Context(), run(t, "sleep 0.5; echo later"))
	require.NoError(t, err)
	assert.NotEmpty(t, f.BatchID())

	obs, done, err := f.Poll()
	require.NoError(t, err)
	assert.False(t, done, "the batch sleeps")
	assert.Nil(t, obs)

	obs, err = f.Wait(t.Context())
	require.NoError(t, err)
	require.Len(t, obs, 1)
	assert.Equal(t, "later\n", obs[0].Stdout)
	select {
	case <-f.Done():
	default:
		t.Fatal("Done is open after Wait returned the answer")
	}

	again, done, err := f.Poll()
	require.NoError(t, err)
	assert.True(t, done)
	assert.Equal(t, obs, again)
	again, err = f.Wait(t.Context())
	require.NoError(t, err)
	assert.Equal(t, obs, again)
	require.NoError(t, f.Close(), "Close after the answer")
	again, err = f.Wait(t.Context())
	require.NoError(t, err, "Close keeps an answer that arrived")
	assert.Equal(t, obs, again)
}

// TestPollCollects checks that Poll alone collects an answer.
func TestPollCollects(t *testing.T) {
	s := startSandox(t)
	_, sb := s.startedSandbox(t, "poll", "poll-a")
	f, err := sb.SendActionsAsync(t.Context(), run(t, "echo now"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		_, done, _ := f.Poll()
		return done
	}, 10*time.Second, 10*time.Millisecond)
	obs, done, err := f.Poll()
	require.NoError(t, err)
	assert.True(t, done)
	require.Len(t, obs, 1)
	assert.Equal(t, "now\n", obs[0].Stdout)
}

// TestWaitDeadline checks that a deadline is ErrTimeout and that Wait can
// be called again for the same batch.
func TestWaitDeadline(t *testing.T) {
	s := startSandox(t)
	_, sb := s.startedSandbox(t, "deadline", "deadline-a")
	f, err := sb.SendActionsAsync(t.Context(), run(t, "sleep 1.5; echo done"))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	_, err = f.Wait(ctx)
	require.ErrorIs(t, err, sdk.ErrTimeout)
	obs, err := f.Wait(t.Context())
	require.NoError(t, err)
	require.Len(t, obs, 1)
	assert.Equal(t, "done\n", obs[0].Stdout)
}

// TestFutureClose checks that a future given up drops its reply
// subscription and answers ErrClosed, and that batches share their
// sandbox's event subscription, which End drops, on a connection the
// caller owns (so that the subscriptions can be counted).
func TestFutureClose(t *testing.T) {
	s := startSandox(t)
	nc := connect(t, s.url)
	_, sb := s.startedSandbox(t, "closef", "closef-a", sdk.WithConn(nc))
	before := nc.NumSubscriptions()

	f, err := sb.SendActionsAsync(t.Context(), run(t, "sleep 1"))
	require.NoError(t, err)
	assert.Equal(t, before+2, nc.NumSubscriptions(), "the batch's reply subject and the sandbox's events")
	require.NoError(t, f.Close())
	assert.Equal(t, before+1, nc.NumSubscriptions(), "Close drops the reply; the events stay for the next batches")
	require.NoError(t, f.Close(), "Close twice")

	_, err = f.Wait(t.Context())
	require.ErrorIs(t, err, sdk.ErrClosed)
	_, done, err := f.Poll()
	assert.True(t, done)
	assert.ErrorIs(t, err, sdk.ErrClosed)

	// The sandbox runs batches one after another: the next one waits for
	// the abandoned one, then is answered.
	obs, err := sb.SendActions(t.Context(), run(t, "echo next"))
	require.NoError(t, err)
	assert.Equal(t, "next\n", obs[0].Stdout)
	assert.Equal(t, before+1, nc.NumSubscriptions(), "a synchronous batch leaves only the sandbox's events")
	require.NoError(t, sb.End(t.Context()))
	assert.Equal(t, before, nc.NumSubscriptions(), "End drops the sandbox's subscriptions")
}

// TestGroupClose checks that closing a group closes its open futures and
// its connection, and refuses later calls.
func TestGroupClose(t *testing.T) {
	s := startSandox(t)
	nc := connect(t, s.url)
	g, sb := s.startedSandbox(t, "closeg", "closeg-a", sdk.WithConn(nc))
	before := nc.NumSubscriptions()
	f, err := sb.SendActionsAsync(t.Context(), run(t, "sleep 3"))
	require.NoError(t, err)

	waited := make(chan error, 1)
	go func() {
		_, err := f.Wait(context.Background())
		waited <- err
	}()
	require.NoError(t, g.Close())
	select {
	case err := <-waited:
		require.ErrorIs(t, err, sdk.ErrClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("Wait did not return after the group was closed")
	}
	assert.Equal(t, before, nc.NumSubscriptions())
	assert.False(t, nc.IsClosed(), "a connection given with WithConn stays the caller's")

	_, err = sb.SendActionsAsync(t.Context(), run(t, "echo no"))
	assert.ErrorIs(t, err, sdk.ErrClosed)
	_, err = g.CreateSandbox(t.Context(), "closeg-b", sdk.SandboxOptions{})
	assert.ErrorIs(t, err, sdk.ErrClosed)
	require.NoError(t, g.Close(), "Close twice")
}

// TestEndFailsThenClose checks that a group whose End fails keeps its
// connection until Close.
func TestEndFailsThenClose(t *testing.T) {
	s := startSandox(t)
	g := s.newGroup(t, sdk.GroupConfig{ID: "never-started"})
	err := g.End(t.Context())
	require.ErrorIs(t, err, sdk.ErrNotFound)
	_, _, err = g.Refresh(t.Context())
	require.ErrorIs(t, err, sdk.ErrNotFound, "the group is still usable after a failed End")
	require.NoError(t, g.Close())
	_, _, err = g.Refresh(t.Context())
	require.ErrorIs(t, err, sdk.ErrClosed)
}
