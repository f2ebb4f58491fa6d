package multihost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/build"
	"github.com/sandox/sandox/internal/docker"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// secondEngineHost is where build/scripts/engine2.sh serves the second
// engine; SANDOX_DOCKER2_HOST overrides it, as for the script.
func secondEngineHost() string {
	if h := os.Getenv("SANDOX_DOCKER2_HOST"); h != "" {
		return h
	}
	return "unix:///run/sandox-docker2.sock"
}

// firstEngineHost is the machine's engine: DOCKER_HOST, or the local socket.
func firstEngineHost() string {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h
	}
	return "unix:///var/run/docker.sock"
}

// engine is one Docker engine, one sandox host of the test.
type engine struct {
	host string // the orchestrator host name, -host of its worker
	url  string // DOCKER_HOST of its worker
	api  *client.Client
}

// openEngine connects to the engine at url and checks it answers.
func openEngine(ctx context.Context, host, url string) (*engine, error) {
	api, err := client.NewClientWithOpts(client.WithHost(url), client.WithAPIVersionNegotiation())
	if err != nil {
		return nil, err
	}
	ping, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := api.Ping(ping); err != nil {
		api.Close()
		return nil, fmt.Errorf("engine %s at %s: %w", host, url, err)
	}
	return &engine{host: host, url: url, api: api}, nil
}

// requireEngines returns the two engines: the machine's, and the second
// one. It skips when the second engine's socket is absent and CI is unset,
// and fails under CI, whose scripts start it.
func requireEngines(t *testing.T) (*engine, *engine) {
	t.Helper()
	url := secondEngineHost()
	if path, ok := strings.CutPrefix(url, "unix://"); ok {
		if _, err := os.Stat(path); err != nil {
			if os.Getenv("CI") == "" {
				t.Skipf("no second Docker engine at %s: start one with build/scripts/engine2.sh (CI does)", url)
			}
			t.Fatalf("CI is set but the second Docker engine's socket %s is absent: build/scripts/test-deps.sh runs engine2.sh", path)
		}
	}
	e1, err := openEngine(t.Context(), "h1", firstEngineHost())
	require.NoError(t, err)
	t.Cleanup(func() { e1.api.Close() })
	e2, err := openEngine(t.Context(), "h2", url)
	require.NoError(t, err)
	t.Cleanup(func() { e2.api.Close() })
	i1, err := e1.api.Info(t.Context())
	require.NoError(t, err)
	i2, err := e2.api.Info(t.Context())
	require.NoError(t, err)
	require.NotEqual(t, i1.ID, i2.ID, "the two engines must be distinct engines")
	return e1, e2
}

// ensureImages builds the sandbox image on the first engine when it is not
// current (as the integration suite does) and copies it to the second when
// the second holds another id under its name: keyed by content.
func ensureImages(t *testing.T, first, second *engine, images ...string) {
	t.Helper()
	ctx := t.Context()
	d, err := docker.New(ctx)
	require.NoError(t, err)
	defer d.Close()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	b := build.NewBuilder(d, build.DefaultConfig(root))
	_, err = b.All(ctx, build.SandboxImages)
	require.NoError(t, err, "sandbox image")
	for _, ref := range images {
		require.NoError(t, copyImage(ctx, first, second, ref), "copy %s", ref)
	}
}

// copyImage saves ref on from and loads it into to, unless to already has
// the same image id under ref.
func copyImage(ctx context.Context, from, to *engine, ref string) error {
	want, err := from.api.ImageInspect(ctx, ref)
	if err != nil {
		return err
	}
	if have, err := to.api.ImageInspect(ctx, ref); err == nil && have.ID == want.ID {
		return nil
	}
	r, err := from.api.ImageSave(ctx, []string{ref})
	if err != nil {
		return err
	}
	defer r.Close()
	resp, err := to.api.ImageLoad(ctx, r)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// leftovers counts what the engine still holds with the label: containers
// (running or not), volumes and networks.
type leftovers struct{ containers, volumes, networks []string }

func (l leftovers) empty() bool {
	return len(l.containers)+len(l.volumes)+len(l.networks) == 0
}

// labelled lists what e holds with label (key=value or key).
func (e *engine) labelled(ctx context.Context, label string) (leftovers, error) {
	var l leftovers
	f := filters.NewArgs(filters.Arg("label", label))
	cs, err := e.api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return l, err
	}
	for _, c := range cs {
		l.containers = append(l.containers, c.ID[:12]+" "+c.Labels[runtime.LabelSandbox])
	}
	vs, err := e.api.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return l, err
	}
	for _, v := range vs.Volumes {
		l.volumes = append(l.volumes, v.Name)
	}
	ns, err := e.api.NetworkList(ctx, network.ListOptions{Filters: f})
	if err != nil {
		return l, err
	}
	for _, n := range ns {
		l.networks = append(l.networks, n.Name)
	}
	return l, nil
}

// sandboxContainers maps each sandbox id to how many containers of the
// system carry it on e.
func (e *engine) sandboxContainers(ctx context.Context, system string) (map[string]int, error) {
	f := filters.NewArgs(filters.Arg("label", runtime.LabelSystem+"="+system), filters.Arg("label", runtime.LabelSandbox))
	cs, err := e.api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	n := map[string]int{}
	for _, c := range cs {
		n[c.Labels[runtime.LabelSandbox]]++
	}
	return n, nil
}

// logsContaining counts the sandbox containers of system on e whose log
// holds text, and all of them.
func (e *engine) logsContaining(ctx context.Context, system, text string) (found, all int, err error) {
	f := filters.NewArgs(filters.Arg("label", runtime.LabelSystem+"="+system), filters.Arg("label", runtime.LabelSandbox))
	cs, err := e.api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return 0, 0, err
	}
	for _, c := range cs {
		rc, err := e.api.ContainerLogs(ctx, c.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
		if err != nil {
			return 0, 0, err
		}
		var out bytes.Buffer
		_, err = stdcopy.StdCopy(&out, &out, rc)
		rc.Close()
		if err != nil {
			return 0, 0, err
		}
		all++
		if bytes.Contains(out.Bytes(), []byte(text)) {
			found++
		}
	}
	return found, all, nil
}

// removeLabelled removes whatever e holds with label: the teardown of a
// failed run, so that it leaves nothing behind.
func (e *engine) removeLabelled(ctx context.Context, label string) error {
	f := filters.NewArgs(filters.Arg("label", label))
	var errs []error
	cs, err := e.api.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	errs = append(errs, err)
	for _, c := range cs {
		errs = append(errs, e.api.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true}))
	}
	vs, err := e.api.VolumeList(ctx, volume.ListOptions{Filters: f})
	errs = append(errs, err)
	if err == nil {
		for _, v := range vs.Volumes {
			errs = append(errs, e.api.VolumeRemove(ctx, v.Name, true))
		}
	}
	ns, err := e.api.NetworkList(ctx, network.ListOptions{Filters: f})
	errs = append(errs, err)
	for _, n := range ns {
		errs = append(errs, e.api.NetworkRemove(ctx, n.ID))
	}
	return errors.Join(errs...)
}
