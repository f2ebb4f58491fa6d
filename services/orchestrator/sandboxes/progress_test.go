package sandboxes

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/sandox/sandox/schemas"
)

// TestBuildProgress feeds a build's output, cut anywhere, to
// buildProgress and checks the progress it publishes: each step as it
// begins, then the end; a failed build ends with its error, and nothing
// is published when nothing was built.
func TestBuildProgress(t *testing.T) {
	output := "Step 1/3 : FROM sandox/sandbox:latest\n ---> 8fe92bb416d9\nStep 2/3 : RUN apt-get install -y chromium\n" +
		" ---> Running in 1f8bdf9839c2\nGet:1 http://deb.example/debian bookworm/main chromium\nStep 3/3 : COPY tools/a.py /opt/sandox/tools/a.py\n"
	step := func(done int, msg string) schemas.Progress {
		return schemas.Progress{GroupID: "g", SandboxID: "s", Phase: schemas.PhaseImageBuild, Done: done, Total: 3, Message: msg}
	}
	steps := []schemas.Progress{
		step(0, "Step 1/3 : FROM sandox/sandbox:latest"),
		step(1, "Step 2/3 : RUN apt-get install -y chromium"),
		step(2, "Step 3/3 : COPY tools/a.py /opt/sandox/tools/a.py"),
	}
	tests := []struct {
		name   string
		output string
		chunk  int // bytes per Write
		err    error
		want   []schemas.Progress
	}{
		{name: "built, whole lines", output: output, chunk: len(output),
			want: append(steps, schemas.Progress{GroupID: "g", SandboxID: "s", Phase: schemas.PhaseImageBuild, Done: 3, Total: 3, Message: "built", Finished: true})},
		{name: "built, cut in 7-byte writes", output: output, chunk: 7,
			want: append(steps, schemas.Progress{GroupID: "g", SandboxID: "s", Phase: schemas.PhaseImageBuild, Done: 3, Total: 3, Message: "built", Finished: true})},
		{name: "failed", output: output, chunk: len(output), err: errors.New("apt-get: exit 100"),
			want: append(steps, schemas.Progress{GroupID: "g", SandboxID: "s", Phase: schemas.PhaseImageBuild, Done: 2, Total: 3, Message: "failed", Finished: true, Error: "apt-get: exit 100"})},
		{name: "nothing built", err: errors.New("unknown family")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []schemas.Progress
			b := newBuildProgress(func(p schemas.Progress) { got = append(got, p) }, "g", "s")
			for i := 0; i < len(tt.output); i += tt.chunk {
				n, err := b.Write([]byte(tt.output[i:min(i+tt.chunk, len(tt.output))]))
				assert.NoError(t, err)
				assert.Positive(t, n)
			}
			b.finish(tt.err)
			// The lines between steps come at most every progressEvery:
			// keep the steps and the end, which always come.
			var kept []schemas.Progress
			for _, p := range got {
				if p.Finished || buildStep.MatchString(p.Message) {
					kept = append(kept, p)
				}
			}
			assert.Equal(t, tt.want, kept)
		})
	}
}
