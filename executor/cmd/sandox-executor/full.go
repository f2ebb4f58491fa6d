package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/sandox/sandox/schemas"
	"github.com/sandox/sandox/tools/builtin"
)

// FullBinary is the name of the executor built with every tool family,
// installed beside the image's sandox-executor, which is built with the
// tag nowebtools (tools/builtin): an idle sandbox then maps a binary less
// than half the size, and a sandbox that names a family left out of this
// build runs the full one instead (execFull).
const FullBinary = "sandox-executor-full"

// fullTarget returns the path of the full executor that the executor at
// self should hand env over to, or "" when it should serve env itself:
// every family env names is built in, or it is the full build (or no full
// build lies beside it), in which case an unknown family is reported as
// usual when the tools are opened.
func fullTarget(self string, env schemas.ExecutorEnv, exists func(string) bool) string {
	if _, err := builtin.Select(env.Families); err == nil {
		return ""
	}
	full := filepath.Join(filepath.Dir(self), FullBinary)
	if filepath.Base(self) == FullBinary || !exists(full) {
		return ""
	}
	return full
}

// execFull replaces the process by the full executor when fullTarget says
// so, with env (as claimed, for a pooled sandbox) in place of the
// environment's SANDOX_ variables. It returns only when there is nothing
// to hand over (nil) or the exec failed.
func execFull(env schemas.ExecutorEnv) error {
	self, err := os.Executable()
	if err != nil {
		return nil
	}
	full := fullTarget(self, env, func(p string) bool { _, err := os.Stat(p); return err == nil })
	if full == "" {
		return nil
	}
	if err := syscall.Exec(full, append([]string{full}, os.Args[1:]...), handOverEnviron(os.Environ(), env)); err != nil {
		return fmt.Errorf("run %s for tool families %v: %w", full, env.Families, err)
	}
	return nil
}

// handOverEnviron is environ with the variables of schemas.ExecutorEnv
// replaced by env's.
func handOverEnviron(environ []string, env schemas.ExecutorEnv) []string {
	own := map[string]bool{}
	for _, k := range []string{
		schemas.EnvSandboxID, schemas.EnvGroupID, schemas.EnvNATSURL, schemas.EnvNATSCreds,
		schemas.EnvEgressProxy, schemas.EnvFamilies, schemas.EnvToolsDir, schemas.EnvWorkspace,
		schemas.EnvPackageIndex, schemas.EnvDiskBytes, schemas.EnvCgroupRoot, schemas.EnvDebug, schemas.EnvPooled, schemas.EnvStreamBytes, schemas.EnvWebhooks,
	} {
		own[k] = true
	}
	var out []string
	for _, kv := range environ {
		if k, _, _ := strings.Cut(kv, "="); !own[k] {
			out = append(out, kv)
		}
	}
	return append(out, env.Environ()...)
}
