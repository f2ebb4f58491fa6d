package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	invopop "github.com/invopop/jsonschema"
	validator "github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var english = message.NewPrinter(language.English)

// New builds a built-in Tool whose arguments are the struct type A. The
// struct is the one source of truth for the arguments: its JSON Schema is
// generated from it (json tags give the names, fields without omitempty are
// required, `jsonschema:"description=…"` tags document them), incoming args
// are validated against that schema, then decoded into A. The schema is
// generated here; the validator compiles it on the tool's first call, so
// that an executor whose tools are not called holds no compiled schemas.
//
// New panics if A is not a struct, as that is a programming error.
func New[A any](module, name, description string, fn func(ctx context.Context, args A) (Result, error)) Tool {
	var zero A
	typ := reflect.TypeOf(zero)
	if typ == nil || typ.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tools.New %s.%s: args type must be a struct", module, name))
	}
	params := argsParams(module+"."+name, typ)
	schema := sync.OnceValue(func() *validator.Schema { return compileArgs(module+"."+name, params) })
	return Tool{
		Module:      module,
		Name:        name,
		Description: description,
		Parameters:  params,
		Source:      "builtin",
		Call: func(ctx context.Context, raw json.RawMessage) (Result, error) {
			var args A
			if err := decodeArgs(schema(), raw, &args); err != nil {
				return Result{}, fmt.Errorf("%s.%s: %w", module, name, err)
			}
			return fn(ctx, args)
		},
	}
}

// argsParams generates the JSON Schema of the args struct typ.
func argsParams(name string, typ reflect.Type) json.RawMessage {
	r := &invopop.Reflector{DoNotReference: true, Anonymous: true, AllowAdditionalProperties: false}
	s := r.ReflectFromType(typ)
	s.Version = "" // the bare schema; the draft is the validator's default
	s.ID = ""
	params, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools.New %s: %v", name, err))
	}
	return params
}

// compileArgs compiles params, a schema argsParams generated. It panics
// when it cannot, as that is a programming error (a call turns the panic
// into an error: see the executor's callTool).
func compileArgs(name string, params json.RawMessage) *validator.Schema {
	doc, err := validator.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		panic(fmt.Sprintf("tools.New %s: %v", name, err))
	}
	c := validator.NewCompiler()
	url := "mem:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		panic(fmt.Sprintf("tools.New %s: %v", name, err))
	}
	compiled, err := c.Compile(url)
	if err != nil {
		panic(fmt.Sprintf("tools.New %s: %v", name, err))
	}
	return compiled
}

// decodeArgs validates raw against schema, then decodes it into dst. Errors
// wrap ErrInvalidArgs and say which argument is wrong.
func decodeArgs(schema *validator.Schema, raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	doc, err := validator.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%w: args are not valid JSON: %w", ErrInvalidArgs, err)
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Errorf("%w: %s", ErrInvalidArgs, validationMessage(err))
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidArgs, err)
	}
	return nil
}

// validationMessage flattens the validator's error tree into one line per
// problem, naming the argument: "at 'path': got number, want string".
func validationMessage(err error) string {
	ve, ok := err.(*validator.ValidationError)
	if !ok {
		return err.Error()
	}
	var lines []string
	var walk func(e *validator.ValidationError)
	walk = func(e *validator.ValidationError) {
		if len(e.Causes) == 0 {
			where := "args"
			if len(e.InstanceLocation) > 0 {
				where = "argument '" + strings.Join(e.InstanceLocation, ".") + "'"
			}
			lines = append(lines, where+": "+e.ErrorKind.LocalizedString(english))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	return strings.Join(lines, "; ")
}
