package memruntime

import (
	"context"
	"maps"
	"slices"

	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Process is the function a started container runs.
type Process func(ctx context.Context, spec runtime.ContainerSpec) error

// SetProcess sets what a container started from now on runs (nil: it runs
// until it is stopped).
func (r *Runtime) SetProcess(p Process) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.process = p
}

// Process returns what a started container runs.
func (r *Runtime) Process() Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.process
}

// Builds is how many images were built.
func (r *Runtime) Builds() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.builds
}

// SetImages replaces the images by tag with images (tag to id).
func (r *Runtime) SetImages(images map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.images = maps.Clone(images)
}

// RemoveImage forgets the image tagged tag.
func (r *Runtime) RemoveImage(tag string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.images, tag)
}

// Volumes lists the names of the volumes, sorted.
func (r *Runtime) Volumes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.volumes))
}

// SetHost sets the engine's host and the prefix of the container ids it
// makes from now on (two engines of one test make different ids).
func (r *Runtime) SetHost(h runtime.Host, idPrefix string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.host, r.idPrefix = h, idPrefix
}

// Spec returns the spec of the container with id or name, and whether
// there is one.
func (r *Runtime) Spec(id string) (runtime.ContainerSpec, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, err := r.find(id)
	if err != nil {
		return runtime.ContainerSpec{}, false
	}
	return c.spec, true
}

// Subscribers is how many event streams are open.
func (r *Runtime) Subscribers() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.subs)
}
