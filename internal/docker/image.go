package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"

	"github.com/sandox/sandox/internal/buildctx"
	"github.com/sandox/sandox/services/orchestrator/runtime"
)

// BuildSpec is an image to build from an in-memory build context.
type BuildSpec struct {
	// Tag names the image, for example "sandox/sandbox-tools:1a2b3c".
	Tag string
	// Files is the build context: path inside the context to content. It
	// must hold "Dockerfile".
	Files map[string][]byte
	// Modes sets a file's mode in the context (default 0644).
	Modes map[string]int64
	// Labels are added to the image.
	Labels map[string]string
	// BuildArgs are passed to the Dockerfile's ARG instructions.
	BuildArgs map[string]string
}

// ImageID returns the id of the image ref, or an error wrapping runtime.ErrNotFound.
func (c *Client) ImageID(ctx context.Context, ref string) (string, error) {
	img, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return "", notFound(err, "image "+ref)
	}
	return img.ID, nil
}

// ImageLabels returns the labels of the image ref.
func (c *Client) ImageLabels(ctx context.Context, ref string) (map[string]string, error) {
	img, err := c.api.ImageInspect(ctx, ref)
	if err != nil {
		return nil, notFound(err, "image "+ref)
	}
	if img.Config == nil {
		return map[string]string{}, nil
	}
	return img.Config.Labels, nil
}

// Build builds spec and writes the build's progress, one line per step and
// per line of output, to progress (which may be nil). It blocks until the
// build ends; the error carries the build's own error message.
func (c *Client) Build(ctx context.Context, spec BuildSpec, progress io.Writer) error {
	if _, ok := spec.Files["Dockerfile"]; !ok {
		return errors.New("build " + spec.Tag + ": the context has no Dockerfile")
	}
	if progress == nil {
		progress = io.Discard
	}
	tarball, err := contextTar(spec.Files, spec.Modes)
	if err != nil {
		return fmt.Errorf("build %s: %w", spec.Tag, err)
	}
	args := make(map[string]*string, len(spec.BuildArgs))
	for k, v := range spec.BuildArgs {
		args[k] = &v
	}
	resp, err := c.api.ImageBuild(ctx, tarball, build.ImageBuildOptions{
		Tags:        []string{spec.Tag},
		Labels:      spec.Labels,
		BuildArgs:   args,
		Remove:      true,
		ForceRemove: true,
		PullParent:  false,
	})
	if err != nil {
		return fmt.Errorf("build %s: %w", spec.Tag, err)
	}
	defer resp.Body.Close()
	if err := readBuildStream(resp.Body, progress); err != nil {
		return fmt.Errorf("build %s: %w", spec.Tag, err)
	}
	return nil
}

// buildMessage is one line of the engine's JSON build stream.
type buildMessage struct {
	Stream      string `json:"stream"`
	Status      string `json:"status"`
	Error       string `json:"error"`
	ErrorDetail *struct {
		Message string `json:"message"`
	} `json:"errorDetail"`
}

func readBuildStream(r io.Reader, progress io.Writer) error {
	dec := json.NewDecoder(r)
	for {
		var m buildMessage
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			return fmt.Errorf("read build output: %w", err)
		}
		if m.ErrorDetail != nil && m.ErrorDetail.Message != "" {
			return errors.New(strings.TrimSpace(m.ErrorDetail.Message))
		}
		if m.Error != "" {
			return errors.New(strings.TrimSpace(m.Error))
		}
		if line := strings.TrimRight(m.Stream+m.Status, "\n"); line != "" {
			fmt.Fprintln(progress, line)
		}
	}
}

// contextTar packs files into a tar archive, in a fixed order with fixed
// times so that the same files always make the same archive.
func contextTar(files map[string][]byte, modes map[string]int64) (io.Reader, error) {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	for _, n := range names {
		mode := int64(0o644)
		if m, ok := modes[n]; ok {
			mode = m
		}
		hdr := &tar.Header{Name: n, Mode: mode, Size: int64(len(files[n])), ModTime: epoch, Typeflag: tar.TypeReg}
		if err := tw.WriteHeader(hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return &buf, nil
}

// HashLabel holds the hash of an image's build context.
const HashLabel = "dev.sandox.context-hash"

// ContextHash hashes a build context and the id of the image it builds on
// (buildctx.Hash), the tag suffix of images built from it.
func ContextHash(files map[string][]byte, base string) string { return buildctx.Hash(files, base) }

// NewestTag returns the most recently created image of repo (say
// "sandox/neo4j") on the engine, as repo:tag, or an error wrapping
// runtime.ErrNotFound when the engine has none.
func (c *Client) NewestTag(ctx context.Context, repo string) (string, error) {
	imgs, err := c.api.ImageList(ctx, image.ListOptions{Filters: filters.NewArgs(filters.Arg("reference", repo))})
	if err != nil {
		return "", fmt.Errorf("images of %s: %w", repo, err)
	}
	sort.Slice(imgs, func(i, j int) bool { return imgs[i].Created > imgs[j].Created })
	for _, img := range imgs {
		for _, tag := range img.RepoTags {
			if strings.HasPrefix(tag, repo+":") {
				return tag, nil
			}
		}
	}
	return "", fmt.Errorf("no image of %s: %w", repo, runtime.ErrNotFound)
}
