package groupdb

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/cleanup"
	"github.com/sandox/sandox/services/orchestrator/runtime"
	"github.com/sandox/sandox/services/orchestrator/state"
)

// Engine is what a group's databases need of the container engine.
type Engine interface {
	Create(ctx context.Context, spec runtime.ContainerSpec) (string, error)
	Start(ctx context.Context, id string) error
	Remove(ctx context.Context, id string) error
	Inspect(ctx context.Context, id string) (runtime.ContainerState, error)
	List(ctx context.Context, labels ...string) ([]runtime.ContainerState, error)
	Logs(ctx context.Context, id string, tail int) (string, error)
	runtime.Volumes
}

// Config says where and how a group's databases run.
type Config struct {
	// Network is the Docker network of the groups' database containers.
	Network string
	// System labels the containers (runtime.LabelSystem); "" turns
	// Reconcile off.
	System string
	// Host is the worker's host, recorded as the group's DatabaseHost.
	Host string
	// Neo4jImage and QdrantImage run the databases; "" refuses groups
	// that need them.
	Neo4jImage, QdrantImage string
	// QdrantDataDir is where the Qdrant image keeps its data.
	QdrantDataDir string
	// Neo4jPasswordFile is the host path of the neo4j user's password.
	Neo4jPasswordFile string
	// ReadyTimeout bounds how long a database may take to answer.
	ReadyTimeout time.Duration
	// PopulateTimeout bounds a group's population at start.
	PopulateTimeout time.Duration
}

// Databases starts, populates, restarts and removes the database
// containers of groups. It is safe for concurrent use.
type Databases struct {
	cfg      Config
	rt       Engine
	net      runtime.DatabaseRuntime
	store    *state.Store
	nc       *nats.Conn
	log      *slog.Logger
	restarts restarts
}

// New returns the databases of cfg on rt. net gives them a network and
// their addresses; nil refuses every group that needs a database. store
// holds the groups' records; population requests go over nc.
func New(cfg Config, rt Engine, net runtime.DatabaseRuntime, store *state.Store, nc *nats.Conn, log *slog.Logger) *Databases {
	return &Databases{cfg: cfg, rt: rt, net: net, store: store, nc: nc, log: log}
}

// Neo4jPasswordPath is where a Neo4j container finds its password.
const Neo4jPasswordPath = "/run/secrets/neo4j-password"

// Name is the Docker name of a group's database container and of its
// volume.
func Name(groupID, database string) string { return "sandox-db-" + groupID + "-" + database }

// groupDatabases lists the databases a group's spec names: in its grants,
// its sandboxes' grants or its population config, sorted.
func groupDatabases(spec schemas.GroupSpec) []string {
	seen := map[string]bool{}
	add := func(a schemas.DatabaseAccess) {
		for _, g := range a {
			seen[g.Database] = true
		}
	}
	add(spec.DatabaseAccess)
	for _, sb := range spec.Sandboxes {
		if sb.Databases != nil {
			add(*sb.Databases)
		}
	}
	for _, db := range []string{schemas.DatabaseQdrant, schemas.DatabaseNeo4j} {
		// A cheap look at the YAML: the data service parses it for real.
		if strings.Contains(spec.PopulationConfig, db+":") {
			seen[db] = true
		}
	}
	var out []string
	for db := range seen {
		out = append(out, db)
	}
	slices.Sort(out)
	return out
}

// spec is the container of one database of a group.
func (d *Databases) spec(groupID, db string) (runtime.ContainerSpec, int, error) {
	labels := map[string]string{runtime.LabelManaged: "true", runtime.LabelGroup: groupID, runtime.LabelDatabase: db}
	if d.cfg.System != "" {
		labels[runtime.LabelSystem] = d.cfg.System
	}
	spec := runtime.ContainerSpec{
		Name:    Name(groupID, db),
		Labels:  labels,
		Network: d.cfg.Network,
		Volumes: map[string]string{Name(groupID, db): "/data"},
		Init:    true,
	}
	switch db {
	case schemas.DatabaseNeo4j:
		if d.cfg.Neo4jImage == "" || d.cfg.Neo4jPasswordFile == "" {
			return spec, 0, schemas.Errorf(schemas.CodeUnsupported, "group %s needs neo4j, and this orchestrator has no Neo4j image or password configured", groupID)
		}
		spec.Image = d.cfg.Neo4jImage
		spec.MemoryBytes = 1 << 30
		spec.Binds = []runtime.Bind{{Source: d.cfg.Neo4jPasswordFile, Target: Neo4jPasswordPath, ReadOnly: true}}
		return spec, 7687, nil
	case schemas.DatabaseQdrant:
		if d.cfg.QdrantImage == "" {
			return spec, 0, schemas.Errorf(schemas.CodeUnsupported, "group %s needs qdrant, and this orchestrator has no Qdrant image configured", groupID)
		}
		spec.Image = d.cfg.QdrantImage
		spec.MemoryBytes = 1 << 30
		if d.cfg.QdrantDataDir != "" {
			spec.Volumes = map[string]string{spec.Name: d.cfg.QdrantDataDir}
		}
		return spec, 6334, nil
	}
	return spec, 0, schemas.Errorf(schemas.CodeBadRequest, "unknown database %q", db)
}

// Start runs each database the group needs in its own container
// on DatabaseNetwork with a volume of its own, waits until each answers,
// and records the endpoints in the group's status. What it made is undone
// when it fails.
func (d *Databases) Start(ctx context.Context, g schemas.GroupStatus) (schemas.GroupStatus, error) {
	dbs := groupDatabases(g.Spec)
	if len(dbs) == 0 {
		return g, nil
	}
	if d.net == nil {
		return g, schemas.Errorf(schemas.CodeUnsupported, "group %s needs databases, which this runtime cannot run", g.ID)
	}
	if err := d.net.EnsureNetwork(ctx, d.cfg.Network, map[string]string{runtime.LabelManaged: "true"}); err != nil {
		return g, err
	}
	var endpoints []schemas.DatabaseEndpoint
	undo := &cleanup.Stack{}
	ok := false
	defer func() {
		if !ok {
			if err := undo.Run(ctx); err != nil {
				d.log.Error("a failed database start left resources behind", "group", g.ID, "err", err)
			}
		}
	}()
	for _, db := range dbs {
		spec, port, err := d.spec(g.ID, db)
		if err != nil {
			return g, err
		}
		name := spec.Name
		if !g.Spec.KeepDatabaseData {
			undo.Push("volume", func(ctx context.Context) error { return d.rt.RemoveVolume(ctx, name) })
		}
		if err := d.rt.CreateVolume(ctx, runtime.VolumeSpec{Name: name, Labels: spec.Labels}); err != nil {
			return g, fmt.Errorf("volume of %s: %w", db, err)
		}
		undo.Push("container", func(ctx context.Context) error { return d.rt.Remove(ctx, name) })
		_ = d.rt.Remove(ctx, name) // a leftover of a worker that died
		id, err := d.rt.Create(ctx, spec)
		if err != nil {
			return g, fmt.Errorf("container of %s: %w", db, err)
		}
		if err := d.rt.Start(ctx, id); err != nil {
			return g, fmt.Errorf("start %s: %w", db, err)
		}
		ip, err := d.net.ContainerIP(ctx, id, d.cfg.Network)
		if err != nil {
			return g, err
		}
		addr := net.JoinHostPort(ip, fmt.Sprint(port))
		endpoints = append(endpoints, schemas.DatabaseEndpoint{Database: db, Address: addr, Container: name, Volume: name})
	}
	for _, e := range endpoints {
		if err := waitDatabase(ctx, e, d.cfg.ReadyTimeout); err != nil {
			logs, _ := d.rt.Logs(ctx, e.Container, 20)
			return g, schemas.Errorf(schemas.CodeUnavailable, "%s of group %s: %w; its last log lines:\n%s", e.Database, g.ID, err, logs)
		}
		d.log.Info("database ready", "group", g.ID, "database", e.Database, "address", e.Address)
	}
	g, err := d.store.UpdateGroup(ctx, g.ID, func(st *schemas.GroupStatus) error {
		st.Databases, st.DatabaseHost = endpoints, d.cfg.Host
		return nil
	})
	if err != nil {
		return g, err
	}
	ok = true
	return g, nil
}

// waitDatabase waits until the database at e answers: Neo4j with a Bolt
// handshake, Qdrant with a TCP connection to its gRPC port.
func waitDatabase(ctx context.Context, e schemas.DatabaseEndpoint, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		if last = probe(ctx, e); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
	return fmt.Errorf("not ready after %s: %w", timeout, last)
}

func probe(ctx context.Context, e schemas.DatabaseEndpoint) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	c, err := d.DialContext(ctx, "tcp", e.Address)
	if err != nil {
		return err
	}
	defer c.Close()
	if e.Database != schemas.DatabaseNeo4j {
		return nil
	}
	// Bolt: the magic preamble and four versions (5.x, 4.4); the server
	// answers with the version it agrees to, all zero if none.
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	hello := []byte{0x60, 0x60, 0xB0, 0x17, 0, 0, 4, 5, 0, 0, 4, 4, 0, 0, 0, 0, 0, 0, 0, 0}
	if _, err := c.Write(hello); err != nil {
		return err
	}
	var v [4]byte
	if _, err := io.ReadFull(c, v[:]); err != nil {
		return err
	}
	if binary.BigEndian.Uint32(v[:]) == 0 {
		return errors.New("bolt: no version agreed")
	}
	return nil
}

// Populate asks the data service to load the group's population config
// and waits for it (PopulateTimeout). Bad rows are logged; a failed
// population fails the start.
func (d *Databases) Populate(ctx context.Context, g schemas.GroupStatus) error {
	if g.Spec.PopulationConfig == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.PopulateTimeout)
	defer cancel()
	req, _ := json.Marshal(schemas.PopulateRequest{GroupID: g.ID})
	m, err := d.nc.RequestWithContext(ctx, schemas.PopulateSubject, req)
	if errors.Is(err, nats.ErrNoResponders) {
		return schemas.Errorf(schemas.CodeUnavailable, "populate group %s: no data service answers %s", g.ID, schemas.PopulateSubject)
	}
	if err != nil {
		return schemas.Errorf(schemas.CodeUnavailable, "populate group %s: %w", g.ID, err)
	}
	var reply schemas.PopulateReply
	if err := json.Unmarshal(m.Data, &reply); err != nil {
		return schemas.Errorf(schemas.CodeInternal, "populate group %s: %w", g.ID, err)
	}
	for _, s := range reply.Sources {
		for _, b := range s.Bad {
			d.log.Warn("population skipped a row", "group", g.ID, "source", b.Source, "line", b.Line, "reason", b.Reason)
		}
	}
	if reply.Error != nil {
		return reply.Error
	}
	return nil
}

// Stop removes the group's database containers, and their volumes
// unless the spec keeps the data.
func (d *Databases) Stop(ctx context.Context, g schemas.GroupStatus) error {
	var errs []error
	for _, db := range []string{schemas.DatabaseNeo4j, schemas.DatabaseQdrant} {
		name := Name(g.ID, db)
		if err := d.rt.Remove(ctx, name); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			errs = append(errs, err)
		}
		if !g.Spec.KeepDatabaseData {
			if err := d.rt.RemoveVolume(ctx, name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
