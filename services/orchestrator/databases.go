package orchestrator

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// Neo4jPasswordPath is where a Neo4j container finds its password.
const Neo4jPasswordPath = "/run/secrets/neo4j-password"

// DatabaseName is the Docker name of a group's database container and of
// its volume.
func DatabaseName(groupID, database string) string { return "sandox-db-" + groupID + "-" + database }

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

// databaseSpec is the container of one database of a group.
func (w *Worker) databaseSpec(groupID, db string) (runtime.ContainerSpec, int, error) {
	labels := map[string]string{runtime.LabelManaged: "true", runtime.LabelGroup: groupID, runtime.LabelDatabase: db}
	if w.cfg.System != "" {
		labels[runtime.LabelSystem] = w.cfg.System
	}
	spec := runtime.ContainerSpec{
		Name:    DatabaseName(groupID, db),
		Labels:  labels,
		Network: w.cfg.DatabaseNetwork,
		Volumes: map[string]string{DatabaseName(groupID, db): "/data"},
		Init:    true,
	}
	switch db {
	case schemas.DatabaseNeo4j:
		if w.cfg.Neo4jImage == "" || w.cfg.Neo4jPasswordFile == "" {
			return spec, 0, schemas.Errorf(schemas.CodeUnsupported, "group %s needs neo4j, and this orchestrator has no Neo4j image or password configured", groupID)
		}
		spec.Image = w.cfg.Neo4jImage
		spec.MemoryBytes = 1 << 30
		spec.Binds = []runtime.Bind{{Source: w.cfg.Neo4jPasswordFile, Target: Neo4jPasswordPath, ReadOnly: true}}
		return spec, 7687, nil
	case schemas.DatabaseQdrant:
		if w.cfg.QdrantImage == "" {
			return spec, 0, schemas.Errorf(schemas.CodeUnsupported, "group %s needs qdrant, and this orchestrator has no Qdrant image configured", groupID)
		}
		spec.Image = w.cfg.QdrantImage
		spec.MemoryBytes = 1 << 30
		if w.cfg.QdrantDataDir != "" {
			spec.Volumes = map[string]string{spec.Name: w.cfg.QdrantDataDir}
		}
		return spec, 6334, nil
	}
	return spec, 0, schemas.Errorf(schemas.CodeBadRequest, "unknown database %q", db)
}

// startDatabases runs each database the group needs in its own container
// on DatabaseNetwork with a volume of its own, waits until each answers,
// and records the endpoints in the group's status. What it made is undone
// when it fails.
func (w *Worker) startDatabases(ctx context.Context, g schemas.GroupStatus) (schemas.GroupStatus, error) {
	dbs := groupDatabases(g.Spec)
	if len(dbs) == 0 {
		return g, nil
	}
	if w.dbrt == nil {
		return g, schemas.Errorf(schemas.CodeUnsupported, "group %s needs databases, which this runtime cannot run", g.ID)
	}
	if err := w.dbrt.EnsureNetwork(ctx, w.cfg.DatabaseNetwork, map[string]string{runtime.LabelManaged: "true"}); err != nil {
		return g, err
	}
	var endpoints []schemas.DatabaseEndpoint
	undo := &cleanup{}
	ok := false
	defer func() {
		if !ok {
			if err := undo.run(ctx); err != nil {
				w.log.Error("a failed database start left resources behind", "group", g.ID, "err", err)
			}
		}
	}()
	for _, db := range dbs {
		spec, port, err := w.databaseSpec(g.ID, db)
		if err != nil {
			return g, err
		}
		name := spec.Name
		if !g.Spec.KeepDatabaseData {
			undo.push(resVolume, func(ctx context.Context) error { return w.rt.RemoveVolume(ctx, name) })
		}
		if err := w.rt.CreateVolume(ctx, runtime.VolumeSpec{Name: name, Labels: spec.Labels}); err != nil {
			return g, fmt.Errorf("volume of %s: %w", db, err)
		}
		undo.push(resContainer, func(ctx context.Context) error { return w.rt.Remove(ctx, name) })
		_ = w.rt.Remove(ctx, name) // a leftover of a worker that died
		id, err := w.rt.Create(ctx, spec)
		if err != nil {
			return g, fmt.Errorf("container of %s: %w", db, err)
		}
		if err := w.rt.Start(ctx, id); err != nil {
			return g, fmt.Errorf("start %s: %w", db, err)
		}
		ip, err := w.dbrt.ContainerIP(ctx, id, w.cfg.DatabaseNetwork)
		if err != nil {
			return g, err
		}
		addr := net.JoinHostPort(ip, fmt.Sprint(port))
		endpoints = append(endpoints, schemas.DatabaseEndpoint{Database: db, Address: addr, Container: name, Volume: name})
	}
	for _, e := range endpoints {
		if err := waitDatabase(ctx, e, w.cfg.DatabaseReadyTimeout); err != nil {
			logs, _ := w.rt.Logs(ctx, e.Container, 20)
			return g, schemas.Errorf(schemas.CodeUnavailable, "%s of group %s: %w; its last log lines:\n%s", e.Database, g.ID, err, logs)
		}
		w.log.Info("database ready", "group", g.ID, "database", e.Database, "address", e.Address)
	}
	g, err := w.store.updateGroup(ctx, g.ID, func(st *schemas.GroupStatus) error {
		st.Databases, st.DatabaseHost = endpoints, w.hostName
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

// populate asks the data service to load the group's population config
// and waits for it (PopulateTimeout). Bad rows are logged; a failed
// population fails the start.
func (w *Worker) populate(ctx context.Context, g schemas.GroupStatus) error {
	if g.Spec.PopulationConfig == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, w.cfg.PopulateTimeout)
	defer cancel()
	req, _ := json.Marshal(schemas.PopulateRequest{GroupID: g.ID})
	m, err := w.nc.RequestWithContext(ctx, schemas.PopulateSubject, req)
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
			w.log.Warn("population skipped a row", "group", g.ID, "source", b.Source, "line", b.Line, "reason", b.Reason)
		}
	}
	if reply.Error != nil {
		return reply.Error
	}
	return nil
}

// stopDatabases removes the group's database containers, and their volumes
// unless the spec keeps the data.
func (w *Worker) stopDatabases(ctx context.Context, g schemas.GroupStatus) error {
	var errs []error
	for _, db := range []string{schemas.DatabaseNeo4j, schemas.DatabaseQdrant} {
		name := DatabaseName(g.ID, db)
		if err := w.rt.Remove(ctx, name); err != nil && !errors.Is(err, runtime.ErrNotFound) {
			errs = append(errs, err)
		}
		if !g.Spec.KeepDatabaseData {
			if err := w.rt.RemoveVolume(ctx, name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}
