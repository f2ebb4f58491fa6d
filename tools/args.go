package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	validator "github.com/google/jsonschema-go/jsonschema"
	invopop "github.com/invopop/jsonschema"
	"github.com/sandox/sandox/schemas"
)

// New builds a built-in Tool whose arguments are the struct type A. The
// struct is the one source of truth for the arguments: its JSON Schema is
// generated from it (json tags give the names, fields without omitempty are
// required, `jsonschema:"description=…"` tags document them), incoming args
// are validated against that schema, then decoded into A. The schema is
// generated when it is first needed (Tool.Schema, or the tool's first
// call, when the validator compiles it), so that an executor whose tools
// are neither listed nor called reflects and holds none.
//
// New panics if A is not a struct, as that is a programming error.
func New[A any](module, name, description string, fn func(ctx context.Context, args A) (Result, error)) Tool {
	var zero A
	typ := reflect.TypeOf(zero)
	if typ == nil || typ.Kind() != reflect.Struct {
		panic(fmt.Sprintf("tools.New %s.%s: args type must be a struct", module, name))
	}
	params := sync.OnceValue(func() json.RawMessage { return argsParams(module+"."+name, typ) })
	schema := sync.OnceValue(func() *validator.Resolved { return compileArgs(module+"."+name, params()) })
	return Tool{
		Module:      module,
		Name:        name,
		Description: description,
		parameters:  params,
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

// compileArgs resolves params, a schema argsParams generated. It panics
// when it cannot, as that is a programming error (a call turns the panic
// into an error: see the executor's callTool).
func compileArgs(name string, params json.RawMessage) *validator.Resolved {
	var schema validator.Schema
	if err := json.Unmarshal(params, &schema); err != nil {
		panic(fmt.Sprintf("tools.New %s: %v", name, err))
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tools.New %s: %v", name, err))
	}
	return resolved
}

// decodeArgs validates raw against schema, then decodes it into dst. Errors
// wrap schemas.CodeInvalidArgs and say which argument is wrong.
func decodeArgs(schema *validator.Resolved, raw json.RawMessage, dst any) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return fmt.Errorf("%w: args are not valid JSON: %w", schemas.CodeInvalidArgs, err)
	}
	if err := schema.Validate(doc); err != nil {
		return fmt.Errorf("%w: %s", schemas.CodeInvalidArgs, validationMessage(err))
	}
	if err := json.Unmarshal(raw, dst); err != nil {
		return fmt.Errorf("%w: %w", schemas.CodeInvalidArgs, err)
	}
	return nil
}

// validationMessage turns the validator's error, a chain of "validating
// <schema location>: " prefixes ending in what is wrong, into one line that
// names the argument: "argument 'path': 5 has type \"integer\", want
// \"string\"". The innermost location is the schema of the argument:
// /properties/a/properties/b is argument 'a.b', /properties/a/items an
// item of 'a'.
func validationMessage(err error) string {
	msg, where := err.Error(), ""
	for strings.HasPrefix(msg, "validating ") {
		loc, rest, ok := strings.Cut(strings.TrimPrefix(msg, "validating "), ": ")
		if !ok {
			break
		}
		where, msg = loc, rest
	}
	var names []string
	parts := strings.Split(strings.TrimPrefix(where, "/"), "/")
	for i := 0; i < len(parts); i++ {
		switch parts[i] {
		case "properties": // the next part is an argument's name
			if i+1 < len(parts) {
				names = append(names, parts[i+1])
				i++
			}
		case "items":
			names = append(names, "[]")
		}
	}
	prefix := "args: "
	if len(names) > 0 {
		prefix = "argument '" + strings.ReplaceAll(strings.Join(names, "."), ".[]", "[]") + "': "
	}
	// The two an agent meets most, said in its terms.
	if list, ok := strings.CutPrefix(msg, "required: missing properties: "); ok {
		return prefix + "missing " + propertyList("property", "properties", list)
	}
	if list, ok := strings.CutPrefix(msg, "unexpected additional properties "); ok {
		return prefix + propertyList("unknown argument", "unknown arguments", list)
	}
	if m := boundPattern.FindStringSubmatch(msg); m != nil {
		return prefix + number(m[2]) + " is " + m[3] + " " + number(m[4]) + ", the " + m[1]
	}
	// What the keyword says, without its name.
	if kw, rest, ok := strings.Cut(msg, ": "); ok && !strings.Contains(kw, " ") {
		msg = rest
	}
	return prefix + msg
}

// boundPattern matches the validator's "minimum: 0/1 is less than
// 1.000000" (a big.Rat, then a float), said again as "0 is less than 1, the
// minimum".
var boundPattern = regexp.MustCompile(`^(minimum|maximum|exclusiveMinimum|exclusiveMaximum): (\S+) is ((?:less|greater) than(?: or equal to)?) (\S+)$`)

// number writes a rational ("3/2") or a float ("1.000000") the shortest way.
func number(s string) string {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return s
	}
	if r.IsInt() {
		return r.Num().String()
	}
	f, _ := r.Float64()
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// propertyList formats the validator's quoted list of names (["a" "b"]) as
// "property 'a'" or "properties 'a', 'b'".
func propertyList(one, many, list string) string {
	var names []string
	if err := json.Unmarshal([]byte(strings.ReplaceAll(list, `" "`, `", "`)), &names); err != nil || len(names) == 0 {
		return many + " " + list
	}
	slices.Sort(names) // the validator lists them in map order
	word := many
	if len(names) == 1 {
		word = one
	}
	return word + " '" + strings.Join(names, "', '") + "'"
}
