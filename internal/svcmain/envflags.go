package svcmain

import (
	"errors"
	"flag"
	"fmt"
	"regexp"
)

// envInUsage finds "(env NAME)" in a flag's usage: the environment
// variable that sets the flag's default (build/cmd/settingsdoc reads the
// same mark into docs/settings.md).
var envInUsage = regexp.MustCompile(`\(env ([A-Z][A-Z0-9_]*)\)`)

// EnvDefaults sets every flag of fs whose usage names a variable that
// getenv returns non-empty to that value. Call it before fs.Parse, so that
// the command line still wins. The error joins every value a flag refused,
// each naming its variable.
func EnvDefaults(fs *flag.FlagSet, getenv func(string) string) error {
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		m := envInUsage.FindStringSubmatch(f.Usage)
		if m == nil {
			return
		}
		v := getenv(m[1])
		if v == "" {
			return
		}
		if err := f.Value.Set(v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q (flag -%s): %w", m[1], v, f.Name, err))
		}
	})
	return errors.Join(errs...)
}
