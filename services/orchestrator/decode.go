package orchestrator

import (
	"encoding/json"
	"errors"
	"strings"
	"unicode"

	"github.com/nats-io/nats.go"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/schemas/jsonschema"
	"github.com/sandox/sandox/services/orchestrator/wire"
)

// errNoCommandID marks a message that cannot be answered: it has no id a
// result subject can be made of.
var errNoCommandID = errors.New("no usable command id")

// decodeCommand reads a command message published on subject. It returns
// errNoCommandID (wrapped) when the message carries no usable id: nobody
// can wait for its answer, so it is poison. Otherwise cmd has at least its
// id, and refusal, when not nil, is the bad_request to answer it with: a
// body that is not a valid command (a field of the wrong type, content
// that is not base64, a time that is not RFC 3339), or a command that says
// the same thing twice in two ways that disagree (checkCommand).
func decodeCommand(subject string, hdr nats.Header, data []byte) (cmd schemas.Command, refusal *schemas.Error, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return cmd, nil, errors.Join(errNoCommandID, err)
	}
	if json.Unmarshal(fields["id"], &cmd.ID) != nil || !usableID(cmd.ID) {
		return schemas.Command{}, nil, errNoCommandID
	}
	// The ids the result and the logs name, when they are strings; the
	// full decoding below may fail on another field.
	_ = json.Unmarshal(fields["kind"], &cmd.Kind)
	_ = json.Unmarshal(fields["group_id"], &cmd.GroupID)
	_ = json.Unmarshal(fields["sandbox_id"], &cmd.SandboxID)

	if verr := jsonschema.Validate("command", data); verr != nil {
		return cmd, wire.Error(verr), nil
	}
	var full schemas.Command
	if uerr := json.Unmarshal(data, &full); uerr != nil {
		return cmd, schemas.Errorf(schemas.CodeBadRequest, "command: %v", uerr), nil
	}
	if cerr := checkCommand(subject, hdr, full); cerr != nil {
		return full, cerr, nil
	}
	return full, nil, nil
}

// usableID reports whether a result subject can be made of id: one
// subject token, without spaces, control characters or wildcards.
func usableID(id string) bool {
	if id == "" || len(id) > 255 {
		return false
	}
	return !strings.ContainsFunc(id, func(r rune) bool {
		return r == '.' || r == '*' || r == '>' || unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar
	})
}
