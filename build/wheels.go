package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// wheelPlatforms are the pip platform tags an image's wheels may carry, per
// engine architecture: Debian 12 has glibc 2.36.
var wheelPlatforms = map[string][]string{
	"amd64": {"manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"},
	"arm64": {"manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"},
}

// wheels returns the wheels that reqs (a requirements.txt with hashes)
// pins, for Linux on this machine's architecture and CPython 3.11 (Debian
// 12's), by file name. They are downloaded with pip on the host once and
// kept in CacheDir/wheels/<hash of reqs>; a build container never reaches
// an index. It blocks while pip downloads.
func (b *Builder) wheels(ctx context.Context, reqs []byte) (map[string][]byte, error) {
	sum := sha256.Sum256(append([]byte(runtime.GOARCH+"\n"), reqs...))
	dir := filepath.Join(b.cfg.CacheDir, "wheels", hex.EncodeToString(sum[:])[:16])
	if _, err := os.Stat(filepath.Join(dir, ".complete")); err != nil {
		if err := b.downloadWheels(ctx, reqs, dir); err != nil {
			return nil, err
		}
	}
	names, err := filepath.Glob(filepath.Join(dir, "*.whl"))
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(names))
	for _, n := range names {
		data, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out[filepath.Base(n)] = data
	}
	return out, nil
}

func (b *Builder) downloadWheels(ctx context.Context, reqs []byte, dir string) error {
	platforms := wheelPlatforms[runtime.GOARCH]
	if platforms == nil {
		return fmt.Errorf("wheels: no platform tags known for %s", runtime.GOARCH)
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	reqFile := filepath.Join(tmp, "requirements.txt")
	if err := os.WriteFile(reqFile, reqs, 0o644); err != nil {
		return err
	}
	args := []string{"-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:", "--require-hashes",
		"--python-version", "3.11", "--implementation", "cp", "-d", tmp, "-r", reqFile}
	for _, p := range platforms {
		args = append(args, "--platform", p)
	}
	fmt.Fprintf(b.cfg.Progress, "==> pip download %d pinned wheels into %s\n", strings.Count(string(reqs), "=="), dir)
	cmd := exec.CommandContext(ctx, "python3", args...)
	cmd.Stdout, cmd.Stderr = b.cfg.Progress, b.cfg.Progress
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("download wheels: %w", err)
	}
	if err := os.Remove(reqFile); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}
