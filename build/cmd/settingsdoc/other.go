package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Python: module constants holding a variable's name, reads of os.environ,
// and argparse flags.
var (
	pyConst   = regexp.MustCompile(`(?m)^([A-Z_][A-Z0-9_]*)\s*=\s*"([A-Za-z_][A-Za-z0-9_]*)"`)
	pyEnvRead = regexp.MustCompile(`os\.(?:environ\.get\(|environ\[|getenv\()\s*("[^"]*"|'[^']*'|[A-Za-z_][A-Za-z0-9_]*)`)
	pyProg    = regexp.MustCompile(`ArgumentParser\(\s*prog="([^"]+)"`)
	pyFlag    = regexp.MustCompile(`add_argument\(\s*"(--[a-z0-9-]+)"`)
	pyHelp    = regexp.MustCompile(`help="([^"]*)"`)
	pyEnvDef  = regexp.MustCompile(`default=(?:int\()?os\.environ\.get\("([A-Za-z_][A-Za-z0-9_]*)",\s*"([^"]*)"\)`)
	pyDef     = regexp.MustCompile(`default=("[^"]*"|[0-9]+|True|False)`)
	pyType    = regexp.MustCompile(`type=([a-z]+)`)
)

// Shell: ${NAME:-default} (a variable the script honours, with its
// default) and $SANDOX_NAME.
var (
	shDefault = regexp.MustCompile(`\$\{([A-Z_][A-Z0-9_]*):?-([^}]*)\}`)
	shSandox  = regexp.MustCompile(`\$\{?(SANDOX_[A-Z0-9_]+)`)
	shAssign  = regexp.MustCompile(`(?m)^\s*(?:export\s+)?([A-Z_][A-Z0-9_]*)=`)
)

// pythonSettings returns the flags and environment reads of the tree's
// Python files.
func pythonSettings(t *tree) ([]flagSetting, []envRead, error) {
	var flags []flagSetting
	var reads []envRead
	for _, rel := range t.python {
		data, err := os.ReadFile(filepath.Join(t.root, rel))
		if err != nil {
			return nil, nil, err
		}
		src := string(data)
		consts := map[string]string{}
		for _, m := range pyConst.FindAllStringSubmatch(src, -1) {
			consts[m[1]] = m[2]
		}
		test := strings.Contains("/"+rel, "/tests/") || strings.HasPrefix(filepath.Base(rel), "test_") || filepath.Base(rel) == "conftest.py"
		for _, m := range pyEnvRead.FindAllStringSubmatch(src, -1) {
			name := strings.Trim(m[1], `"'`)
			if name == m[1] {
				if name = consts[m[1]]; name == "" {
					continue // a variable name that is not a module constant
				}
			}
			reads = append(reads, envRead{Name: name, File: rel, Test: test})
		}
		prog := strings.TrimSuffix(filepath.Base(rel), ".py")
		if m := pyProg.FindStringSubmatch(src); m != nil {
			prog = m[1]
		}
		for _, call := range pyCalls(src, "add_argument(") {
			m := pyFlag.FindStringSubmatch(call)
			if m == nil {
				continue
			}
			f := flagSetting{Dir: prog, Command: prog, Name: strings.TrimPrefix(m[1], "-"), Type: "string", File: rel}
			if h := pyHelp.FindStringSubmatch(call); h != nil {
				f.Usage = h[1]
			}
			if ty := pyType.FindStringSubmatch(call); ty != nil {
				f.Type = ty[1]
			}
			if d := pyEnvDef.FindStringSubmatch(call); d != nil {
				f.Env, f.Default = d[1], d[2]
				if f.Type == "string" {
					f.Default = `"` + d[2] + `"`
				}
			} else if d := pyDef.FindStringSubmatch(call); d != nil {
				f.Default = d[1]
			}
			flags = append(flags, f)
		}
	}
	return flags, reads, nil
}

// pyCalls returns the text of each call that starts with open, up to its
// closing parenthesis.
func pyCalls(src, open string) []string {
	var out []string
	for i := strings.Index(src, open); i >= 0; {
		depth, j := 0, i+len(open)-1
		for ; j < len(src); j++ {
			if src[j] == '(' {
				depth++
			} else if src[j] == ')' {
				if depth--; depth == 0 {
					break
				}
			}
		}
		out = append(out, src[i:min(j+1, len(src))])
		next := strings.Index(src[i+1:], open)
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return out
}

// shellSetting is an environment variable a shell script honours, with
// its default there.
type shellSetting struct {
	envRead
	Default string
}

// shellSettings returns the environment variables the tree's shell
// scripts honour: ${NAME:-default} of a variable the script does not set
// itself, and any $SANDOX_NAME.
func shellSettings(t *tree) ([]shellSetting, error) {
	var out []shellSetting
	for _, rel := range t.scripts {
		data, err := os.ReadFile(filepath.Join(t.root, rel))
		if err != nil {
			return nil, err
		}
		src := string(data)
		assigned := map[string]bool{}
		for _, m := range shAssign.FindAllStringSubmatch(src, -1) {
			assigned[m[1]] = true
		}
		seen := map[string]bool{}
		add := func(name, def string) {
			if seen[name] || assigned[name] {
				return
			}
			seen[name] = true
			out = append(out, shellSetting{envRead: envRead{Name: name, File: rel}, Default: def})
		}
		for _, m := range shDefault.FindAllStringSubmatch(src, -1) {
			add(m[1], m[2])
		}
		for _, m := range shSandox.FindAllStringSubmatch(src, -1) {
			add(m[1], "")
		}
	}
	return out, nil
}
