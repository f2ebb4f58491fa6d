package checkpoints

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/sandox/sandox/schemas"
)

// swapScript, run by python3 in the sandbox's container as its uid, moves
// every top-level entry of the workspace (argv 1) into a new directory
// (argv 3), then every entry of the staged directory (argv 2) into the
// workspace, then deletes the old tree. Renames within one file system
// need no room. If a rename fails it moves back what it moved and exits
// 3: the workspace is as before.
const swapScript = `
import os, shutil, sys
ws, stage, old = sys.argv[1], sys.argv[2], sys.argv[3]
os.mkdir(old, 0o700)
out, into = [], []
try:
    for n in sorted(os.listdir(ws)):
        if n.startswith(".sandox-rollback-") or n == "lost+found":
            continue
        os.rename(os.path.join(ws, n), os.path.join(old, n)); out.append(n)
    for n in sorted(os.listdir(stage)):
        os.rename(os.path.join(stage, n), os.path.join(ws, n)); into.append(n)
except BaseException as e:
    for n in reversed(into):
        os.rename(os.path.join(ws, n), os.path.join(stage, n))
    for n in reversed(out):
        os.rename(os.path.join(old, n), os.path.join(ws, n))
    os.rmdir(old)
    print("swap failed, workspace left as it was:", e, file=sys.stderr)
    sys.exit(3)
shutil.rmtree(old, ignore_errors=True)
shutil.rmtree(stage, ignore_errors=True)
`

// removeScript deletes a directory tree (argv 1), if there.
const removeScript = `import shutil, sys; shutil.rmtree(sys.argv[1], ignore_errors=True)`

// Rollback puts the workspace of sb back as checkpoint ref saved it. It
// stages the checkpoint's files in the workspace volume, then swaps them
// for the current tree; if staging fails (the disk is full:
// CodeResourceExhausted) or the swap fails, the workspace is left as it
// was and the staged copy is removed. An unknown checkpoint is
// CodeNotFound. It blocks until the workspace is swapped.
func (s *Service) Rollback(ctx context.Context, sb Sandbox, ref string) (schemas.Checkpoint, error) {
	c, err := s.store.Resolve(ctx, sb.ID, ref)
	if err != nil {
		return c, err
	}
	m, err := s.store.Manifest(ctx, c)
	if err != nil {
		return c, err
	}
	stageName := StagePrefix + c.ID[len(c.ID)-12:] + "-stage"
	stage := path.Join(s.cfg.Workspace, stageName)
	old := path.Join(s.cfg.Workspace, StagePrefix+c.ID[len(c.ID)-12:]+"-old")
	if err := s.extract(ctx, sb.Container, s.cfg.Workspace, m, stageName); err != nil {
		s.remove(context.WithoutCancel(ctx), sb.Container, stage)
		if noSpace(err) {
			return c, schemas.Errorf(schemas.CodeResourceExhausted, "sandbox %s: its disk has no room to stage checkpoint %s (%d bytes); the workspace is unchanged: %w", sb.ID, c.ID, c.Bytes, err)
		}
		return c, fmt.Errorf("sandbox %s: stage checkpoint %s (the workspace is unchanged): %w", sb.ID, c.ID, err)
	}
	out, err := s.arch.Exec(ctx, sb.Container, s.cfg.User, []string{"python3", "-c", swapScript, s.cfg.Workspace, stage, old})
	if err == nil && out.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", out.ExitCode, strings.TrimSpace(out.Output))
	}
	if err != nil {
		s.remove(context.WithoutCancel(ctx), sb.Container, stage)
		return c, fmt.Errorf("sandbox %s: swap in checkpoint %s: %w", sb.ID, c.ID, err)
	}
	return c, nil
}

// remove deletes dir in container, best effort: a rollback's staged copy
// after a failure.
func (s *Service) remove(ctx context.Context, container, dir string) {
	_, _ = s.arch.Exec(ctx, container, s.cfg.User, []string{"python3", "-c", removeScript, dir})
}
