package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"time"

	"github.com/docker/docker/api/types/container"
)

// CopyDir puts a directory dir (absolute; its parent must exist) holding
// files (name to content) into a created container before it starts: the
// directory owned by uid with mode 0500, each file with mode 0400. This is
// how a container gets a secret without it showing in its environment,
// command line or image. dir must be on a writable file system: the
// container's root unless it is read-only, or a writable volume.
func (c *Client) CopyDir(ctx context.Context, id, dir string, uid int, files map[string][]byte) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	base := path.Base(dir)
	epoch := time.Unix(0, 0)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: base + "/", Mode: 0o500, Uid: uid, Gid: uid, ModTime: epoch}); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := files[name]
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: base + "/" + name, Mode: 0o400, Uid: uid, Gid: uid, Size: int64(len(data)), ModTime: epoch}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := c.api.CopyToContainer(ctx, id, path.Dir(dir), &buf, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copy %s into container %s: %w", dir, id, err)
	}
	return nil
}
