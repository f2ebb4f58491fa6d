package main

import (
	"fmt"
	"io"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
	"github.com/sandox/sandox/services/audit"
)

// showProgress is the SDK option with which a command that waits for a
// group to start or a sandbox to be created prints the progress of the
// long work it waits for (an image build, a database population) to w,
// one line an event.
func showProgress(w io.Writer) sdk.Option {
	return sdk.WithProgress(func(p schemas.Progress) {
		who := p.GroupID
		if p.SandboxID != "" {
			who = p.SandboxID
		}
		fmt.Fprintf(w, "   ... %s %s: %s\n", p.Phase, who, audit.ProgressText(p))
	})
}
