package integration

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// docBlock is a fenced code block of a markdown file.
type docBlock struct {
	lang, text string
	line       int
}

// docBlocks returns the fenced code blocks of a markdown file.
func docBlocks(t *testing.T, path string) []docBlock {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var (
		out  []docBlock
		cur  *docBlock
		body strings.Builder
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &docBlock{lang: strings.TrimPrefix(line, "```"), line: n + 1}
			body.Reset()
		case cur != nil && strings.HasPrefix(line, "```"):
			cur.text = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line + "\n")
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// docPayload is an action payload shown in the docs, as written.
type docPayload struct {
	where string // file:line
	json  string
}

// docPayloads returns every action payload in the JSON blocks of a doc, in
// the order written: a block that is one payload, or each line of a block
// that is one. Anything else (observations, schemas, protocol lines) does
// not parse as an action payload and is left out.
func docPayloads(t *testing.T, path string) []docPayload {
	t.Helper()
	var out []docPayload
	for _, b := range docBlocks(t, path) {
		if b.lang != "json" {
			continue
		}
		if _, err := schemas.ParseActions([]byte(b.text)); err == nil {
			out = append(out, docPayload{fmt.Sprintf("%s:%d", filepath.Base(path), b.line), strings.TrimSpace(b.text)})
			continue
		}
		for i, line := range strings.Split(b.text, "\n") {
			if _, err := schemas.ParseActions([]byte(line)); err == nil {
				out = append(out, docPayload{fmt.Sprintf("%s:%d", filepath.Base(path), b.line+i), line})
			}
		}
	}
	return out
}

var toolFileHeader = regexp.MustCompile(`^# ([A-Za-z_][A-Za-z0-9_]*\.py)\n`)

// docToolFiles writes the tool files a doc shows (python blocks whose first
// line is "# name.py") to a temp dir and returns their paths.
func docToolFiles(t *testing.T, path string) []string {
	t.Helper()
	var out []string
	for _, b := range docBlocks(t, path) {
		if m := toolFileHeader.FindStringSubmatch(b.text); b.lang == "python" && m != nil {
			out = append(out, writeFile(t, m[1], b.text))
		}
	}
	return out
}

// mismatch is what an observation says when a payload does not fit its
// tool: the docs drifted from the code.
var mismatch = []schemas.ErrorCode{schemas.CodeBadRequest, schemas.CodeInvalidArgs, schemas.CodeUnknownTool, schemas.CodeAmbiguousTool}

// TestDocExamples runs every action payload in docs/tools/*.md, as
// written and in the order written, in a real sandbox, so that the docs
// cannot drift from the tools: each must be accepted (no bad_request,
// invalid_args, unknown_tool or ambiguous_tool). Where the docs show a flow
// that must work (the uv project, the filesystem examples on their
// files, the Python tools), the observations must also be free of errors.
func TestDocExamples(t *testing.T) {
	// One of the package's longest tests (its web sandbox builds the Chromium layer), on its own
	// group: it runs beside the other parallel ones (see doc.go).
	t.Parallel()
	docs, err := filepath.Glob("../docs/tools/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	var toolFiles []string
	for _, d := range docs {
		toolFiles = append(toolFiles, docToolFiles(t, d)...)
	}
	require.NotEmpty(t, toolFiles, "docs/tools/python.md shows my_tools.py")
	g := newGroup(t, sdk.GroupConfig{ID: "it-docs", Tools: toolFiles})

	// The least number of payloads each doc shows, so that a broken parser
	// cannot pass by finding none.
	least := map[string]int{"filesystem.md": 15, "terminal.md": 15, "python.md": 2, "web.md": 5}
	// Tools whose documented example is meant to fail (python.md shows
	// divide by zero as the error example).
	mayFail := map[string]bool{"my_tools.divide": true}
	// The families a doc's examples need beyond the default ones. The web
	// examples name hosts that do not exist here (and the sandbox has no
	// egress): they must be accepted, and fail only at the network.
	families := map[string][]string{"web.md": {"web_tools.py"}}
	setup := map[string]func(*testing.T) string{
		"filesystem.md": func(*testing.T) string { return filesystemFixture },
		"terminal.md":   uvFixture,
	}
	for i, d := range docs {
		name := filepath.Base(d)
		t.Run(name, func(t *testing.T) {
			payloads := docPayloads(t, d)
			require.GreaterOrEqual(t, len(payloads), least[name], "got %d payloads from %s", len(payloads), name)
			t.Logf("%d payloads in %s", len(payloads), name)
			sb := startSandbox(t, g, fmt.Sprintf("it-docs-%d", i), sdk.SandboxOptions{Tools: families[name]})
			if fx := setup[name]; fx != nil {
				for _, o := range send(t, sb, fx(t)) {
					mustOK(t, o)
				}
			}
			// The terminal examples are snippets of separate sessions, and
			// the web examples reach hosts that are not there.
			strict := name != "terminal.md" && name != "web.md"
			for _, p := range payloads {
				obs, err := sb.SendActionsJSON(t.Context(), []byte(p.json))
				require.NoError(t, err, "%s: %s", p.where, p.json)
				for _, o := range obs {
					if o.Error == nil {
						continue
					}
					assert.NotContains(t, mismatch, o.Error.Code, "%s: %s: the docs and the tool disagree: %s", p.where, p.json, o.Error.Message)
					if strict && !mayFail[o.Tool] {
						assert.Failf(t, "example failed", "%s: %s: got %s: %s", p.where, p.json, o.Error.Code, o.Error.Message)
					}
				}
				if name == "terminal.md" {
					checkUVExample(t, p, obs)
				}
			}
		})
	}
}

// checkUVExample holds the uv examples of terminal.md to the flow they
// show: uv_init, uv_add, then uv_run of main.py, each exiting 0.
func checkUVExample(t *testing.T, p docPayload, obs []schemas.Observation) {
	t.Helper()
	for _, o := range obs {
		if !slices.Contains([]string{"terminal_tools.uv_init", "terminal_tools.uv_add", "terminal_tools.uv_run"}, o.Tool) {
			continue
		}
		mustOK(t, o)
		require.False(t, o.TerminalStillRunning, "%s: still running: %q", p.where, o.Stdout)
		require.NotNil(t, o.ExitCode, "%s", p.where)
		require.Equal(t, 0, *o.ExitCode, "%s: %s\nstdout %q\nstderr %q", p.where, p.json, o.Stdout, o.Stderr)
		if o.Tool == "terminal_tools.uv_run" {
			assert.Contains(t, o.Stdout, "Hello from proj!")
		}
	}
}

// filesystemFixture makes the files the examples of filesystem.md work on.
const filesystemFixture = `[
 {"tool": "filesystem_tools.write_file", "args": {"path": "app/config.yaml", "content": "name: demo\nport: 8080\n"}},
 {"tool": "filesystem_tools.write_file", "args": {"path": "app/main.py", "content": "import sys\n\n# TODO: read the port\nprint(sys.argv)\n"}},
 {"tool": "filesystem_tools.write_file", "args": {"path": "app/util.py", "content": "def helper():\n    return 1\n"}},
 {"tool": "filesystem_tools.upload_file", "args": {"path": "data/raw/blob.bin", "content_base64": "AAECAwQ="}}
]`

// uvFixture gives uv in the sandbox a package source for the uv_add
// example (requests>=2): a local wheel of that name, used offline through
// uv's user configuration (HOME is /workspace).
func uvFixture(t *testing.T) string {
	t.Helper()
	name, data := makeWheel(t, "requests", "2.32.3")
	return `[
 {"tool": "filesystem_tools.upload_file", "args": {"path": "wheels/` + name + `", "content_base64": "` + base64.StdEncoding.EncodeToString(data) + `"}},
 {"tool": "filesystem_tools.write_file", "args": {"path": ".config/uv/uv.toml", "content": "offline = true\nno-index = true\nfind-links = [\"/workspace/wheels\"]\n"}}
]`
}
