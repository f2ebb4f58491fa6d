package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// memImages gives a memRuntime's images build times and implements
// ImageStore over it: an image a container uses cannot be removed.
type memImages struct {
	*memRuntime
	built map[string]time.Time // tag -> build time
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
		for _, c := range m.containers {
			if c.spec.Image == tag {
				return fmt.Errorf("image %s: %w", id, runtime.ErrInUse)
			}
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
		policy ImageGC
		want   []string // ids removed
	}{
		{name: "by count", policy: ImageGC{Keep: 2}, want: []string{"id-c", "id-old", "id-old2"}},
		{name: "by age", policy: ImageGC{Keep: 10, MaxAge: 7 * 24 * time.Hour}, want: []string{"id-old", "id-old2"}},
		{name: "by both", policy: ImageGC{Keep: 1, MaxAge: 90 * time.Minute}, want: []string{"id-b", "id-c", "id-old", "id-old2"}},
		{name: "nothing to do", policy: ImageGC{Keep: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := newMemRuntime()
			t.Cleanup(rt.close)
			m := &memImages{memRuntime: rt, built: map[string]time.Time{}}
			for _, img := range []struct {
				tag string
				age time.Duration
			}{
				{"a", time.Hour}, {"b", 2 * time.Hour}, {"c", 3 * time.Hour},
				{"used", 4 * time.Hour}, {"old", 10 * 24 * time.Hour}, {"old2", 11 * 24 * time.Hour}, {"oldused", 12 * 24 * time.Hour},
			} {
				tag := ToolsImageRepo + ":" + img.tag
				rt.addImage(tag, "id-"+img.tag)
				m.built[tag] = now.Add(-img.age)
			}
			rt.addImage("sandox/sandbox:latest", "id-base")
			for _, tag := range []string{"used", "oldused"} {
				_, err := rt.Create(t.Context(), runtime.ContainerSpec{Name: "c-" + tag, Image: ToolsImageRepo + ":" + tag})
				require.NoError(t, err)
			}
			removed, err := collectImages(t.Context(), m, tt.policy, now)
			require.NoError(t, err)
			slices.Sort(removed)
			assert.Equal(t, tt.want, removed)
			_, err = rt.ImageID(t.Context(), "sandox/sandbox:latest")
			assert.NoError(t, err, "other repositories are never touched")
			for _, tag := range []string{"used", "oldused"} {
				_, err = rt.ImageID(t.Context(), ToolsImageRepo+":"+tag)
				assert.NoError(t, err, "image %s in use is kept", tag)
			}
		})
	}
}
