package images

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memImages is an in-memory ImageStore with containers that use images:
// an image a container uses cannot be removed.
type memImages struct {
	mu     sync.Mutex
	images map[string]string    // tag -> id
	built  map[string]time.Time // tag -> build time
	used   map[string]bool      // tags that containers use
}

func newMemImages() *memImages {
	return &memImages{images: map[string]string{}, built: map[string]time.Time{}, used: map[string]bool{}}
}

func (m *memImages) ListImages(_ context.Context, repo string) ([]runtime.Image, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []runtime.Image
	for _, tag := range slices.Sorted(maps.Keys(m.images)) {
		if strings.HasPrefix(tag, repo+":") {
			out = append(out, runtime.Image{ID: m.images[tag], Tags: []string{tag}, Created: m.built[tag]})
		}
	}
	return out, nil
}

func (m *memImages) RemoveImage(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for tag, have := range m.images {
		if have != id {
			continue
		}
		if m.used[tag] {
			return fmt.Errorf("image %s: %w", id, runtime.ErrInUse)
		}
		delete(m.images, tag)
		return nil
	}
	return fmt.Errorf("image %s: %w", id, runtime.ErrNotFound)
}

// TestCollectImages removes the unused tools images beyond the newest Keep
// and those older than MaxAge, and keeps every image a container uses and
// every image of another repository.
func TestCollectImages(t *testing.T) {
	now := time.Date(2026, 11, 28, 23, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		policy GC
		want   []string // ids removed
	}{
		{name: "by count", policy: GC{Keep: 2}, want: []string{"id-c", "id-old", "id-old2"}},
		{name: "by age", policy: GC{Keep: 10, MaxAge: 7 * 24 * time.Hour}, want: []string{"id-old", "id-old2"}},
		{name: "by both", policy: GC{Keep: 1, MaxAge: 90 * time.Minute}, want: []string{"id-b", "id-c", "id-old", "id-old2"}},
		{name: "nothing to do", policy: GC{Keep: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newMemImages()
			for _, img := range []struct {
				tag string
				age time.Duration
			}{
				{"a", time.Hour}, {"b", 2 * time.Hour}, {"c", 3 * time.Hour},
				{"used", 4 * time.Hour}, {"old", 10 * 24 * time.Hour}, {"old2", 11 * 24 * time.Hour}, {"oldused", 12 * 24 * time.Hour},
			} {
				tag := ToolsImageRepo + ":" + img.tag
				m.images[tag] = "id-" + img.tag
				m.built[tag] = now.Add(-img.age)
			}
			m.images["sandox/sandbox:latest"] = "id-base"
			for _, tag := range []string{"used", "oldused"} {
				m.used[ToolsImageRepo+":"+tag] = true
			}
			removed, err := Collect(t.Context(), m, tt.policy, now)
			require.NoError(t, err)
			slices.Sort(removed)
			assert.Equal(t, tt.want, removed)
			assert.Contains(t, m.images, "sandox/sandbox:latest", "other repositories are never touched")
			for _, tag := range []string{"used", "oldused"} {
				assert.Contains(t, m.images, ToolsImageRepo+":"+tag, "image %s in use is kept", tag)
			}
		})
	}
}

// TestCollectEvery runs the collection on its interval until its context
// ends, and not at all without a store or an interval.
func TestCollectEvery(t *testing.T) {
	m := newMemImages()
	m.images[ToolsImageRepo+":a"] = "id-a"
	m.built[ToolsImageRepo+":a"] = time.Now().Add(-time.Hour)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		CollectEvery(ctx, m, GC{Interval: 10 * time.Millisecond, Keep: 0}, slog.New(slog.DiscardHandler))
	}()
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.images) == 0
	}, 5*time.Second, 10*time.Millisecond, "the unused image is collected")
	cancel()
	<-done

	CollectEvery(t.Context(), nil, DefaultGC(), slog.New(slog.DiscardHandler))
	CollectEvery(t.Context(), m, GC{}, slog.New(slog.DiscardHandler))
}
