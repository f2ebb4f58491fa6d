package build

import (
	"archive/zip"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// goBinary builds a static Linux binary of pkg for the engine's
// architecture (this machine's), with the build tags given, and returns
// its bytes. The build is reproducible (-trimpath, no VCS stamp), so an
// unchanged source gives an unchanged image hash.
func (b *Builder) goBinary(ctx context.Context, name, pkg string, tags ...string) ([]byte, error) {
	out := filepath.Join(b.cfg.CacheDir, "bin", name)
	args := []string{"build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir = b.cfg.RepoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	cmd.Stdout, cmd.Stderr = b.cfg.Progress, b.cfg.Progress
	fmt.Fprintf(b.cfg.Progress, "==> go build %s\n", pkg)
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build %s: %w", pkg, err)
	}
	return os.ReadFile(out)
}

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
