package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/resources"
)

// GroupConfig describes a group of sandboxes: the defaults of its members
// and the sandboxes to start with it.
type GroupConfig struct {
	// ID names the group.
	ID string
	// DatabaseAccess is the default database access of its sandboxes.
	DatabaseAccess schemas.DatabaseAccess
	// ComputeResources are the default resources of its sandboxes.
	ComputeResources schemas.ComputeResources
	// Tools are paths of default tool files, copied into every sandbox
	// under their own file names.
	Tools []string
	// PopulationConfig is the path of the YAML file that says how to
	// populate the shared databases at group start ("" for none).
	PopulationConfig string
	// Sandboxes are created and started by Start, each with its own
	// options.
	Sandboxes []InitialSandbox
	// Overcommit, above 1, lets the group's sandboxes be granted up to that
	// multiple of the host's CPU and memory.
	Overcommit float64
	// Egress is the default egress policy of its sandboxes; nil is none
	// (no network at all).
	Egress *schemas.Egress
}

// InitialSandbox is a sandbox listed in the group config.
type InitialSandbox struct {
	ID string
	SandboxOptions
}

// SandboxOptions are a sandbox's own settings; what is left empty takes the
// group's default.
type SandboxOptions struct {
	// Tools are paths of tool files added to the group's (a file with the
	// same name replaces the group's).
	Tools []string
	// ComputeResources replace the group's defaults field by field.
	ComputeResources *schemas.ComputeResources
	// AttachedDatabases replace the group's default database access.
	AttachedDatabases *schemas.DatabaseAccess
	// Egress replaces the group's egress policy.
	Egress *schemas.Egress
}

// SandboxGroup is a group of sandboxes. It is safe for concurrent use.
type SandboxGroup struct {
	spec schemas.GroupSpec
	opts options

	mu        sync.Mutex
	conn      *conn
	sandboxes map[string]*Sandbox
}

// NewSandboxGroup validates cfg, reads the tool files and the population
// config it names, and returns the group. It does not contact sandox: Start
// does. Errors wrap ErrBadRequest and name the field or file at fault.
func NewSandboxGroup(cfg GroupConfig, opts ...Option) (*SandboxGroup, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
		}
	}
	spec, err := groupSpec(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: group %q: %v", ErrBadRequest, cfg.ID, err)
	}
	return &SandboxGroup{spec: spec, opts: o, sandboxes: map[string]*Sandbox{}}, nil
}

func groupSpec(cfg GroupConfig) (schemas.GroupSpec, error) {
	var errs []error
	if err := schemas.ValidateID("group", cfg.ID); err != nil {
		errs = append(errs, err)
	}
	tools, err := readTools(cfg.Tools)
	errs = append(errs, err)
	if _, err := resources.Parse(cfg.ComputeResources); err != nil {
		errs = append(errs, err)
	}
	var population string
	if cfg.PopulationConfig != "" {
		data, err := os.ReadFile(cfg.PopulationConfig)
		if err != nil {
			errs = append(errs, fmt.Errorf("population config: %w", err))
		}
		population = string(data)
	}
	spec := schemas.GroupSpec{
		ID:               cfg.ID,
		Tools:            tools,
		Compute:          cfg.ComputeResources,
		DatabaseAccess:   cfg.DatabaseAccess,
		PopulationConfig: population,
		Overcommit:       cfg.Overcommit,
		Egress:           cfg.Egress,
	}
	for _, sb := range cfg.Sandboxes {
		s, err := sandboxSpec(sb.ID, sb.SandboxOptions, cfg.ComputeResources)
		errs = append(errs, err)
		spec.Sandboxes = append(spec.Sandboxes, s)
	}
	return spec, errors.Join(errs...)
}

func sandboxSpec(id string, o SandboxOptions, defaults schemas.ComputeResources) (schemas.SandboxSpec, error) {
	var errs []error
	if err := schemas.ValidateID("sandbox", id); err != nil {
		errs = append(errs, err)
	}
	tools, err := readTools(o.Tools)
	errs = append(errs, err)
	if _, err := resources.Parse(resources.Merge(defaults, o.ComputeResources)); err != nil {
		errs = append(errs, fmt.Errorf("sandbox %s: %w", id, err))
	}
	if o.Egress != nil {
		errs = append(errs, o.Egress.Validate())
	}
	return schemas.SandboxSpec{ID: id, Tools: tools, Compute: o.ComputeResources, Databases: o.AttachedDatabases, Egress: o.Egress}, errors.Join(errs...)
}

// readTools reads tool files; each keeps its base name.
func readTools(paths []string) ([]schemas.ToolFile, error) {
	var out []schemas.ToolFile
	var errs []error
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			errs = append(errs, fmt.Errorf("tool file: %w", err))
			continue
		}
		out = append(out, schemas.ToolFile{Name: filepath.Base(p), Content: data})
	}
	return out, errors.Join(errs...)
}

// ID returns the group's id.
func (g *SandboxGroup) ID() string { return g.spec.ID }

func (g *SandboxGroup) link() (*conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.conn == nil {
		c, err := dial(g.opts)
		if err != nil {
			return nil, err
		}
		g.conn = c
	}
	return g.conn, nil
}

// Start registers the group with sandox and starts it: its initial
// sandboxes are created and started. It blocks until they run. When some
// fail, the error says which, and Sandbox still returns those that run.
func (g *SandboxGroup) Start(ctx context.Context) error {
	c, err := g.link()
	if err != nil {
		return err
	}
	spec := g.spec
	if _, err := c.command(ctx, schemas.Command{Kind: schemas.CreateGroup, GroupID: g.spec.ID, Group: &spec}); err != nil {
		return err
	}
	res, err := c.command(ctx, schemas.Command{Kind: schemas.StartGroup, GroupID: g.spec.ID})
	for _, st := range res.Sandboxes {
		g.track(st)
	}
	return err
}

// Sandbox returns the handle of a sandbox of this group, or nil when the
// group has no sandbox of that id known to this process.
func (g *SandboxGroup) Sandbox(id string) *Sandbox {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sandboxes[id]
}

func (g *SandboxGroup) track(st schemas.SandboxStatus) *Sandbox {
	g.mu.Lock()
	defer g.mu.Unlock()
	sb, ok := g.sandboxes[st.ID]
	if !ok {
		sb = &Sandbox{id: st.ID, group: g}
		g.sandboxes[st.ID] = sb
	}
	sb.setStatus(st)
	return sb
}

// CreateSandbox creates a sandbox in the group: its image is built with the
// group's and its own tool files (or reused when the same tool set was
// built before) and its container is created. It does not start it.
func (g *SandboxGroup) CreateSandbox(ctx context.Context, id string, opts SandboxOptions) (*Sandbox, error) {
	spec, err := sandboxSpec(id, opts, g.spec.Compute)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadRequest, err)
	}
	c, err := g.link()
	if err != nil {
		return nil, err
	}
	res, err := c.command(ctx, schemas.Command{Kind: schemas.CreateSandbox, GroupID: g.spec.ID, SandboxID: id, Sandbox: &spec})
	if err != nil {
		return nil, err
	}
	if len(res.Sandboxes) != 1 {
		return nil, fmt.Errorf("%w: create_sandbox answered with %d sandboxes", ErrInternal, len(res.Sandboxes))
	}
	return g.track(res.Sandboxes[0]), nil
}

// End ends every sandbox of the group and the group itself, and closes the
// group's connection if it opened one.
func (g *SandboxGroup) End(ctx context.Context) error {
	c, err := g.link()
	if err != nil {
		return err
	}
	_, err = c.command(ctx, schemas.Command{Kind: schemas.EndGroup, GroupID: g.spec.ID})
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		g.conn.close()
		g.conn = nil
	}
	return err
}

// Attach returns a handle on an existing sandbox of this group, created
// elsewhere (another process, the group config). It does not check that the
// sandbox exists: the first call on it does.
func (g *SandboxGroup) Attach(id string) *Sandbox {
	if sb := g.Sandbox(id); sb != nil {
		return sb
	}
	return g.track(schemas.SandboxStatus{ID: id, GroupID: g.spec.ID})
}
