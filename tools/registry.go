package tools

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/sandox/sandox/schemas"
)

// Registry maps tool names to tools. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]Tool // by FullName
	lazy  []*lazySource   // modules loaded on first need (AddLazy)
}

// NewRegistry returns a registry holding tools.
func NewRegistry(tools ...Tool) *Registry {
	r := &Registry{tools: make(map[string]Tool)}
	r.Add(tools...)
	return r
}

// Add registers tools. A tool with the same module and name as one already
// registered replaces it. (The orchestrator refuses user tool files named
// like a built-in family, so in a sandbox the families and the files never
// share a module.)
func (r *Registry) Add(tools ...Tool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range tools {
		r.tools[t.FullName()] = t
	}
}

// Resolve finds the tool an action names: "module.function", or a bare
// function name that exactly one module defines. A trailing "Use" is
// ignored; nothing else is: a name with a space, a tab, a line break or any
// other character a tool name does not have is refused as written
// (schemas.CheckToolRef). The error is a *schemas.Error with CodeUnknownTool
// or CodeAmbiguousTool that lists what would have matched.
func (r *Registry) Resolve(ref string) (Tool, error) {
	if err := schemas.CheckToolRef(ref); err != nil {
		return Tool{}, err
	}
	if err := r.loadFor(ref); err != nil {
		return Tool{}, err
	}
	name := schemas.ToolName(ref)
	r.mu.RLock()
	defer r.mu.RUnlock()
	if t, ok := r.tools[name]; ok {
		return t, nil
	}
	if module, fn, ok := strings.Cut(name, "."); ok {
		if !r.hasModule(module) {
			return Tool{}, schemas.Errorf(schemas.CodeUnknownTool, "unknown tool %q: no tool module %q (modules: %s)", ref, module, strings.Join(r.modules(), ", "))
		}
		return Tool{}, schemas.Errorf(schemas.CodeUnknownTool, "unknown tool %q: module %q has no function %q", ref, module, fn)
	}
	var matches []Tool
	for _, t := range r.tools {
		if t.Name == name {
			matches = append(matches, t)
		}
	}
	switch len(matches) {
	case 1:
		return matches[0], nil
	case 0:
		return Tool{}, schemas.Errorf(schemas.CodeUnknownTool, "unknown tool %q: no module defines a function %q", ref, name)
	default:
		names := make([]string, len(matches))
		for i, t := range matches {
			names[i] = t.FullName()
		}
		sort.Strings(names)
		return Tool{}, schemas.Errorf(schemas.CodeAmbiguousTool, "tool %q is ambiguous: write one of %s", ref, strings.Join(names, ", "))
	}
}

func (r *Registry) hasModule(module string) bool {
	for _, t := range r.tools {
		if t.Module == module {
			return true
		}
	}
	return false
}

func (r *Registry) modules() []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range r.pendingModules() {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	for _, t := range r.tools {
		if !seen[t.Module] {
			seen[t.Module] = true
			out = append(out, t.Module)
		}
	}
	sort.Strings(out)
	return out
}

// Modules returns the names of the registered tool modules, sorted.
func (r *Registry) Modules() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.modules()
}

// Describe returns the description of every tool, sorted by name. It
// loads the modules added with AddLazy first; one that fails to load is
// left out.
func (r *Registry) Describe() []schemas.ToolDescription {
	_ = r.loadLazy(func(*lazySource) bool { return true })
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]schemas.ToolDescription, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t.Describe())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// String lists the registered tools, for logs; it loads nothing.
func (r *Registry) String() string {
	r.mu.RLock()
	n := len(r.tools)
	r.mu.RUnlock()
	return fmt.Sprintf("%d tools in %s", n, strings.Join(r.Modules(), ", "))
}
