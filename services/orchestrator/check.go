package orchestrator

import (
	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
)

// checkCommand refuses a command that says something twice, in two ways
// that disagree, and one that carries a spec its kind does not take. What
// is said twice:
//   - the kind, in the subject and in "kind";
//   - the command id, in "id" and in the Nats-Msg-Id header (the stream
//     dedupes on the header, the worker on the id);
//   - the group id of create_group, in "group_id" and in "group.id";
//   - the sandbox id of create_sandbox, in "sandbox_id" and in "sandbox.id".
//
// An empty "group.id" or "sandbox.id" is not said and takes the outer id.
func checkCommand(subject string, hdr nats.Header, cmd schemas.Command) *schemas.Error {
	if want := schemas.CommandSubject(cmd.Kind); subject != want {
		return schemas.Errorf(schemas.CodeBadRequest, "command %s was published on %q but its kind is %q, which belongs on %q", cmd.ID, subject, cmd.Kind, want)
	}
	if msgID := hdr.Get(nats.MsgIdHdr); msgID != "" && msgID != cmd.ID {
		return schemas.Errorf(schemas.CodeBadRequest, "command id %q differs from its %s header %q", cmd.ID, nats.MsgIdHdr, msgID)
	}
	if cmd.Group != nil {
		if cmd.Kind != schemas.CreateGroup {
			return schemas.Errorf(schemas.CodeBadRequest, "%s takes no group spec; only create_group does", cmd.Kind)
		}
		if cmd.Group.ID != "" && cmd.Group.ID != cmd.GroupID {
			return schemas.Errorf(schemas.CodeBadRequest, "create_group names two groups: group_id %q and group.id %q; they must be the same (or group.id left out)", cmd.GroupID, cmd.Group.ID)
		}
	}
	if cmd.Sandbox != nil {
		if cmd.Kind != schemas.CreateSandbox {
			return schemas.Errorf(schemas.CodeBadRequest, "%s takes no sandbox spec; only create_sandbox does", cmd.Kind)
		}
		if cmd.Sandbox.ID != "" && cmd.Sandbox.ID != cmd.SandboxID {
			return schemas.Errorf(schemas.CodeBadRequest, "create_sandbox names two sandboxes: sandbox_id %q and sandbox.id %q; they must be the same (or sandbox.id left out)", cmd.SandboxID, cmd.Sandbox.ID)
		}
	}
	return nil
}
