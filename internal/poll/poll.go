// Package poll lets a test wait for a condition instead of sleeping for a
// guessed time, in the manner of nats-server's checkFor.
package poll

import (
	"testing"
	"time"
)

// Pauses between two checks grow from minPause to maxPause.
const (
	minPause = 5 * time.Millisecond
	maxPause = 200 * time.Millisecond
)

// Until calls cond on the caller's goroutine until it returns true, pausing
// between calls, and fails t with t.Fatalf, naming what it waited for, if
// that has not happened within d. cond may use t (require, t.Fatal): it runs
// on the test's goroutine. Until blocks until cond holds or t has failed.
func Until(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	pause := minPause
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %s waiting for %s", d, what)
		}
		time.Sleep(pause) // the pause between checks, not a wait for the condition
		pause = min(2*pause, maxPause)
	}
}
