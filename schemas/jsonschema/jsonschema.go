// Package jsonschema holds the JSON Schema of every wire message: the Go
// types of package schemas are reflected into the *.schema.json files here
// (go generate ./schemas), which this package embeds and validates messages
// against. It is apart from package schemas so that what imports the
// message types (the executor, the SDK) does not link the reflector and the
// validator, nor pay their initialisation (the validator's alone held about
// 4 MB of a process's memory).
package jsonschema

import (
	"embed"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"sync"

	validator "github.com/google/jsonschema-go/jsonschema"
	invopop "github.com/invopop/jsonschema"

	"github.com/sandox/sandox/schemas"
)

// Messages maps the name of every wire message to a value of its Go type.
// The JSON Schema files here are generated from these types
// (go generate ./schemas), and a test fails when a file is out of date.
var Messages = map[string]any{
	"actions":          schemas.Actions{},
	"observation":      schemas.Observation{},
	"batch_result":     schemas.BatchResult{},
	"command":          schemas.Command{},
	"command_result":   schemas.CommandResult{},
	"event":            schemas.Event{},
	"sandbox_status":   schemas.SandboxStatus{},
	"group_status":     schemas.GroupStatus{},
	"host_status":      schemas.HostStatus{},
	"sandbox_usage":    schemas.SandboxUsage{},
	"status_reply":     schemas.StatusReply{},
	"tool":             schemas.ToolDescription{},
	"executor_ready":   schemas.ExecutorReady{},
	"database_request": schemas.DatabaseRequest{},
	"database_reply":   schemas.DatabaseReply{},
	"population_event": schemas.PopulationEvent{},
	"populate_reply":   schemas.PopulateReply{},
	"job_info":         schemas.JobInfo{},
	"job_output":       schemas.JobOutput{},
	"job_exit":         schemas.JobExit{},
}

//go:embed *.schema.json
var schemaFiles embed.FS

// GenerateJSONSchema returns the JSON Schema document of the named message,
// generated from its Go type.
func GenerateJSONSchema(name string) ([]byte, error) {
	v, ok := Messages[name]
	if !ok {
		return nil, fmt.Errorf("no message %q", name)
	}
	r := &invopop.Reflector{
		// Fields without omitempty are required, as encoding/json always
		// writes them.
		RequiredFromJSONSchemaTags: false,
		DoNotReference:             false,
	}
	s := r.ReflectFromType(reflect.TypeOf(v))
	s.ID = invopop.ID("https://sandox.dev/schemas/" + name + ".schema.json")
	s.Title = name
	out, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

// MessageNames returns the names of all messages, sorted.
func MessageNames() []string {
	names := make([]string, 0, len(Messages))
	for n := range Messages {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// SchemaFile returns the committed JSON Schema file of the named message.
func SchemaFile(name string) ([]byte, error) {
	return schemaFiles.ReadFile(name + ".schema.json")
}

// compiled resolves every message's schema once, on the first Validate.
var compiled = sync.OnceValues(func() (map[string]*validator.Resolved, error) {
	out := make(map[string]*validator.Resolved)
	for _, name := range MessageNames() {
		data, err := SchemaFile(name)
		if err != nil {
			return nil, err
		}
		var s validator.Schema
		if err := json.Unmarshal(data, &s); err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		r, err := s.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("schema %s: %w", name, err)
		}
		out[name] = r
	}
	return out, nil
})

// Validate checks data against the JSON Schema of the named message. The
// error, a *schemas.Error with schemas.CodeBadRequest, says where the data is wrong.
// Validate is safe for concurrent use.
func Validate(name string, data []byte) error {
	all, err := compiled()
	if err != nil {
		return err
	}
	s, ok := all[name]
	if !ok {
		return fmt.Errorf("no message %q", name)
	}
	var doc any
	if err := json.Unmarshal(data, &doc); err != nil {
		return schemas.Errorf(schemas.CodeBadRequest, "%s: invalid JSON: %w", name, err)
	}
	if err := s.Validate(doc); err != nil {
		return schemas.Errorf(schemas.CodeBadRequest, "%s: %w", name, err)
	}
	return nil
}
