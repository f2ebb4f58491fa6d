package build

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
)

// binaries are the Go binaries a builder made, by variant and package.
// Its lock also serialises the builds: two go builds at once would each
// compile the packages they share, twice the work on a cold cache, where
// one after the other the second takes them from Go's build cache.
type binaries struct {
	mu    sync.Mutex
	built map[string][]byte // by variant + "/" + package
}

// goBinaries builds static Linux binaries of the main packages pkgs for
// the engine's architecture (this machine's), with the build tags given,
// in one go build (which compiles and links them side by side), and
// returns their bytes by binary name (the last element of each package
// path). A binary already built by this builder is not built again. The
// build is reproducible (-trimpath, no VCS stamp), so an unchanged source
// gives an unchanged image hash; its flags are goBuildFlags, which
// demo.sh gives the CLI too, so that the two share Go's build cache.
// variant names the cache directory the binaries go to, so that builds
// with other tags do not overwrite them.
func (b *Builder) goBinaries(ctx context.Context, variant string, tags []string, pkgs ...string) (map[string][]byte, error) {
	b.bins.mu.Lock()
	defer b.bins.mu.Unlock()
	out := make(map[string][]byte, len(pkgs))
	var missing []string
	for _, pkg := range pkgs {
		if data, ok := b.bins.built[variant+"/"+pkg]; ok {
			out[path.Base(pkg)] = data
		} else {
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	dir := filepath.Join(b.cfg.CacheDir, "bin", variant)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	args := append([]string{"build"}, goBuildFlags...)
	args = append(args, "-o", dir+string(filepath.Separator))
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, missing...)...)
	cmd.Dir = b.cfg.RepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	cmd.Stdout, cmd.Stderr = b.cfg.Progress, b.cfg.Progress
	b.progressf("==> go build %s\n", strings.Join(missing, " "))
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s: %w", strings.Join(missing, " "), err)
	}
	for _, pkg := range missing {
		data, err := os.ReadFile(filepath.Join(dir, path.Base(pkg)))
		if err != nil {
			return nil, err
		}
		b.bins.built[variant+"/"+pkg] = data
		out[path.Base(pkg)] = data
	}
	return out, nil
}

// goBuildFlags are the flags of every Go binary built for an image, with
// CGO_ENABLED=0.
var goBuildFlags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

// uvBinary returns the uv binary, taken from uv's wheel on PyPI (the wheel
// carries the binary), downloaded once with pip into the cache.
func (b *Builder) uvBinary(ctx context.Context) ([]byte, error) {
	dir := filepath.Join(b.cfg.CacheDir, "uv-"+b.cfg.UVVersion+"-"+runtime.GOARCH)
	bin := filepath.Join(dir, "uv")
	if data, err := os.ReadFile(bin); err == nil {
		return data, nil
	}
	platform := map[string]string{"amd64": "manylinux_2_17_x86_64", "arm64": "manylinux_2_17_aarch64"}[runtime.GOARCH]
	if platform == "" {
		return nil, fmt.Errorf("uv: no wheel platform known for %s", runtime.GOARCH)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	fmt.Fprintf(b.cfg.Progress, "==> pip download uv==%s (%s)\n", b.cfg.UVVersion, platform)
	cmd := exec.CommandContext(ctx, "python3", "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
		"--platform", platform, "--python-version", "3.11", "-d", dir, "uv=="+b.cfg.UVVersion)
	cmd.Stdout, cmd.Stderr = b.cfg.Progress, b.cfg.Progress
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("download the uv wheel: %w", err)
	}
	wheels, _ := filepath.Glob(filepath.Join(dir, "uv-*.whl"))
	if len(wheels) == 0 {
		return nil, fmt.Errorf("uv: pip left no wheel in %s", dir)
	}
	data, err := extractFromWheel(wheels[0], fmt.Sprintf("uv-%s.data/scripts/uv", b.cfg.UVVersion))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		return nil, err
	}
	return data, nil
}

func extractFromWheel(wheel, member string) ([]byte, error) {
	zr, err := zip.OpenReader(wheel)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", wheel, err)
	}
	defer zr.Close()
	for _, f := range zr.File {
		if f.Name != member {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	return nil, fmt.Errorf("%s has no %s", wheel, member)
}
