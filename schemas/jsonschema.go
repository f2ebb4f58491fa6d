package schemas

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"sync"

	invopop "github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
)

//go:generate go run ./cmd/genschema -dir jsonschema

// Messages maps the name of every wire message to a value of its Go type.
// The JSON Schema files in jsonschema/ are generated from these types
// (go generate ./schemas), and a test fails when a file is out of date.
var Messages = map[string]any{
	"actions":          Actions{},
	"observation":      Observation{},
	"batch_result":     BatchResult{},
	"command":          Command{},
	"command_result":   CommandResult{},
	"event":            Event{},
	"sandbox_status":   SandboxStatus{},
	"group_status":     GroupStatus{},
	"host_status":      HostStatus{},
	"sandbox_usage":    SandboxUsage{},
	"status_reply":     StatusReply{},
	"tool":             ToolDescription{},
	"executor_ready":   ExecutorReady{},
	"database_request": DatabaseRequest{},
	"database_reply":   DatabaseReply{},
	"population_event": PopulationEvent{},
	"populate_reply":   PopulateReply{},
}

//go:embed jsonschema/*.schema.json
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
	return schemaFiles.ReadFile("jsonschema/" + name + ".schema.json")
}

var (
	compileOnce sync.Once
	compiled    map[string]*validator.Schema
	compileErr  error
)

func compileAll() {
	c := validator.NewCompiler()
	compiled = make(map[string]*validator.Schema)
	for _, name := range MessageNames() {
		data, err := SchemaFile(name)
		if err != nil {
			compileErr = err
			return
		}
		doc, err := validator.UnmarshalJSON(bytes.NewReader(data))
		if err != nil {
			compileErr = fmt.Errorf("schema %s: %w", name, err)
			return
		}
		url := "https://sandox.dev/schemas/" + name + ".schema.json"
		if err := c.AddResource(url, doc); err != nil {
			compileErr = fmt.Errorf("schema %s: %w", name, err)
			return
		}
		s, err := c.Compile(url)
		if err != nil {
			compileErr = fmt.Errorf("schema %s: %w", name, err)
			return
		}
		compiled[name] = s
	}
}

// Validate checks data against the JSON Schema of the named message. The
// error, a *Error with CodeBadRequest, says where the data is wrong.
// Validate is safe for concurrent use.
func Validate(name string, data []byte) error {
	compileOnce.Do(compileAll)
	if compileErr != nil {
		return compileErr
	}
	s, ok := compiled[name]
	if !ok {
		return fmt.Errorf("no message %q", name)
	}
	doc, err := validator.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return Errorf(CodeBadRequest, "%s: invalid JSON: %w", name, err)
	}
	if err := s.Validate(doc); err != nil {
		return Errorf(CodeBadRequest, "%s: %w", name, err)
	}
	return nil
}
