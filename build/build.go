// Package build makes sandox's images from local parts, so that a machine
// with no container registry can run sandox: the Debian base image
// (scripts/base-image.sh: pulled where a registry answers, else made with
// mmdebstrap), the default sandbox image (sandbox.Dockerfile: the executor
// built on this machine, uv from its PyPI wheel) and the control-plane
// image (control.Dockerfile: NATS, the orchestrator, the search service and
// the data service).
//
// Each image carries a label with the hash of its build context, so a build
// whose inputs did not change is skipped.
package build

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/sandox/sandox/internal/docker"
)

// Image names.
const (
	BaseImage    = "sandox/base:bookworm"
	SandboxImage = "sandox/sandbox:latest"
	ControlImage = "sandox/control:latest"
)

//go:embed sandbox.Dockerfile
var sandboxDockerfile []byte

//go:embed control.Dockerfile
var controlDockerfile []byte

// Config says where the parts come from.
type Config struct {
	// RepoRoot is the root of the sandox source tree (holds go.mod).
	RepoRoot string
	// CacheDir keeps built binaries and downloaded wheels between runs.
	CacheDir string
	// UVVersion is the uv release put into the sandbox image.
	UVVersion string
	// Progress receives the builds' output; nil discards it.
	Progress io.Writer
	// NoPull never asks a registry for an official image (Qdrant's); the
	// local build is used instead.
	NoPull bool
	// PullTimeout bounds one attempt to pull an official image.
	PullTimeout time.Duration
}

// defaultPullTimeout is Config.PullTimeout when none is set.
const defaultPullTimeout = 5 * time.Minute

// DefaultConfig returns the configuration for a source tree at root.
func DefaultConfig(root string) Config {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return Config{
		RepoRoot:    root,
		CacheDir:    filepath.Join(cache, "sandox"),
		UVVersion:   "0.13.9",
		PullTimeout: defaultPullTimeout,
	}
}

// Builder builds the images on one engine. Its methods are safe for
// concurrent use: builds that need the base image wait for the one that
// makes it.
type Builder struct {
	cfg    Config
	docker *docker.Client
	// base serialises making BaseImage, which every other image starts
	// FROM; it is shared by the builders that with returns.
	base *sync.Mutex
	// bins holds the Go binaries built so far, shared the same way.
	bins *binaries
}

// NewBuilder returns a builder.
func NewBuilder(d *docker.Client, cfg Config) *Builder {
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	cfg.Progress = &syncWriter{w: cfg.Progress}
	if cfg.PullTimeout <= 0 {
		cfg.PullTimeout = defaultPullTimeout
	}
	return &Builder{cfg: cfg, docker: d, base: new(sync.Mutex), bins: &binaries{built: map[string][]byte{}}}
}

// Base makes BaseImage by running scripts/base-image.sh, unless it is
// present, and returns its image id. Concurrent calls make it once.
func (b *Builder) Base(ctx context.Context) (string, error) {
	b.base.Lock()
	defer b.base.Unlock()
	if id, err := b.docker.ImageID(ctx, BaseImage); err == nil {
		return id, nil
	}
	fmt.Fprintf(b.cfg.Progress, "==> base image %s\n", BaseImage)
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(b.cfg.RepoRoot, "build", "scripts", "base-image.sh"))
	cmd.Stdout, cmd.Stderr = b.cfg.Progress, b.cfg.Progress
	cmd.Env = append(os.Environ(), "SANDOX_BASE_IMAGE="+BaseImage)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("base image %s: %w", BaseImage, err)
	}
	id, err := b.docker.ImageID(ctx, BaseImage)
	if err != nil {
		return "", fmt.Errorf("base image %s: %w", BaseImage, err)
	}
	return id, nil
}

// Sandbox makes SandboxImage.
func (b *Builder) Sandbox(ctx context.Context) error {
	// The entrypoint leaves out the web family, so that an idle sandbox
	// maps a binary less than half the size; it hands a sandbox that
	// names web_tools to the full build (executor/cmd/sandox-executor).
	small, err := b.goBinaries(ctx, "nowebtools", []string{"nowebtools"}, "./executor/cmd/sandox-executor")
	if err != nil {
		return err
	}
	full, err := b.goBinaries(ctx, "full", nil, "./executor/cmd/sandox-executor")
	if err != nil {
		return err
	}
	uv, err := b.uvBinary(ctx)
	if err != nil {
		return err
	}
	return b.buildIfChanged(ctx, SandboxImage, map[string][]byte{
		"Dockerfile":           sandboxDockerfile,
		"sandox-executor":      small["sandox-executor"],
		"sandox-executor-full": full["sandox-executor"],
		"uv":                   uv,
	})
}

// Control makes ControlImage.
func (b *Builder) Control(ctx context.Context) error {
	files, err := b.goBinaries(ctx, "full", nil,
		"./services/natsd/cmd/sandox-nats",
		"./services/orchestrator/cmd/sandox-orchestrator",
		"./services/search/cmd/sandox-search",
		"./services/data/cmd/sandox-data",
		"./services/dashboard/cmd/sandox-dashboard")
	if err != nil {
		return err
	}
	files["Dockerfile"] = controlDockerfile
	return b.buildIfChanged(ctx, ControlImage, files)
}

func (b *Builder) buildIfChanged(ctx context.Context, tag string, files map[string][]byte) error {
	modes := make(map[string]int64, len(files))
	for name := range files {
		if name != "Dockerfile" {
			modes[name] = 0o755 // every other file in these contexts is a binary
		}
	}
	_, err := b.buildHashed(ctx, tag, files, modes)
	return err
}

// buildHashed builds files as tag unless tag already carries the context's
// hash, and returns that hash. It blocks until the build ends.
func (b *Builder) buildHashed(ctx context.Context, tag string, files map[string][]byte, modes map[string]int64) (string, error) {
	baseID, err := b.Base(ctx)
	if err != nil {
		return "", fmt.Errorf("%s needs %s: %w", tag, BaseImage, err)
	}
	hash := docker.ContextHash(files, baseID)
	if labels, err := b.docker.ImageLabels(ctx, tag); err == nil && labels[docker.HashLabel] == hash {
		fmt.Fprintf(b.cfg.Progress, "==> %s is current\n", tag)
		return hash, nil
	}
	fmt.Fprintf(b.cfg.Progress, "==> building %s\n", tag)
	return hash, b.docker.Build(ctx, docker.BuildSpec{
		Tag:       tag,
		Files:     files,
		Modes:     modes,
		Labels:    map[string]string{docker.HashLabel: hash},
		BuildArgs: map[string]string{"BASE": BaseImage},
	}, b.cfg.Progress)
}
