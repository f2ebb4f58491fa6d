package schemas

import invopop "github.com/invopop/jsonschema"

// The JSON Schema of each enumerated string lists its values, so that the
// generated schemas reject a misspelt kind, state or code.

func enumSchema[T ~string](values ...T) *invopop.Schema {
	s := &invopop.Schema{Type: "string"}
	for _, v := range values {
		s.Enum = append(s.Enum, string(v))
	}
	return s
}

// JSONSchema lists the command kinds.
func (CommandKind) JSONSchema() *invopop.Schema { return enumSchema(CommandKinds...) }

// JSONSchema lists the sandbox states.
func (SandboxState) JSONSchema() *invopop.Schema {
	return enumSchema(StateCreated, StateRunning, StateFailed, StateEnding, StateEnded, StateLost, StatePaused)
}

// JSONSchema lists the group states.
func (GroupState) JSONSchema() *invopop.Schema {
	return enumSchema(GroupCreated, GroupRunning, GroupEnded)
}

// JSONSchema lists the host states.
func (HostState) JSONSchema() *invopop.Schema { return enumSchema(HostUp, HostLost) }

// JSONSchema lists the placement policies.
func (Placement) JSONSchema() *invopop.Schema { return enumSchema(PlacementSpread, PlacementPack) }

// JSONSchema lists the event kinds.
func (EventKind) JSONSchema() *invopop.Schema {
	return enumSchema(EventKinds...)
}

// ErrorCodes lists every error code.
var ErrorCodes = []ErrorCode{
	CodeBadRequest, CodeNotFound, CodeAlreadyExists, CodeConflict, CodeUnknownTool,
	CodeAmbiguousTool, CodeInvalidArgs, CodeToolError, CodeTimeout, CodeSkipped,
	CodeAccessDenied, CodeResourceExhausted, CodeUnsupported, CodeUnavailable, CodeInternal,
	CodePaused,
}

// JSONSchema lists the error codes.
func (ErrorCode) JSONSchema() *invopop.Schema { return enumSchema(ErrorCodes...) }
