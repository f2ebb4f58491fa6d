package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/mcp"
)

// serveMCP serves a sandbox's tools over MCP:
//
//	sandox mcp --sandbox ID [--http ADDR]          an existing sandbox
//	sandox mcp --group-config FILE [--http ADDR]   a new sandbox per session
//
// Without --http it speaks MCP on stdin and stdout; logs go to stderr.
func serveMCP(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("mcp", flag.ContinueOnError)
	url := fs.String("nats", envOr(sdk.URLEnv, localNATSURL), "NATS URL (env SANDOX_NATS_URL)")
	creds := fs.String("creds", "", "NATS credentials file")
	sandbox := fs.String("sandbox", "", "attach to this existing sandbox")
	groupFile := fs.String("group-config", "", "start this group (JSON, see docs/mcp.md) and create a sandbox for each MCP session, ended when the session ends")
	addr := fs.String("http", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8931) instead of stdio")
	checkpoints := fs.Bool("checkpoints", false, "also offer the checkpoint tools: sandox_checkpoint, sandox_list_checkpoints, sandox_diff_checkpoints, sandox_rollback, sandox_fork (docs/checkpoints.md)")
	pause := fs.Bool("pause", false, "also offer sandox_pause and sandox_resume of the sandbox (docs/pause.md)")
	dotted := fs.Bool("dotted-names", false, "offer tools as filesystem_tools.read_file instead of filesystem_tools__read_file (some clients refuse dots)")
	idle := fs.Duration("session-timeout", 30*time.Minute, "with --http, close a session (and end its sandbox) after this long without requests")
	tokenFile := fs.String("token-file", "", "with --http, the bearer token every request must carry (default: $"+envMCPToken+", else ~/.config/sandox/mcp.token, made on first use)")
	noAuth := fs.Bool("no-auth", false, "with --http on a loopback address, take requests without a token")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*sandbox == "") == (*groupFile == "") {
		return errors.New("usage: sandox mcp --sandbox ID | --group-config FILE [--http ADDR]")
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	opts := mcp.Options{Name: "sandox", Logger: log, DottedNames: *dotted, Checkpoints: *checkpoints, Pause: *pause}
	guard := func(h http.Handler) http.Handler { return h }
	if *addr != "" {
		var err error
		if guard, err = httpGuard(*addr, *tokenFile, *noAuth, os.Getenv(envMCPToken), log); err != nil {
			return err
		}
	}
	sdkOpts := []sdk.Option{sdk.WithURL(*url)}
	if *creds != "" {
		sdkOpts = append(sdkOpts, sdk.WithCredentials(*creds))
	}
	if *sandbox != "" {
		return mcpAttach(ctx, *sandbox, *addr, guard, opts, sdkOpts)
	}
	return mcpPerSession(ctx, *groupFile, *addr, *idle, guard, opts, sdkOpts)
}

func mcpAttach(ctx context.Context, id, addr string, guard func(http.Handler) http.Handler, opts mcp.Options, sdkOpts []sdk.Option) error {
	g, err := sdk.NewSandboxGroup(sdk.GroupConfig{ID: cliGroup}, sdkOpts...)
	if err != nil {
		return err
	}
	// Close lets the connection go; End would end a group that is not ours.
	defer g.Close()
	srv, err := mcp.NewServer(ctx, g.Attach(id), opts)
	if err != nil {
		return err
	}
	if addr == "" {
		return srv.Run(ctx, &sdkmcp.StdioTransport{})
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	h := sdkmcp.NewStreamableHTTPHandler(func(*http.Request) *sdkmcp.Server { return srv }, &sdkmcp.StreamableHTTPOptions{Logger: opts.Logger})
	return serveHTTP(ctx, ln, guard(h), opts.Logger)
}

func mcpPerSession(ctx context.Context, file, addr string, idle time.Duration, guard func(http.Handler) http.Handler, opts mcp.Options, sdkOpts []sdk.Option) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	cfg, sbOpts, err := mcp.ParseGroupFile(f, filepath.Dir(file))
	f.Close()
	if err != nil {
		return err
	}
	g, err := sdk.NewSandboxGroup(cfg, sdkOpts...)
	if err != nil {
		return err
	}
	if err := g.Start(ctx); err != nil {
		return errors.Join(err, g.End(context.WithoutCancel(ctx)))
	}
	opts.Logger.Info("group started", "group", g.ID())
	ps := mcp.NewPerSession(mcp.GroupOpener{Group: g, Sandbox: sbOpts}, opts)
	var serveErr error
	if addr == "" {
		serveErr = ps.Run(ctx, &sdkmcp.StdioTransport{})
	} else if ln, err := net.Listen("tcp", addr); err != nil {
		serveErr = err
	} else {
		h := ps.Handler(&sdkmcp.StreamableHTTPOptions{Logger: opts.Logger, SessionTimeout: idle})
		serveErr = serveHTTP(ctx, ln, guard(h), opts.Logger)
	}
	cleanup := context.WithoutCancel(ctx)
	return errors.Join(serveErr, ps.Close(cleanup), g.End(cleanup))
}

// serveHTTP serves h on ln until ctx ends, then shuts the server down. It
// returns nil after a clean shutdown.
func serveHTTP(ctx context.Context, ln net.Listener, h http.Handler, log *slog.Logger) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	log.Info("MCP streamable HTTP", "url", fmt.Sprintf("http://%s/", ln.Addr()))
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	err := srv.Shutdown(shut)
	if e := <-done; !errors.Is(e, http.ErrServerClosed) {
		err = errors.Join(err, e)
	}
	return err
}
