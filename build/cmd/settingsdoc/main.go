// Command settingsdoc writes docs/settings.md, the reference of every
// setting sandox's code reads: the flags of its commands and the
// environment variables its Go, Python and shell code reads, extracted
// from the source (go/ast for Go), with the descriptions of variables that
// have no usage text taken from descriptions.go. It fails when the code
// reads a variable that descriptions.go does not describe, or when
// descriptions.go describes one that no code reads.
//
//	go run ./build/cmd/settingsdoc            # from the repository root
//	go run ./build/cmd/settingsdoc -o -       # print instead of writing
package main

//go:generate go run . -root ../../.. -o ../../../docs/settings.md

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "settingsdoc:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("settingsdoc", flag.ContinueOnError)
	root := fs.String("root", ".", "the repository's root directory")
	out := fs.String("o", "docs/settings.md", "file to write; - prints to stdout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	doc, err := generate(*root)
	if err != nil {
		return err
	}
	if *out == "-" {
		_, err = os.Stdout.Write(doc)
		return err
	}
	return os.WriteFile(*out, doc, 0o644)
}
