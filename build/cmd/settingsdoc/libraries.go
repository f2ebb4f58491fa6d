package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// libraryEnv is a group of environment variables that a dependency reads
// when the code calls it: the generator cannot see those reads, so it
// checks instead that the call is still in the file.
type libraryEnv struct {
	File string // where the code calls the library
	Call string // the call, as it appears in File
	// Dir is the command whose process reads them, when `sandox up` may
	// start it (commandDocs' Dir); "" for none.
	Dir  string
	Vars []string
	Text string
	// UpCall and Up, when set, say how `sandox up` passes the variables
	// on, where the scan of upenv.go cannot see it: Up is shown when
	// UpCall appears in upDir's source (and the generator fails when it
	// does not).
	UpCall, Up string
}

// libraryEnvs are the variables the code's dependencies read.
var libraryEnvs = []libraryEnv{
	{
		File: "internal/docker/client.go", Call: "client.FromEnv",
		Vars: []string{"DOCKER_HOST", "DOCKER_API_VERSION", "DOCKER_CERT_PATH", "DOCKER_TLS_VERIFY"},
		Text: "The Docker engine that `sandox up`, `down`, `images`, `sandox-orchestrator` and `sandox-bench` drive (the Docker client's own variables); the API version is negotiated. `sandox up` binds the engine's socket into the orchestrator's container instead.",
	},
	{
		File: "services/data/populate/source.go", Call: "awsconfig.LoadDefaultConfig", Dir: "services/data/cmd/sandox-data",
		Vars:   []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE"},
		Text:   "Credentials of `s3://` population sources, and their region and profile when the source gives none, as the AWS SDK reads them: these and its other `AWS_*` variables, and the shared config files (`~/.aws/config`, `~/.aws/credentials`).",
		UpCall: "awsenv.ForContainer",
		Up:     "operator's environment (every `AWS_*`, to `sandox-data` only; the files they name, or `~/.aws/config` and `~/.aws/credentials`, copied in: [databases.md](databases.md#s3-sources-and-their-credentials))",
	},
	{
		File: "services/search/config.go", Call: "http.ProxyFromEnvironment", Dir: "services/search/cmd/sandox-search",
		Vars: []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"},
		Text: "Proxy of the search service's calls to its providers (Go's `http.ProxyFromEnvironment`).",
	},
	{
		File: "tools/web/client.go", Call: "httpproxy.FromEnvironment",
		Vars: []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"},
		Text: "Proxy of the web tools' HTTP client in a sandbox, read at each client's making; the orchestrator sets them on a sandbox with an allowlist egress policy.",
	},
}

// checkLibraries fails for an entry whose call is no longer in its file.
func checkLibraries(root string) []error {
	var errs []error
	for _, l := range libraryEnvs {
		data, err := os.ReadFile(filepath.Join(root, l.File))
		if err != nil {
			errs = append(errs, fmt.Errorf("libraries.go: %w", err))
			continue
		}
		if !strings.Contains(string(data), l.Call) {
			errs = append(errs, fmt.Errorf("libraries.go: %s no longer calls %s; update libraryEnvs", l.File, l.Call))
		}
		if l.UpCall != "" && !upCalls(root, l.UpCall) {
			errs = append(errs, fmt.Errorf("libraries.go: %s does not call %s; update libraryEnvs", upDir, l.UpCall))
		}
	}
	return errs
}

// upCalls reports whether a non-test Go file of upDir contains call.
func upCalls(root, call string) bool {
	files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(upDir), "*.go"))
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), call) {
			return true
		}
	}
	return false
}
