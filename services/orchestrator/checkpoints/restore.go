package checkpoints

import (
	"archive/tar"
	"context"
	"fmt"
	"io"

	"github.com/sandox/sandox/schemas"
)

// writeArchive writes to w a tar stream of m's entries, each below the
// directory prefix when prefix is not empty, owned by uid, with contents
// read from the store. Entries are in path order, so a directory comes
// before what it holds.
func (s *Service) writeArchive(ctx context.Context, w io.Writer, m schemas.CheckpointManifest, prefix string) error {
	tw := tar.NewWriter(w)
	uid := s.cfg.UID
	name := func(p string) string {
		if prefix == "" {
			return p
		}
		return prefix + "/" + p
	}
	if prefix != "" {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: prefix + "/", Mode: 0o700, Uid: uid, Gid: uid}); err != nil {
			return err
		}
	}
	for _, f := range m.Files {
		hdr := &tar.Header{Name: name(f.Path), Mode: int64(f.Mode), Uid: uid, Gid: uid, ModTime: f.ModTime}
		switch f.Type {
		case schemas.EntryDir:
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case schemas.EntrySymlink:
			hdr.Typeflag, hdr.Linkname = tar.TypeSymlink, f.Link
		case schemas.EntryFile:
			hdr.Typeflag, hdr.Size = tar.TypeReg, f.Size
		default:
			continue
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if f.Type != schemas.EntryFile {
			continue
		}
		if err := s.copyBlob(ctx, tw, f); err != nil {
			return err
		}
	}
	return tw.Close()
}

// copyBlob writes f's stored content to w, checking its size.
func (s *Service) copyBlob(ctx context.Context, w io.Writer, f schemas.CheckpointFile) error {
	rc, err := s.store.blob(ctx, f.SHA256, f.Size)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	defer rc.Close()
	n, err := io.Copy(w, rc)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Path, err)
	}
	if n != f.Size {
		return fmt.Errorf("%s: the store holds %d bytes, the manifest says %d", f.Path, n, f.Size)
	}
	return nil
}

// extract streams m's archive (below prefix) into dir of container.
func (s *Service) extract(ctx context.Context, container, dir string, m schemas.CheckpointManifest, prefix string) error {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := s.writeArchive(ctx, pw, m, prefix)
		pw.CloseWithError(err)
		done <- err
	}()
	err := s.arch.Extract(ctx, container, dir, pr)
	pr.CloseWithError(io.ErrClosedPipe) // stops the writer if Extract gave up early
	werr := <-done
	if werr != nil && err == nil {
		err = werr
	}
	if err != nil && werr != nil && werr != io.ErrClosedPipe {
		err = fmt.Errorf("%w (while sending: %w)", err, werr)
	}
	return err
}

// Restore fills the workspace of container, a sandbox created but not
// started (a fork), with the files of checkpoint ref of sandboxID. An
// unknown checkpoint is CodeNotFound.
func (s *Service) Restore(ctx context.Context, container string, ref schemas.CheckpointRef) (schemas.Checkpoint, error) {
	c, err := s.store.Resolve(ctx, ref.SandboxID, ref.Checkpoint)
	if err != nil {
		return c, err
	}
	m, err := s.store.Manifest(ctx, c)
	if err != nil {
		return c, err
	}
	if err := s.extract(ctx, container, s.cfg.Workspace, m, ""); err != nil {
		if noSpace(err) {
			return c, schemas.Errorf(schemas.CodeResourceExhausted, "checkpoint %s (%d bytes) does not fit the new sandbox's disk: %w", c.ID, c.Bytes, err)
		}
		return c, fmt.Errorf("restore checkpoint %s of sandbox %s: %w", c.ID, ref.SandboxID, err)
	}
	return c, nil
}
