package sdk

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/sandox/sandox/schemas"
)

// WatchOptions are the choices of Sandbox.Watch. The zero value watches
// recursively, every path, under a fresh id.
type WatchOptions struct {
	// ID names the watch: 1-63 letters, digits, '-' or '_'. Empty means
	// the sandbox makes one up.
	ID string
	// Patterns, when not empty, limit the events to paths matching one of
	// these globs: "*.py" matches the base name at any depth,
	// "src/**/*.go" the path below the watched directory.
	Patterns []string
	// Shallow watches the directory itself only, not its subdirectories.
	Shallow bool
}

// Watch is a file watch running in a sandbox
// (filesystem_tools.watch_start). Its events are kept in the
// SANDOX_WATCH stream, so any client can follow them, from any point,
// while it runs and after it stopped. A Watch is safe for concurrent use.
type Watch struct {
	sandbox *Sandbox
	id      string
}

// Watch starts watching path (a directory inside the sandbox's
// workspace, relative to its working directory or absolute) and returns
// once the watch runs and its start is recorded: changes from then on are
// reported. The sandbox needs filesystem_tools. A bad id, pattern or path
// is ErrBadRequest, an id in use ErrAlreadyExists, a sandbox at its limit
// of watches ErrResourceExhausted.
func (s *Sandbox) Watch(ctx context.Context, path string, opts WatchOptions) (*Watch, schemas.WatchInfo, error) {
	args := map[string]any{"path": path, "recursive": !opts.Shallow}
	if opts.ID != "" {
		args["watch_id"] = opts.ID
	}
	if len(opts.Patterns) > 0 {
		args["patterns"] = opts.Patterns
	}
	var info schemas.WatchInfo
	if err := s.watchCall(ctx, "watch_start", args, &info); err != nil {
		return nil, info, err
	}
	return s.AttachWatch(info.WatchID), info, nil
}

// AttachWatch returns a handle on watch id of the sandbox, started by
// this client or another. It does not check that the watch exists:
// Events does.
func (s *Sandbox) AttachWatch(id string) *Watch { return &Watch{sandbox: s, id: id} }

// Watches lists the sandbox's watches, running or stopped, newest first,
// as its executor knows them.
func (s *Sandbox) Watches(ctx context.Context) ([]schemas.WatchInfo, error) {
	var infos []schemas.WatchInfo
	err := s.watchCall(ctx, "watch_list", map[string]any{}, &infos)
	return infos, err
}

// ID returns the watch's id.
func (w *Watch) ID() string { return w.id }

// Stop stops the watch and returns its info; its stop record is the last
// one Events hands on. An unknown watch is ErrNotFound.
func (w *Watch) Stop(ctx context.Context) (schemas.WatchInfo, error) {
	var info schemas.WatchInfo
	err := w.sandbox.watchCall(ctx, "watch_stop", map[string]any{"watch_id": w.id}, &info)
	return info, err
}

// watchCall runs filesystem_tools.<tool> with args as a one-action batch
// and decodes the observation's return into ret. An action error is
// returned as the sentinel of its code.
func (s *Sandbox) watchCall(ctx context.Context, tool string, args any, ret any) error {
	data, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadRequest, err)
	}
	obs, err := s.SendActions(ctx, schemas.Actions{{Tool: "filesystem_tools." + tool, Args: data}})
	if err != nil {
		return err
	}
	if len(obs) != 1 {
		return fmt.Errorf("%w: %s: %d observations, want 1", ErrInternal, tool, len(obs))
	}
	o := obs[0]
	if o.Error != nil {
		return fmt.Errorf("sandbox %s: %s: %w", s.id, tool, fromWire(o.Error))
	}
	if err := json.Unmarshal(o.Return, ret); err != nil {
		return fmt.Errorf("%w: %s: decode %s: %w", ErrInternal, tool, o.Return, err)
	}
	return nil
}
