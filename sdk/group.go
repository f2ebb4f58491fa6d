package sdk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

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
	// Tools are the default tools of every sandbox: built-in tool families
	// named alone ("filesystem_tools.py", "terminal_tools", "web_tools.py")
	// and paths of the user's tool files, copied into every sandbox under
	// their own file names. A sandbox gets only the families named here and
	// in its own options; filesystem_tools and terminal_tools when none is.
	// See readTools.
	Tools []string
	// PopulationConfig is the path of the YAML file that says how to
	// populate the shared databases at group start ("" for none).
	PopulationConfig string
	// KeepDatabaseData keeps the group's database volumes when it ends, so
	// a group of the same ID starts with the same data; by default they are
	// deleted with the group.
	KeepDatabaseData bool
	// TTL, above 0, ends the group and every sandbox in it that long after
	// Start registers it: each sandbox gets an expired event (reason
	// "group_ttl"), then the group is ended as End ends it. 0 is no limit;
	// a negative TTL is ErrBadRequest.
	TTL time.Duration
	// Sandboxes are created and started by Start, each with its own
	// options.
	Sandboxes []InitialSandbox
	// Overcommit, above 1, lets the group's sandboxes be granted up to that
	// multiple of the host's CPU and memory.
	Overcommit float64
	// Egress is the default egress policy of its sandboxes; nil is none
	// (no network at all).
	Egress *schemas.Egress
	// Pool, when its size is above 0, keeps that many sandboxes of the
	// group's tools, resources and egress started on each worker, so that
	// CreateSandbox + Start of a sandbox that adds no tool files claims one
	// (docs/pools.md).
	Pool *schemas.PoolSpec
	// Placement says how the group's sandboxes are spread over the
	// orchestrator's hosts (Docker engines): schemas.PlacementSpread (the
	// default, "") or schemas.PlacementPack.
	Placement schemas.Placement
	// Checkpoints, with Auto set, checkpoints each sandbox's workspace
	// after every action batch that changed it, keeping the newest Keep
	// automatic ones (docs/checkpoints.md). A negative Keep is
	// ErrBadRequest.
	Checkpoints *schemas.CheckpointPolicy
}

// InitialSandbox is a sandbox listed in the group config.
type InitialSandbox struct {
	ID string
	SandboxOptions
}

// SandboxOptions are a sandbox's own settings; what is left empty takes the
// group's default.
type SandboxOptions struct {
	// Tools are built-in tool families and paths of tool files, added to
	// the group's (a file with the same name replaces the group's); see
	// GroupConfig.Tools.
	Tools []string
	// ComputeResources replace the group's defaults field by field.
	ComputeResources *schemas.ComputeResources
	// AttachedDatabases replace the group's default database access.
	AttachedDatabases *schemas.DatabaseAccess
	// Egress replaces the group's egress policy.
	Egress *schemas.Egress
	// TTL, above 0, ends the sandbox that long after its creation, running
	// or not, with an expired event (reason "ttl"); its status's ExpiresAt
	// says when. 0 is no limit; a negative TTL is ErrBadRequest.
	TTL time.Duration
	// IdleTimeout, above 0, ends a running sandbox that has received no
	// action batch for that long, counted from its start and then from its
	// last batch, with an expired event (reason "idle_timeout"). A batch
	// that runs longer than IdleTimeout does not keep it alive. 0 is no
	// limit; a negative timeout is ErrBadRequest.
	IdleTimeout time.Duration
	// FromCheckpoint fills the new sandbox's workspace with a checkpoint's
	// files before it starts (Sandbox.Fork sets it).
	FromCheckpoint *schemas.CheckpointRef
}

// SandboxGroup is a group of sandboxes. It is safe for concurrent use.
// Close releases what it holds in this process: its open futures and its
// connection.
type SandboxGroup struct {
	spec schemas.GroupSpec
	opts options

	// Lock order: a Future's mu before the group's mu (a settling future
	// leaves the group's set of open futures under its own lock).
	mu        sync.Mutex
	conn      *conn
	closed    bool
	sandboxes map[string]*Sandbox
	futures   map[*Future]struct{}
}

// NewSandboxGroup validates cfg, reads the tool files and the population
// config it names, and returns the group. It does not contact sandox: Start
// does. Errors wrap ErrBadRequest and name the field or file at fault.
func NewSandboxGroup(cfg GroupConfig, opts ...Option) (*SandboxGroup, error) {
	o := defaultOptions()
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
		}
	}
	spec, err := groupSpec(cfg)
	if err != nil {
		return nil, fmt.Errorf("%w: group %q: %w", ErrBadRequest, cfg.ID, err)
	}
	return &SandboxGroup{spec: spec, opts: o, sandboxes: map[string]*Sandbox{}, futures: map[*Future]struct{}{}}, nil
}

func groupSpec(cfg GroupConfig) (schemas.GroupSpec, error) {
	var errs []error
	if err := schemas.ValidateID("group", cfg.ID); err != nil {
		errs = append(errs, err)
	}
	tools, families, err := readTools(cfg.Tools)
	errs = append(errs, err)
	if _, err := resources.Parse(cfg.ComputeResources); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, cfg.DatabaseAccess.Validate(), checkPlacement(cfg.Placement))
	if cfg.Egress != nil {
		errs = append(errs, cfg.Egress.Validate())
	}
	ttl, err := lifetimeSeconds("group ttl", cfg.TTL)
	errs = append(errs, err)
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
		Families:         families,
		Compute:          cfg.ComputeResources,
		DatabaseAccess:   cfg.DatabaseAccess,
		PopulationConfig: population,
		KeepDatabaseData: cfg.KeepDatabaseData,
		Overcommit:       cfg.Overcommit,
		Pool:             cfg.Pool,
		Egress:           cfg.Egress,
		Placement:        cfg.Placement,
		TTLSeconds:       ttl,
		Checkpoints:      cfg.Checkpoints,
	}
	if cfg.Checkpoints != nil && cfg.Checkpoints.Keep < 0 {
		errs = append(errs, schemas.Errorf(schemas.CodeBadRequest, "checkpoints.keep %d: want 0 (the default, %d) or more", cfg.Checkpoints.Keep, schemas.DefaultAutoKeep))
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
	tools, families, err := readTools(o.Tools)
	errs = append(errs, err)
	if _, err := resources.Parse(resources.Merge(defaults, o.ComputeResources)); err != nil {
		errs = append(errs, err)
	}
	if o.Egress != nil {
		errs = append(errs, o.Egress.Validate())
	}
	if o.AttachedDatabases != nil {
		errs = append(errs, o.AttachedDatabases.Validate())
	}
	ttl, err := lifetimeSeconds("ttl", o.TTL)
	errs = append(errs, err)
	idle, err := lifetimeSeconds("idle timeout", o.IdleTimeout)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return schemas.SandboxSpec{}, fmt.Errorf("sandbox %s: %w", id, err)
	}
	return schemas.SandboxSpec{
		ID:                 id,
		Tools:              tools,
		Families:           families,
		Compute:            o.ComputeResources,
		Databases:          o.AttachedDatabases,
		Egress:             o.Egress,
		TTLSeconds:         ttl,
		IdleTimeoutSeconds: idle,
		FromCheckpoint:     o.FromCheckpoint,
	}, nil
}

// checkPlacement refuses a placement that is none of the known ones.
func checkPlacement(p schemas.Placement) error {
	switch p {
	case "", schemas.PlacementSpread, schemas.PlacementPack:
		return nil
	}
	return fmt.Errorf("placement %q: want %q or %q", p, schemas.PlacementSpread, schemas.PlacementPack)
}

// ID returns the group's id.
func (g *SandboxGroup) ID() string { return g.spec.ID }

func (g *SandboxGroup) link() (*conn, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil, fmt.Errorf("group %s: %w", g.spec.ID, ErrClosed)
	}
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
		return nil, fmt.Errorf("%w: %w", ErrBadRequest, err)
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

// End ends every sandbox of the group and the group itself, then releases
// what the group holds in this process, as Close does, except that the
// group stays usable: a later call dials again (a second End answers
// ErrNotFound; Start creates the group anew). When End fails, the group
// keeps its connection so that End can be tried again; call Close to give
// up.
func (g *SandboxGroup) End(ctx context.Context) error {
	c, err := g.link()
	if err != nil {
		return err
	}
	if _, err := c.command(ctx, schemas.Command{Kind: schemas.EndGroup, GroupID: g.spec.ID}); err != nil {
		return err
	}
	g.release(false)
	return nil
}

// Close releases what the group holds in this process: every open Future
// is closed (its Wait returns ErrClosed) and the group's connection is
// closed if the group opened it. It does not end the group or its
// sandboxes in sandox: End does. Calls on the group after Close return
// ErrClosed. Close is idempotent and safe for concurrent use.
func (g *SandboxGroup) Close() error {
	g.release(true)
	return nil
}

// release closes the group's open futures and its connection; closed
// refuses every later call.
func (g *SandboxGroup) release(closed bool) {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return
	}
	g.closed = closed
	futures := make([]*Future, 0, len(g.futures))
	for f := range g.futures {
		futures = append(futures, f)
	}
	c := g.conn
	g.conn = nil
	g.mu.Unlock()
	for _, f := range futures {
		_ = f.Close()
	}
	if c != nil {
		c.close()
	}
}

// watch adds an open future to the group, so that Close closes it; the
// future leaves when it settles.
func (g *SandboxGroup) watch(f *Future) error {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return fmt.Errorf("group %s: %w", g.spec.ID, ErrClosed)
	}
	g.futures[f] = struct{}{}
	g.mu.Unlock()
	f.mu.Lock() // not under g.mu: see the lock order on SandboxGroup
	defer f.mu.Unlock()
	f.unwat = func() { g.forget(f) }
	return nil
}

func (g *SandboxGroup) forget(f *Future) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.futures, f)
}

// Refresh asks the orchestrator for the group's status and those of its
// sandboxes, and updates the handles of the sandboxes this process knows.
// It blocks until the answer (30 s unless ctx has a deadline). A group
// that does not exist (never started, or ended) is ErrNotFound.
func (g *SandboxGroup) Refresh(ctx context.Context) (schemas.GroupStatus, []schemas.SandboxStatus, error) {
	c, err := g.link()
	if err != nil {
		return schemas.GroupStatus{}, nil, err
	}
	reply, err := c.request(ctx, schemas.GroupStatusSubject(g.spec.ID))
	if err != nil {
		return schemas.GroupStatus{}, nil, fmt.Errorf("group %s: %w", g.spec.ID, err)
	}
	if reply.Group == nil {
		return schemas.GroupStatus{}, nil, fmt.Errorf("%w: group %s: status answered without a group", ErrInternal, g.spec.ID)
	}
	for _, st := range reply.Sandboxes {
		if sb := g.Sandbox(st.ID); sb != nil {
			sb.setStatus(st)
		}
	}
	return *reply.Group, reply.Sandboxes, nil
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
