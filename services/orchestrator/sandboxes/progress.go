package sandboxes

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sandox/sandox/schemas"
)

// progressEvery is how often at most a build publishes the output lines
// between its steps (an apt-get install's downloads): each step is
// published when it begins.
const progressEvery = time.Second

// buildStep matches the line the Docker engine's builder writes as a step
// begins.
var buildStep = regexp.MustCompile(`^Step (\d+)/(\d+) : (.*)$`)

// buildProgress is the io.Writer a sandbox's image build writes its output
// to. It publishes a schemas.Progress (PhaseImageBuild) when a step
// begins, and for the lines between steps at most every progressEvery. It
// is used by one build, from one goroutine.
type buildProgress struct {
	publish func(schemas.Progress)
	p       schemas.Progress
	partial []byte    // the end of the output that is not a whole line yet
	last    time.Time // when the last progress was published
	wrote   bool
}

func newBuildProgress(publish func(schemas.Progress), groupID, sandboxID string) *buildProgress {
	return &buildProgress{publish: publish, p: schemas.Progress{GroupID: groupID, SandboxID: sandboxID, Phase: schemas.PhaseImageBuild}}
}

// Write takes build output; it never fails.
func (b *buildProgress) Write(data []byte) (int, error) {
	b.wrote = true
	b.partial = append(b.partial, data...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		b.line(strings.TrimSpace(string(b.partial[:i])))
		b.partial = b.partial[i+1:]
	}
	return len(data), nil
}

// line takes one line of output.
func (b *buildProgress) line(s string) {
	if s == "" {
		return
	}
	if m := buildStep.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		total, _ := strconv.Atoi(m[2])
		b.p.Done, b.p.Total, b.p.Message = n-1, total, shorten(s, 200)
		b.send()
		return
	}
	if time.Since(b.last) >= progressEvery {
		b.p.Message = shorten(s, 200)
		b.send()
	}
}

func (b *buildProgress) send() {
	b.last = time.Now()
	b.publish(b.p)
}

// finish publishes the build's last progress, when there was a build:
// every step done, or the error that stopped it.
func (b *buildProgress) finish(err error) {
	if !b.wrote {
		return // nothing was built: the image was there, or the build never began
	}
	b.p.Finished, b.p.Message = true, "built"
	if err != nil {
		b.p.Error, b.p.Message = err.Error(), "failed"
	} else if b.p.Total > 0 {
		b.p.Done = b.p.Total
	}
	b.send()
}

// shorten cuts s to at most n bytes on a rune boundary.
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// publishProgress publishes p on schemas.ProgressSubject of its group
// (recorded in SANDOX_EVENTS); a failure is logged, the work goes on.
func (s *Service) publishProgress(p schemas.Progress) {
	data, err := json.Marshal(p)
	if err == nil {
		err = s.nc.Publish(schemas.ProgressSubject(p.GroupID), data)
	}
	if err != nil {
		s.log.Warn("publish progress", "group", p.GroupID, "sandbox", p.SandboxID, "phase", p.Phase, "err", err)
	}
}
