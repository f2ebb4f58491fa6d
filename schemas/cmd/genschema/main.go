// Command genschema writes the JSON Schema file of every wire message,
// generated from the Go types in package schemas.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/sandox/sandox/schemas/jsonschema"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "genschema:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("genschema", flag.ContinueOnError)
	dir := fs.String("dir", "jsonschema", "directory to write the schema files to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for _, name := range jsonschema.MessageNames() {
		data, err := jsonschema.GenerateJSONSchema(name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*dir, name+".schema.json"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
