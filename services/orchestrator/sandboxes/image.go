package sandboxes

import (
	"context"
	"fmt"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/services/orchestrator/images"
)

// BuildImage finds or builds the image of sandbox spec of group g: the
// default sandbox image, or one with its families' packages and the
// group's and its own tool files. The build's output is published as the
// sandbox's progress. It refuses what Make would refuse of the same tools
// and families, with the same errors, before building anything.
//
// create_sandbox calls it before it takes the group's lock: a build can
// take minutes (a family's apt packages), and the group's other creates,
// its start and its end would wait that long behind the lock.
func (s *Service) BuildImage(ctx context.Context, g schemas.GroupStatus, spec schemas.SandboxSpec) (images.Resolved, error) {
	if err := schemas.ValidateID("sandbox", spec.ID); err != nil {
		return images.Resolved{}, err
	}
	families, files, err := s.imageInputs(g, spec)
	if err != nil {
		return images.Resolved{}, err
	}
	progress := newBuildProgress(s.publishProgress, g.ID, spec.ID)
	ref, reused, err := s.builder.SandboxImage(ctx, families, files, progress)
	progress.finish(err)
	if err != nil {
		return images.Resolved{}, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	return images.Resolved{Ref: ref, Reused: reused}, nil
}

// imageInputs checks a sandbox's tool files and families and returns what
// its image is built from: the families chosen (its own, else the
// group's) and the group's tool files merged with its own.
func (s *Service) imageInputs(g schemas.GroupStatus, spec schemas.SandboxSpec) ([]string, []schemas.ToolFile, error) {
	if err := images.CheckTools(spec.Tools, spec.Families, s.cfg.MaxToolFileBytes); err != nil {
		return nil, nil, schemas.Errorf(schemas.CodeBadRequest, "sandbox %s: %w", spec.ID, err)
	}
	families, err := images.ChooseFamilies(g.Spec.Families, spec.Families)
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox %s: %w", spec.ID, err)
	}
	return families, images.MergeTools(g.Spec.Tools, spec.Tools), nil
}
