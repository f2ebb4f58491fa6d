package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/sdk"
)

// recipeDoc and recipeHeading locate the recipe TestPackageIndexRecipe
// follows; recipeHost and recipePort are the example index's, which the
// test replaces by its own server's.
const (
	recipeDoc     = "../docs/security.md"
	recipeHeading = "### Installing Python packages: egress for package indexes"
	recipeHost    = "pypi.example.internal"
	recipePort    = "8080"
)

// packageIndex is a PEP 503 "simple" package index of one wheel, served
// over HTTP by the test. It records the paths it was asked for.
type packageIndex struct {
	URL string // of the simple index: http://host:port/simple

	mu    sync.Mutex
	paths []string
}

// servePackageIndex serves an index of the wheel (file name, content) of
// project on host, an address of this machine.
func servePackageIndex(t *testing.T, host, project, wheelName string, wheel []byte) *packageIndex {
	t.Helper()
	sum := sha256.Sum256(wheel)
	idx := &packageIndex{}
	mux := http.NewServeMux()
	mux.HandleFunc("/simple/{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body><a href=\"%s/\">%s</a></body></html>\n", project, project)
	})
	mux.HandleFunc("/simple/"+project+"/{$}", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, "<!DOCTYPE html>\n<html><body><a href=\"/files/%s#sha256=%s\">%s</a></body></html>\n", wheelName, hex.EncodeToString(sum[:]), wheelName)
	})
	mux.HandleFunc("/files/"+wheelName, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(wheel)
	})
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		idx.mu.Lock()
		idx.paths = append(idx.paths, r.URL.Path)
		idx.mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		mux.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	idx.URL = "http://" + ln.Addr().String() + "/simple"
	return idx
}

// served returns the paths the index was asked for so far.
func (idx *packageIndex) served() []string {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	return append([]string(nil), idx.paths...)
}

// docSection returns the path of a temp file holding the section of the
// markdown file path under heading, up to the next heading of the same or
// a higher level, so that docBlocks and docPayloads read that section only.
func docSection(t *testing.T, path, heading string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	text := string(data)
	start := strings.Index(text, "\n"+heading+"\n")
	require.GreaterOrEqual(t, start, 0, "%s has no section %q", path, heading)
	text = text[start+1:]
	level := headingLevel(heading)
	var section strings.Builder
	fenced := false
	for i, line := range strings.SplitAfter(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if n := headingLevel(line); i > 0 && !fenced && n > 0 && n <= level {
			break
		}
		section.WriteString(line)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	require.NoError(t, os.WriteFile(out, []byte(section.String()), 0o644))
	return out
}

// headingLevel is the level of a markdown heading line (3 for "### …"),
// 0 for another line.
func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || !strings.HasPrefix(line[n:], " ") {
		return 0
	}
	return n
}

// recipeEgress returns the egress policy the recipe shows, as a JSON
// block that is a schemas.Egress with a package index, with the example
// index's host and port replaced by index's.
func recipeEgress(t *testing.T, section string, index *url.URL) schemas.Egress {
	t.Helper()
	for _, b := range docBlocks(t, section) {
		if b.lang != "json" {
			continue
		}
		text := strings.ReplaceAll(b.text, recipeHost+":"+recipePort, index.Host)
		text = strings.ReplaceAll(text, recipeHost, index.Hostname())
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		var e schemas.Egress
		if dec.Decode(&e) == nil && e.PackageIndex != "" {
			require.NoError(t, e.Validate(), "the recipe's egress (line %d)", b.line)
			return e
		}
	}
	require.FailNow(t, "no egress policy with a package_index in the recipe")
	return schemas.Egress{}
}

// TestPackageIndexRecipe follows the recipe "Installing Python packages:
// egress for package indexes" of docs/security.md as written. It serves a
// real PEP 503 index of a wheel it builds, on an address of this machine
// that the sandbox's allowlist proxy reaches, gives a group the recipe's
// egress (the example host replaced by the server's), and runs the
// recipe's batch verbatim: uv_add installs from the index, uv_run and pip
// import the package. The recipe's allowlist as written (the example host,
// not the server) gets the proxy's 403, which uv reports; an index under
// none is refused at create; none without an index cannot reach PyPI.
func TestPackageIndexRecipe(t *testing.T) {
	// One of the package's longest tests (it builds a wheel and serves an index), on its own
	// group: it runs beside the other parallel ones (see doc.go).
	t.Parallel()
	u, err := url.Parse(env.url)
	require.NoError(t, err)
	wheelName, wheel := makeWheel(t, "requests", "2.32.3")
	index := servePackageIndex(t, u.Hostname(), "requests", wheelName, wheel)
	indexURL, err := url.Parse(index.URL)
	require.NoError(t, err)

	section := docSection(t, recipeDoc, recipeHeading)
	egress := recipeEgress(t, section, indexURL)
	require.Equal(t, index.URL, egress.PackageIndex, "the recipe's package_index, on the test's server")
	payloads := docPayloads(t, section)
	require.Len(t, payloads, 1, "the recipe shows one batch")

	t.Run("the SDK snippets set the same policy", func(t *testing.T) {
		checkRecipeSnippets(t, section)
	})

	group := newGroup(t, sdk.GroupConfig{ID: "it-pkgindex", ComputeResources: schemas.ComputeResources{Memory: "512MiB"}, Egress: &egress})
	// The sandboxes start together, before any batch, so that their
	// images are made from the same sandbox image. The recipe's allowlist
	// as written names the example host, not the test's server: nothing
	// goes out of this machine.
	unlisted := egress
	unlisted.Allow = []string{recipeHost}
	listed := startSandbox(t, group, "it-pkgindex-allow", sdk.SandboxOptions{})
	notListed := startSandbox(t, group, "it-pkgindex-unlisted", sdk.SandboxOptions{Egress: &unlisted})
	noNetwork := startSandbox(t, group, "it-pkgindex-none", sdk.SandboxOptions{Egress: &schemas.Egress{Policy: schemas.EgressNone}})
	requireIndexEnv(t, listed, index.URL)
	requireIndexEnv(t, notListed, index.URL)

	t.Run("the recipe installs and imports the package", func(t *testing.T) {
		st := listed.Status()
		require.NotNil(t, st.Egress)
		assert.Equal(t, index.URL, st.Egress.PackageIndex, "the index is recorded in the sandbox's status")
		obs, err := listed.SendActionsJSON(t.Context(), []byte(payloads[0].json))
		require.NoError(t, err, "%s: %s", payloads[0].where, payloads[0].json)
		require.Len(t, obs, 4)
		for _, o := range obs {
			mustOK(t, o)
			require.False(t, o.TerminalStillRunning, "%s still running: %q", o.Tool, o.Stdout)
			require.NotNil(t, o.ExitCode, o.Tool)
			require.Equal(t, 0, *o.ExitCode, "%s: stdout %q, stderr %q", o.Tool, o.Stdout, o.Stderr)
		}
		assert.Contains(t, obs[1].Stdout, "+ requests==2.32.3", "uv_add installs the index's wheel")
		assert.Contains(t, obs[2].Stdout, "/workspace/app/.venv/lib/python3.11/site-packages/requests/__init__.py")
		assert.Contains(t, obs[3].Stdout, "/workspace/venv/lib/python3.11/site-packages/requests/__init__.py")
		assert.Contains(t, index.served(), "/simple/requests/")
		assert.Contains(t, index.served(), "/files/"+wheelName)
	})

	t.Run("an index not on the allowlist gets the proxy's 403", func(t *testing.T) {
		before := len(index.served())
		obs := send(t, notListed, `{
			"terminal_tools.uv_init": {"args": {"path": "app"}},
			"terminal_tools.uv_add": {"args": {"packages": ["requests"], "path": "app"}},
			"terminal_tools.run": {"args": {"command": "python3 -m venv venv && venv/bin/pip install --retries 0 requests", "timeout_seconds": 120}}
		}`)
		for _, o := range obs[1:] {
			require.NotNil(t, o.ExitCode, "%s: %q", o.Tool, o.Stdout)
			assert.NotEqual(t, 0, *o.ExitCode, "%s: %q", o.Tool, o.Stdout)
		}
		assert.Contains(t, obs[1].Stdout, "An index ("+index.URL+") returned a 403 Forbidden error")
		assert.Contains(t, obs[2].Stdout, "No matching distribution found for requests")
		fetched := fetch(t, notListed, index.URL+"/requests/")
		assert.Equal(t, http.StatusForbidden, fetched.Status)
		assert.Contains(t, fetched.Body, "not on the sandbox's egress allowlist")
		assert.Equal(t, before, len(index.served()), "the proxy let a request through to the index")
	})

	t.Run("an index under none is refused", func(t *testing.T) {
		none := egress
		none.Policy, none.Allow = schemas.EgressNone, nil
		_, err := group.CreateSandbox(t.Context(), "it-pkgindex-none-index", sdk.SandboxOptions{Egress: &none})
		assert.ErrorIs(t, err, sdk.ErrBadRequest)
		assert.ErrorContains(t, err, "cannot be reached without a network")
	})

	t.Run("none cannot reach PyPI", func(t *testing.T) {
		obs := send(t, noNetwork, `{
			"terminal_tools.uv_init": {"args": {"path": "app"}},
			"terminal_tools.uv_add": {"args": {"packages": ["requests"], "path": "app"}}
		}`)
		out := obs[1].Stdout + obs[1].Stderr
		require.NotNil(t, obs[1].ExitCode, "%q", out)
		assert.NotEqual(t, 0, *obs[1].ExitCode, "%q", out)
		assert.Contains(t, out, "https://pypi.org/simple/requests/")
		assert.Contains(t, out, "dns error")
	})
}

// requireIndexEnv fails unless sb's terminal sessions point uv and pip at
// index, as the executor does from SANDOX_PACKAGE_INDEX.
func requireIndexEnv(t *testing.T, sb *sdk.Sandbox, index string) {
	t.Helper()
	obs := send(t, sb, `{"terminal_tools.run": {"args": {"command": "echo \"$UV_DEFAULT_INDEX $PIP_INDEX_URL\""}}}`)
	mustOK(t, obs[0])
	require.Equal(t, index+" "+index+"\n", obs[0].Stdout, "the sessions of %s have no package index: is its image's executor older than SANDOX_PACKAGE_INDEX?", sb.ID())
}

// checkRecipeSnippets holds the recipe's Go and Python snippets to its
// JSON policy (before the test's replacements): the Go snippet's
// schemas.Egress literal sets fields schemas.Egress has, to the JSON's
// values, and the Python snippet's dict has the JSON's keys and values.
func checkRecipeSnippets(t *testing.T, section string) {
	t.Helper()
	var (
		want         schemas.Egress
		goSrc, pySrc string
	)
	for _, b := range docBlocks(t, section) {
		switch b.lang {
		case "json":
			var e schemas.Egress
			dec := json.NewDecoder(strings.NewReader(b.text))
			dec.DisallowUnknownFields()
			if dec.Decode(&e) == nil && e.PackageIndex != "" {
				want = e
			}
		case "go":
			goSrc = b.text
		case "python":
			pySrc = b.text
		}
	}
	require.NotEmpty(t, want.PackageIndex, "the recipe's JSON policy")
	require.NotEmpty(t, goSrc, "the recipe's Go snippet")
	require.NotEmpty(t, pySrc, "the recipe's Python snippet")

	f, err := parser.ParseFile(token.NewFileSet(), "recipe.go", "package recipe\nfunc _() {\n"+goSrc+"}\n", 0)
	require.NoError(t, err, "the Go snippet does not parse")
	var got *schemas.Egress
	ast.Inspect(f, func(n ast.Node) bool {
		lit, ok := n.(*ast.CompositeLit)
		if !ok {
			return true
		}
		if sel, ok := lit.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "Egress" {
			return true
		}
		got = &schemas.Egress{}
		for _, elt := range lit.Elts {
			kv := elt.(*ast.KeyValueExpr)
			key := kv.Key.(*ast.Ident).Name
			field := reflect.ValueOf(got).Elem().FieldByName(key)
			require.True(t, field.IsValid(), "the Go snippet sets %s, which schemas.Egress lacks", key)
			switch v := kv.Value.(type) {
			case *ast.BasicLit:
				s, err := strconv.Unquote(v.Value)
				require.NoError(t, err)
				field.SetString(s)
			case *ast.SelectorExpr: // schemas.EgressAllowlist
				policies := map[string]schemas.EgressPolicy{"EgressNone": schemas.EgressNone, "EgressAllowlist": schemas.EgressAllowlist, "EgressOpen": schemas.EgressOpen}
				require.Contains(t, policies, v.Sel.Name)
				field.SetString(string(policies[v.Sel.Name]))
			case *ast.CompositeLit: // []string{…}
				var list []string
				for _, e := range v.Elts {
					s, err := strconv.Unquote(e.(*ast.BasicLit).Value)
					require.NoError(t, err)
					list = append(list, s)
				}
				field.Set(reflect.ValueOf(list))
			}
		}
		return false
	})
	require.NotNil(t, got, "no schemas.Egress literal in the Go snippet")
	assert.Equal(t, want, *got, "the Go snippet's policy")

	for _, kv := range [][2]string{{"policy", string(want.Policy)}, {"package_index", want.PackageIndex}} {
		assert.Contains(t, pySrc, fmt.Sprintf("%q: %q", kv[0], kv[1]), "the Python snippet's policy")
	}
	allow, err := json.Marshal(want.Allow)
	require.NoError(t, err)
	assert.Contains(t, strings.ReplaceAll(pySrc, " ", ""), `"allow":`+string(allow), "the Python snippet's allowlist")
}
