package tools

import (
	"slices"
	"strings"
	"sync"

	"github.com/sandox/sandox/schemas"
)

// lazySource is a set of tool modules whose tools are loaded on first
// need (the Python tool host, which costs a process and its memory).
type lazySource struct {
	modules []string
	load    func() ([]Tool, error)
	once    sync.Once
	err     error
	done    bool // guarded by the registry's mu
}

// AddLazy registers modules whose tools load calls for only when one of
// them is first needed: an action naming one of the modules, an action
// naming a bare function (any module may define it), or Describe. Until
// then Modules lists them as declared. load runs once; when it fails,
// every action that needs it gets its error (as CodeUnavailable unless it
// is a *schemas.Error), and the other modules are unaffected.
func (r *Registry) AddLazy(modules []string, load func() ([]Tool, error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lazy = append(r.lazy, &lazySource{modules: slices.Clone(modules), load: load})
}

// loadLazy loads the pending sources that need returns true for, outside
// the registry's lock, and returns the first error.
func (r *Registry) loadLazy(need func(*lazySource) bool) error {
	r.mu.RLock()
	var pending []*lazySource
	for _, s := range r.lazy {
		if !s.done && need(s) {
			pending = append(pending, s)
		}
	}
	r.mu.RUnlock()
	var first error
	for _, s := range pending {
		s.once.Do(func() {
			tools, err := s.load()
			r.mu.Lock()
			defer r.mu.Unlock()
			for _, t := range tools {
				r.tools[t.FullName()] = t
			}
			s.err, s.done = err, true
		})
		if s.err != nil && first == nil {
			first = s.err
		}
	}
	return first
}

// loadFor loads what resolving ref needs: the source declaring its module,
// or every source for a bare name.
func (r *Registry) loadFor(ref string) error {
	module, _, ok := strings.Cut(schemas.ToolName(ref), ".")
	err := r.loadLazy(func(s *lazySource) bool { return !ok || slices.Contains(s.modules, module) })
	if err == nil {
		return nil
	}
	if _, isWire := err.(*schemas.Error); isWire {
		return err
	}
	return schemas.Errorf(schemas.CodeUnavailable, "tools of %s: %w", ref, err)
}

// pendingModules lists the modules of sources not loaded yet. The caller
// holds r.mu.
func (r *Registry) pendingModules() []string {
	var out []string
	for _, s := range r.lazy {
		if !s.done {
			out = append(out, s.modules...)
		}
	}
	return out
}
