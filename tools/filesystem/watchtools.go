package filesystem

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools"
)

type watchIDArg struct {
	WatchID string `json:"watch_id" jsonschema:"minLength=1,maxLength=63,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"The watch's id, as watch_start returned it."`
}

type watchStartArgs struct {
	Path      string   `json:"path,omitempty" jsonschema_description:"Directory to watch, inside the workspace; default the working directory."`
	Patterns  []string `json:"patterns,omitempty" jsonschema_description:"Report only paths matching one of these globs: without a slash a pattern matches the base name at any depth (*.py), with one the path below the watched directory, ** standing for any number of directories (src/**/*.go). Default: every path."`
	Recursive *bool    `json:"recursive,omitempty" jsonschema_description:"Also watch every subdirectory, those created later included; default true."`
	WatchID   string   `json:"watch_id,omitempty" jsonschema:"maxLength=63,pattern=^[A-Za-z0-9][A-Za-z0-9_-]*$" jsonschema_description:"Id to give the watch; default a fresh one. An id in use is refused."`
}

type watchListArgs struct{}

type watchEventsArgs struct {
	watchIDArg
	After       int64    `json:"after,omitempty" jsonschema:"minimum=0" jsonschema_description:"Return the events numbered after this one (the last n of the previous call); default 0, from the first kept."`
	WaitSeconds *float64 `json:"wait_seconds,omitempty" jsonschema:"minimum=0,maximum=3600" jsonschema_description:"Wait up to this many seconds for an event when there is none yet; default 0."`
}

type watchStopArgs struct {
	watchIDArg
}

// watchEventsReturn is the return of watch_events.
type watchEventsReturn struct {
	Watch  schemas.WatchInfo    `json:"watch"`
	Events []schemas.WatchEvent `json:"events"`
}

// watchTools returns watch_start, watch_list, watch_events and watch_stop.
func (ws *watchSet) tools(f *fsys) []tools.Tool {
	return []tools.Tool{
		tools.New(Family, "watch_start", "Watch a directory of the workspace (recursively, optionally only paths matching globs such as **/*.py) and return at once with the watch's id. Every create, write, remove and rename is recorded with a sequence number in the SANDOX_WATCH stream (sandbox.<id>.watch.<watch>.>), from which a client resumes after a disconnect; an overflow event says when the kernel dropped changes.",
			func(_ context.Context, a watchStartArgs) (tools.Result, error) {
				dir, err := f.here().absOr("watch_start", a.Path, ".")
				if err != nil {
					return tools.Result{}, err
				}
				recursive := a.Recursive == nil || *a.Recursive
				info, err := ws.start(watchRequest{id: a.WatchID, dir: dir, patterns: a.Patterns, recursive: recursive})
				if err != nil {
					return tools.Result{}, err
				}
				return watchResult(info, fmt.Sprintf("watching %s as %s\n", info.Path, info.WatchID))
			}),
		tools.New(Family, "watch_list", "List the sandbox's file watches, newest first, running or stopped, with how many events each saw.",
			func(_ context.Context, _ watchListArgs) (tools.Result, error) {
				infos := ws.list()
				var b strings.Builder
				for _, in := range infos {
					state := "running"
					if !in.Running {
						state = "stopped"
					}
					fmt.Fprintf(&b, "%s\t%s\t%d events\t%s %s\n", in.WatchID, state, in.Events, in.Path, strings.Join(in.Patterns, " "))
				}
				if len(infos) == 0 {
					b.WriteString("no watches\n")
				}
				ret, err := json.Marshal(infos)
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Stdout: b.String(), Return: ret}, nil
			}),
		tools.New(Family, "watch_events", "Return a watch's events numbered after a given one (its latest 1000 are kept here; the watch stream keeps them all), optionally waiting for the next.",
			func(ctx context.Context, a watchEventsArgs) (tools.Result, error) {
				w, err := ws.lookup(a.WatchID)
				if err != nil {
					return tools.Result{}, err
				}
				evs, changed, running := w.since(a.After)
				if wait := waitFor(a.WaitSeconds); len(evs) == 0 && running && wait > 0 {
					select {
					case <-changed:
					case <-time.After(wait):
					case <-ctx.Done():
					}
					evs, _, _ = w.since(a.After)
				}
				var b strings.Builder
				for _, ev := range evs {
					fmt.Fprintf(&b, "%d\t%s\t%s\n", ev.N, ev.Kind, ev.Path)
				}
				ret, err := json.Marshal(watchEventsReturn{Watch: w.snapshot(), Events: evs})
				if err != nil {
					return tools.Result{}, err
				}
				return tools.Result{Stdout: b.String(), Return: ret}, nil
			}),
		tools.New(Family, "watch_stop", "Stop a file watch; its last record in the stream says so. Its events stay readable.",
			func(_ context.Context, a watchStopArgs) (tools.Result, error) {
				w, err := ws.lookup(a.WatchID)
				if err != nil {
					return tools.Result{}, err
				}
				info := w.end()
				return watchResult(info, fmt.Sprintf("stopped watch %s after %d events\n", info.WatchID, info.Events))
			}),
	}
}

// waitFor turns an optional number of seconds into a duration; nil is 0.
func waitFor(s *float64) time.Duration {
	if s == nil || *s <= 0 {
		return 0
	}
	return time.Duration(*s * float64(time.Second))
}

// watchResult is an observation of a watch: its info as the return.
func watchResult(info schemas.WatchInfo, stdout string) (tools.Result, error) {
	ret, err := json.Marshal(info)
	if err != nil {
		return tools.Result{}, err
	}
	return tools.Result{Stdout: stdout, Return: ret}, nil
}

// WatchTools returns the file watch tools (watch_start, watch_list,
// watch_events, watch_stop) built on cfg and wcfg, and the function that
// stops every watch they started. Open adds them to the family; Tools
// alone has none, since a watch outlives its call.
func WatchTools(cfg Config, wcfg WatchConfig) ([]tools.Tool, func() error) {
	ws := newWatchSet(wcfg)
	return ws.tools(&fsys{cfg: cfg}), ws.close
}
